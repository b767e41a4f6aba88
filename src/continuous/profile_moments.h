// The one-dimensional integral behind every non-Gaussian expectation of the continuous core: a
// beta-Gaussian profile against a Gaussian. In 1D it is the whole expectation (u = t - mu over
// the support); in 2D it is the radial integral along one ray of the whitened disk.
#pragma once

#include <array>

namespace sparcon::detail {

/// P_m = int_lo^hi (1 - u^2/R^2)^k u^m N(u; d, s^2) du for m = 0..3, with -R <= lo < hi <= R,
/// k = 1/(alpha - 1) > 0, s > 0.
///
/// k = 1 (alpha = 2), and k = 2 (alpha = 1.5) while R <= 100 s: closed form from the truncated
///   Gaussian moments of degree <= 3 + 2k, except where those cancel: an interval narrow for
///   the Gaussian (hi - lo < s) takes a 16-point Gauss-Legendre rule (a polynomial times a
///   slowly varying Gaussian, exact to rounding) and a centre d more than kEndMomentsFrom s
///   outside [lo, hi] takes the tail integrals of tail_integrals.h from the nearest end.
/// Other k: composite 8-point Gauss-Legendre, in u when k is an integer (the profile is then a
///   polynomial), otherwise in theta with u = R sin(theta), which turns the profile into
///   cos(theta)^(2k+1) (smooth when 2k+1 is an integer, e.g. alpha = 3; else the panels are
///   graded geometrically towards +-R). Panels are no wider than s/2 in u (and pi/16 in theta),
///   cover only where the integrand exceeds e^-72 of its peak, and, when d lies outside
///   [lo, hi], are graded towards the end nearest to d (where the integrand decays on the scale
///   s^2 / distance).
/// Measured against adaptive quadrature in the tests: below 1e-10 relative.
std::array<double, 4> profile_moments(double k, double R, double lo, double hi, double d, double s);

/// For k = 1, 2: a centre more than this many s outside [lo, hi] takes the tail integrals.
inline constexpr double kEndMomentsFrom = 4;

/// A Gauss-Laguerre rule (nodes x and weights w of int_0^inf f(x) e^-x dx, `nodes` of each).
struct LaguerreRule {
  const double* x;
  const double* w;
  int nodes;
};

/// The rule of profile_moments for a centre at distance delta = width * s beyond the nearest
/// end of the interval (width >= 4): its integrand in the rule's variable is a polynomial times
/// a Gaussian of standard deviation `width`, smoother the larger the width, so the rule is the
/// one with the fewest nodes (24, 20, 16, 14, 12, 10 or 8) whose error at that width is below
/// 1e-15 of the sum of its terms' magnitudes for k = 1, 2, m = 0..3 and R / s = 1..100
/// (measured against an 80-node rule in long double; the test GaussLaguerreRulesByWidth checks
/// it): 24 nodes below a width of 6, 8 from 32 on. Taken for the k other than 1 and 2 (and
/// k = 2 with R > 100 s); the closed-form k = 1, 2 take the tail integrals of tail_integrals.h.
LaguerreRule laguerre_rule(double width);

}  // namespace sparcon::detail
