// Density2D against the long-double reference of continuous_reference_2d.h: tau, the support
// (radius, area, pdf zero outside and positive inside), normalisation, pdf, covariance, the
// alpha = 2 closed forms of docs/math.md section 6, with_covariance, from_canonical, the limits
// alpha -> 1 and Sigma -> 0, and the argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "continuous_cases_2d.h"
#include "continuous_reference_2d.h"
#include "sparcon/continuous.h"

namespace sparcon_test {
namespace {

using namespace cases2d;  // NOLINT

template <class T>
class Density2DReference : public ::testing::Test {};
TYPED_TEST_SUITE(Density2DReference, FloatTypes);

/// Quadrature options for integrating the library's pdf. In float the integrand is noisy at the
/// 1e-7 level: the panel counts are capped (the whitened integrand is radially symmetric and,
/// with the edge substitution, smooth, so a few panels resolve it; the cap only stops the
/// quadrature from chasing the noise).
template <class T>
cref::QuadOptions quad2d() {
  cref::QuadOptions o;
  o.rel_tol = std::is_same_v<T, float> ? 1e-9L : 1e-14L;
  o.max_panels = std::is_same_v<T, float> ? 12 : 2000;
  return o;
}

/// int w(t) * (library pdf)(t) dt in the whitened polar coordinates of the reference, out to
/// 1.01 times the reference support radius (mass the library puts outside the true support is
/// counted), with the edge substitution of the reference on [R/2, R].
template <class T, class W>
LD integrate_library_pdf(const sparcon::Density2D<T>& d, const cref2::Density& ref, const W& w) {
  const cref::QuadOptions opt = quad2d<T>();
  const LD R = ref.rho_max;
  auto ray = [&](LD v) {
    const V2 e = cref2::apply(ref.chol, {std::cos(v), std::sin(v)});
    auto g = [&](LD rho) {
      const LD x = ref.mu[0] + rho * e[0], y = ref.mu[1] + rho * e[1];
      return rho * static_cast<LD>(d.pdf({static_cast<T>(x), static_cast<T>(y)})) * w(x, y);
    };
    if (ref.alpha == 1) return cref::integrate(g, 0, R, {1, 2, 4, 8, 16}, opt);
    const LD inner = cref::integrate(g, 0, R / 2, {}, opt);
    const LD edge = cref::integrate([&](LD s) { return g(R * (1 - s * s)) * 2 * R * s; }, 0, std::sqrt(LD(0.5)), {}, opt);
    const LD outside = cref::integrate(g, R, 1.01L * R, {}, opt);
    return inner + edge + outside;
  };
  cref::QuadOptions outer = opt;
  outer.initial_panels = 4;
  if (std::is_same_v<T, float>) outer.max_panels = 2;
  return ref.sqrt_det * cref::integrate(ray, 0, 2 * cref2::kPi, {}, outer);
}

TYPED_TEST(Density2DReference, TauRadiusAreaAndAccessors) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);
      const T a = static_cast<T>(alpha);
      const sparcon::Density2D<T> d(a, to_vec<T>(c.mu), to_mat<T>(c.sigma));
      const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
      const std::string what = describe(alpha, c.mu, c.sigma);
      EXPECT_EQ(d.alpha(), a) << what;
      EXPECT_EQ(from_vec(d.mu()), c.mu) << what;
      EXPECT_EQ(from_vec(d.mean()), c.mu) << what;
      EXPECT_EQ(from_mat(d.sigma()), c.sigma) << what;  // symmetric input: symmetrising changes nothing
      if (alpha == 1) {
        // tau = log(2 pi sqrt(det Sigma)) is a logarithm: its error is absolute
        EXPECT_LE(std::fabs(d.tau() - ref.tau), Tol2<T>::tight * (std::fabs(ref.tau) + 1))
            << what << " tau " << d.tau() << " want " << static_cast<double>(ref.tau);
        EXPECT_EQ(d.support_radius2(), inf) << what;
        EXPECT_EQ(d.support_area(), inf) << what;
        continue;
      }
      EXPECT_LE(rel_err(d.tau(), ref.tau), Tol2<T>::tight)
          << what << " tau " << d.tau() << " want " << static_cast<double>(ref.tau);
      EXPECT_LE(rel_err(d.support_radius2(), -2 * ref.tau), Tol2<T>::tight)
          << what << " support_radius2 " << d.support_radius2() << " want " << static_cast<double>(-2 * ref.tau);
      const LD area = cref2::kPi * (-2 * ref.tau) * ref.sqrt_det;
      EXPECT_LE(rel_err(d.support_area(), area), 2 * Tol2<T>::tight)
          << what << " support_area " << d.support_area() << " want " << static_cast<double>(area);
    }
  }
}

TYPED_TEST(Density2DReference, IntegratesToOne) {
  using T = TypeParam;
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);
      const sparcon::Density2D<T> d(static_cast<T>(alpha), to_vec<T>(c.mu), to_mat<T>(c.sigma));
      const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
      const LD mass = integrate_library_pdf(d, ref, [](LD, LD) { return LD(1); });
      EXPECT_LE(std::fabs(mass - 1), Tol2<T>::tight) << describe(alpha, c.mu, c.sigma) << " mass "
                                                     << static_cast<double>(mass);
    }
  }
}

TYPED_TEST(Density2DReference, PdfMatchesTheReferenceAndVanishesOutsideTheEllipse) {
  using T = TypeParam;
  const bool is_float = std::is_same_v<T, float>;
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);
      const sparcon::Density2D<T> d(static_cast<T>(alpha), to_vec<T>(c.mu), to_mat<T>(c.sigma));
      const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
      const std::string what = describe(alpha, c.mu, c.sigma);
      const LD R = ref.rho_max, peak = ref.pdf(c.mu[0], c.mu[1]);
      const V2 ev = cref2::eigenvalues(c.sigma);
      const LD cond = ev[1] / ev[0];
      // whitened radii: up to 4 standard deviations for the Gaussian; up to the edge otherwise
      // (in float only to 0.95 R: near the edge f - tau cancels in the library's float arithmetic)
      std::vector<LD> radii = alpha == 1 ? std::vector<LD>{0, 0.5L, 1, 2, 4}
                                         : std::vector<LD>{0, 0.3L * R, 0.7L * R, 0.95L * R};
      if (alpha != 1 && !is_float) radii.push_back(0.999L * R);
      for (const LD rho : radii) {
        for (const LD v : {0.3L, 2.0L, 4.1L, 5.5L}) {
          const V2 t = ref.point(rho, v);
          const sparcon::Vector2<T> tt = to_vec<T>(t);
          const LD want = ref.pdf(tt[0], tt[1]), got = d.pdf(tt);
          // near the edge f - tau cancels: its rounding error (eps of T times the condition
          // number of Sigma, relative to f) is amplified by R^2 / (R^2 - rho^2), and raised to
          // the power 1/(alpha - 1)
          const LD amplification =
              alpha == 1 ? rho * rho / 2 : R * R / ((R * R - rho * rho) * (alpha - 1));
          const LD conditioning = 4 * std::numeric_limits<T>::epsilon() * cond * amplification;
          EXPECT_LE(std::fabs(got - want), (Tol2<T>::pdf + conditioning) * want + 1e-3L * Tol2<T>::pdf * peak)
              << what << " rho=" << static_cast<double>(rho) << " v=" << static_cast<double>(v) << " got "
              << static_cast<double>(got) << " want " << static_cast<double>(want);
        }
      }
      if (alpha == 1) continue;
      // the support is the ellipse (t - mu)^T Sigma^-1 (t - mu) <= support_radius2
      for (const LD v : {0.0L, 1.0L, 2.5L, 3.9L, 5.0L}) {
        const sparcon::Vector2<T> outside = to_vec<T>(ref.point((is_float ? 1.01L : 1.001L) * R, v));
        const sparcon::Vector2<T> far = to_vec<T>(ref.point(3 * R, v));
        const sparcon::Vector2<T> inside = to_vec<T>(ref.point((is_float ? 0.99L : 0.999L) * R, v));
        EXPECT_EQ(d.pdf(outside), T(0)) << what << " v=" << static_cast<double>(v);
        EXPECT_EQ(d.pdf(far), T(0)) << what << " v=" << static_cast<double>(v);
        EXPECT_GT(d.pdf(inside), T(0)) << what << " v=" << static_cast<double>(v);
      }
    }
  }
}

TYPED_TEST(Density2DReference, CovarianceIsTheSecondMomentOfTheReference) {
  using T = TypeParam;
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);
      const sparcon::Density2D<T> d(static_cast<T>(alpha), to_vec<T>(c.mu), to_mat<T>(c.sigma));
      const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
      const M2 want = ref.covariance(), got = from_mat(d.covariance());
      const LD size = std::sqrt(want[0] * want[3]);
      for (int k = 0; k < 4; ++k) {
        EXPECT_LE(std::fabs(got[k] - want[k]), Tol2<T>::tight * (std::fabs(want[k]) + size))
            << describe(alpha, c.mu, c.sigma) << " covariance[" << k << "] " << static_cast<double>(got[k])
            << " want " << static_cast<double>(want[k]);
      }
      if (alpha == 1) {
        EXPECT_EQ(got, c.sigma);
      }
    }
  }
}

TEST(Density2DReferenceOnly, NestedQuadratureAgreesWithTheRadialMoments) {
  // the reference's two routes agree: the nested polar quadrature of E[(t - mu)(t - mu)^T] and of
  // int p against the radial formulas (a check of the reference, not of the library)
  for (const LD alpha : alphas()) {
    const Case c = density_cases()[3];
    const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
    cref::QuadOptions opt;
    opt.rel_tol = 1e-14L;
    const LD m0 = cref2::expect(ref, nullptr, [](LD, LD) { return LD(1); }, opt);
    const M2 cov = ref.covariance();
    const LD c00 = cref2::expect(ref, nullptr, [&](LD x, LD) { return (x - c.mu[0]) * (x - c.mu[0]); }, opt);
    const LD c01 = cref2::expect(ref, nullptr, [&](LD x, LD y) { return (x - c.mu[0]) * (y - c.mu[1]); }, opt);
    const LD c11 = cref2::expect(ref, nullptr, [&](LD, LD y) { return (y - c.mu[1]) * (y - c.mu[1]); }, opt);
    EXPECT_NEAR(static_cast<double>(m0), 1.0, 1e-14) << "alpha " << static_cast<double>(alpha);
    EXPECT_LE(rel_err(c00, cov[0]), 1e-13L) << "alpha " << static_cast<double>(alpha);
    EXPECT_LE(rel_err(c01, cov[1]), 1e-13L) << "alpha " << static_cast<double>(alpha);
    EXPECT_LE(rel_err(c11, cov[3]), 1e-13L) << "alpha " << static_cast<double>(alpha);
    // documented closed form of the covariance: -2 tau / (2 + 2 alpha/(alpha-1)) Sigma
    if (alpha != 1) {
      const LD k = -2 * ref.tau / (2 + 2 * alpha / (alpha - 1));
      EXPECT_LE(rel_err(cov[0], k * ref.sigma[0]), 1e-15L) << "alpha " << static_cast<double>(alpha);
    }
  }
}

TYPED_TEST(Density2DReference, SparsemaxClosedForms) {
  // alpha = 2 (docs/math.md 6): R^2 = -2 tau = 2 / sqrt(pi sqrt(det Sigma)), covariance
  // Sigma / (3 sqrt(pi) det^(1/4)); at det Sigma = 1, R = (4/pi)^(1/4); a covariance C needs the
  // scale 9 pi sqrt(det C) C.
  using T = TypeParam;
  for (const Case& c0 : density_cases()) {
    const Case c = rounded<T>(c0);
    const sparcon::Density2D<T> d(T(2), to_vec<T>(c.mu), to_mat<T>(c.sigma));
    const LD sqrt_det = std::sqrt(cref2::det(c.sigma));
    EXPECT_LE(rel_err(d.support_radius2(), 2 / std::sqrt(cref2::kPi * sqrt_det)), 4 * Tol2<T>::tight)
        << describe(2, c.mu, c.sigma);
    const M2 cov = from_mat(d.covariance());
    const LD k = 1 / (3 * std::sqrt(cref2::kPi) * std::sqrt(sqrt_det));
    for (int i = 0; i < 4; ++i) {
      EXPECT_LE(std::fabs(cov[i] - k * c.sigma[i]), 4 * Tol2<T>::tight * k * std::sqrt(c.sigma[0] * c.sigma[3]))
          << describe(2, c.mu, c.sigma) << " entry " << i;
    }
  }
  const sparcon::Density2D<T> unit(T(2), {T(0), T(0)}, {T(1), T(0), T(0), T(1)});
  EXPECT_LE(rel_err(std::sqrt(static_cast<LD>(unit.support_radius2())), std::pow(4 / cref2::kPi, 0.25L)),
            Tol2<T>::tight);
  for (const Case& c0 : density_cases()) {
    const M2 C = from_mat(to_mat<T>(c0.sigma));  // used as a target covariance here
    const sparcon::Density2D<T> d = sparcon::Density2D<T>::with_covariance(T(2), to_vec<T>(c0.mu), to_mat<T>(C));
    const LD s = 9 * cref2::kPi * std::sqrt(cref2::det(C));
    const M2 got = from_mat(d.sigma());
    for (int i = 0; i < 4; ++i) {
      EXPECT_LE(std::fabs(got[i] - s * C[i]), 4 * Tol2<T>::tight * s * std::sqrt(C[0] * C[3]))
          << "with_covariance(2, C), C = " << describe(2, c0.mu, C) << " entry " << i;
    }
  }
}

TYPED_TEST(Density2DReference, WithCovarianceRoundTrip) {
  using T = TypeParam;
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);  // c.sigma is the target covariance
      const std::string what = "with_covariance " + describe(alpha, c.mu, c.sigma);
      const sparcon::Density2D<T> d =
          sparcon::Density2D<T>::with_covariance(static_cast<T>(alpha), to_vec<T>(c.mu), to_mat<T>(c.sigma));
      EXPECT_EQ(from_vec(d.mu()), c.mu) << what;
      const LD size = std::sqrt(c.sigma[0] * c.sigma[3]);
      const M2 got_cov = from_mat(d.covariance());
      // the reference covariance of the returned scale: independent of the library's formulas
      const M2 scale = from_mat(d.sigma());
      const M2 ref_cov = cref2::make_density(alpha, c.mu, scale).covariance();
      for (int k = 0; k < 4; ++k) {
        EXPECT_LE(std::fabs(got_cov[k] - c.sigma[k]), 4 * Tol2<T>::tight * size) << what << " covariance()[" << k << "]";
        EXPECT_LE(std::fabs(ref_cov[k] - c.sigma[k]), 4 * Tol2<T>::tight * size)
            << what << " reference covariance of sigma()[" << k << "] " << static_cast<double>(ref_cov[k]);
      }
      // the scale is a multiple of the covariance (an elliptical family)
      const LD ratio = scale[0] / c.sigma[0];
      for (int k = 0; k < 4; ++k) {
        EXPECT_LE(std::fabs(scale[k] - ratio * c.sigma[k]), 4 * Tol2<T>::tight * ratio * size) << what << " sigma()[" << k << "]";
      }
      if (alpha == 1) {
        EXPECT_EQ(scale, c.sigma) << what;
      }
    }
  }
}

TYPED_TEST(Density2DReference, FromCanonical) {
  // theta1 = Sigma^-1 mu, theta2 = -1/2 Sigma^-1, computed in long double and rounded to T
  using T = TypeParam;
  for (const LD alpha : alphas()) {
    for (const Case& c0 : density_cases()) {
      const Case c = rounded<T>(c0);
      const M2 inv = cref2::inverse(c.sigma);
      const V2 theta1 = cref2::apply(inv, c.mu);
      const M2 theta2{-inv[0] / 2, -inv[1] / 2, -inv[2] / 2, -inv[3] / 2};
      const sparcon::Density2D<T> d =
          sparcon::Density2D<T>::from_canonical(static_cast<T>(alpha), to_vec<T>(theta1), to_mat<T>(theta2));
      const std::string what = "from_canonical " + describe(alpha, c.mu, c.sigma);
      // rounding theta to T and inverting loses up to the condition number of Sigma
      const cref2::V2 ev = cref2::eigenvalues(c.sigma);
      const LD cond = ev[1] / ev[0];
      const LD tol = 4 * cond * Tol2<T>::tight;
      const M2 got = from_mat(d.sigma());
      const LD size = std::sqrt(c.sigma[0] * c.sigma[3]);
      for (int k = 0; k < 4; ++k) {
        EXPECT_LE(std::fabs(got[k] - c.sigma[k]), tol * size) << what << " sigma()[" << k << "] " << static_cast<double>(got[k]);
      }
      // mu: relative to the spread of the density and to |mu|
      const V2 mu = from_vec(d.mu());
      for (int k = 0; k < 2; ++k) {
        EXPECT_LE(std::fabs(mu[k] - c.mu[k]), tol * (std::fabs(c.mu[k]) + std::sqrt(ev[1])))
            << what << " mu()[" << k << "] " << static_cast<double>(mu[k]);
      }
      const cref2::Density ref = cref2::make_density(alpha, c.mu, c.sigma);
      EXPECT_LE(std::fabs(d.tau() - ref.tau), tol * (std::fabs(ref.tau) + (alpha == 1 ? 1 : 0))) << what << " tau";
    }
  }
}

TEST(Density2DLimits, AlphaToOneIsTheGaussian) {
  // alpha = 1 + 1e-6: the beta-Gaussian is within O(1e-6) of N(mu, Sigma)
  for (const Case& c : density_cases()) {
    const double alpha = 1 + 1e-6;
    const sparcon::Density2D<double> d(alpha, to_vec<double>(c.mu), to_mat<double>(c.sigma));
    const cref2::Density gauss = cref2::make_density(1, c.mu, c.sigma);
    const std::string what = describe(alpha, c.mu, c.sigma);
    EXPECT_TRUE(std::isfinite(d.support_radius2())) << what;
    EXPECT_GT(d.support_radius2(), 1e5) << what;  // about 2 / (alpha - 1)
    const M2 cov = from_mat(d.covariance());
    const LD size = std::sqrt(c.sigma[0] * c.sigma[3]);
    for (int k = 0; k < 4; ++k) EXPECT_LE(std::fabs(cov[k] - c.sigma[k]), 1e-4L * size) << what << " covariance " << k;
    for (const LD rho : {0.0L, 0.5L, 1.0L, 2.0L, 3.0L}) {
      for (const LD v : {0.4L, 2.2L}) {
        const V2 t = gauss.point(rho, v);
        const LD want = gauss.pdf(t[0], t[1]);
        EXPECT_LE(rel_err(d.pdf(to_vec<double>(t)), want), 1e-4L) << what << " rho " << static_cast<double>(rho);
      }
    }
  }
}

TYPED_TEST(Density2DReference, ScaleToZeroConcentratesAtMu) {
  // Sigma = s * shape, s -> 0: the peak grows and the covariance and the support shrink, every
  // family towards a Dirac at mu. The support radius in t shrinks like
  // sqrt(s) det^(-gamma/2) = s^(1/2 - gamma), gamma = 1/(2 + 2/(alpha-1)): slowly for large alpha
  // (s^(1/6) for alpha = 3).
  using T = TypeParam;
  const M2 shape = cref2::rotated(2, 0.5L, 0.7L);
  const V2 mu{0.4L, 0.6L};
  for (const LD alpha : alphas()) {
    LD prev_peak = 0, prev_cov = std::numeric_limits<LD>::infinity(), prev_reach = prev_cov, first_reach = 0;
    const LD gamma = alpha == 1 ? 0 : 1 / (2 + 2 / (alpha - 1));
    for (const LD s : {1e-2L, 1e-5L, 1e-8L, 1e-11L, 1e-14L}) {
      const M2 sigma = from_mat(to_mat<T>(M2{s * shape[0], s * shape[1], s * shape[2], s * shape[3]}));
      const sparcon::Density2D<T> d(static_cast<T>(alpha), to_vec<T>(mu), to_mat<T>(sigma));
      const std::string what = describe(alpha, mu, sigma);
      const LD peak = d.pdf(to_vec<T>(mu));
      const M2 cov = from_mat(d.covariance());
      // reach: the support (alpha > 1) or 40 standard deviations (alpha = 1)
      const LD reach = (alpha == 1 ? 40 : std::sqrt(static_cast<LD>(d.support_radius2()))) *
                       std::sqrt(cref2::eigenvalues(sigma)[1]);
      EXPECT_GT(peak, prev_peak) << what;
      EXPECT_LT(cov[0], prev_cov) << what;
      EXPECT_LT(reach, prev_reach) << what;
      if (first_reach == 0) first_reach = reach;
      prev_peak = peak;
      prev_cov = cov[0];
      prev_reach = reach;
      // still normalised and with the reference's tau at every scale
      const cref2::Density ref = cref2::make_density(alpha, mu, sigma);
      EXPECT_LE(alpha == 1 ? std::fabs(d.tau() - ref.tau) / (std::fabs(ref.tau) + 1) : rel_err(d.tau(), ref.tau),
                Tol2<T>::tight)
          << what;
      // nothing beyond the reach
      EXPECT_EQ(d.pdf(to_vec<T>(V2{mu[0] + 1.01L * reach, mu[1]})), T(0)) << what;
    }
    // over 12 decades of s the reach shrinks by 10^(12 (1/2 - gamma)) (10^6 for the Gaussian)
    const LD expected_shrink = std::pow(LD(10), 12 * (0.5L - gamma));
    EXPECT_LE(rel_err(first_reach / prev_reach, expected_shrink), 1e-4L) << "alpha " << static_cast<double>(alpha);
    EXPECT_LT(prev_reach, 0.02L) << "alpha " << static_cast<double>(alpha);
  }
}

// ---- argument checks --------------------------------------------------------------------------

template <class T>
class Density2DErrors : public ::testing::Test {};
TYPED_TEST_SUITE(Density2DErrors, FloatTypes);

TYPED_TEST(Density2DErrors, ConstructorArguments) {
  using T = TypeParam;
  using D = sparcon::Density2D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const sparcon::Vector2<T> mu{T(0.5), T(0.5)};
  const sparcon::Matrix2<T> eye{T(1), T(0), T(0), T(1)};
  const std::vector<std::string> sigma_names{"sigma", "Sigma"};
  EXPECT_TRUE(throws_naming([&] { D(T(0.5), mu, eye); }, {{"alpha"}, {"0.5"}}));
  EXPECT_TRUE(throws_naming([&] { D(T(-1), mu, eye); }, {{"alpha"}}));
  EXPECT_TRUE(throws_naming([&] { D(nan, mu, eye); }, {{"alpha"}, {"nan"}}));
  EXPECT_TRUE(throws_naming([&] { D(inf, mu, eye); }, {{"alpha"}}));
  // not symmetric: off-diagonals differ by far more than rounding
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), mu, {T(1), T(0.5), T(0.25), T(1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1), mu, {T(1), T(0), T(1e-3), T(1)}); }, {sigma_names}));
  // not positive definite: det < 0, det = 0, negative diagonal with det > 0, zero matrix
  EXPECT_TRUE(throws_naming([&] { D(T(2), mu, {T(1), T(2), T(2), T(1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(2), mu, {T(1), T(1), T(1), T(1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), mu, {T(-1), T(0), T(0), T(-1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1), mu, {T(0), T(0), T(0), T(0)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(3), mu, {T(0), T(0), T(0), T(1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), mu, {nan, T(0), T(0), T(1)}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), mu, {T(1), T(0), T(0), inf}); }, {sigma_names}));
  EXPECT_TRUE(throws_naming([&] { D(T(1.5), mu, {T(1), nan, nan, T(1)}); }, {sigma_names}));
  // mu not finite
  EXPECT_TRUE(throws_naming([&] { D(T(2), {nan, T(0)}, eye); }, {{"mu"}}));
  EXPECT_TRUE(throws_naming([&] { D(T(1), {T(0), inf}, eye); }, {{"mu"}}));
  // symmetric to rounding is accepted (off-diagonals one ulp apart)
  const T off = T(0.3), off_next = std::nextafter(off, T(1));
  EXPECT_NO_THROW(D(T(1.5), mu, {T(1), off, off_next, T(1)}));
  const D d(T(1.5), mu, {T(1), off, off_next, T(1)});
  EXPECT_EQ(d.sigma()[1], d.sigma()[2]);
}

TYPED_TEST(Density2DErrors, WithCovarianceAndFromCanonicalArguments) {
  using T = TypeParam;
  using D = sparcon::Density2D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const sparcon::Vector2<T> mu{T(0.5), T(0.5)};
  const sparcon::Matrix2<T> eye{T(1), T(0), T(0), T(1)};
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(0.9), mu, eye); }, {{"alpha"}}));
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(2), {nan, T(0)}, eye); }, {{"mu"}}));
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(2), mu, {T(1), T(2), T(2), T(1)}); }, {{"covariance"}}));
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(1), mu, {T(1), T(0.5), T(0), T(1)}); }, {{"covariance"}}));
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(1.5), mu, {T(-1), T(0), T(0), T(-1)}); }, {{"covariance"}}));
  EXPECT_TRUE(throws_naming([&] { D::with_covariance(T(3), mu, {nan, T(0), T(0), T(1)}); }, {{"covariance"}}));
  const sparcon::Matrix2<T> neg{T(-0.5), T(0), T(0), T(-0.5)};
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(0.5), mu, neg); }, {{"alpha"}}));
  // theta2 must be symmetric negative definite
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(2), mu, eye); }, {{"theta2"}}));
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(2), mu, {T(-1), T(2), T(2), T(-1)}); }, {{"theta2"}}));
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(1), mu, {T(-1), T(0.5), T(0), T(-1)}); }, {{"theta2"}}));
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(1.5), mu, {T(0), T(0), T(0), T(0)}); }, {{"theta2"}}));
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(1.5), mu, {nan, T(0), T(0), T(-1)}); }, {{"theta2"}}));
  // a non-finite theta1 is a bad argument too (the header: bad arguments name the argument)
  EXPECT_TRUE(throws_naming([&] { D::from_canonical(T(1.5), {nan, T(0)}, neg); }, {{"theta1"}}));
}

}  // namespace
}  // namespace sparcon_test
