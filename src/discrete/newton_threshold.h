// The Newton iteration of the power thresholds (k >= 1 or a < 0) and entmax-1.5's exact finish,
// written once for the two places that run them: the threshold solvers (threshold.cc, on a
// std::vector of candidates, the sums by the dispatched SIMD kernel) and the fused short-row
// kernel (simd_kernels-inl.h, on a block of candidates on the stack, the sums inlined). Both
// give the same results to the bit. Formulas in docs/math.md section 2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>

#include "discrete/simd_kernels.h"
#include "discrete/threshold.h"

namespace sparcon::detail {

/// The threshold of sum [1 + a (y - lambda)]_+^k = 1, for k >= 1 or a < 0, by Newton steps from
/// the lower bound lo, kept inside the bracket [lo, hi] by bisection. For k >= 1 they run on
/// F = (sum u^k)^(1/k) - 1, convex and decreasing like f = sum u^k - 1 but nearly linear far from
/// the root (Newton on f shrinks the distance only by a factor 1 - 1/k per step there), and for
/// k <= 4 on f itself once s - 1 <= 2^-10, where both are as good as linear. For a < 0 (entmax,
/// alpha < 1) they run on the convex f.
/// From the left neither leaves the bracket but by rounding.
/// `y` holds the candidates: y.size(), y.sums(lambda) (the simd::PowerSums of
/// u = 1 + a (y - lambda)) and y.drop_at_or_below(bound) (removes the entries <= bound).
/// `finish(lambda, sums)`, called at every lower bound lambda (s >= 1, whose set {u > 0} holds
/// the support) but on a set where it failed before, may return the exact threshold on that set
/// and end the iteration.
template <class Candidates, class Finish>
PowerThreshold newton_threshold(Candidates& y, double a, double k, std::size_t n, double lo,
                                Finish&& finish) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  constexpr int kMaxIterations = 200;
  // f(lo) >= 0 by the caller (0: the largest entry alone reaches 1). The upper end is needed
  // only if a step leaves the bracket (by rounding); the first such time it becomes the bound
  // at which every entry is at most 1/n, f(hi) <= 0.
  double hi = std::numeric_limits<double>::infinity();
  auto upper_bound = [&] { return -std::expm1(-std::log(static_cast<double>(n)) / k) / a; };
  double lambda = lo;
  std::size_t finish_failed_at = y.size() + 1;
  for (int it = 0; it < kMaxIterations; ++it) {
    const simd::PowerSums sums = y.sums(lambda);
    const double s = sums.s, slope = sums.slope;
    (s >= 1 ? lo : hi) = lambda;
    // A lower bound lambda (s >= 1) proves the entries with u <= 0 outside the support (a > 0):
    // once they are most of y, they leave it, so that the later steps sum fewer entries. The
    // margin keeps the entries that only rounding puts at u <= 0.
    if (a > 0 && s >= 1 && 2 * sums.count < y.size())
      y.drop_at_or_below(lambda - 1 / a - 4 * kEps * (std::abs(lambda) + 1 / a));
    if (s >= 1 && sums.count != finish_failed_at) {
      if (const std::optional<PowerThreshold> exact = finish(lambda, sums)) return *exact;
      finish_failed_at = sums.count;  // try again only on another set
    }
    if (s == 1 || slope == 0) break;
    // For k >= 1 the step -F/F' = (s - s^(1-1/k)) / (a slope), its numerator s (1 - s^(-1/k))
    // formed without cancelling: near alpha = 1 (k of 1e5) s^(-1/k) is 1 to rounding long
    // before s is. For a < 0, Newton's step on f.
    // Near the root (s - 1 below kNearRoot) both functions are as good as linear for k up to
    // kNearRootMaxK, and f's step needs no power of s: a scalar expm1 and log1p a step were a
    // sixth of the solve (alpha = 1.75 on rows of 128), on the path from one step to the next.
    // From the left f is convex and decreasing as well, so its step stays a lower bound. With
    // larger k, f curves too much there (the switch cost 7% at alpha = 1.2, k = 5, and 23-30%
    // at 1.05 and 1.001; measured on an AMD EPYC, 2026-12-03).
    constexpr double kNearRoot = 0x1p-10, kNearRootMaxK = 4;
    double next;
    if (k >= 1 && !(s - 1 <= kNearRoot && k <= kNearRootMaxK)) {
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

/// Exact finish for k = 2 (entmax-1.5, 2-normmax) on S = {u > 0} at a lower bound lambda, from
/// the sums of the last Newton step (u = c + z, z = a y, c = 1 - a lambda, K = |S|):
///   sum_S (z + c')^2 = 1  =>  c' = -mean_S z + sqrt((1 - M2)/K),  M2 = sum_S (z - mean)^2,
/// with mean_S z = sum u / K - c and M2 = sum u^2 - (sum u)^2 / K (M2 does not depend on the
/// shift c). It is the threshold when every entry of S stays in the support under c', i.e.
/// min_S u - c + c' >= 0: then sum_S (z + c')^2 = 1 <= sum_S u^2 gives c' <= c, so the entries
/// outside S (z + c <= 0) stay outside. Otherwise Newton goes on.
inline std::optional<PowerThreshold> quadratic_closed_form(double a, double lambda,
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

/// The threshold for k = 2 (entmax-1.5, 2-normmax) on candidates y with max 0, from a
/// lower bound lambda_lo: Newton with the exact finish above.
template <class Candidates>
PowerThreshold quadratic_threshold(Candidates& y, double a, std::size_t n, double lambda_lo) {
  return newton_threshold(y, a, 2.0, n, lambda_lo, [&](double lambda, const simd::PowerSums& sums) {
    return quadratic_closed_form(a, lambda, sums);
  });
}

/// The threshold of entmax in the row's coordinates: tau = a (max + lambda) - 1, for
/// p_i = [a x_i - tau]_+^(1/a).
template <class T>
T entmax_tau(double a, T max, double lambda) {
  return static_cast<T>(a * (static_cast<double>(max) + lambda) - 1);
}

}  // namespace sparcon::detail
