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
// offset_S is exact.
PowerThreshold linear_threshold(std::vector<double>& y, double a) {
  for (;;) {
    CompensatedSum sum;
    for (double v : y) sum += a * v;
    const double offset = (1 - sum.value()) / static_cast<double>(y.size());
    const std::size_t before = y.size();
    drop_at_or_below(y, -offset / a);
    if (y.size() == before) return {(1 - offset) / a, offset};
  }
}

// k = 2 (entmax-1.5, 2-normmax), p = [z - tau]_+^2 with z = a y. On a set S taken as the
// support, sum_S (z - tau)^2 = 1 gives tau_S = mean_S z - sqrt((1 - M2)/|S|) with
// M2 = sum_S (z - mean)^2; it is the threshold when every z in S lies above it. Otherwise a
// Newton step from the left on the convex f(tau) = sum (z - tau)_+^2 - 1 raises the lower
// bound and removes entries.
PowerThreshold quadratic_threshold(std::vector<double>& y, double a) {
  double tau = -1;  // the largest z is 0, and (0 - tau)^2 <= 1
  for (int it = 0; it < kMaxIterations; ++it) {
    const double size = static_cast<double>(y.size());
    CompensatedSum sum;
    for (double v : y) sum += a * v;
    const double mean = sum.value() / size;
    CompensatedSum m2;
    double lowest = 0;
    for (double v : y) {
      m2 += (a * v - mean) * (a * v - mean);
      lowest = std::min(lowest, a * v);
    }
    if (m2.value() <= 1) {
      const double tau_s = mean - std::sqrt((1 - m2.value()) / size);
      if (lowest >= tau_s) return {(1 + tau_s) / a, -tau_s};
    }
    CompensatedSum f, slope;
    f += -1;
    for (double v : y) {
      const double u = std::max(a * v - tau, 0.0);
      f += u * u;
      slope += 2 * u;
    }
    const double next = tau + f.value() / slope.value();
    if (!(next > tau)) break;  // converged to rounding
    tau = next;
    drop_at_or_below(y, tau / a);
  }
  return {(1 + tau) / a, -tau};
}

// Any other k: f(lambda) = sum [1 + a (y - lambda)]_+^k - 1 is decreasing, with
// f'(lambda) = -a k sum [1 + a (y - lambda)]_+^(k-1) (for entmax, -sum p^(2 - alpha)). Newton
// steps, kept inside the bracket [lo, hi] by bisection: f is convex for k >= 1 and for a < 0,
// so from the left they never leave it; for 0 < k < 1 (entmax, alpha > 2) they may. Powers go
// through log1p so that alpha near 1 keeps its accuracy.
PowerThreshold general_threshold(std::vector<double>& y, double a, double k, std::size_t n) {
  // f(lo) >= 0: the largest entry alone reaches 1; f(hi) <= 0: every entry is at most 1/n.
  double lo = 0;
  double hi = -std::expm1(-std::log(static_cast<double>(n)) / k) / a;
  double lambda = lo;
  for (int it = 0; it < kMaxIterations; ++it) {
    CompensatedSum f, slope;
    f += -1;
    for (double v : y) {
      const double t = a * (v - lambda);
      if (t <= -1) continue;
      const double l = std::log1p(t);
      f += std::exp(k * l);
      slope += a * k * std::exp((k - 1) * l);
    }
    if (f.value() >= 0) {
      lo = lambda;
      if (a > 0) drop_at_or_below(y, lambda - 1 / a);  // 1 + a (y - lambda) <= 0
    } else {
      hi = lambda;
    }
    if (f.value() == 0 || slope.value() == 0) break;
    double next = lambda + f.value() / slope.value();
    if (!(next > lo && next < hi)) next = lo + 0.5 * (hi - lo);
    const bool done = std::abs(next - lambda) <= 4 * kEps * std::max(1.0, std::abs(lambda));
    lambda = next;
    if (done) break;
  }
  return {lambda, 1 - a * lambda};
}

}  // namespace

PowerThreshold solve_power_threshold(std::vector<double>& y, double a, double k, std::size_t n) {
  if (k == 1) return linear_threshold(y, a);
  if (k == 2) return quadratic_threshold(y, a);
  return general_threshold(y, a, k, n);
}

double solve_budget(const std::vector<double>& y, double b) {
  // f(t) = sum clip(y - t, 0, 1) - b is piecewise linear and decreasing; with the active set
  // A = {0 < y - t < 1} and the saturated set U = {y - t >= 1} of a point t, the root of its
  // piece is (sum_A y + |U| - b) / |A|. Newton on the pieces, bracketed by bisection.
  double lowest = 0;
  for (double v : y)
    if (std::isfinite(v)) lowest = std::min(lowest, v);
  double lo = lowest - 1, hi = 0;  // f(lo) = (finite entries) - b >= 0, f(0) = -b < 0
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
