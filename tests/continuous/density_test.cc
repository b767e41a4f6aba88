// Density1D against the long-double reference: normalisation, tau, half-width, pdf, moments,
// the closed forms of docs/math.md 6, with_variance, and the limits alpha -> 1, sigma2 -> 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "continuous_cases.h"
#include "continuous_reference.h"
#include "sparcon/continuous.h"

namespace sparcon_test {
namespace {

template <class T>
class ContinuousDensity : public ::testing::Test {};
TYPED_TEST_SUITE(ContinuousDensity, FloatTypes);

/// Integral of w(t) * library pdf over the reference support (enlarged by 1%, so that mass the
/// library puts outside the true support is counted), with breakpoints at both supports' edges.
template <class T, class W>
LD integrate_library_pdf(const sparcon::Density1D<T>& d, const cref::Density& ref, const W& w) {
  const LD mu = d.mu();
  LD lo = ref.lo(), hi = ref.hi();
  std::vector<LD> breaks{mu};
  if (ref.alpha != 1) {
    lo = mu - 1.01L * ref.half_width;
    hi = mu + 1.01L * ref.half_width;
    breaks.insert(breaks.end(), {mu - ref.half_width, mu + ref.half_width, mu - static_cast<LD>(d.half_width()),
                                 mu + static_cast<LD>(d.half_width())});
  }
  return cref::integrate([&](LD t) { return static_cast<LD>(d.pdf(static_cast<T>(t))) * w(t); }, lo, hi, breaks,
                         quad_for<T>());
}

TYPED_TEST(ContinuousDensity, IntegratesToOne) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    for (const Location& l : locations()) {
      const T a = static_cast<T>(alpha), mu = static_cast<T>(l.mu), s2 = static_cast<T>(l.sigma2);
      const sparcon::Density1D<T> d(a, mu, s2);
      const cref::Density ref = cref::make_density(a, mu, s2);
      const LD mass = integrate_library_pdf(d, ref, [](LD) { return LD(1); });
      EXPECT_NEAR(static_cast<double>(mass), 1.0, static_cast<double>(Tol<T>::tight)) << describe(a, mu, s2);
    }
  }
}

TYPED_TEST(ContinuousDensity, TauAndHalfWidthMatchTheReference) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    for (const LD s2l : {1e-9L, 1e-6L, 1e-3L, 0.05L, 1.0L, 10.0L, 1e3L}) {
      const T a = static_cast<T>(alpha), s2 = static_cast<T>(s2l);
      const sparcon::Density1D<T> d(a, T(0.25), s2);
      const cref::Density ref = cref::make_density(a, T(0.25), s2);
      EXPECT_EQ(d.alpha(), a);
      EXPECT_EQ(d.mu(), T(0.25));
      EXPECT_EQ(d.sigma2(), s2);
      EXPECT_LE(cref::rel_err(d.tau(), ref.tau), Tol<T>::tight)
          << describe(a, 0.25L, s2) << " tau " << static_cast<double>(d.tau()) << " want " << static_cast<double>(ref.tau);
      if (alpha == 1) {
        EXPECT_EQ(d.half_width(), std::numeric_limits<T>::infinity());
      } else {
        EXPECT_LE(cref::rel_err(d.half_width(), ref.half_width), Tol<T>::tight)
            << describe(a, 0.25L, s2) << " half_width " << static_cast<double>(d.half_width()) << " want "
            << static_cast<double>(ref.half_width);
      }
    }
  }
}

TYPED_TEST(ContinuousDensity, PdfMatchesTheReferencePointwise) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    for (const Location& l : locations()) {
      const T a = static_cast<T>(alpha), mu = static_cast<T>(l.mu), s2 = static_cast<T>(l.sigma2);
      const sparcon::Density1D<T> d(a, mu, s2);
      const cref::Density ref = cref::make_density(a, mu, s2);
      const LD scale = alpha == 1 ? 4 * std::sqrt(ref.sigma2) : ref.half_width;
      const LD peak = ref.pdf(mu);
      for (const LD x : {0.0L, 0.1L, 0.3L, 0.5L, -0.7L, 0.9L, -0.99L}) {
        const T t = static_cast<T>(mu + x * scale);
        const LD want = ref.pdf(t), got = d.pdf(t);
        EXPECT_LE(std::fabs(got - want), Tol<T>::pdf * want + 1e-3L * Tol<T>::pdf * peak)
            << describe(a, mu, s2) << " t=" << static_cast<double>(t) << " got " << static_cast<double>(got) << " want "
            << static_cast<double>(want);
      }
      if (alpha != 1) {  // outside the support: exactly 0
        EXPECT_EQ(d.pdf(static_cast<T>(mu + 1.001L * ref.half_width)), T(0)) << describe(a, mu, s2);
        EXPECT_EQ(d.pdf(static_cast<T>(mu - 1.5L * ref.half_width)), T(0)) << describe(a, mu, s2);
      }
    }
  }
}

TYPED_TEST(ContinuousDensity, MeanAndVarianceAreTheMomentsOfThePdf) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    for (const Location& l : locations()) {
      const T a = static_cast<T>(alpha), mu = static_cast<T>(l.mu), s2 = static_cast<T>(l.sigma2);
      const sparcon::Density1D<T> d(a, mu, s2);
      const cref::Density ref = cref::make_density(a, mu, s2);
      const LD m0 = integrate_library_pdf(d, ref, [](LD) { return LD(1); });
      const LD m1 = integrate_library_pdf(d, ref, [&](LD t) { return t - mu; }) / m0;
      const LD var = integrate_library_pdf(d, ref, [&](LD t) { return (t - mu) * (t - mu); }) / m0 - m1 * m1;
      const LD sd = std::sqrt(var);
      EXPECT_EQ(d.mean(), mu);
      EXPECT_LE(std::fabs(m1), Tol<T>::tight * sd) << describe(a, mu, s2);
      EXPECT_LE(cref::rel_err(d.variance(), var), Tol<T>::tight)
          << describe(a, mu, s2) << " variance " << static_cast<double>(d.variance()) << " quadrature "
          << static_cast<double>(var);
      if (alpha == 1) {
        EXPECT_EQ(d.variance(), s2);
      }
    }
  }
}

TYPED_TEST(ContinuousDensity, SparsemaxClosedForm) {
  // alpha = 2: a = (3 sigma2 / 2)^(1/3), tau = -a^2 / (2 sigma2), variance a^2 / 5 (docs/math.md 6)
  using T = TypeParam;
  for (const LD s2l : {1e-9L, 1e-6L, 0.01L, 1.0L, 10.0L}) {
    const T s2 = static_cast<T>(s2l);
    const sparcon::Density1D<T> d(T(2), T(0.5), s2);
    const LD a = std::cbrt(1.5L * static_cast<LD>(s2));
    EXPECT_LE(cref::rel_err(d.half_width(), a), Tol<T>::tight) << "sigma2 " << s2;
    EXPECT_LE(cref::rel_err(d.tau(), -a * a / (2 * static_cast<LD>(s2))), Tol<T>::tight) << "sigma2 " << s2;
    EXPECT_LE(cref::rel_err(d.variance(), a * a / 5), Tol<T>::tight) << "sigma2 " << s2;
    // p(mu) = a^2 / (2 sigma2)
    EXPECT_LE(cref::rel_err(d.pdf(T(0.5)), a * a / (2 * static_cast<LD>(s2))), 4 * Tol<T>::tight) << "sigma2 " << s2;
  }
}

TYPED_TEST(ContinuousDensity, RadiusConstantsAtUnitScale) {
  // at sigma2 = 1, a = sqrt(-2 tau) = R: R = (3/2)^(1/3) for alpha = 2, 15^(1/5) for alpha = 1.5
  using T = TypeParam;
  EXPECT_LE(cref::rel_err(sparcon::Density1D<T>(T(2), T(0), T(1)).half_width(), std::cbrt(1.5L)), Tol<T>::tight);
  EXPECT_LE(cref::rel_err(sparcon::Density1D<T>(T(1.5), T(0), T(1)).half_width(), std::pow(15.0L, 0.2L)),
            Tol<T>::tight);
  EXPECT_LE(cref::rel_err(sparcon::Density1D<T>(T(1.5), T(0), T(1)).tau(), -std::pow(15.0L, 0.4L) / 2), Tol<T>::tight);
}

TYPED_TEST(ContinuousDensity, WithVarianceHasThatVariance) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    for (const LD vl : {1e-8L, 1e-4L, 0.05L, 2.0L}) {
      const T a = static_cast<T>(alpha), v = static_cast<T>(vl);
      const sparcon::Density1D<T> d = sparcon::Density1D<T>::with_variance(a, T(0.7), v);
      EXPECT_EQ(d.alpha(), a);
      EXPECT_EQ(d.mu(), T(0.7));
      EXPECT_LE(cref::rel_err(d.variance(), v), Tol<T>::tight) << describe(a, 0.7L, v);
      // independent: the reference density of the scale chosen has that variance
      const cref::Density ref = cref::make_density(a, T(0.7), d.sigma2());
      const LD var = cref::integrate([&](LD t) { return (t - ref.mu) * (t - ref.mu) * ref.pdf(t); }, ref.lo(), ref.hi(),
                                     {ref.mu});
      EXPECT_LE(cref::rel_err(var, v), 4 * Tol<T>::tight) << describe(a, 0.7L, d.sigma2()) << " from variance " << v;
    }
  }
}

TYPED_TEST(ContinuousDensity, TendsToTheGaussianAsAlphaTendsToOne) {
  // alpha = 1 + eps, eps = 1e-4: with the normalisation of the header, p = [eps (f - tau)]_+^(1/eps)
  // with -tau ~ 1/eps (tau itself does not tend to the Gaussian's log sqrt(2 pi sigma2): only the
  // density does). Against the Gaussian, p = N(mu, sigma2) (1 + O(eps (f - tau_gauss)^2)): within
  // 2 standard deviations of the mode about 5e-4 relative at most, so the tolerance is 1e-3
  // relative. In float the rounding of tau (0.5 ulp of ~1e4) is amplified by 1/eps in p: up to
  // ~6e-4 more, so float gets 2e-3.
  using T = TypeParam;
  const LD tol = std::is_same_v<T, float> ? 2e-3L : 1e-3L;
  const T alpha = static_cast<T>(1 + 1e-4L);
  for (const LD s2l : {1e-4L, 1.0L}) {
    const T s2 = static_cast<T>(s2l), mu = T(0.5);
    const sparcon::Density1D<T> d(alpha, mu, s2);
    const sparcon::Density1D<T> g(T(1), mu, s2);
    const cref::Density ref = cref::make_density(alpha, mu, s2);
    const LD sd = std::sqrt(static_cast<LD>(s2));
    for (const LD z : {0.0L, 0.5L, -1.0L, 1.5L, -2.0L}) {
      const T t = static_cast<T>(mu + z * sd);
      const LD want = cref::gaussian(t, mu, s2);
      EXPECT_LE(cref::rel_err(d.pdf(t), want), tol) << "z=" << static_cast<double>(z) << " sigma2=" << s2;
      EXPECT_LE(cref::rel_err(ref.pdf(t), want), 1e-3L) << "reference, z=" << static_cast<double>(z);
      EXPECT_LE(cref::rel_err(g.pdf(t), want), 4 * Tol<T>::tight) << "z=" << static_cast<double>(z) << " sigma2=" << s2;
    }
    EXPECT_LE(cref::rel_err(d.variance(), s2), 1e-3L) << "sigma2=" << s2;
    // tau still equals the reference's (solved by bisection at alpha = 1 + 1e-4)
    EXPECT_LE(cref::rel_err(d.tau(), ref.tau), Tol<T>::tight) << "sigma2=" << s2;
    EXPECT_LT(d.tau(), T(-0.5) / (alpha - 1)) << "sigma2=" << s2;
  }
}

TYPED_TEST(ContinuousDensity, ConcentratesAsSigma2TendsToZero) {
  using T = TypeParam;
  for (const LD alpha : all_alphas()) {
    const T a = static_cast<T>(alpha);
    LD previous = std::numeric_limits<LD>::infinity();
    for (const LD s2l : {1.0L, 1e-2L, 1e-4L, 1e-6L, 1e-8L, 1e-10L, 1e-12L}) {
      const sparcon::Density1D<T> d(a, T(0.3), static_cast<T>(s2l));
      const LD v = d.variance();
      EXPECT_GT(v, 0) << describe(a, 0.3L, s2l);
      EXPECT_LT(v, previous) << describe(a, 0.3L, s2l);
      previous = v;
      if (alpha != 1) {
        EXPECT_LT(d.half_width(), 3 * std::pow(static_cast<LD>(s2l), 1 / (alpha + 1))) << describe(a, 0.3L, s2l);
      }
    }
    // the variance scales like sigma2^(2/(alpha+1)) (alpha = 1: sigma2): at 1e-12 it is below 1e-5
    EXPECT_LT(previous, 1e-5L) << "alpha " << static_cast<double>(alpha);
  }
}

}  // namespace
}  // namespace sparcon_test
