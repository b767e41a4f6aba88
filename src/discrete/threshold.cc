// Threshold solvers of the discrete maps; see threshold.h and docs/math.md section 2.
#include "discrete/threshold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "compensated_sum.h"
#include "discrete/newton_threshold.h"
#include "discrete/simd_kernels.h"

namespace sparcon::detail {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxIterations = 200;  // of offset_threshold and solve_budget (newton_threshold.h: the same)
// Up to this many candidates Michelot's passes sweep them all with SIMD instead of compacting.
constexpr std::size_t kFewCandidates = simd::kMaxFusedCandidates;  // the fused rows' bound too
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
// through log1p(a (y - lambda)) (the kernel's near_one), so that the rounding of 1 - a lambda is
// not amplified by k.
simd::PowerSums sums_at_lambda(const std::vector<double>& y, double a, double k, double lambda) {
  if (std::abs(a) >= simd::kNearOneA) return sums_at_offset(y, a, k, 1 - a * lambda);
  return simd::power_sums(y.data(), y.size(), {a, lambda, k, 0, true});
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

// The candidates of newton_threshold (newton_threshold.h) in a vector, with the sums of
// sums_at_lambda and the SIMD drop.
struct VectorCandidates {
  std::vector<double>& y;
  double a, k;
  std::size_t size() const { return y.size(); }
  simd::PowerSums sums(double lambda) const { return sums_at_lambda(y, a, k, lambda); }
  void drop_at_or_below(double bound) const { detail::drop_at_or_below(y, bound); }
};

// 0 < k < 1 (entmax, alpha > 2): the same equation in the offset c = 1 - a lambda, the value
// of the base at the maximum: f(c) = sum [c + a y]_+^k - 1 is increasing. With many entries
// near the maximum, c is tiny and 1 - a lambda would be lost to rounding; c itself keeps full
// relative precision. Newton steps, bracketed by bisection on [n^(-1/k), 1].
// The scan of a long row solves its candidates so far against its running maximum, which may
// not be among them (not reached yet): then y < 0 everywhere, and a step can land where no base
// is positive, f = -1 with a zero slope. That point is a lower end of the bracket like any other
// (bisection follows); stopping there, as this did until 2026-12-07, returned a c far too small,
// the scan's floor rose above entries of the support, and rows of more than 4096 entries with
// many near the maximum came out wrong (a ramp x_i = i 2^-16 of 4097 at alpha = 2.25: sum(p) =
// 11.7; found by an audit against mpmath).
PowerThreshold offset_threshold(std::vector<double>& y, double a, double k, std::size_t n) {
  double lo = std::exp(-std::log(static_cast<double>(n)) / k), hi = 1;
  double c = hi;
  bool probed = false;
  for (int it = 0; it < kMaxIterations; ++it) {
    const simd::PowerSums sums = sums_at_offset(y, a, k, c);
    const double f = sums.s - 1, slope = k * sums.slope;
    (f >= 0 ? hi : lo) = c;
    if (f == 0) break;
    double next = c - f / slope;  // +inf where the slope is 0 (f = -1): bisection
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
  VectorCandidates candidates{y, a, k};
  if (k == 2) return quadratic_threshold(candidates, a, n, lambda_lo);
  return newton_threshold(candidates, a, k, n, lambda_lo, [](double, const simd::PowerSums&) {
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
