// Slow, independent references for the discrete family, in long double (docs/math.md 1-2).
//
// Nothing here calls sparcon. Every reference works on one row:
// - softmax directly (logsumexp);
// - sparsemax and entmax-1.5 by a FULL SORT and cumulative sums (the classical algorithms);
// - entmax for any alpha (alpha < 1 included), normmax and budget by bisection on the threshold.
// Entries equal to -inf are left out (p = 0 there); a row with no finite entry gives p = 0 and
// tau = +inf. The finite entries are shifted by their maximum first (exact in long double for
// float and double inputs), and the threshold is shifted back, so `tau` is in the unshifted form
// of sparcon/discrete.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

namespace sparcon_test::ref {

using LD = long double;
inline constexpr LD kInf = std::numeric_limits<LD>::infinity();

/// A reference solution for one row.
struct Result {
  std::vector<LD> p;
  LD tau = 0;  ///< threshold, unshifted form of discrete.h (softmax: logsumexp)
  /// How p depends on its threshold, for error bounds: p_i = scale * [base_i]_+^exponent with
  /// base_i = (alpha-1) y_i - tau_shifted (entmax family) or y_i - tau_shifted (normmax);
  /// exponent = 0 marks maps where this form does not apply (softmax, budget).
  std::vector<LD> base;
  LD exponent = 0;
  LD scale = 1;
  LD tau_shifted = 0;  ///< tau of the shifted row, so that z_i = base_i + tau_shifted
  LD z_scale = 0;      ///< max |z_j| over the support (z_j = base_j + tau_shifted)
};

namespace detail {

/// Bisection for the root of a decreasing function f on [lo, hi] with f(lo) >= 0 >= f(hi):
/// halves until the interval stops shrinking in long double (at most 200 steps).
inline LD bisect_decreasing(const std::function<LD(LD)>& f, LD lo, LD hi) {
  for (int it = 0; it < 200; ++it) {
    const LD mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) break;
    if (f(mid) > 0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo + (hi - lo) / 2;
}

/// Runs `solve` on the finite entries of x, shifted so that their maximum is 0, and scatters
/// the result back. `solve` returns a Result for the shifted finite row with tau shifted; the
/// unshifted threshold is tau + tau_per_shift * max. With shift = false the row is not shifted
/// (the budget: its active entries may lie far below the maximum, where a shift would round).
template <class Solve>
Result on_finite(std::span<const LD> x, LD tau_per_shift, Solve solve, bool shift = true) {
  std::vector<std::size_t> index;
  LD m = -kInf;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != -kInf) {
      index.push_back(i);
      m = std::max(m, x[i]);
    }
  }
  Result out;
  out.p.assign(x.size(), 0);
  out.base.assign(x.size(), -kInf);
  if (index.empty()) {
    out.tau = kInf;
    return out;
  }
  if (!shift) m = 0;
  std::vector<LD> y(index.size());
  for (std::size_t k = 0; k < index.size(); ++k) y[k] = x[index[k]] - m;
  Result r = solve(std::span<const LD>(y));
  for (std::size_t k = 0; k < index.size(); ++k) {
    out.p[index[k]] = r.p[k];
    if (!r.base.empty()) out.base[index[k]] = r.base[k];
  }
  out.tau = r.tau + tau_per_shift * m;
  out.tau_shifted = r.tau;
  for (LD b : r.base) {
    if (b > 0) out.z_scale = std::max(out.z_scale, std::fabs(b + r.tau));
  }
  out.exponent = r.exponent;
  out.scale = r.scale;
  if (r.base.empty()) out.base.clear();
  return out;
}

inline Result softmax_shifted(std::span<const LD> y) {
  LD s = 0;
  for (LD v : y) s += std::exp(v);
  const LD lse = std::log(s);
  Result r;
  r.tau = lse;
  for (LD v : y) r.p.push_back(std::exp(v - lse));
  return r;
}

/// Entries sorted in decreasing order.
inline std::vector<LD> sorted_descending(std::span<const LD> y) {
  std::vector<LD> z(y.begin(), y.end());
  std::sort(z.begin(), z.end(), std::greater<LD>());
  return z;
}

inline Result sparsemax_sorted(std::span<const LD> y) {
  const std::vector<LD> z = sorted_descending(y);
  // Support size k = max{k : 1 + k z_(k) > sum_{j <= k} z_(j)}, tau = (sum_{j<=k} z_(j) - 1)/k.
  LD cumulative = 0, tau = 0;
  for (std::size_t k = 1; k <= z.size(); ++k) {
    cumulative += z[k - 1];
    if (1 + static_cast<LD>(k) * z[k - 1] > cumulative) tau = (cumulative - 1) / static_cast<LD>(k);
  }
  Result r;
  r.tau = tau;
  r.exponent = 1;
  for (LD v : y) {
    r.base.push_back(v - tau);
    r.p.push_back(std::max<LD>(v - tau, 0));
  }
  return r;
}

inline Result entmax15_sorted(std::span<const LD> y) {
  std::vector<LD> z = sorted_descending(y);
  for (LD& v : z) v /= 2;
  // tau_k = mean_k - sqrt(max(0, (1 - ss_k)/k)), ss_k = k (mean of squares - mean^2);
  // the support is the largest k with tau_k <= z_(k).
  LD s1 = 0, s2 = 0, tau = 0;
  for (std::size_t k = 1; k <= z.size(); ++k) {
    const LD kk = static_cast<LD>(k);
    s1 += z[k - 1];
    s2 += z[k - 1] * z[k - 1];
    const LD mean = s1 / kk;
    const LD ss = kk * (s2 / kk - mean * mean);
    const LD tau_k = mean - std::sqrt(std::max<LD>(0, (1 - ss) / kk));
    if (tau_k <= z[k - 1]) tau = tau_k;
  }
  Result r;
  r.tau = tau;
  r.exponent = 2;
  for (LD v : y) {
    const LD b = v / 2 - tau;
    r.base.push_back(b);
    r.p.push_back(b > 0 ? b * b : 0);
  }
  return r;
}

/// [1 + w]_+^(1/(alpha-1)), accurate for small alpha - 1 (w = (alpha-1)(y - lambda)).
inline LD entmax_power(LD w, LD alpha) {
  if (!(w > -1)) return 0;
  return std::exp(std::log1p(w) / (alpha - 1));
}

/// Any alpha != 1, by bisection on the threshold. Two equivalent forms of
///   p_i = [(alpha-1) y_i - tau]_+^(1/(alpha-1)):
/// - near alpha = 1, with tau = (alpha-1) lambda - 1: p_i = [1 + (alpha-1)(y_i - lambda)]_+^(1/(alpha-1)),
///   which stays accurate as alpha -> 1 (lambda -> logsumexp); sum p decreases in lambda, and
///   lambda lies in [0, (1 - n^(1-alpha))/(alpha-1)];
/// - elsewhere on tau itself, which keeps full relative accuracy when tau is tiny (large alpha
///   with many tied maxima): tau in [-1, 0] for alpha > 1, tau in [-n^(1-alpha), -1] for alpha < 1.
inline Result entmax_bisection(std::span<const LD> y, LD alpha) {
  const LD am1 = alpha - 1;
  const LD e = 1 / am1;
  std::vector<LD> candidates;  // for alpha > 1, entries with (alpha-1) y <= -1 are never in
  for (LD v : y) {
    if (alpha < 1 || v * am1 > -1) candidates.push_back(v);
  }
  const LD n = static_cast<LD>(y.size());
  Result r;
  r.exponent = e;
  if (std::fabs(am1) < 0.25L) {
    LD hi = -std::expm1(-am1 * std::log(n)) / am1;
    hi = hi * (1 + 1e-9L) + 1e-9L;
    auto f = [&](LD lambda) {
      LD s = 0;
      for (LD v : candidates) s += entmax_power(am1 * (v - lambda), alpha);
      return s - 1;
    };
    const LD lambda = bisect_decreasing(f, 0, hi);
    r.tau = am1 * lambda - 1;
    for (LD v : y) {
      r.p.push_back(entmax_power(am1 * (v - lambda), alpha));
      r.base.push_back(1 + am1 * (v - lambda));
    }
    return r;
  }
  auto power = [e](LD base) { return base > 0 ? std::exp(e * std::log(base)) : LD(0); };
  LD tau = 0;
  if (alpha > 1) {
    auto f = [&](LD t) {
      LD s = 0;
      for (LD v : candidates) s += power(am1 * v - t);
      return s - 1;
    };
    tau = bisect_decreasing(f, -1, 0);
  } else {  // sum p increases with tau: bisect on -tau
    auto f = [&](LD minus_t) {
      LD s = 0;
      for (LD v : candidates) s += power(am1 * v + minus_t);
      return s - 1;
    };
    tau = -bisect_decreasing(f, 1, std::pow(n, -am1) * (1 + 1e-9L));
  }
  r.tau = tau;
  for (LD v : y) {
    r.base.push_back(am1 * v - tau);
    r.p.push_back(power(am1 * v - tau));
  }
  return r;
}

/// normmax: sum [y - tau]_+^(alpha/(alpha-1)) = 1 with tau in [-1, 0], then p proportional to
/// [y - tau]_+^(1/(alpha-1)).
inline Result normmax_bisection(std::span<const LD> y, LD alpha) {
  const LD q = alpha / (alpha - 1);
  std::vector<LD> candidates;
  for (LD v : y) {
    if (v > -1) candidates.push_back(v);
  }
  auto f = [&](LD t) {
    LD s = 0;
    for (LD v : candidates) {
      if (v > t) s += std::pow(v - t, q);
    }
    return s - 1;
  };
  const LD tau = bisect_decreasing(f, -1, 0);
  Result r;
  r.tau = tau;
  r.exponent = 1 / (alpha - 1);
  LD total = 0;
  for (LD v : y) {
    const LD u = v > tau ? std::pow(v - tau, r.exponent) : 0;
    r.p.push_back(u);
    r.base.push_back(v - tau);
    total += u;
  }
  for (LD& v : r.p) v /= total;
  r.scale = 1 / total;
  return r;
}

/// budget: p = clip(y - tau, 0, 1) with sum p = b. Bisection on tau in [min y - 1, max y], done
/// twice: the second time on y - a, where the anchor a is the entry nearest the middle of the
/// active band found the first time. The entries within 1 of tau are then exact even when the row
/// spans magnitudes where long double can not resolve 1 (1e20): far entries round, but stay far.
inline Result budget_bisection(std::span<const LD> y, LD b) {
  auto solve = [b](std::span<const LD> v) {
    const LD mn = *std::min_element(v.begin(), v.end());
    const LD mx = *std::max_element(v.begin(), v.end());
    auto f = [&](LD t) {
      LD s = 0;
      for (LD w : v) s += std::clamp<LD>(w - t, 0, 1);
      return s - b;
    };
    return bisect_decreasing(f, mn - (1 + 1e-17L * std::fabs(mn)), mx);
  };
  const LD tau0 = solve(y);
  LD anchor = y[0];
  for (LD v : y) {
    if (std::fabs(v - tau0 - 0.5L) < std::fabs(anchor - tau0 - 0.5L)) anchor = v;
  }
  std::vector<LD> shifted(y.begin(), y.end());
  for (LD& v : shifted) v -= anchor;
  const LD tau1 = solve(shifted);
  Result r;
  r.tau = tau1 + anchor;
  for (LD v : shifted) r.p.push_back(std::clamp<LD>(v - tau1, 0, 1));
  return r;
}

}  // namespace detail

/// softmax(x), tau = logsumexp(x).
inline Result softmax(std::span<const LD> x) { return detail::on_finite(x, 1, detail::softmax_shifted); }

/// sparsemax(x) by full sort, p = [x - tau]_+.
inline Result sparsemax(std::span<const LD> x) {
  return detail::on_finite(x, 1, detail::sparsemax_sorted);
}

/// entmax-1.5(x) by full sort, p = [x/2 - tau]_+^2.
inline Result entmax15(std::span<const LD> x) {
  return detail::on_finite(x, 0.5L, detail::entmax15_sorted);
}

/// entmax_alpha(x) for any alpha > 0 by bisection (alpha = 1: softmax).
inline Result entmax(std::span<const LD> x, LD alpha) {
  if (alpha == 1) return softmax(x);
  return detail::on_finite(x, alpha - 1,
                           [alpha](std::span<const LD> y) { return detail::entmax_bisection(y, alpha); });
}

/// alpha-normmax(x), alpha > 1, by bisection; tau in the form p ~ [x - tau]_+^(1/(alpha-1)).
inline Result normmax(std::span<const LD> x, LD alpha) {
  return detail::on_finite(x, 1,
                           [alpha](std::span<const LD> y) { return detail::normmax_bisection(y, alpha); });
}

/// Capped-simplex projection with sum p = b (b <= number of finite entries), by bisection.
inline Result budget(std::span<const LD> x, LD b) {
  return detail::on_finite(x, 1, [b](std::span<const LD> y) { return detail::budget_bisection(y, b); },
                           /*shift=*/false);
}

/// Tsallis entropy H^T_alpha(p) (Shannon at alpha = 1), over the entries with p > 0.
inline LD tsallis_entropy(std::span<const LD> p, LD alpha) {
  LD h = 0;
  if (alpha == 1) {
    for (LD v : p) {
      if (v > 0) h -= v * std::log(v);
    }
    return h;
  }
  LD s = 0;
  for (LD v : p) {
    if (v > 0) s += std::pow(v, alpha);
  }
  return (1 - s) / (alpha * (alpha - 1));
}

/// <p - e_y, x> over the finite entries (0 * -inf counts as 0; x_y = -inf gives +inf).
inline LD linear_term(std::span<const LD> p, std::span<const LD> x, std::size_t y) {
  if (x[y] == -kInf) return kInf;
  LD s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (p[i] > 0) s += p[i] * x[i];
  }
  return s - x[y];
}

/// Fenchel-Young loss of the entmax family: H^T_alpha(p) + <p - e_y, x>, p = entmax_alpha(x).
inline LD entmax_loss(std::span<const LD> x, std::size_t y, LD alpha) {
  const Result r = entmax(x, alpha);
  return tsallis_entropy(r.p, alpha) + linear_term(r.p, x, y);
}

/// Cross-entropy, the alpha = 1 loss written independently: logsumexp(x) - x_y.
inline LD cross_entropy(std::span<const LD> x, std::size_t y) {
  LD m = -kInf;
  for (LD v : x) m = std::max(m, v);
  LD s = 0;
  for (LD v : x) s += std::exp(v - m);
  return m + std::log(s) - x[y];
}

/// normmax loss: 1 - ||p||_alpha + <p - e_y, x>.
inline LD normmax_loss(std::span<const LD> x, std::size_t y, LD alpha) {
  const Result r = normmax(x, alpha);
  LD s = 0;
  for (LD v : r.p) {
    if (v > 0) s += std::pow(v, alpha);
  }
  return 1 - std::pow(s, 1 / alpha) + linear_term(r.p, x, y);
}

}  // namespace sparcon_test::ref
