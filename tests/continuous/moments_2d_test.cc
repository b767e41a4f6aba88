// disc+cont on images (attention.h, docs/math.md section 10): mu and Sigma from the moments of
// discrete distributions over the pixel positions ((i + 1/2)/H, (k + 1/2)/W), against the
// definition in long double; Sigma is the scale whose covariance is the moment covariance (the
// library's Density2D, the beta-Gaussian formulas, and Sigma = 9 pi sqrt(det C) C for alpha = 2);
// singular covariances; the backward pass against finite differences and, for alpha = 1, a
// closed form; bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_reference.h"
#include "attention_reference_2d.h"
#include "continuous_cases.h"
#include "sparcon/attention.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using aref2d::LD;
using sparcon::ImageSize;

/// B = 4 distributions over the pixels of a 5 x 7 image: smooth, peaked, non-zero on a few
/// pixels only (6 of them), and on the pixels (i, i), whose positions ((i + 1/2)/5, (i + 1/2)/7)
/// lie on a line (a covariance of rank 1 without the ridge).
template <class T>
struct PixelDistributions {
  ImageSize size{5, 7};
  std::size_t batch = 4;
  std::vector<T> p;

  PixelDistributions() : p(batch * size.height * size.width, T(0)) {
    const std::size_t n = pixels();
    std::mt19937 rng(77);
    std::normal_distribution<double> score(0, 1);
    for (std::size_t b = 0; b < 2; ++b) {
      const double temperature = b == 1 ? 0.3 : 1.0;
      std::vector<double> e(n);
      double z = 0;
      for (double& v : e) z += (v = std::exp(score(rng) / temperature));
      for (std::size_t l = 0; l < n; ++l) p[b * n + l] = static_cast<T>(e[l] / z);
    }
    // example 2: six pixels
    const std::vector<std::pair<std::size_t, double>> few{{1 * 7 + 2, 0.1}, {1 * 7 + 5, 0.25}, {3 * 7 + 0, 0.05},
                                                          {3 * 7 + 6, 0.3}, {4 * 7 + 3, 0.2},  {0 * 7 + 4, 0.1}};
    for (const auto& [l, w] : few) p[2 * n + l] = static_cast<T>(w);
    // example 3: along the diagonal i = k (strong correlation of the coordinates)
    double z = 0;
    for (std::size_t i = 0; i < 5; ++i) z += 1 + static_cast<double>(i);
    for (std::size_t i = 0; i < 5; ++i) p[3 * n + i * 7 + i] = static_cast<T>((1 + static_cast<double>(i)) / z);
  }
  [[nodiscard]] std::size_t pixels() const { return size.height * size.width; }
};

template <class T>
void moments(T alpha, const std::vector<T>& p, std::size_t batch, ImageSize size, T ridge, std::vector<T>& mu,
             std::vector<T>& sigma) {
  sparcon::density_from_moments_2d<T>(alpha, std::span<const T>(p), batch, size, ridge, std::span<T>(mu), std::span<T>(sigma));
}

std::string where(LD alpha, std::size_t b, LD ridge) {
  std::ostringstream s;
  s << "alpha=" << static_cast<double>(alpha) << " example=" << b << " ridge=" << static_cast<double>(ridge);
  return s.str();
}

const std::vector<LD>& moment_alphas() {
  static const std::vector<LD> a{1, 1.5L, 2};
  return a;
}

// ---- forward -------------------------------------------------------------------------------

template <class T>
class Moments2DForward : public ::testing::Test {};
TYPED_TEST_SUITE(Moments2DForward, FloatTypes);

TYPED_TEST(Moments2DForward, MeanAndScaleFromTheDefinition) {
  using T = TypeParam;
  constexpr bool kDouble = std::is_same_v<T, double>;
  const LD tol = kDouble ? 1e-12L : 2e-6L;
  const PixelDistributions<T> d;
  for (const T ridge : {T(1e-4), T(0.01)}) {
    for (const LD alpha : moment_alphas()) {
      std::vector<T> mu(2 * d.batch), sigma(4 * d.batch);
      moments(static_cast<T>(alpha), d.p, d.batch, d.size, ridge, mu, sigma);
      for (std::size_t b = 0; b < d.batch; ++b) {
        const aref2d::Moments want = aref2d::moments(d.p.data() + b * d.pixels(), d.size, static_cast<LD>(ridge));
        for (int c = 0; c < 2; ++c)
          EXPECT_NEAR(static_cast<LD>(mu[2 * b + c]), want.mu[c], tol * std::fabs(want.mu[c])) << where(alpha, b, ridge) << " c=" << c;
        const LD c_max = std::max(std::fabs(want.covariance[0]), std::fabs(want.covariance[3]));
        // The scale: k C with k from the beta-Gaussian formulas (1 for alpha = 1).
        const LD k = aref2d::scale_factor(alpha, want.covariance);
        for (int i = 0; i < 4; ++i)
          EXPECT_NEAR(static_cast<LD>(sigma[4 * b + i]), k * want.covariance[i], tol * k * c_max)
              << where(alpha, b, ridge) << " sigma[" << i << "]";
        // alpha = 2 directly: Sigma = 9 pi sqrt(det C) C.
        if (alpha == 2) {
          const LD k2 = 9 * aref2d::kPi2d * std::sqrt(aref2d::det(want.covariance));
          for (int i = 0; i < 4; ++i)
            EXPECT_NEAR(static_cast<LD>(sigma[4 * b + i]), k2 * want.covariance[i], tol * k2 * c_max)
                << where(alpha, b, ridge) << " sigma[" << i << "] (9 pi sqrt(det C) C)";
        }
        if (alpha == 1) {
          for (int i = 0; i < 4; ++i)
            EXPECT_NEAR(static_cast<LD>(sigma[4 * b + i]), want.covariance[i], tol * c_max) << where(alpha, b, ridge);
        }
        // The library's own density (tested elsewhere) of that scale has covariance C.
        const sparcon::Density2D<T> density(static_cast<T>(alpha), {mu[2 * b], mu[2 * b + 1]},
                                            {sigma[4 * b], sigma[4 * b + 1], sigma[4 * b + 2], sigma[4 * b + 3]});
        const sparcon::Matrix2<T> cov = density.covariance();
        for (int i = 0; i < 4; ++i)
          EXPECT_NEAR(static_cast<LD>(cov[i]), want.covariance[i], (kDouble ? 1e-11L : 1e-5L) * c_max)
              << where(alpha, b, ridge) << " covariance[" << i << "]";
        // Sigma is returned exactly symmetric.
        EXPECT_EQ(sigma[4 * b + 1], sigma[4 * b + 2]) << where(alpha, b, ridge);
      }
    }
  }
}

TEST(Moments2DForward, ScaleFactorReferenceMatchesKnownCases) {
  // The reference itself: alpha = 2 gives 9 pi sqrt(det C), and as alpha -> 1 the factor -> 1.
  const aref2d::Mat2 c{0.02L, 0.005L, 0.005L, 0.01L};
  EXPECT_NEAR(aref2d::scale_factor(2, c), 9 * aref2d::kPi2d * std::sqrt(aref2d::det(c)), 1e-15L);
  EXPECT_NEAR(aref2d::scale_factor(1.0001L, c), 1.0L, 1e-2L);
  EXPECT_NEAR(aref2d::scale_factor(1.000001L, c), 1.0L, 1e-4L);
}

TEST(Moments2DForward, OneHotPixel) {
  // A one-hot on pixel (i, k): mu = ((i + 1/2)/H, (k + 1/2)/W) and covariance = ridge I.
  const ImageSize size{4, 9};
  const std::vector<std::pair<std::size_t, std::size_t>> hot{{0, 0}, {3, 8}, {2, 5}, {1, 7}};
  std::vector<double> p(hot.size() * 36, 0.0);
  for (std::size_t b = 0; b < hot.size(); ++b) p[b * 36 + hot[b].first * 9 + hot[b].second] = 1;
  for (const LD alpha : moment_alphas()) {
    std::vector<double> mu(2 * hot.size()), sigma(4 * hot.size());
    moments(static_cast<double>(alpha), p, hot.size(), size, 0.02, mu, sigma);
    const LD k = aref2d::scale_factor(alpha, {0.02L, 0, 0, 0.02L});
    for (std::size_t b = 0; b < hot.size(); ++b) {
      EXPECT_NEAR(mu[2 * b], (hot[b].first + 0.5) / 4, 1e-15) << where(alpha, b, 0.02);
      EXPECT_NEAR(mu[2 * b + 1], (hot[b].second + 0.5) / 9, 1e-15) << where(alpha, b, 0.02);
      EXPECT_NEAR(static_cast<LD>(sigma[4 * b]), k * 0.02L, 1e-13L * k) << where(alpha, b, 0.02);
      EXPECT_NEAR(static_cast<LD>(sigma[4 * b + 1]), 0, 1e-15L * k) << where(alpha, b, 0.02);
      EXPECT_NEAR(static_cast<LD>(sigma[4 * b + 2]), 0, 1e-15L * k) << where(alpha, b, 0.02);
      EXPECT_NEAR(static_cast<LD>(sigma[4 * b + 3]), k * 0.02L, 1e-13L * k) << where(alpha, b, 0.02);
    }
  }
}

TEST(Moments2DForward, SingularCovarianceNeedsRidge) {
  const ImageSize size{4, 5};
  std::vector<double> one_hot(20, 0.0);
  one_hot[2 * 5 + 3] = 1;
  std::vector<double> same_row(20, 0.0);  // two pixels of one row: rank-1 covariance
  same_row[1 * 5 + 0] = 0.5;
  same_row[1 * 5 + 4] = 0.5;
  std::vector<double> mu(2), sigma(4);
  for (const LD alpha : moment_alphas()) {
    const auto a = static_cast<double>(alpha);
    EXPECT_THROW(moments(a, one_hot, 1, size, 0.0, mu, sigma), std::invalid_argument) << "alpha=" << a;
    EXPECT_THROW(moments(a, same_row, 1, size, 0.0, mu, sigma), std::invalid_argument) << "alpha=" << a;
    EXPECT_NO_THROW(moments(a, one_hot, 1, size, 1e-3, mu, sigma)) << "alpha=" << a;
    EXPECT_GT(sigma[0], 0);
    EXPECT_NO_THROW(moments(a, same_row, 1, size, 1e-3, mu, sigma)) << "alpha=" << a;
    EXPECT_GT(sigma[0] * sigma[3] - sigma[1] * sigma[2], 0);
  }
  // ridge = 0 with a full-rank covariance is fine (examples 0 to 2; example 3 lies on a line)
  const PixelDistributions<double> d;
  std::vector<double> mu3(6), sigma3(12);
  const std::vector<double> p3(d.p.begin(), d.p.begin() + static_cast<std::ptrdiff_t>(3 * d.pixels()));
  for (const LD alpha : moment_alphas()) {
    EXPECT_NO_THROW(moments(static_cast<double>(alpha), p3, 3, d.size, 0.0, mu3, sigma3)) << static_cast<double>(alpha);
    // and the whole batch, with example 3 on a line, is rejected
    std::vector<double> mu4(8), sigma4(16);
    EXPECT_THROW(moments(static_cast<double>(alpha), d.p, d.batch, d.size, 0.0, mu4, sigma4), std::invalid_argument);
  }
}

TEST(Moments2DForward, EmptyBatch) {
  std::vector<double> p, mu, sigma;
  EXPECT_NO_THROW(moments(1.5, p, 0, {5, 7}, 0.01, mu, sigma));
  std::vector<double> dp;
  EXPECT_NO_THROW(sparcon::density_from_moments_2d_backward<double>(1.5, std::span<const double>(p), 0, {5, 7}, 0.01,
                                                                    std::span<const double>(mu), std::span<const double>(sigma),
                                                                    std::span<double>(dp)));
}

// ---- backward ------------------------------------------------------------------------------

void moments_backward(double alpha, const std::vector<double>& p, std::size_t batch, ImageSize size, double ridge,
                      const std::vector<double>& dmu, const std::vector<double>& dsigma, std::vector<double>& dp) {
  sparcon::density_from_moments_2d_backward<double>(alpha, std::span<const double>(p), batch, size, ridge,
                                                    std::span<const double>(dmu), std::span<const double>(dsigma),
                                                    std::span<double>(dp));
}

TEST(Moments2DBackward, MatchesFiniteDifferences) {
  // Upstream gradients: dsigma is not symmetric (only its symmetric part can matter, since
  // Sigma is symmetric).
  const double ridge = 0.01;
  for (const LD alpha_ld : moment_alphas()) {
    const auto alpha = static_cast<double>(alpha_ld);
    PixelDistributions<double> d;
    const std::vector<double> gmu = [] {
      std::mt19937 rng(3);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> v(8);
      for (double& x : v) x = u(rng);
      return v;
    }();
    const std::vector<double> gs = [] {
      std::mt19937 rng(4);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> v(16);
      for (double& x : v) x = u(rng);
      return v;
    }();
    std::vector<double> dp(d.p.size(), 0);
    moments_backward(alpha, d.p, d.batch, d.size, ridge, gmu, gs, dp);
    auto loss = [&] {
      std::vector<double> mu(8), s(16);
      moments(alpha, d.p, d.batch, d.size, ridge, mu, s);
      LD f = 0;
      for (std::size_t i = 0; i < 8; ++i) f += static_cast<LD>(gmu[i]) * mu[i];
      for (std::size_t i = 0; i < 16; ++i) f += static_cast<LD>(gs[i]) * s[i];
      return static_cast<double>(f);
    };
    for (std::size_t i = 0; i < d.p.size(); ++i) {
      const double fd = five_point_derivative(loss, d.p[i], 1e-5);
      EXPECT_NEAR(dp[i], fd, 1e-7 * std::fabs(fd) + 1e-8) << where(alpha_ld, i / d.pixels(), ridge) << " pixel " << i % d.pixels();
    }
    // only the symmetric part of dsigma matters
    std::vector<double> gs_sym = gs;
    for (std::size_t b = 0; b < d.batch; ++b) gs_sym[4 * b + 1] = gs_sym[4 * b + 2] = (gs[4 * b + 1] + gs[4 * b + 2]) / 2;
    std::vector<double> dp_sym(d.p.size(), 0);
    moments_backward(alpha, d.p, d.batch, d.size, ridge, gmu, gs_sym, dp_sym);
    double dp_max = 0;
    for (const double x : dp) dp_max = std::max(dp_max, std::fabs(x));
    for (std::size_t i = 0; i < dp.size(); ++i) EXPECT_NEAR(dp_sym[i], dp[i], 1e-13 * dp_max) << "alpha=" << alpha << " i=" << i;
  }
}

TEST(Moments2DBackward, ClosedFormForGaussian) {
  // alpha = 1: Sigma = C, so dp_l = gmu . t_l + sum_ij gs_ij (t_i t_j - t_i mu_j - mu_i t_j).
  const PixelDistributions<double> d;
  const std::vector<double> gmu{0.3, -1, 0.5, 2, -0.7, 1.1, 0.2, -0.4};
  const std::vector<double> gs{1, 0.25, -0.75, 0.5, -2, 0.5, 0.5, 1.5, 0.1, -0.3, 0.9, 0.7, 1.2, 0.4, -0.6, -1};
  std::vector<double> dp(d.p.size(), 0);
  moments_backward(1.0, d.p, d.batch, d.size, 0.01, gmu, gs, dp);
  const std::vector<aref2d::Point> t = aref2d::positions(d.size);
  for (std::size_t b = 0; b < d.batch; ++b) {
    const aref2d::Point mu = aref2d::moments(d.p.data() + b * d.pixels(), d.size, 0).mu;
    for (std::size_t l = 0; l < d.pixels(); ++l) {
      LD want = gmu[2 * b] * t[l][0] + gmu[2 * b + 1] * t[l][1];
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) want += gs[4 * b + 2 * i + j] * (t[l][i] * t[l][j] - t[l][i] * mu[j] - mu[i] * t[l][j]);
      EXPECT_NEAR(static_cast<LD>(dp[b * d.pixels() + l]), want, 1e-13L) << "example " << b << " pixel " << l;
    }
  }
}

TEST(Moments2DBackward, OverwritesDp) {
  const PixelDistributions<double> d;
  const std::vector<double> gmu(8, 0.5), gs{1, 0.25, -0.75, 0.5, -2, 0.5, 0.5, 1.5, 0.1, -0.3, 0.9, 0.7, 1.2, 0.4, -0.6, -1};
  for (const LD alpha : moment_alphas()) {
    std::vector<double> dp0(d.p.size(), 0), dp(d.p.size(), std::numeric_limits<double>::quiet_NaN());
    moments_backward(static_cast<double>(alpha), d.p, d.batch, d.size, 0.01, gmu, gs, dp0);
    moments_backward(static_cast<double>(alpha), d.p, d.batch, d.size, 0.01, gmu, gs, dp);
    EXPECT_EQ(dp, dp0) << "alpha=" << static_cast<double>(alpha);
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class Moments2DErrors : public ::testing::Test {};
TYPED_TEST_SUITE(Moments2DErrors, FloatTypes);

struct Args {
  std::size_t batch = 3;
  ImageSize size{4, 5};
  std::size_t p_size = 60, mu_size = 6, sigma_size = 12;
};

TYPED_TEST(Moments2DErrors, ForwardArguments) {
  using T = TypeParam;
  auto call = [](Args a, T ridge = T(0.01), T alpha = T(1.5)) {
    return [a, ridge, alpha] {
      std::vector<T> p(a.p_size, T(0.05)), mu(a.mu_size), s(a.sigma_size);
      sparcon::density_from_moments_2d<T>(alpha, std::span<const T>(p), a.batch, a.size, ridge, std::span<T>(mu),
                                          std::span<T>(s));
    };
  };
  EXPECT_NO_THROW(call(Args{})());
  Args a;
  a.p_size = 59;
  EXPECT_TRUE(throws_naming(call(a), {{"p"}}));
  a.p_size = 80;
  EXPECT_TRUE(throws_naming(call(a), {{"p"}}));
  a = Args{};
  a.mu_size = 4;
  EXPECT_TRUE(throws_naming(call(a), {{"mu"}}));
  a = Args{};
  a.sigma_size = 13;
  EXPECT_TRUE(throws_naming(call(a), {{"sigma"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, T(-0.01)), {{"ridge"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, std::numeric_limits<T>::quiet_NaN()), {{"ridge"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, T(0.01), T(0.9)), {{"alpha"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, T(0.01), std::numeric_limits<T>::quiet_NaN()), {{"alpha"}}));
  a = Args{};
  a.size = {0, 5};
  a.p_size = 0;
  EXPECT_TRUE(throws_naming(call(a), {{"height", "size"}}));
}

TYPED_TEST(Moments2DErrors, BackwardArguments) {
  using T = TypeParam;
  struct Sizes {
    std::size_t dmu = 6, dsigma = 12, dp = 60;
  };
  auto call = [](Args a, Sizes s, T ridge = T(0.01), T alpha = T(2)) {
    return [a, s, ridge, alpha] {
      std::vector<T> p(a.p_size, T(0.05)), dmu(s.dmu, T(1)), ds(s.dsigma, T(1)), dp(s.dp);
      sparcon::density_from_moments_2d_backward<T>(alpha, std::span<const T>(p), a.batch, a.size, ridge,
                                                   std::span<const T>(dmu), std::span<const T>(ds), std::span<T>(dp));
    };
  };
  EXPECT_NO_THROW(call(Args{}, Sizes{})());
  Args a;
  a.p_size = 61;
  EXPECT_TRUE(throws_naming(call(a, Sizes{.dmu = 6, .dsigma = 12, .dp = 61}), {{"p"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 5, .dsigma = 12, .dp = 60}), {{"dmu"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 6, .dsigma = 8, .dp = 60}), {{"dsigma"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{.dmu = 6, .dsigma = 12, .dp = 59}), {{"dp"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{}, T(-1)), {{"ridge"}}));
  EXPECT_TRUE(throws_naming(call(Args{}, Sizes{}, T(0.01), T(0.5)), {{"alpha"}}));
}

// The covariance's two off-diagonal sums round apart on some maps (contracted multiply-adds of
// w t0 t1 and w t1 t0): a model's peaked softmax maps over a 14 x 14 grid once made
// with_covariance refuse the covariance as asymmetric. Many such maps, double, alpha 1 and 2.
TEST(DensityFromMoments2D, ManyPeakedMapsGiveSymmetricScales) {
  const ImageSize size{14, 14};
  const std::size_t batch = 4000, n = 196;
  std::vector<double> p(batch * n);
  std::mt19937 rng(5);
  std::normal_distribution<double> score(0, 1);
  std::uniform_real_distribution<double> temperature(0.05, 2.0);
  for (std::size_t b = 0; b < batch; ++b) {
    const double t = temperature(rng);
    double z = 0;
    for (std::size_t l = 0; l < n; ++l) z += (p[b * n + l] = std::exp(score(rng) / t));
    for (std::size_t l = 0; l < n; ++l) p[b * n + l] /= z;
  }
  for (const double alpha : {1.0, 2.0}) {
    std::vector<double> mu(2 * batch), sigma(4 * batch);
    ASSERT_NO_THROW(moments(alpha, p, batch, size, 1e-4, mu, sigma)) << alpha;
    for (std::size_t b = 0; b < batch; ++b) ASSERT_EQ(sigma[4 * b + 1], sigma[4 * b + 2]) << b;
  }
}

}  // namespace
}  // namespace sparcon_test
