// Exact thresholds of the discrete maps, solved on a small set of candidate entries.
//
// The caller shifts a row by its maximum (y_i = x_i - max x <= 0) and passes the entries that
// can be in the support (every entry, or the candidates of the SIMD scan). All arithmetic is in
// double with compensated sums, whatever the row type.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace sparcon::detail {

/// The largest T that is <= v: thresholds used to drop entries must never round upward.
/// Without a branch: v rounded to nearest, then one step toward -inf where that went above v
/// (the bits of t less 1 where t >= 0, plus 1 where t < 0; t = +0 only rounds v >= 0, which
/// takes no step). A branch on the rounding, as good as random, was mispredicted about every
/// other time, after the chain of reductions that computed v (Kernels::power_rows' bounds).
/// NaN stays NaN.
template <class T>
T round_down(double v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  const T t = static_cast<T>(v);
  const Bits bits = std::bit_cast<Bits>(t);
  const Bits toward_minus_inf = -1 - 2 * (bits >> (8 * sizeof(Bits) - 1));  // -1 or +1
  const Bits above = -static_cast<Bits>(static_cast<double>(t) > v);         // all ones or 0
  return std::bit_cast<T>(static_cast<Bits>(bits + (toward_minus_inf & above)));
}

/// The candidate threshold of a row of a sparse power map with maximum `max`: entries strictly
/// above it include every entry of the support, those at or below it have p = 0. An entry y of
/// the support has y > lambda - 1/a >= -1/a relative to the maximum (lambda >= 0), so it is the
/// largest T at or below max - 1/a, less a margin of 4 eps (|max| + gap) that covers the rounding
/// of gap = 1/a (in double) and of the subtraction; never max itself (when the gap is lost to the
/// spacing of T near max), and never below `floor` (a lower bound of the threshold found so far).
/// Rounded to nearest in T instead, max - 1/a could land above the true edge, on an entry of the
/// support: with alpha = 1.4, float rows [3e7, 29999998] have max - 2.5 = 29999997.5, which rounds
/// to 29999998, and that entry (p = 0.016) was no candidate (BENCHMARKS.md Part 39).
template <class T>
T candidate_threshold(T max, double gap, T floor) {
  const double below = static_cast<double>(max) - gap;
  T t = round_down<T>(below - 4 * std::numeric_limits<double>::epsilon() *
                                  (std::abs(static_cast<double>(max)) + gap));
  if (t >= max && max != -std::numeric_limits<T>::infinity())
    t = std::nextafter(max, -std::numeric_limits<T>::infinity());
  return t < floor ? floor : t;
}

/// Threshold of a row in shifted form. For the power maps (entmax, normmax), with
/// y_i = x_i - max x:   p_i proportional to [1 + a (y_i - lambda)]_+^k = [a y_i + offset]_+^k,
/// offset = 1 - a lambda. Entmax has a = alpha - 1, k = 1/a, and its unshifted tau of
/// p_i = [(alpha-1) x_i - tau]_+^(1/(alpha-1)) is a (max x + lambda) - 1.
struct PowerThreshold {
  double lambda = 0;
  double offset = 1;
};

/// Solves sum_i [1 + a (y_i - lambda)]_+^k = 1 for lambda, given a != 0 and k with a k > 0,
/// the candidates y (max 0, every support entry present; some entries proven outside the
/// support may be removed from y, never a support entry), n the row length (for the bracket)
/// and a known lower bound lambda_lo >= 0 of lambda (0 always is one).
/// k = 1 (sparsemax): up to 16 candidates the support criterion evaluated for every entry at
/// once (no sort, no iteration), else Michelot's method; then the closed form on the support.
/// k = 2 with up to 32 candidates: the same with the criterion of k = 2 (docs/math.md).
/// k >= 1 otherwise:
/// Newton steps on (sum u^k)^(1/k) - 1 safeguarded by a bisection bracket, to machine precision,
/// with the closed form for k = 2 (entmax-1.5, 2-normmax) at the first lower bound where it is
/// exact (every entry of {u > 0} stays in the support) and does not cancel (sum u^2 <= 2).
/// 0 < k < 1 (entmax, alpha > 2): Newton in the offset 1 - a lambda. a < 0 (entmax, alpha < 1):
/// every entry is in the support.
PowerThreshold solve_power_threshold(std::vector<double>& y, double a, double k, std::size_t n,
                                     double lambda_lo = 0);

/// Budget threshold t: sum_i clip(y_i - t, 0, 1) = b (y unshifted, -inf for masked entries), for 0 < b <= number of
/// finite y. Exact: the closed form (sum_A y + |U| - b)/|A| on the identified active set A and
/// saturated set U.
double solve_budget(const std::vector<double>& y, double b);

}  // namespace sparcon::detail
