// disc+cont (attention.h, docs/math.md section 10): mu and sigma2 from the moments of discrete
// distributions over each example's positions (l - 1/2)/L_b, against the definition; the
// scale that gives the moment variance (library density, quadrature reference, closed forms);
// the backward pass against finite differences; padding; bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_reference.h"
#include "continuous_cases.h"
#include "sparcon/attention.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using aref::LD;

/// B = 5 distributions over L = 10 positions, lengths {3, 7, 10, 1, 4}: smooth, peaked, a
/// one-hot (variance = ridge only) and a single position.
template <class T>
struct Moments {
  std::size_t length = 10;
  std::vector<std::int64_t> lengths{3, 7, 10, 1, 4};
  std::vector<T> p;

  explicit Moments(T padding) : p(lengths.size() * length, padding) {
    std::mt19937 rng(99);
    std::normal_distribution<double> score(0, 1);
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const auto len_b = static_cast<std::size_t>(lengths[b]);
      const double temperature = b == 1 ? 0.3 : 1.0;  // example 1: peaked
      std::vector<double> e(len_b);
      double z = 0;
      for (double& v : e) z += (v = std::exp(score(rng) / temperature));
      for (std::size_t l = 0; l < len_b; ++l) p[b * length + l] = static_cast<T>(e[l] / z);
      if (b == 4) {  // one-hot on the third position
        for (std::size_t l = 0; l < len_b; ++l) p[b * length + l] = T(l == 2 ? 1 : 0);
      }
    }
  }
  [[nodiscard]] std::size_t batch() const { return lengths.size(); }
};

template <class T>
void moments(T alpha, const Moments<T>& m, T ridge, std::vector<T>& mu, std::vector<T>& sigma2) {
  sparcon::density_from_moments_1d<T>(alpha, std::span<const T>(m.p), m.length, std::span<const std::int64_t>(m.lengths), ridge,
                                      std::span<T>(mu), std::span<T>(sigma2));
}

/// Mean and variance (+ ridge) of example b from the definition, in long double.
struct MeanVar {
  LD mu, variance;
};
template <class T>
MeanVar mean_var(const Moments<T>& m, std::size_t b, LD ridge) {
  const auto len_b = static_cast<std::size_t>(m.lengths[b]);
  const std::vector<LD> t = aref::positions(len_b);
  LD mu = 0, second = 0;
  for (std::size_t l = 0; l < len_b; ++l) {
    const LD p = static_cast<LD>(m.p[b * m.length + l]);
    mu += p * t[l];
    second += p * t[l] * t[l];
  }
  return {mu, second - mu * mu + ridge};
}

const std::vector<LD>& moment_alphas() {
  static const std::vector<LD> a{1, 1.5L, 2};
  return a;
}

std::string where(LD alpha, std::size_t b, LD ridge) {
  std::ostringstream s;
  s << "alpha=" << static_cast<double>(alpha) << " example=" << b << " ridge=" << static_cast<double>(ridge);
  return s.str();
}

template <class T>
class MomentsForward : public ::testing::Test {};
TYPED_TEST_SUITE(MomentsForward, FloatTypes);

TYPED_TEST(MomentsForward, MeanAndScaleFromTheDefinition) {
  using T = TypeParam;
  constexpr bool kDouble = std::is_same_v<T, double>;
  const LD tol = kDouble ? 1e-12L : 2e-6L;
  const Moments<T> m(T(0.5));  // padding: finite garbage, not part of any distribution
  for (const T ridge : {T(1e-4), T(0.01)}) {
    for (const LD alpha : moment_alphas()) {
      std::vector<T> mu(m.batch(), T(0)), sigma2(m.batch(), T(0));
      moments(static_cast<T>(alpha), m, ridge, mu, sigma2);
      for (std::size_t b = 0; b < m.batch(); ++b) {
        const MeanVar want = mean_var(m, b, static_cast<LD>(ridge));
        EXPECT_NEAR(static_cast<LD>(mu[b]), want.mu, tol * std::fabs(want.mu)) << where(alpha, b, ridge);
        ASSERT_GT(sigma2[b], T(0)) << where(alpha, b, ridge);
        // The library's own density (tested elsewhere) has exactly that variance ...
        const T variance = sparcon::Density1D<T>(static_cast<T>(alpha), mu[b], sigma2[b]).variance();
        EXPECT_NEAR(static_cast<LD>(variance), want.variance, tol * want.variance) << where(alpha, b, ridge);
        // ... and so has the quadrature reference (no closed form) ...
        const LD s2 = static_cast<LD>(sigma2[b]);
        EXPECT_NEAR(aref::density_variance(alpha, s2), want.variance, (kDouble ? 1e-11L : 2e-6L) * want.variance)
            << where(alpha, b, ridge);
        // ... and the closed forms: alpha = 1, sigma2 = variance; alpha = 2, variance = a^2/5
        // with a = (3 sigma2/2)^(1/3), so sigma2 = (2/3) (5 variance)^(3/2).
        if (alpha == 1) {
          EXPECT_NEAR(s2, want.variance, tol * want.variance) << where(alpha, b, ridge);
        }
        if (alpha == 2) {
          const LD closed = 2 * std::pow(5 * want.variance, 1.5L) / 3;
          EXPECT_NEAR(s2, closed, tol * closed) << where(alpha, b, ridge);
        }
      }
    }
  }
}

TYPED_TEST(MomentsForward, PaddingIsIgnored) {
  using T = TypeParam;
  for (const LD alpha : moment_alphas()) {
    const Moments<T> clean(T(0));
    std::vector<T> mu0(clean.batch()), s0(clean.batch());
    moments(static_cast<T>(alpha), clean, T(0.01), mu0, s0);
    for (const T padding : {T(1e30), T(-3), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
      const Moments<T> padded(padding);
      std::vector<T> mu(padded.batch()), s(padded.batch());
      moments(static_cast<T>(alpha), padded, T(0.01), mu, s);
      EXPECT_EQ(mu, mu0) << "alpha=" << static_cast<double>(alpha) << " padding=" << padding;
      EXPECT_EQ(s, s0) << "alpha=" << static_cast<double>(alpha) << " padding=" << padding;
    }
  }
}

TEST(MomentsForward, PositionsOfEachLength) {
  // A one-hot on position l of an example of length L_b gives mu = (l + 1/2)/L_b exactly
  // (up to rounding), whatever the padded length.
  Moments<double> m(0.0);
  m.length = 12;
  m.lengths = {1, 2, 5, 12};
  m.p.assign(4 * 12, 0.0);
  const std::vector<std::size_t> hot{0, 1, 3, 11};
  for (std::size_t b = 0; b < 4; ++b) m.p[b * 12 + hot[b]] = 1;
  std::vector<double> mu(4), sigma2(4);
  moments(1.0, m, 0.02, mu, sigma2);
  for (std::size_t b = 0; b < 4; ++b) {
    EXPECT_NEAR(mu[b], (hot[b] + 0.5) / static_cast<double>(m.lengths[b]), 1e-15) << "example " << b;
    EXPECT_NEAR(sigma2[b], 0.02, 1e-15) << "example " << b;  // alpha = 1: variance = ridge
  }
}

TEST(MomentsForward, ZeroRidgeAllowedWhenVariancePositive) {
  const Moments<double> m(0.0);
  std::vector<double> mu(m.batch()), sigma2(m.batch());
  Moments<double> spread = m;
  spread.lengths = {3, 7, 10, 2, 4};
  for (std::size_t l = 0; l < 4; ++l) spread.p[4 * m.length + l] = 0.25;  // not one-hot
  spread.p[3 * m.length] = 0.5;
  spread.p[3 * m.length + 1] = 0.5;
  EXPECT_NO_THROW(moments(2.0, spread, 0.0, mu, sigma2));
  for (std::size_t b = 0; b < m.batch(); ++b) EXPECT_GT(sigma2[b], 0) << b;
}

// ---- backward ------------------------------------------------------------------------------

void moments_backward(double alpha, const Moments<double>& m, double ridge, const std::vector<double>& dmu,
                      const std::vector<double>& dsigma2, std::vector<double>& dp) {
  sparcon::density_from_moments_1d_backward<double>(alpha, std::span<const double>(m.p), m.length,
                                                    std::span<const std::int64_t>(m.lengths), ridge,
                                                    std::span<const double>(dmu), std::span<const double>(dsigma2),
                                                    std::span<double>(dp));
}

TEST(MomentsBackward, MatchesFiniteDifferences) {
  const double ridge = 0.01;
  for (const LD alpha_ld : moment_alphas()) {
    const auto alpha = static_cast<double>(alpha_ld);
    Moments<double> m(0.25);  // finite padding, perturbed below
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> gmu(m.batch()), gs(m.batch());
    for (std::size_t b = 0; b < m.batch(); ++b) {
      gmu[b] = u(rng);
      gs[b] = u(rng);
    }
    std::vector<double> dp(m.p.size(), 0);
    moments_backward(alpha, m, ridge, gmu, gs, dp);
    auto loss = [&] {
      std::vector<double> mu(m.batch()), s(m.batch());
      moments(alpha, m, ridge, mu, s);
      long double f = 0;
      for (std::size_t b = 0; b < m.batch(); ++b) f += static_cast<long double>(gmu[b]) * mu[b] + static_cast<long double>(gs[b]) * s[b];
      return static_cast<double>(f);
    };
    for (std::size_t b = 0; b < m.batch(); ++b) {
      for (std::size_t l = 0; l < m.length; ++l) {
        const double fd = five_point_derivative(loss, m.p[b * m.length + l], 1e-5);
        const double got = dp[b * m.length + l];
        if (l >= static_cast<std::size_t>(m.lengths[b])) {
          EXPECT_EQ(got, 0.0) << "padding: " << where(alpha_ld, b, ridge) << " l=" << l;
          EXPECT_EQ(fd, 0.0) << "padding influences the moments: " << where(alpha_ld, b, ridge) << " l=" << l;
        } else {
          EXPECT_NEAR(got, fd, 1e-7 * std::fabs(fd) + 1e-8) << where(alpha_ld, b, ridge) << " l=" << l;
        }
      }
    }
  }
}

TEST(MomentsBackward, ClosedFormForGaussian) {
  // alpha = 1: sigma2 = variance, so dp_l = dmu t_l + dsigma2 (t_l^2 - 2 mu t_l).
  const Moments<double> m(std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> gmu{0.3, -1, 0.5, 2, -0.7}, gs{1, 0.25, -2, 0.5, 1.5};
  std::vector<double> dp(m.p.size(), 0);
  moments_backward(1.0, m, 0.01, gmu, gs, dp);
  for (std::size_t b = 0; b < m.batch(); ++b) {
    const auto len_b = static_cast<std::size_t>(m.lengths[b]);
    const std::vector<LD> t = aref::positions(len_b);
    const LD mu = mean_var(m, b, 0).mu;
    for (std::size_t l = 0; l < m.length; ++l) {
      const double got = dp[b * m.length + l];
      if (l >= len_b) {
        EXPECT_EQ(got, 0.0) << "example " << b << " l=" << l;
      } else {
        const LD want = gmu[b] * t[l] + gs[b] * (t[l] * t[l] - 2 * mu * t[l]);
        EXPECT_NEAR(static_cast<LD>(got), want, 1e-13L) << "example " << b << " l=" << l;
      }
    }
  }
}

TEST(MomentsBackward, OverwritesDp) {
  const Moments<double> m(0.5);
  const std::vector<double> gmu{0.3, -1, 0.5, 2, -0.7}, gs{1, 0.25, -2, 0.5, 1.5};
  for (const LD alpha : moment_alphas()) {
    std::vector<double> dp0(m.p.size(), 0), dp(m.p.size(), 7);
    moments_backward(static_cast<double>(alpha), m, 0.01, gmu, gs, dp0);
    moments_backward(static_cast<double>(alpha), m, 0.01, gmu, gs, dp);
    EXPECT_EQ(dp, dp0) << "alpha=" << static_cast<double>(alpha);
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class MomentsErrors : public ::testing::Test {};
TYPED_TEST_SUITE(MomentsErrors, FloatTypes);

struct Args {
  std::size_t length = 10;
  std::vector<std::int64_t> lengths{3, 7, 10};
  std::size_t p_size = 30, mu_size = 3, sigma2_size = 3;
};

TYPED_TEST(MomentsErrors, ForwardArguments) {
  using T = TypeParam;
  auto call = [](Args a, T ridge = T(0.01), T alpha = T(1.5)) {
    return [a, ridge, alpha] {
      std::vector<T> p(a.p_size, T(0.1)), mu(a.mu_size), s(a.sigma2_size);
      sparcon::density_from_moments_1d<T>(alpha, std::span<const T>(p), a.length, std::span<const std::int64_t>(a.lengths),
                                          ridge, std::span<T>(mu), std::span<T>(s));
    };
  };
  EXPECT_NO_THROW(call(Args{})());
  Args a;
  a.p_size = 29;
  EXPECT_TRUE(throws_naming(call(a), {{"p"}}));
  a.p_size = 40;
  EXPECT_TRUE(throws_naming(call(a), {{"p"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, T(-0.01)), {{"ridge"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, std::numeric_limits<T>::quiet_NaN()), {{"ridge"}}));
  a = Args{};
  a.lengths = {3, 7};  // p, mu and sigma2 say B = 3
  EXPECT_TRUE(throws_naming(call(a), {{"lengths", "p", "mu", "sigma2"}}));
  a.lengths = {3, 0, 10};
  EXPECT_TRUE(throws_naming(call(a), {{"lengths"}}));
  a.lengths = {3, 11, 10};
  EXPECT_TRUE(throws_naming(call(a), {{"lengths"}, {"11"}}));
  a.lengths = {3, -1, 10};
  EXPECT_TRUE(throws_naming(call(a), {{"lengths"}}));
  a = Args{};
  a.mu_size = 2;
  EXPECT_TRUE(throws_naming(call(a), {{"mu"}}));
  a = Args{};
  a.sigma2_size = 4;
  EXPECT_TRUE(throws_naming(call(a), {{"sigma2"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, T(0.01), T(0.9)), {{"alpha"}}));
}

TYPED_TEST(MomentsErrors, BackwardArguments) {
  using T = TypeParam;
  struct Sizes {
    std::size_t dmu = 3, dsigma2 = 3, dp = 30;
  };
  auto call = [](Args a, Sizes s, T ridge = T(0.01)) {
    return [a, s, ridge] {
      std::vector<T> p(a.p_size, T(0.1)), dmu(s.dmu, T(1)), ds(s.dsigma2, T(1)), dp(s.dp);
      sparcon::density_from_moments_1d_backward<T>(T(2), std::span<const T>(p), a.length,
                                                   std::span<const std::int64_t>(a.lengths), ridge,
                                                   std::span<const T>(dmu), std::span<const T>(ds), std::span<T>(dp));
    };
  };
  EXPECT_NO_THROW(call(Args{}, Sizes{})());
  Args a;
  a.p_size = 31;
  EXPECT_TRUE(throws_naming(call(a, Sizes{.dmu = 3, .dsigma2 = 3, .dp = 31}), {{"p"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 2, .dsigma2 = 3, .dp = 30}), {{"dmu"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 3, .dsigma2 = 4, .dp = 30}), {{"dsigma2"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 3, .dsigma2 = 3, .dp = 29}), {{"dp"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{}, T(-1)), {{"ridge"}}));
  a = Args{};
  a.lengths = {3, 0, 10};
  EXPECT_TRUE(throws_naming(call(a, Sizes{}), {{"lengths"}}));
  a.lengths = {3, 7, 11};
  EXPECT_TRUE(throws_naming(call(a, Sizes{}), {{"lengths"}}));
}

}  // namespace
}  // namespace sparcon_test
