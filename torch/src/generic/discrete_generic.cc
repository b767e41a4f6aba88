// Device-generic kernels of the discrete maps (generic/discrete_generic.h). Every row of the
// batch is solved at once: each step below is a handful of ATen operations over the (R, n)
// tensor of shifted rows y = x - max x (y <= 0, the maximum 0), the row state (lambda, its
// bracket, whether the row is done) a column (R, 1). The loop ends when every row is done, so
// a batch costs as many steps as its slowest row (a few: Newton converges quadratically and
// ends on the exact threshold once the support is identified).
#include "generic/discrete_generic.h"

#include <c10/util/Exception.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace sparcon::torch::generic {
namespace {

constexpr int kMaxIterations = 200;

double epsilon_of(const at::Tensor& t) {
  return t.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                        : static_cast<double>(std::numeric_limits<float>::epsilon());
}

bool all_true(const at::Tensor& done) { return done.all().item<bool>(); }

// The name of the family's parameter in messages (the core's parameter_name).
const char* parameter_name(Map map) {
  return map == Map::budget ? "budget" : map == Map::entmax || map == Map::normmax ? "alpha" : "parameter";
}

// The core's message for an invalid parameter `value` of row `row` (check.h: precision 17).
[[noreturn]] void fail_parameter(const char* op, const char* function, Map map, double value, std::int64_t row,
                                 std::int64_t length) {
  std::ostringstream m;
  m.precision(17);
  if (op != nullptr) m << "sparcon." << op << ": ";
  m << "sparcon::" << function << ": " << parameter_name(map) << " = " << value << " (row " << row << ") ";
  if (map == Map::entmax) m << "must be a finite number > 0";
  if (map == Map::normmax) m << "must be a finite number > 1 for normmax";
  if (map == Map::budget) m << "must lie in (0, rows.length = " << length << "]";
  TORCH_CHECK_VALUE(false, m.str());
}

bool valid_parameter(Map map, double v, std::int64_t length) {
  switch (map) {
    case Map::entmax: return v > 0 && std::isfinite(v);
    case Map::normmax: return v > 1 && std::isfinite(v);
    case Map::budget: return v > 0 && (length == 0 || v <= static_cast<double>(length));
    default: return true;
  }
}

// ---- the power maps: p_i = [1 + a (y_i - lambda)]_+^k -----------------------------------------

// A solved batch: p (R, n) and tau (R, 1) unshifted.
struct Solved {
  at::Tensor p, tau;
};

// u^(k-1) where u = 1 + t > 0 (0 elsewhere), t = a (y - lambda); k a column, or the number k_value.
at::Tensor power_k_minus_1(const at::Tensor& t, const at::Tensor& inside, const at::Tensor& k,
                           std::optional<double> k_value) {
  if (k_value && *k_value == 1) return inside.to(t.scalar_type());
  if (k_value && *k_value == 2) return at::where(inside, 1 + t, 0.0);
  const at::Tensor safe = at::where(inside, t, 0.0);
  return at::where(inside, at::exp((k - 1) * at::log1p(safe)), 0.0);
}

// [u]_+^k of u = c + a y, the write pass (k = 1 and 2 from the offset c, as the core's linear and
// square kinds; other k through log1p of a (y - lambda)).
at::Tensor write_power(const at::Tensor& y, const at::Tensor& a, const at::Tensor& k, const at::Tensor& lambda,
                       std::optional<double> k_value) {
  const at::Tensor offset = 1 - a * lambda;
  if (k_value && *k_value == 1) return (a * y + offset).clamp_min(0);
  if (k_value && *k_value == 2) return (a * y + offset).clamp_min(0).square();
  const at::Tensor t = a * (y - lambda);
  const at::Tensor inside = t > -1;
  at::Tensor p = at::where(inside, at::exp(k * at::log1p(at::where(inside, t, 0.0))), 0.0);
  if (!k_value) {  // per-row k: rows with k = 1 or 2 written as the core writes them
    const at::Tensor base = (a * y + offset).clamp_min(0);
    p = at::where(k == 1, base, at::where(k == 2, base.square(), p));
  }
  return p;
}

// lambda of sum_i [1 + a (y_i - lambda)]_+^k = 1 for a > 0, k >= 1 (entmax with 1 < alpha <= 2,
// normmax): Newton steps on F = (sum u^k)^(1/k) - 1 (convex, decreasing) from the lower bound 0,
// kept inside the bracket [lo, hi] by bisection (hi, when first needed, the bound at which every
// entry is 1/n). For k = 1 (sparsemax) the steps are Michelot's and end on the exact threshold of
// the support; for k = 2 (entmax-1.5) the closed form on the support ends a row as soon as its
// support is the same two steps in a row (the core's quadratic_closed_form):
//   c' = -mean_S z + sqrt((1 - M2)/K),  z = a y, M2 = sum_S (z - mean)^2, K = |S|.
at::Tensor newton_lambda(const at::Tensor& y, const at::Tensor& a, const at::Tensor& k, std::optional<double> k_value,
                         std::int64_t n) {
  const double eps = epsilon_of(y);
  const auto column = y.select(-1, 0).unsqueeze(-1);
  at::Tensor lambda = at::zeros_like(column), lo = at::zeros_like(column);
  at::Tensor hi = at::full_like(column, std::numeric_limits<double>::infinity());
  at::Tensor done = at::zeros_like(column, column.options().dtype(at::kBool));
  at::Tensor support = at::full_like(column, -1.0);
  const at::Tensor upper = -at::expm1(-std::log(static_cast<double>(n)) / k) / a;
  const bool maybe_two = !k_value || *k_value == 2;
  at::Tensor newton_step = at::ones_like(column, column.options().dtype(at::kBool));
  const at::Tensor is_two = k_value ? at::full_like(done, *k_value == 2) : k == 2;
  // k = 1 and 2 (sparsemax, entmax-1.5, 2-normmax): the sums from u = a y + (1 - a lambda), a y
  // formed once (the core's offset form); other k through log1p(a (y - lambda)), which keeps
  // the accuracy of u^k for large k (alpha near 1).
  const bool offset_form = k_value && (*k_value == 1 || *k_value == 2);
  // The candidates: at a lower bound lambda of every row's threshold, entries with u <= 0 are
  // outside the support for good; once the most a row keeps is a quarter of the width, each row
  // is cut to its that-many largest entries (topk), so that later steps sum a few entries, not
  // the whole row (the core's candidate pruning, in fixed-width form).
  at::Tensor y_c = y;
  at::Tensor ay = offset_form ? a * y : at::Tensor();
  for (int it = 0; it < kMaxIterations && !all_true(done); ++it) {
    at::Tensor s, slope, count, u, inside;
    if (offset_form) {
      const at::Tensor base = ay + (1 - a * lambda);
      inside = base > 0;
      u = base.clamp_min(0);
      count = inside.sum(-1, true).to(y.scalar_type());
      if (*k_value == 1) {
        s = u.sum(-1, true);
        slope = count;
      } else {
        s = (u * u).sum(-1, true);
        slope = u.sum(-1, true);
      }
    } else {
      const at::Tensor t = a * (y_c - lambda);
      inside = t > -1;
      const at::Tensor uk1 = power_k_minus_1(t, inside, k, k_value);
      u = at::where(inside, 1 + t, 0.0);
      s = (uk1 * u).sum(-1, true);
      slope = uk1.sum(-1, true);
      count = inside.sum(-1, true).to(y.scalar_type());
    }
    const at::Tensor above = s >= 1;
    if (y_c.size(-1) >= 64 && all_true(above | done)) {
      const auto keep = static_cast<std::int64_t>(count.max().item<double>());
      if (4 * keep <= y_c.size(-1)) {
        y_c = std::get<0>(y_c.topk(std::max<std::int64_t>(keep, 1), -1));
        if (offset_form) ay = a * y_c;
      }
    }
    lo = at::where(above & ~done, lambda, lo);
    hi = at::where(~above & ~done, lambda, hi);
    // The support of the previous step, reached by a Newton step (not a bisection one).
    const at::Tensor stable = above & (count == support) & newton_step;
    support = count;
    if (maybe_two) {
      // k = 2: s = sum u^2, slope = sum u over the support.
      const at::Tensor m2 = (s - slope.square() / count).clamp_min(0);
      const at::Tensor shift = at::sqrt(((1 - m2) / count).clamp_min(0)) - slope / count;
      const at::Tensor lowest = at::where(inside, u, std::numeric_limits<double>::infinity()).amin(-1, true);
      const at::Tensor exact = is_two & stable & (m2 <= 1) & (lowest + shift >= 0) & ~done;
      const at::Tensor offset = 1 - a * lambda + shift;
      lambda = at::where(exact, (1 - offset) / a, lambda);
      done = done | exact;
    }
    // s = 1 to the rounding of its sum: the threshold.
    const at::Tensor settled = (at::abs(s - 1) <= 4 * eps * at::sqrt(count)) | (slope == 0);
    done = done | settled;
    // The step (s - s^(1-1/k)) / (a slope), its numerator formed without cancelling (the core's
    // newton_threshold): near alpha = 1 (k of 1e5) s^(1-1/k) rounds to s long before s is 1.
    const at::Tensor numerator = k_value && *k_value == 1 ? s - 1
                                 : k_value && *k_value == 2 ? (s - 1) * at::sqrt(s) / (at::sqrt(s) + 1)
                                                            : -s * at::expm1(-at::log1p(s - 1) / k);
    at::Tensor next = lambda + numerator / (a * slope);
    const at::Tensor outside = ~((next > lo) & (next < hi));
    // A step out of the bracket by rounding alone (s = 1 to the rounding of its sum): done.
    const at::Tensor rounded = outside & (at::abs(s - 1) <= 4 * eps * count);
    hi = at::where(outside & at::isinf(hi), at::maximum(lo, upper), hi);
    next = at::where(outside, lo + 0.5 * (hi - lo), next);
    newton_step = ~outside;
    // Done: the step is at rounding level; or k = 1 and the support is the one the previous
    // Newton step reached (Michelot's fixed point: lambda is the exact threshold of the support).
    // (s = 1 to the rounding of its sum ended the row above: otherwise a float row whose sum
    // rounds below 1 would leave the bracket and wander in its last ulps until bisection ends it.)
    const at::Tensor tolerance = 4 * eps * at::abs(lambda).clamp_min(1);
    const at::Tensor step = at::abs(next - lambda);
    const at::Tensor stalled = (stable & (k == 1)) | rounded;
    const at::Tensor small = (step <= tolerance) | (hi - lo <= tolerance) | stalled;
    lambda = at::where(done | stalled, lambda, next);  // a stalled row keeps its threshold
    done = done | small;
  }
  return lambda;
}

// entmax with alpha > 2 (0 < k < 1): the equation in the offset c = 1 - a lambda,
// f(c) = sum_i [c + a y_i]_+^k - 1 (increasing, concave), by Newton steps bracketed by
// bisection on [n^(-1/k), 1] (the core's offset_threshold: c keeps full relative precision when
// many entries are near the maximum). Returns c.
at::Tensor newton_offset(const at::Tensor& y, const at::Tensor& a, const at::Tensor& k, std::int64_t n) {
  const double eps = epsilon_of(y);
  const auto column = y.select(-1, 0).unsqueeze(-1);
  at::Tensor lo = at::exp(-std::log(static_cast<double>(n)) / k) * at::ones_like(column);
  at::Tensor hi = at::ones_like(column), c = at::ones_like(column);
  at::Tensor done = at::zeros_like(column, column.options().dtype(at::kBool));

  for (int it = 0; it < kMaxIterations && !all_true(done); ++it) {
    const at::Tensor base = c + a * y;
    const at::Tensor inside = base > 0;
    const at::Tensor u = at::where(inside, base, 0.0);  // masked entries: -inf, 0 * -inf is NaN
    const at::Tensor uk1 = at::where(inside, at::exp((k - 1) * at::log(at::where(inside, base, 1.0))), 0.0);
    const at::Tensor f = (uk1 * u).sum(-1, true) - 1, slope = k * uk1.sum(-1, true);
    hi = at::where((f >= 0) & ~done, c, hi);
    lo = at::where((f < 0) & ~done, c, lo);
    // Near an entry at the support boundary f' is huge and steps are tiny long before f is 0,
    // so stop on the bracket or on f at the rounding of its sum, not on the step.
    const at::Tensor count = inside.sum(-1, true).to(y.scalar_type());
    done = done | (at::abs(f) <= 4 * eps * at::sqrt(count)) | (slope == 0);
    at::Tensor next = c - f / slope;
    const at::Tensor outside = ~((next > lo) & (next < hi));
    const at::Tensor rounded = outside & (at::abs(f) <= 4 * eps * count);  // out of the bracket by rounding
    next = at::where(outside, lo + 0.5 * (hi - lo), next);
    const at::Tensor small = (next == c) | (hi - lo <= 2 * eps * hi) | rounded;
    c = at::where(done | rounded, c, next);
    done = done | small;
  }
  return c;
}

// Rows of entmax with alpha > 2 solved again relative to the entry nearest the edge of the
// support, the core's refine_support_edge (src/discrete/support_edge.h; docs/math.md, section 2,
// "the support edge"). The rounding of c moves every base u = c + a y by about eps c; where u is
// near 0 the power u^k, k < 1, turns that into p of about (eps c)^k (1e-4 for alpha = 5 in
// double on an entry exactly on the edge). Here the unknown t is the pivot's p where the pivot
// (the entry with the smallest |u|) is inside, its base v = t^a, and v itself where it is not
// (t <= 0); every other base is d + v with d = a (x - x_pivot), which no rounding of c enters:
//   F(t) = m [t]_+ + sum_{d != 0} [d + v(t)]_+^k - 1   (m: the pivot and its ties),
// continuous and increasing, slope m + (dv/dt) sum k u^(k-1) for t > 0 (dv/dt = a t^(a-1)), the
// sum alone for t <= 0. The root is found to the rounding of F's sum in t, so the pivot's p is
// good to eps absolute, not (eps c)^k.
//
// x (R, n) the rows, a and k columns (R, 1), u the bases of the first solve, c its offset (R, 1)
// and `first` its p and tau, all in one floating type. Returns p and tau = a x_pivot - v.
// Newton's steps from the pivot's base at c, kept inside the bracket [lo, hi] of the points seen
// so far where F < 0 and F >= 0 (unbounded on a side until one is seen): a step out of it, or
// one that does not move (an infinite slope), is replaced while a side is unbounded by the other
// end's base moved toward it by 32 eps c, 16 times more each time (giving up past 2^21 eps c,
// when the row keeps the first solve's p: not seen, a guard), else by bisection, at t = 0 first
// when the bracket spans it (the kink where the pivot enters the support). A row stops at F = 0,
// at a step at the rounding of t, or with no value left between its ends.
Solved refine_support_edge(const at::Tensor& x, const at::Tensor& a, const at::Tensor& k,
                           const at::Tensor& u, const at::Tensor& c, const Solved& first) {
  const double eps = epsilon_of(x), inf = std::numeric_limits<double>::infinity();
  const at::Tensor pivot = at::abs(u).argmin(-1, true);
  const at::Tensor x_pivot = x.gather(-1, pivot);
  const at::Tensor d = a * (x - x_pivot);  // -inf for masked entries
  const at::Tensor tie = d == 0;
  const at::Tensor ties = tie.sum(-1, true).to(x.scalar_type());
  auto positive_power = [](const at::Tensor& t, const at::Tensor& e) {  // t^e where t > 0, else t
    return at::where(t > 0, at::exp(e * at::log(at::where(t > 0, t, 1.0))), t);
  };
  auto base = [&](const at::Tensor& t) { return positive_power(t, a); };
  auto t_of = [&](const at::Tensor& v) { return positive_power(v, k); };
  struct Value {
    at::Tensor t, f, slope;
  };
  auto evaluate = [&](const at::Tensor& t) {
    const at::Tensor v = base(t), w = d + v;
    const at::Tensor inside = (w > 0) & ~tie;
    const at::Tensor safe = at::where(inside, w, 1.0);
    const at::Tensor term = at::where(inside, at::exp(k * at::log(safe)), 0.0);
    const at::Tensor sum = (k * term / safe).sum(-1, true);  // d/dv of the others' terms
    return Value{t, ties * t.clamp_min(0) + term.sum(-1, true) - 1,
                 at::where(t > 0, ties + sum * a * v / t, sum)};
  };
  auto pick = [](const at::Tensor& mask, const Value& yes, const Value& no) {
    return Value{at::where(mask, yes.t, no.t), at::where(mask, yes.f, no.f),
                 at::where(mask, yes.slope, no.slope)};
  };

  Value at = evaluate(t_of(u.gather(-1, pivot)));
  const at::Tensor unbounded = at::full_like(c, inf);
  Value lo{-unbounded, -unbounded, at::zeros_like(c)}, hi{unbounded, unbounded, at::zeros_like(c)};
  Value best = at;
  at::Tensor done = at::zeros_like(c, c.options().dtype(at::kBool));
  at::Tensor failed = done.clone(), tried_zero = done.clone();
  at::Tensor step = 32 * eps * c;
  auto add = [&](const at::Tensor& active, const Value& v) {
    lo = pick(active & (v.f < 0), v, lo);
    hi = pick(active & (v.f >= 0), v, hi);
    best = pick(active & (at::abs(v.f) < at::abs(best.f)), v, best);
  };
  add(~done, at);
  done = best.f == 0;
  for (int it = 0; it < kMaxIterations && !all_true(done); ++it) {
    const at::Tensor newton = at.t - at.f / at.slope;
    const at::Tensor bad = ~((newton > lo.t) & (newton < hi.t)) | (newton == at.t);
    const at::Tensor no_lo = lo.t == -inf, no_hi = hi.t == inf;
    const at::Tensor expand = bad & (no_lo | no_hi);
    failed = failed | (~done & expand & (step > 0x1p21 * eps * c));
    const at::Tensor end = base(at::where(no_lo, hi.t, lo.t));  // the bounded end's base
    const at::Tensor expanded = t_of(at::where(no_lo, end - step, end + step));
    step = at::where(expand, 16 * step, step);
    const at::Tensor zero = (lo.t < 0) & (hi.t > 0) & ~tried_zero;
    const at::Tensor bisect = at::where(zero, at::zeros_like(c), lo.t + 0.5 * (hi.t - lo.t));
    tried_zero = tried_zero | (bad & ~expand & zero);
    const at::Tensor next = at::where(bad, at::where(expand, expanded, bisect), newton);
    // A row whose next point is not strictly inside its bracket has no value left there.
    const at::Tensor active = ~done & ~failed & (next > lo.t) & (next < hi.t);
    const at::Tensor rounding = at::abs(next - at.t) <= 2 * eps * at::abs(next);
    const Value value = evaluate(next);
    at = pick(active, value, at);
    add(active, value);
    done = ~active | done | rounding | (best.f == 0);
  }

  const at::Tensor v = base(best.t), w = d + v;
  const at::Tensor inside = w > 0;
  const at::Tensor p =
      at::where(tie, best.t.clamp_min(0),
                at::where(inside, at::exp(k * at::log(at::where(inside, w, 1.0))), 0.0));
  return {at::where(failed, first.p, p), at::where(failed, first.tau, a * x_pivot - v)};
}

// entmax with alpha < 1 (a < 0, k < 0): every finite entry is in the support; Newton steps on
// the convex, decreasing f(lambda) = sum_i u_i^k - 1 from 0, bracketed as in newton_lambda.
at::Tensor newton_dense(const at::Tensor& y, const at::Tensor& a, const at::Tensor& k, std::int64_t n) {
  const double eps = epsilon_of(y);
  const auto column = y.select(-1, 0).unsqueeze(-1);
  at::Tensor lambda = at::zeros_like(column), lo = at::zeros_like(column);
  at::Tensor hi = at::full_like(column, std::numeric_limits<double>::infinity());
  at::Tensor done = at::zeros_like(column, column.options().dtype(at::kBool));
  const at::Tensor upper = -at::expm1(-std::log(static_cast<double>(n)) / k) / a;
  const at::Tensor finite = y > -std::numeric_limits<double>::infinity();
  for (int it = 0; it < kMaxIterations && !all_true(done); ++it) {
    const at::Tensor l1p = at::log1p(at::where(finite, a * (y - lambda), 0.0));
    const at::Tensor uk1 = at::where(finite, at::exp((k - 1) * l1p), 0.0);
    const at::Tensor s = (uk1 * at::exp(l1p)).sum(-1, true), slope = uk1.sum(-1, true);
    const at::Tensor above = s >= 1;
    lo = at::where(above & ~done, lambda, lo);
    hi = at::where(~above & ~done, lambda, hi);
    done = done | (at::abs(s - 1) <= 4 * eps * std::sqrt(static_cast<double>(n))) | (slope == 0);  // s = 1 to rounding
    at::Tensor next = lambda + (s - 1) / (a * k * slope);
    const at::Tensor outside = ~((next > lo) & (next < hi));
    hi = at::where(outside & at::isinf(hi), at::maximum(lo, upper), hi);
    next = at::where(outside, lo + 0.5 * (hi - lo), next);
    const at::Tensor tolerance = 4 * eps * at::abs(lambda).clamp_min(1);
    const at::Tensor step = at::abs(next - lambda);
    const at::Tensor small = (step <= tolerance) | (hi - lo <= tolerance);
    lambda = at::where(done, lambda, next);
    done = done | small;
  }
  return lambda;
}

// softmax of the shifted rows: p = e^y / sum e^y, tau = shift + log sum e^y.
Solved softmax_rows(const at::Tensor& y, const at::Tensor& shift) {
  const at::Tensor e = at::exp(y);
  const at::Tensor sum = e.sum(-1, true);
  return {e / sum, shift + at::log(sum)};
}

// alpha-entmax of rows x, shifted y = x - shift, for one regime of alpha (a column, every row in
// the same regime: alpha = 1, 1 < alpha <= 2, alpha > 2 or alpha < 1); alpha_value when alpha is
// one number. x itself is read only by the rows of alpha > 2 solved again at the support edge
// (refine_support_edge), which differences of x keep exact where differences of y are rounded.
Solved entmax_regime(const at::Tensor& x, const at::Tensor& y, const at::Tensor& alpha,
                     std::optional<double> alpha_value, const at::Tensor& shift, std::int64_t n) {
  const double first = alpha_value ? *alpha_value : alpha.flatten()[0].item<double>();
  if (first == 1) return softmax_rows(y, shift);
  const at::Tensor a = alpha - 1, k = 1 / a;
  std::optional<double> k_value;
  if (alpha_value) k_value = 1 / (*alpha_value - 1);
  if (first > 2) {
    // p = u^k with k < 1 is ill-conditioned where u = c + a y is small (the support's edge): float
    // rows are solved and written in double, as the core solves every row, then rounded once
    // (not on Apple's MPS, which has no double).
    const at::ScalarType wide = y.device().is_mps() ? y.scalar_type() : at::kDouble;
    const at::Tensor yd = y.to(wide), ad = a.to(wide), kd = k.to(wide);
    const at::Tensor c = newton_offset(yd, ad, kd, n);
    const at::Tensor u = c + ad * yd;
    Solved s{at::where(u > 0, at::exp(kd * at::log(at::where(u > 0, u, 1.0))), 0.0),
             ad * shift.to(wide) - c};  // tau = a (shift + lambda) - 1 = a shift - c
    // Rows with an entry whose base is within the core's support_edge_window of 0, where the
    // rounding of c could move its p by 2^-40: (k 2^-10)^(1 / (1 - k)) c. (Never a degenerate
    // row, solved as zeros: all its bases are c.)
    const at::Tensor window = at::pow(kd * 0x1p-10, 1 / (1 - kd)) * c;
    const at::Tensor index = (at::abs(u) < window).any(-1).nonzero().reshape(-1);
    if (index.numel() > 0) {
      auto rows = [&](const at::Tensor& t) { return t.index_select(0, index); };
      const Solved refined = refine_support_edge(rows(x).to(wide), rows(ad), rows(kd), rows(u),
                                                 rows(c), {rows(s.p), rows(s.tau)});
      s.p.index_copy_(0, index, refined.p);
      s.tau.index_copy_(0, index, refined.tau);
    }
    return {s.p.to(y.scalar_type()), s.tau.to(y.scalar_type())};
  }
  const at::Tensor lambda = first > 1 ? newton_lambda(y, a, k, k_value, n) : newton_dense(y, a, k, n);
  at::Tensor p;
  if (first > 1) {
    p = write_power(y, a, k, lambda, k_value);
  } else {
    const at::Tensor finite = y > -std::numeric_limits<double>::infinity();
    p = at::where(finite, at::exp(k * at::log1p(at::where(finite, a * (y - lambda), 0.0))), 0.0);
  }
  return {p, a * (shift + lambda) - 1};
}

// alpha-entmax: one regime for a number alpha; a tensor alpha is split by regime, each group of
// rows solved on its own and scattered back.
Solved entmax_rows(const at::Tensor& x, const at::Tensor& y, const Parameter& parameter,
                   const at::Tensor& shift, std::int64_t n) {
  if (!parameter.is_per_row()) {
    const at::Tensor alpha = at::full_like(shift, parameter.value);
    return entmax_regime(x, y, alpha, parameter.value, shift, n);
  }
  const at::Tensor alpha = parameter.per_row.reshape({-1, 1});
  at::Tensor p = at::empty_like(y), tau = at::empty_like(shift);
  const at::Tensor regimes[] = {alpha == 1, (alpha > 1) & (alpha <= 2), alpha > 2, alpha < 1};
  for (const at::Tensor& in : regimes) {
    const at::Tensor index = in.reshape(-1).nonzero().reshape(-1);
    if (index.numel() == 0) continue;
    const Solved part =
        entmax_regime(x.index_select(0, index), y.index_select(0, index),
                      alpha.index_select(0, index), std::nullopt, shift.index_select(0, index), n);
    p.index_copy_(0, index, part.p);
    tau.index_copy_(0, index, part.tau);
  }
  return {p, tau};
}

// alpha-normmax: the power equation with a = 1, k = alpha/(alpha-1) gives lambda = t + 1, then
// p_i = [y_i - t]_+^r / Z, r = 1/(alpha-1), Z = sum_i [y_i - t]_+^r.
Solved normmax_rows(const at::Tensor& y, const Parameter& parameter, const at::Tensor& shift, std::int64_t n) {
  const at::Tensor alpha = parameter.is_per_row() ? parameter.per_row.reshape({-1, 1})
                                                  : at::full_like(shift, parameter.value);
  const at::Tensor r = 1 / (alpha - 1), q = alpha * r;
  std::optional<double> q_value;
  if (!parameter.is_per_row()) q_value = parameter.value / (parameter.value - 1);
  const at::Tensor t = newton_lambda(y, at::ones_like(alpha), q, q_value, n) - 1;
  const at::Tensor v = y - t;
  const at::Tensor inside = v > 0;
  const at::Tensor w = at::where(inside, at::exp(r * at::log(at::where(inside, v, 1.0))), 0.0);
  return {w / w.sum(-1, true), shift + t};
}

// budget: p = clip(y - t, 0, 1) with sum p = b (b capped at the number of finite entries).
// f(t) = sum clip(y - t, 0, 1) - b is piecewise linear and decreasing; with the active set
// A = {0 < y - t < 1} and the saturated set U = {y - t >= 1}, the root of the piece at t is
// (sum_A y + |U| - b) / |A|: Newton on the pieces, bracketed by bisection (the core's solve_budget).
at::Tensor budget_threshold(const at::Tensor& y, const at::Tensor& b) {
  const double eps = epsilon_of(y), inf = std::numeric_limits<double>::infinity();
  at::Tensor lo = at::where(y > -inf, y, inf).amin(-1, true) - 1, hi = y.amax(-1, true);
  at::Tensor t = lo.clone();
  at::Tensor done = at::zeros_like(t, t.options().dtype(at::kBool));
  at::Tensor previous_na = at::full_like(t, -1.0), previous_nu = at::full_like(t, -1.0);
  for (int it = 0; it < kMaxIterations && !all_true(done); ++it) {
    const at::Tensor u = y - t;
    const at::Tensor saturated = u >= 1, active = (u > 0) & ~saturated;
    const at::Tensor na = active.sum(-1, true).to(y.scalar_type()), nu = saturated.sum(-1, true).to(y.scalar_type());
    const at::Tensor f = at::where(active, u, 0.0).sum(-1, true) + nu - b;
    done = done | (f == 0);
    lo = at::where((f > 0) & ~done, t, lo);
    hi = at::where((f < 0) & ~done, t, hi);
    const at::Tensor root = (at::where(active, y, 0.0).sum(-1, true) + nu - b) / na;
    const at::Tensor use_root = (na > 0) & (root > lo) & (root < hi);
    const at::Tensor next = at::where(use_root, root, lo + 0.5 * (hi - lo));
    // The sets of the previous step again: the root of their piece is the threshold.
    const at::Tensor same_sets = use_root & (na == previous_na) & (nu == previous_nu);
    const at::Tensor small = (next == t) | (hi - lo <= 4 * eps * at::abs(t).clamp_min(1)) | same_sets;
    previous_na = na;
    previous_nu = nu;
    t = at::where(done, t, next);
    done = done | small;
  }
  return t;
}

// Solved once in the row's coordinates, then again relative to a pivot next to the threshold
// (the entry closest to it), as the core does: the active entries lie within 1 of t, so they
// are exact relative to the pivot however far they are from the maximum.
Solved budget_rows(const at::Tensor& y, const Parameter& parameter, const at::Tensor& shift) {
  const at::Tensor finite = y > -std::numeric_limits<double>::infinity();
  const at::Tensor b0 = parameter.is_per_row() ? parameter.per_row.reshape({-1, 1}) : at::full_like(shift, parameter.value);
  const at::Tensor b = at::minimum(b0, finite.sum(-1, true).to(y.scalar_type()));
  const at::Tensor rough = budget_threshold(y, b);
  const at::Tensor pivot = y.gather(-1, at::abs(y - rough).argmin(-1, true));
  const at::Tensor z = y - pivot;
  const at::Tensor t = budget_threshold(z, b);
  return {(z - t).clamp(0, 1), shift + pivot + t};
}

}  // namespace

void check_parameter(const char* op, const char* function, Map map, const Parameter& parameter, std::int64_t count,
                     std::int64_t length) {
  if (count == 0 || (map != Map::entmax && map != Map::normmax && map != Map::budget)) return;
  if (!parameter.is_per_row()) {
    if (!valid_parameter(map, parameter.value, length)) fail_parameter(op, function, map, parameter.value, 0, length);
    return;
  }
  if (parameter.per_row.is_meta()) return;
  const at::Tensor v = parameter.per_row.reshape(-1);
  at::Tensor valid = map == Map::entmax    ? (v > 0) & at::isfinite(v)
                     : map == Map::normmax ? (v > 1) & at::isfinite(v)
                                           : (v > 0) & (length == 0 ? at::ones_like(v, v.options().dtype(at::kBool))
                                                                    : v <= static_cast<double>(length));
  if (all_true(valid)) return;
  const std::int64_t row = (~valid).nonzero().flatten()[0].item<std::int64_t>();
  fail_parameter(op, function, map, v[row].item<double>(), row, length);
}

at::Tensor forward(Map map, const Parameter& parameter, const at::Tensor& rows, at::Tensor* tau) {
  const std::int64_t n = rows.size(-1);
  std::vector<std::int64_t> column_shape = rows.sizes().vec();
  column_shape.back() = 1;
  if (rows.is_meta() || rows.numel() == 0) {
    if (tau != nullptr) *tau = at::empty(column_shape, rows.options());
    return at::empty_like(rows);
  }
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor x = rows.reshape({-1, n});
  const at::Tensor max = x.amax(-1, true);  // NaN when the row holds one
  const at::Tensor not_finite = at::isnan(max) | (max == inf);
  const at::Tensor masked = max == -inf;
  const at::Tensor degenerate = not_finite | masked;
  // Rows without a distribution are solved as rows of zeros, then overwritten.
  const at::Tensor shift = at::where(degenerate, 0.0, max);
  const at::Tensor y = at::where(degenerate, 0.0, x - shift);
  Solved s;
  switch (map) {
    case Map::softmax: s = softmax_rows(y, shift); break;
    case Map::sparsemax: s = entmax_rows(x, y, {2, {}}, shift, n); break;
    case Map::entmax15: s = entmax_rows(x, y, {1.5, {}}, shift, n); break;
    case Map::entmax: s = entmax_rows(x, y, parameter, shift, n); break;
    case Map::normmax: s = normmax_rows(y, parameter, shift, n); break;
    case Map::budget: s = budget_rows(y, parameter, shift); break;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const at::Tensor p = at::where(not_finite, nan, at::where(masked, 0.0, s.p));
  if (tau != nullptr) *tau = at::where(not_finite, nan, at::where(masked, inf, s.tau)).reshape(column_shape);
  return p.reshape(rows.sizes());
}

at::Tensor backward(Map map, const Parameter& parameter, const at::Tensor& p, const at::Tensor& g) {
  if (p.is_meta() || p.numel() == 0) return at::empty_like(p);
  const at::Tensor positive = p > 0;
  const at::Tensor log_p = at::log(at::where(positive, p, 1.0));
  auto power = [&](const at::Tensor& e) { return at::where(positive, at::exp(e * log_p), 0.0); };
  const at::Tensor alpha = parameter.is_per_row() ? parameter.per_row : at::full({1}, parameter.value, p.options());
  if (map == Map::normmax) {
    const at::Tensor s = power(2 - alpha);
    const at::Tensor pz = at::where(positive, p, 0.0), gz = at::where(positive, g, 0.0);
    const at::Tensor A = (pz * gz).sum(-1, true);
    const at::Tensor B = (s * gz).sum(-1, true) - A * s.sum(-1, true);
    const at::Tensor C = at::pow(power(alpha).sum(-1, true), (alpha - 1) / alpha) / (alpha - 1);
    return at::where(positive, C * (s * (g - A) - p * B), at::where(at::isnan(p), p, 0.0));
  }
  at::Tensor s;
  switch (map) {
    case Map::softmax: s = p; break;
    case Map::sparsemax: s = positive.to(p.scalar_type()); break;
    case Map::entmax15: s = at::sqrt(p); break;
    case Map::budget: s = (positive & (p < 1)).to(p.scalar_type()); break;
    default:
      if (!parameter.is_per_row()) {
        const double a = parameter.value;
        s = a == 1 ? p : a == 2 ? positive.to(p.scalar_type()) : a == 1.5 ? at::sqrt(p) : power(at::full({1}, 2 - a, p.options()));
      } else {
        s = at::where(alpha == 1, p, at::where(alpha == 1.5, at::sqrt(p), power(2 - alpha)));
      }
  }
  // dx = s ((g - g_m) - sum s (g - g_m) / sum s), g_m the g of the row's largest weight: the same
  // dx as s (g - sum s g / sum s) for any g_m, and with this one a weight that dominates its row
  // (alpha > 2, an entry just inside the edge of the support) does not bring the rounding of
  // the sums back times itself (the core's Centring, docs/math.md section 3).
  const at::Tensor ss = s.sum(-1, true);
  const at::Tensor shifted = g - g.gather(-1, s.argmax(-1, true));
  const at::Tensor q = at::where(ss > 0, (s * shifted).sum(-1, true) / ss, 0.0);
  return s * (shifted - q);
}

namespace {
// (e^-y - 1 + y) / y^2 without the cancellation near y = 0: the series sum_k (-y)^k / (k + 2)!
// for |y| <= 1/2 (the core's phi).
at::Tensor phi(const at::Tensor& y) {
  const at::Tensor small = at::abs(y) <= 0.5;
  const at::Tensor ys = at::where(small, y, 0.0);
  at::Tensor term = at::full_like(y, 0.5), sum = term.clone();
  for (int k = 1; k <= 14; ++k) {
    term = term * (-ys) / (k + 2);
    sum = sum + term;
  }
  const at::Tensor yl = at::where(small, 1.0, y);
  return at::where(small, sum, (at::expm1(-yl) + yl) / yl.square());
}
}  // namespace

at::Tensor entmax_alpha_backward(const at::Tensor& p, const at::Tensor& g, const at::Tensor& alpha) {
  if (p.is_meta() || p.numel() == 0) return at::empty_like(alpha);
  const at::Tensor positive = p > 0;
  const at::Tensor pz = at::where(positive, p, 0.0), gz = at::where(positive, g, 0.0);
  const at::Tensor l = at::log(at::where(positive, p, 1.0));
  auto sum = [](const at::Tensor& t) { return t.sum(-1, true); };
  const at::Tensor a = alpha - 1;
  // alpha = 1: (1/2) sum_i g_i p_i (sum_j p_j l_j^2 - l_i^2).
  const at::Tensor gp = sum(gz * pz);
  const at::Tensor one = 0.5 * (gp * sum(pz * l * l) - sum(gz * pz * l * l));
  // |alpha - 1| < 1/4: [R Gp - GR + d (L GR - R GL)] / (1 - d L + d^2 R), r = l^2 phi(d l).
  const at::Tensor d = at::where(at::abs(a) < 0.25, a, 0.0);
  const at::Tensor r = l * l * phi(d * l);
  const at::Tensor L = sum(pz * l), R = sum(pz * r), GR = sum(gz * pz * r), GL = sum(gz * pz * l);
  const at::Tensor near = (R * gp - GR + d * (L * GR - R * GL)) / (1 - d * L + d * d * R);
  // Otherwise: (Gp - Gs^)/a^2 - (Gh - Gs^ H)/a, s = p^(2-alpha), Gs^ = sum g s / sum s, h = p l.
  const at::Tensor s = at::where(positive, at::exp((2 - alpha) * l), 0.0);
  const at::Tensor S = sum(s);
  const at::Tensor gs_hat = sum(gz * s) / at::where(S > 0, S, 1.0);
  const at::Tensor h = pz * l;
  const at::Tensor safe_a = at::where(a == 0, 1.0, a);
  const at::Tensor direct = at::where(S > 0, (gp - gs_hat) / safe_a.square() - (sum(gz * h) - gs_hat * sum(h)) / safe_a, 0.0);
  return at::where(a == 0, one, at::where(at::abs(a) < 0.25, near, direct));
}

}  // namespace sparcon::torch::generic
