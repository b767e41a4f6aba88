// Threshold solvers of the discrete maps; see threshold.h and docs/math.md section 2.
#include "discrete/threshold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "compensated_sum.h"
#include "discrete/simd_kernels.h"

namespace sparcon::detail {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxIterations = 200;
// Up to this many candidates Michelot's passes sweep them all with SIMD instead of compacting.
constexpr std::size_t kFewCandidates = 256;
// Up to simd::kPairwiseLinear / kPairwiseQuadratic candidates the pairwise criteria (n^2
// compares, no iteration) beat Michelot's passes (k = 1) and Newton's steps (k = 2); the fused
// short-row kernel uses the same bounds.
using simd::kPairwiseLinear;
using simd::kPairwiseQuadratic;

// sum_{i in [begin, end)} term(i) by pairwise summation: an error of O(eps log n) like a
// compensated sum, without its serial dependency from one term to the next.
template <class Term>
double pairwise_sum(std::size_t begin, std::size_t end, const Term& term) {
  if (end - begin <= 32) {
    double s[4] = {0, 0, 0, 0};
    std::size_t i = begin;
    for (; i + 4 <= end; i += 4)
      for (std::size_t j = 0; j < 4; ++j) s[j] += term(i + j);
    for (; i < end; ++i) s[0] += term(i);
    return (s[0] + s[1]) + (s[2] + s[3]);
  }
  const std::size_t middle = begin + (end - begin) / 2;
  return pairwise_sum(begin, middle, term) + pairwise_sum(middle, end, term);
}

// Sums of u^k and u^(k-1) over the candidates, with u = c + a y (the offset form), by the
// SIMD kernel.
simd::PowerSums sums_at_offset(const std::vector<double>& y, double a, double k, double c) {
  const int integer = k == std::floor(k) && k >= 1 && k <= 4 ? static_cast<int>(k) : 0;
  return simd::power_sums(y.data(), y.size(), {a, c, k, integer});
}

// The same with u = 1 + a (y - lambda). Close to alpha = 1 (|a| < 0.1, k > 10) the powers go
// through log1p(a (y - lambda)) in scalar code, so that the rounding of 1 - a lambda is not
// amplified by k.
simd::PowerSums sums_at_lambda(const std::vector<double>& y, double a, double k, double lambda) {
  if (std::abs(a) >= 0.1) return sums_at_offset(y, a, k, 1 - a * lambda);
  simd::PowerSums sums;
  sums.lowest = std::numeric_limits<double>::infinity();
  for (const double v : y) {
    const double t = a * (v - lambda);
    if (!(t > -1)) continue;
    const double pk1 = std::exp((k - 1) * std::log1p(t));
    sums.s += pk1 * (1 + t);
    sums.slope += pk1;
    ++sums.count;
    sums.lowest = std::min(sums.lowest, 1 + t);
  }
  return sums;
}

// Removes the entries with y <= bound (proven outside the support), by the SIMD kernel.
void drop_at_or_below(std::vector<double>& y, double bound) {
  y.resize(simd::drop_at_or_below(y.data(), y.size(), bound));
}

// k = 1 (sparsemax), p = [z + offset]_+ with z = a y: Michelot's method. With
// offset_S = (1 - sum_S z)/|S|, -offset_S/a is a lower bound of the threshold for every S that
// holds the support, so entries at or below it leave; when none leaves, S is the support.
// Up to kPairwiseLinear candidates (the common case: rows of N(0,1) scores keep ~12 of 512)
// the support comes from the sorted criterion without sorting (simd::sparsemax_offset_pairwise,
// no iteration). Up to kFewCandidates each
// pass is a SIMD sweep that leaves y in place (simd::michelot_offset, whose last offset_S is
// the result). More: scalar passes that compact y, so that later passes read only what is
// left, and offset_S on the support recomputed with a pairwise sum.
PowerThreshold linear_threshold(std::vector<double>& y, double a) {
  if (y.size() <= kPairwiseLinear) {
    const double offset = simd::sparsemax_offset_pairwise(y.data(), y.size(), a);
    return {(1 - offset) / a, offset};
  }
  if (y.size() <= kFewCandidates) {
    const double offset = simd::michelot_offset(y.data(), y.size(), a);
    return {(1 - offset) / a, offset};
  }
  for (double bound = -std::numeric_limits<double>::infinity();;) {
    std::size_t kept = 0;
    double sum = 0;
    for (const double v : y) {  // branch-free: which entries leave is data-dependent
      const bool in = v > bound;
      y[kept] = v;
      kept += in;
      sum += static_cast<double>(in) * v;
    }
    const bool stable = kept == y.size();
    y.resize(kept);
    if (stable && bound > -std::numeric_limits<double>::infinity()) break;
    bound = -(1 - a * sum) / (static_cast<double>(kept) * a);
  }
  const double sum = pairwise_sum(0, y.size(), [&](std::size_t i) { return a * y[i]; });
  const double offset = (1 - sum) / static_cast<double>(y.size());
  return {(1 - offset) / a, offset};
}

// The threshold of sum [1 + a (y - lambda)]_+^k = 1, for k >= 1 or a < 0, by Newton steps from
// the lower bound lo, kept inside the bracket [lo, hi] by bisection. For k >= 1 they run on
// F = (sum u^k)^(1/k) - 1, convex and decreasing like f = sum u^k - 1 but nearly linear far from
// the root (Newton on f shrinks the distance only by a factor 1 - 1/k per step there). For
// a < 0 (entmax, alpha < 1) they run on the convex f.
// From the left neither leaves the bracket but by rounding.
// `finish(lambda, sums)`, called at every lower bound lambda (s >= 1, whose set {u > 0} holds
// the support) but on a set where it failed before, may return the exact threshold on that set
// and end the iteration.
template <class Finish>
PowerThreshold newton_threshold(std::vector<double>& y, double a, double k, std::size_t n,
                                double lo, Finish&& finish) {
  // f(lo) >= 0 by the caller (0: the largest entry alone reaches 1). The upper end is needed
  // only if a step leaves the bracket (by rounding); the first such time it becomes the bound
  // at which every entry is at most 1/n, f(hi) <= 0.
  double hi = std::numeric_limits<double>::infinity();
  auto upper_bound = [&] { return -std::expm1(-std::log(static_cast<double>(n)) / k) / a; };
  double lambda = lo;
  std::size_t finish_failed_at = y.size() + 1;
  for (int it = 0; it < kMaxIterations; ++it) {
    const simd::PowerSums sums = sums_at_lambda(y, a, k, lambda);
    const double s = sums.s, slope = sums.slope;
    (s >= 1 ? lo : hi) = lambda;
    // A lower bound lambda (s >= 1) proves the entries with u <= 0 outside the support (a > 0):
    // once they are most of y, they leave it, so that the later steps sum fewer entries. The
    // margin keeps the entries that only rounding puts at u <= 0.
    if (a > 0 && s >= 1 && 2 * sums.count < y.size())
      drop_at_or_below(y, lambda - 1 / a - 4 * kEps * (std::abs(lambda) + 1 / a));
    if (s >= 1 && sums.count != finish_failed_at) {
      if (const std::optional<PowerThreshold> exact = finish(lambda, sums)) return *exact;
      finish_failed_at = sums.count;  // try again only on another set
    }
    if (s == 1 || slope == 0) break;
    // For k >= 1 the step -F/F' = (s - s^(1-1/k)) / (a slope), its numerator s (1 - s^(-1/k))
    // formed without cancelling: near alpha = 1 (k of 1e5) s^(-1/k) is 1 to rounding long
    // before s is. For a < 0, Newton's step on f.
    double next;
    if (k >= 1) {
      const double numerator = k == 2 ? (s - 1) * std::sqrt(s) / (std::sqrt(s) + 1)
                                      : -s * std::expm1(-std::log1p(s - 1) / k);
      next = lambda + numerator / (a * slope);
    } else {
      next = lambda + (s - 1) / (a * k * slope);
    }
    // A step at the rounding level ends the iteration, also when rounding puts it just outside
    // the bracket (bisecting then would throw lambda far from the root it has reached). The
    // step bounds the distance to the root: the derivative is continuous for k >= 1 and a < 0.
    if (std::abs(next - lambda) <= 4 * kEps * std::max(1.0, std::abs(lambda))) {
      if (next > lo && next < hi) lambda = next;
      break;
    }
    if (!(next > lo && next < hi)) {
      if (hi == std::numeric_limits<double>::infinity()) hi = std::max(lo, upper_bound());
      next = lo + 0.5 * (hi - lo);
    }
    lambda = next;
  }
  return {lambda, 1 - a * lambda};
}

// Exact finish for k = 2 (entmax-1.5, 2-normmax) on S = {u > 0} at a lower bound lambda, from
// the sums of the last Newton step (u = c + z, z = a y, c = 1 - a lambda, K = |S|):
//   sum_S (z + c')^2 = 1  =>  c' = -mean_S z + sqrt((1 - M2)/K),  M2 = sum_S (z - mean)^2,
// with mean_S z = sum u / K - c and M2 = sum u^2 - (sum u)^2 / K (M2 does not depend on the
// shift c). It is the threshold when every entry of S stays in the support under c', i.e.
// min_S u - c + c' >= 0: then sum_S (z + c')^2 = 1 <= sum_S u^2 gives c' <= c, so the entries
// outside S (z + c <= 0) stay outside. Otherwise Newton goes on.
std::optional<PowerThreshold> quadratic_closed_form(double a, double lambda,
                                                    const simd::PowerSums& sums) {
  // M2 as a difference loses about eps sum u^2 to cancellation: only near the root (sum u^2 <= 2)
  // is that at the rounding level of the threshold.
  if (!(sums.s <= 2)) return std::nullopt;
  const double size = static_cast<double>(sums.count), c = 1 - a * lambda;
  const double m2 = std::max(0.0, sums.s - sums.slope * sums.slope / size);
  if (!(m2 <= 1)) return std::nullopt;
  const double shift = std::sqrt((1 - m2) / size) - sums.slope / size;  // c' - c
  if (!(sums.lowest + shift >= 0)) return std::nullopt;
  const double offset = c + shift;
  return PowerThreshold{(1 - offset) / a, offset};
}

// 0 < k < 1 (entmax, alpha > 2): the same equation in the offset c = 1 - a lambda, the value
// of the base at the maximum: f(c) = sum [c + a y]_+^k - 1 is increasing. With many entries
// near the maximum, c is tiny and 1 - a lambda would be lost to rounding; c itself keeps full
// relative precision. Newton steps, bracketed by bisection on [n^(-1/k), 1].
PowerThreshold offset_threshold(std::vector<double>& y, double a, double k, std::size_t n) {
  double lo = std::exp(-std::log(static_cast<double>(n)) / k), hi = 1;
  double c = hi;
  bool probed = false;
  for (int it = 0; it < kMaxIterations; ++it) {
    const simd::PowerSums sums = sums_at_offset(y, a, k, c);
    const double f = sums.s - 1, slope = k * sums.slope;
    (f >= 0 ? hi : lo) = c;
    if (f == 0 || slope == 0) break;
    double next = c - f / slope;
    if (!(next > lo && next < hi)) {
      // A step outside the bracket at the rounding level of c: either c is the root to
      // rounding, or an entry at the support boundary (f' huge there) stalls the steps long
      // before f is 0. A probe two ulps toward the root tells which (the bracket closes, or
      // the next step bisects); a larger step that left the bracket bisects at once.
      const double probe = f < 0 ? c * (1 + 2 * kEps) : c * (1 - 2 * kEps);
      const bool stalled = std::abs(next - c) <= 4 * kEps * c;
      probed = stalled && !probed && probe > lo && probe < hi;
      next = probed ? probe : lo + 0.5 * (hi - lo);
    } else {
      probed = false;
    }
    // Stop on the bracket, not on the step (which may be tiny far from the root, see above).
    const bool done = next == c || hi - lo <= 2 * kEps * hi;
    c = next;
    if (done) break;
  }
  return {(1 - c) / a, c};
}

}  // namespace

PowerThreshold solve_power_threshold(std::vector<double>& y, double a, double k, std::size_t n,
                                     double lambda_lo) {
  if (k == 1) return linear_threshold(y, a);
  if (k > 0 && k < 1) return offset_threshold(y, a, k, n);
  if (a > 0 && lambda_lo > 0) drop_at_or_below(y, lambda_lo - 1 / a);
  if (k == 2 && a > 0 && y.size() <= kPairwiseQuadratic) {
    const double offset = simd::quadratic_offset_pairwise(y.data(), y.size(), a);
    return {(1 - offset) / a, offset};
  }
  if (k == 2)
    return newton_threshold(y, a, k, n, lambda_lo, [&](double lambda, const simd::PowerSums& sums) {
      return quadratic_closed_form(a, lambda, sums);
    });
  return newton_threshold(y, a, k, n, lambda_lo, [](double, const simd::PowerSums&) {
    return std::optional<PowerThreshold>();
  });
}

double solve_budget(const std::vector<double>& y, double b) {
  // f(t) = sum clip(y - t, 0, 1) - b is piecewise linear and decreasing; with the active set
  // A = {0 < y - t < 1} and the saturated set U = {y - t >= 1} of a point t, the root of its
  // piece is (sum_A y + |U| - b) / |A|. Newton on the pieces, bracketed by bisection.
  double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
  for (double v : y) {
    if (std::isfinite(v)) lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  double lo = lowest - 1, hi = highest;  // f(lo) = (finite entries) - b >= 0, f(hi) = -b < 0
  double t = lo;
  for (int it = 0; it < kMaxIterations; ++it) {
    CompensatedSum active_sum, f;
    std::size_t active = 0, saturated = 0;
    for (double v : y) {
      const double u = v - t;
      if (u >= 1) {
        ++saturated;
      } else if (u > 0) {
        ++active;
        active_sum += v;
        f += u;
      }
    }
    f += static_cast<double>(saturated) - b;
    if (f.value() == 0) return t;
    (f.value() > 0 ? lo : hi) = t;
    double next = lo + 0.5 * (hi - lo);
    if (active > 0) {
      const double piece_root =
          (active_sum.value() + static_cast<double>(saturated) - b) / static_cast<double>(active);
      if (piece_root > lo && piece_root < hi) next = piece_root;
    }
    if (next == t || hi - lo <= 4 * kEps * std::max(1.0, std::abs(t))) return next;
    t = next;
  }
  return t;
}

}  // namespace sparcon::detail
