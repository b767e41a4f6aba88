// Checks of the long-double reference itself (no sparcon call): the Gauss-Kronrod rule, the
// adaptive quadrature, and tau by bisection against the few densities known in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "continuous_reference.h"

namespace sparcon_test {
namespace {

using cref::LD;

TEST(ContinuousReference, KronrodIsExactOnPolynomialsUpToDegree22) {
  for (int k = 0; k <= 22; ++k) {
    const LD got = cref::detail::gk15([&](LD x) { return std::pow(x, static_cast<LD>(k)); }, -1, 1).kronrod;
    const LD want = k % 2 == 1 ? 0 : 2.0L / (k + 1);
    EXPECT_NEAR(static_cast<double>(got - want), 0.0, 1e-18) << "degree " << k;
  }
  // the embedded Gauss rule is exact to degree 13, so the error estimate vanishes there
  for (int k = 0; k <= 13; ++k)
    EXPECT_LT(cref::detail::gk15([&](LD x) { return std::pow(x, static_cast<LD>(k)); }, -1, 1).error, 1e-18L)
        << "degree " << k;
}

TEST(ContinuousReference, AdaptiveQuadratureHandlesEndpointSingularities) {
  // int_0^1 x^(1/3) = 3/4, int_0^1 sqrt(1 - x^2) = pi/4, a narrow Gaussian over +-40 sd with
  // breakpoints at +-1 sd (how `expect` uses it: features narrower than a panel need breakpoints)
  EXPECT_NEAR(static_cast<double>(cref::integrate([](LD x) { return std::cbrt(x); }, 0, 1) - 0.75L), 0, 1e-16);
  EXPECT_NEAR(static_cast<double>(cref::integrate([](LD x) { return std::sqrt(1 - x * x); }, 0, 1) - cref::kPi / 4),
              0, 1e-16);
  const LD g = cref::integrate([](LD x) { return cref::gaussian(x, 0.3L, 1e-8L); }, 0.3L - 4e-3L, 0.3L + 4e-3L,
                                {0.3L - 1e-4L, 0.3L, 0.3L + 1e-4L});
  EXPECT_NEAR(static_cast<double>(g - 1), 0, 1e-15);
}

TEST(ContinuousReference, TauMatchesTheDensitiesKnownInClosedForm) {
  for (const LD s2 : {1e-6L, 0.3L, 1.0L, 10.0L}) {
    // alpha = 1: tau = log sqrt(2 pi sigma2)
    const LD t1 = cref::tau_of(1, s2), w1 = std::log(std::sqrt(2 * cref::kPi * s2));
    EXPECT_LT(std::fabs(t1 - w1), 1e-15L * std::fabs(w1) + 1e-17L) << "sigma2 " << static_cast<double>(s2);
    // alpha = 2: truncated parabola, a^3 = 3 sigma2 / 2, tau = -a^2 / (2 sigma2)
    const LD a = std::cbrt(1.5L * s2), w2 = -a * a / (2 * s2);
    EXPECT_LT(std::fabs(cref::tau_of(2, s2) - w2), 1e-15L * std::fabs(w2)) << "sigma2 " << static_cast<double>(s2);
    // alpha = 3: p = sqrt(-2 tau - (t-mu)^2/sigma2), a half ellipse of area pi (-2 tau) sqrt(sigma2) / 2
    const LD w3 = -1 / (cref::kPi * std::sqrt(s2));
    EXPECT_LT(std::fabs(cref::tau_of(3, s2) - w3), 1e-15L * std::fabs(w3)) << "sigma2 " << static_cast<double>(s2);
  }
}

TEST(ContinuousReference, DensityIntegratesToOne) {
  for (const LD alpha : {1.0L, 1.25L, 1.5L, 2.0L, 2.5L, 3.0L, 4.0L}) {
    const cref::Density d = cref::make_density(alpha, 0.3L, 0.05L);
    const LD m = cref::integrate([&](LD t) { return d.pdf(t); }, d.lo(), d.hi(), {d.mu});
    EXPECT_NEAR(static_cast<double>(m - 1), 0, 1e-15) << "alpha " << static_cast<double>(alpha);
  }
}

}  // namespace
}  // namespace sparcon_test
