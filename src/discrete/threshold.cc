// Threshold solvers of the discrete maps; see threshold.h and MATH.md section 1.
#include "discrete/threshold.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compensated_sum.h"

namespace sparcon::detail {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxIterations = 200;

// Removes the entries with y <= bound (they are proven outside the support).
void drop_at_or_below(std::vector<double>& y, double bound) {
  y.erase(std::remove_if(y.begin(), y.end(), [bound](double v) { return v <= bound; }), y.end());
}

// k = 1 (sparsemax), p = [z + offset]_+ with z = a y: Michelot's method. With
// offset_S = (1 - sum_S z)/|S|, -offset_S is a lower bound of the threshold for every S that
// holds the support, so entries at or below it leave; when none leaves, S is the support and
// offset_S, recomputed with a compensated sum, is exact.
PowerThreshold linear_threshold(std::vector<double>& y, double a) {
  for (;;) {
    double sum = 0;
    for (double v : y) sum += v;
    const double offset = (1 - a * sum) / static_cast<double>(y.size());
    const std::size_t before = y.size();
    drop_at_or_below(y, -offset / a);
    if (y.size() == before) break;
  }
  CompensatedSum sum;
  for (double v : y) sum += a * v;
  const double offset = (1 - sum.value()) / static_cast<double>(y.size());
  return {(1 - offset) / a, offset};
}

// k = 2 (entmax-1.5, 2-normmax), p = [z - tau]_+^2 with z = a y. On a set S taken as the
// support, sum_S (z - tau)^2 = 1 gives tau_S = mean_S z - sqrt((1 - M2)/|S|) with
// M2 = sum_S (z - mean)^2; it is the threshold when every z in S lies above it. Otherwise a
// Newton step from the left on the convex f(tau) = sum (z - tau)_+^2 - 1 raises the lower
// bound and removes entries. The accepted tau_S is recomputed with compensated sums.
PowerThreshold quadratic_threshold(std::vector<double>& y, double a, double tau) {
  drop_at_or_below(y, tau / a);
  for (int it = 0; it < kMaxIterations; ++it) {
    // One Newton step from the left, dropping the entries it proves outside the support.
    double f = -1, slope = 0;
    for (double v : y) {
      const double u = a * v - tau;
      f += u * u;
      slope += 2 * u;
    }
    const double next = tau + f / slope;
    if (!(next > tau)) break;  // converged to rounding
    tau = next;
    const std::size_t before = y.size();
    drop_at_or_below(y, tau / a);
    if (y.size() != before) continue;
    // The support did not change: try the closed form on it.
    const double size = static_cast<double>(y.size());
    double s1 = 0, s2 = 0, lowest = 0;
    for (double v : y) {
      s1 += a * v;
      s2 += (a * v) * (a * v);
      lowest = std::min(lowest, a * v);
    }
    const double mean = s1 / size, m2 = std::max(0.0, s2 - s1 * mean);
    if (m2 <= 1 && lowest >= mean - std::sqrt((1 - m2) / size)) break;
  }
  const double size = static_cast<double>(y.size());
  CompensatedSum s1;
  for (double v : y) s1 += a * v;
  const double mean = s1.value() / size;
  CompensatedSum m2;
  for (double v : y) m2 += (a * v - mean) * (a * v - mean);
  const double tau_s = mean - std::sqrt(std::max(0.0, 1 - m2.value()) / size);
  return {(1 + tau_s) / a, -tau_s};
}

// u^k and k u^(k-1) for u >= 0, with cheap paths for the common exponents.
struct Power {
  explicit Power(double k) : k(k), integer(k == std::floor(k) && k >= 2 && k <= 8 ? int(k) : 0) {}

  // Returns u^k; adds k u^(k-1) to `slope`.
  double operator()(double u, double& slope) const {
    if (integer) {
      double km1 = u;
      for (int i = 2; i < integer; ++i) km1 *= u;
      slope += k * km1;
      return km1 * u;
    }
    if (k == 0.5) {
      const double r = std::sqrt(u);
      slope += r > 0 ? 0.5 / r : 0.0;
      return r;
    }
    return 0;  // not used: general exponents go through log1p (see general_threshold)
  }

  double k;
  int integer;
};

// Any other k: f(lambda) = sum [1 + a (y - lambda)]_+^k - 1 is decreasing, with
// f'(lambda) = -a k sum [1 + a (y - lambda)]_+^(k-1) (for entmax, -sum p^(2 - alpha)). Newton
// steps, kept inside the bracket [lo, hi] by bisection: f is convex for k >= 1 and for a < 0,
// so from the left they never leave it; for 0 < k < 1 (entmax, alpha > 2) they may. General
// powers go through log1p so that alpha near 1 keeps its accuracy.
PowerThreshold general_threshold(std::vector<double>& y, double a, double k, std::size_t n,
                                 double lo) {
  // f(lo) >= 0 by the caller (0: the largest entry alone reaches 1); f(hi) <= 0: every entry
  // is at most 1/n.
  double hi = -std::expm1(-std::log(static_cast<double>(n)) / k) / a;
  const Power power(k);
  const bool cheap = power.integer != 0 || k == 0.5;
  double lambda = lo;
  for (int it = 0; it < kMaxIterations; ++it) {
    double f = -1, slope = 0;
    if (cheap) {
      for (double v : y) {
        const double u = 1 + a * (v - lambda);
        if (u > 0) f += power(u, slope);
      }
    } else {
      for (double v : y) {
        const double t = a * (v - lambda);
        if (t <= -1) continue;
        const double l = std::log1p(t), pk1 = std::exp((k - 1) * l);
        f += pk1 * (1 + t);
        slope += k * pk1;
      }
    }
    slope *= a;
    if (f >= 0) {
      lo = lambda;
      if (a > 0) drop_at_or_below(y, lambda - 1 / a);  // 1 + a (y - lambda) <= 0
    } else {
      hi = lambda;
    }
    if (f == 0 || slope == 0) break;
    double next = lambda + f / slope;
    if (!(next > lo && next < hi)) next = lo + 0.5 * (hi - lo);
    const bool done = std::abs(next - lambda) <= 4 * kEps * std::max(1.0, std::abs(lambda));
    lambda = next;
    if (done) break;
  }
  return {lambda, 1 - a * lambda};
}

// 0 < k < 1 (entmax, alpha > 2): the same equation in the offset c = 1 - a lambda, the value
// of the base at the maximum: f(c) = sum [c + a y]_+^k - 1 is increasing. With many entries
// near the maximum, c is tiny and 1 - a lambda would be lost to rounding; c itself keeps full
// relative precision. Newton steps, bracketed by bisection on [n^(-1/k), 1].
PowerThreshold offset_threshold(std::vector<double>& y, double a, double k, std::size_t n) {
  double lo = std::exp(-std::log(static_cast<double>(n)) / k), hi = 1;
  double c = hi;
  for (int it = 0; it < kMaxIterations; ++it) {
    double f = -1, slope = 0;
    for (double v : y) {
      const double u = c + a * v;
      if (u <= 0) continue;
      const double uk1 = std::pow(u, k - 1);
      f += uk1 * u;
      slope += k * uk1;
    }
    (f >= 0 ? hi : lo) = c;
    if (f == 0 || slope == 0) break;
    double next = c - f / slope;
    if (!(next > lo && next < hi)) next = lo + 0.5 * (hi - lo);
    // Near an entry at the support boundary f' is huge and steps are tiny long before f is
    // 0, so stop on the bracket, not on the step.
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
  if (k == 2) return quadratic_threshold(y, a, a * lambda_lo - 1);
  if (k > 0 && k < 1) return offset_threshold(y, a, k, n);
  return general_threshold(y, a, k, n, lambda_lo);
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
