// expectation_2d_backward against central finite differences of the library's expectation_2d
// (double): dmu (B x 2) and dsigma (B x 4, symmetric: the off-diagonal pair is checked against a
// symmetric perturbation of both entries), with random upstream gradients; the optional r
// output; and canonical_gradient_2d / canonical_gradient_1d against finite differences through
// Density2D::from_canonical / Density1D::from_canonical composed with expectation_2d / _1d.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "continuous_cases_2d.h"
#include "continuous_reference_2d.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using namespace cases2d;  // NOLINT

/// The batch of the gradient tests: mu inside and outside [0, 1]^2; isotropic, anisotropic and
/// rotated scales from 1e-6 to 0.5.
const std::vector<Case>& gradient_cases() {
  static const std::vector<Case> c{
      {{0.5L, 0.5L}, {1e-6L, 0, 0, 1e-6L}},
      {{0.42L, 0.61L}, {1e-4L, 0, 0, 1e-4L}},
      {{0.3L, 0.7L}, cref2::rotated(0.02L, 0.002L, 0.6L)},
      {{0.1L, 0.2L}, {0.05L, 0, 0, 0.01L}},
      {{-0.2L, 1.3L}, cref2::rotated(0.5L, 0.1L, -0.3L)},
      {{0.77L, 0.23L}, cref2::rotated(1e-3L, 1e-4L, 1.0L)},
  };
  return c;
}

using Basis = sparcon::GaussianBasis2D<double>;

/// The basis of the gradient tests: a 6 x 6 grid with the paper's width (each finite difference
/// is two forward calls, so a smaller grid than the paper's) and the hand-made functions.
Basis gradient_basis() {
  Basis b = Basis::grid(6, 0.001);
  const Basis extra = test_basis<double>();
  const std::size_t paper = 100;
  b.centers.insert(b.centers.end(), extra.centers.begin() + 2 * paper, extra.centers.end());
  b.widths.insert(b.widths.end(), extra.widths.begin() + 4 * paper, extra.widths.end());
  return b;
}

/// sum_j g_row[j] r_j for one density (mu, sigma).
double row_loss(double alpha, const std::array<double, 2>& mu, const std::array<double, 4>& sigma, const Basis& basis,
                std::span<const double> g_row) {
  std::vector<double> r(basis.size());
  sparcon::expectation_2d<double>(alpha, std::span<const double>(mu), std::span<const double>(sigma), basis, r);
  double sum = 0;
  for (std::size_t j = 0; j < r.size(); ++j) sum += g_row[j] * r[j];
  return sum;
}

/// Smallest eigenvalue of a symmetric 2 x 2 matrix in double.
double lambda_min(const std::array<double, 4>& m) {
  return static_cast<double>(cref2::eigenvalues({m[0], m[1], m[2], m[3]})[0]);
}

/// |analytic - fd| <= 1e-6 |fd| + 1e-12 * mass / h: the floor is 1e-7 of the natural size of
/// the derivative, mass / (the length over which the loss varies) with h = 1e-5 of that length.
::testing::AssertionResult fd_close(double analytic, double fd, double mass, double h) {
  const double tol = 1e-6 * std::fabs(fd) + 1e-12 * mass / h;
  if (std::fabs(analytic - fd) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "analytic " << analytic << " finite difference " << fd << " (diff "
                                       << analytic - fd << ", tol " << tol << ")";
}

class Backward2DFiniteDifferences : public ::testing::TestWithParam<double> {};

TEST_P(Backward2DFiniteDifferences, DmuAndDsigma) {
  const double alpha = GetParam();
  const Basis basis = gradient_basis();
  const std::size_t N = basis.size();
  const Batch2<double> batch = make_batch<double>(gradient_cases());
  const std::size_t B = batch.cases.size();
  const std::vector<double> g = normal_vector(B * N, 4242u + static_cast<unsigned>(alpha * 100));
  std::vector<double> dmu(2 * B, -7), dsigma(4 * B, -7), r_out(B * N, -7), r(B * N);
  sparcon::expectation_2d_backward<double>(alpha, batch.mu, batch.sigma, basis, g, dmu, dsigma, r_out);
  sparcon::expectation_2d<double>(alpha, batch.mu, batch.sigma, basis, r);
  double min_width = 1e300;
  for (std::size_t j = 0; j < N; ++j) {
    min_width = std::min(min_width, lambda_min({basis.widths[4 * j], basis.widths[4 * j + 1], basis.widths[4 * j + 2],
                                                basis.widths[4 * j + 3]}));
  }
  for (std::size_t b = 0; b < B; ++b) {
    const std::string what = describe(alpha, batch.cases[b].mu, batch.cases[b].sigma);
    const std::span<const double> g_row(g.data() + b * N, N);
    const std::array<double, 2> mu{batch.mu[2 * b], batch.mu[2 * b + 1]};
    const std::array<double, 4> sigma{batch.sigma[4 * b], batch.sigma[4 * b + 1], batch.sigma[4 * b + 2],
                                      batch.sigma[4 * b + 3]};
    // the optional r output is the forward result
    double row_max = 0, mass = 0;
    for (std::size_t j = 0; j < N; ++j) {
      row_max = std::max(row_max, std::fabs(r[b * N + j]));
      mass += std::fabs(g_row[j] * r[b * N + j]);
    }
    for (std::size_t j = 0; j < N; ++j) {
      EXPECT_LE(std::fabs(r_out[b * N + j] - r[b * N + j]), 1e-12 * row_max) << what << " r[" << j << "]";
    }
    // dsigma is symmetric
    EXPECT_LE(std::fabs(dsigma[4 * b + 1] - dsigma[4 * b + 2]),
              1e-14 * (std::fabs(dsigma[4 * b]) + std::fabs(dsigma[4 * b + 1]) + std::fabs(dsigma[4 * b + 3])))
        << what << " dsigma not symmetric";
    // mu: the loss varies over the spread of the density combined with the narrowest psi
    const sparcon::Density2D<double> d(alpha, {mu[0], mu[1]}, {sigma[0], sigma[1], sigma[2], sigma[3]});
    const double ell = std::sqrt(lambda_min(d.covariance()) + min_width);
    const double h_mu = 1e-5 * ell;
    for (int k = 0; k < 2; ++k) {
      auto plus = mu, minus = mu;
      plus[k] += h_mu;
      minus[k] -= h_mu;
      const double fd = (row_loss(alpha, plus, sigma, basis, g_row) - row_loss(alpha, minus, sigma, basis, g_row)) / (2 * h_mu);
      EXPECT_TRUE(fd_close(dmu[2 * b + k], fd, mass, h_mu)) << what << " dmu[" << k << "]";
    }
    // Sigma: a step of 1e-5 of its smallest eigenvalue keeps it positive definite
    const double h_s = 1e-5 * lambda_min(sigma);
    for (const int k : {0, 3}) {
      auto plus = sigma, minus = sigma;
      plus[k] += h_s;
      minus[k] -= h_s;
      const double fd = (row_loss(alpha, mu, plus, basis, g_row) - row_loss(alpha, mu, minus, basis, g_row)) / (2 * h_s);
      EXPECT_TRUE(fd_close(dsigma[4 * b + k], fd, mass, h_s)) << what << " dsigma[" << k << "]";
    }
    {
      // both off-diagonal entries together: the derivative is dsigma[01] + dsigma[10]
      auto plus = sigma, minus = sigma;
      plus[1] += h_s;
      plus[2] += h_s;
      minus[1] -= h_s;
      minus[2] -= h_s;
      const double fd = (row_loss(alpha, mu, plus, basis, g_row) - row_loss(alpha, mu, minus, basis, g_row)) / (2 * h_s);
      EXPECT_TRUE(fd_close(dsigma[4 * b + 1] + dsigma[4 * b + 2], fd, mass, h_s)) << what << " dsigma[01] + dsigma[10]";
    }
  }
}

TEST_P(Backward2DFiniteDifferences, CanonicalGradient2D) {
  const double alpha = GetParam();
  const Basis basis = gradient_basis();
  const std::size_t N = basis.size();
  for (const std::size_t b : {1u, 2u, 4u, 5u}) {  // a subset of the batch: each row costs 10 forward calls
    const Case& c = gradient_cases()[b];
    // theta from (mu, Sigma) in long double; the density the library builds from it is the base point
    const M2 inv = cref2::inverse(c.sigma);
    const V2 t1 = cref2::apply(inv, c.mu);
    const sparcon::Vector2<double> theta1 = to_vec<double>(t1);
    const sparcon::Matrix2<double> theta2 = to_mat<double>(M2{-inv[0] / 2, -inv[1] / 2, -inv[2] / 2, -inv[3] / 2});
    const std::string what = describe(alpha, c.mu, c.sigma);
    const std::vector<double> g = normal_vector(N, 99u + static_cast<unsigned>(b) + static_cast<unsigned>(alpha * 10));
    auto loss = [&](const sparcon::Vector2<double>& th1, const sparcon::Matrix2<double>& th2) {
      const auto d = sparcon::Density2D<double>::from_canonical(alpha, th1, th2);
      const auto m = d.mu();
      const auto s = d.sigma();
      return row_loss(alpha, {m[0], m[1]}, {s[0], s[1], s[2], s[3]}, basis, g);
    };
    const auto d0 = sparcon::Density2D<double>::from_canonical(alpha, theta1, theta2);
    const auto mu = d0.mu();
    const auto sigma = d0.sigma();
    std::vector<double> dmu(2), dsigma(4), r(N);
    sparcon::expectation_2d_backward<double>(alpha, std::span<const double>(mu), std::span<const double>(sigma), basis, g,
                                             dmu, dsigma, r);
    const auto cg = sparcon::canonical_gradient_2d<double>(mu, sigma, {dmu[0], dmu[1]},
                                                           {dsigma[0], dsigma[1], dsigma[2], dsigma[3]});
    double mass = 0;
    for (std::size_t j = 0; j < N; ++j) mass += std::fabs(g[j] * r[j]);
    // the documented formula: dtheta1 = Sigma dmu, dtheta2 = 2 Sigma H Sigma, H = dsigma + sym(dmu theta1^T)
    {
      const M2 S = from_mat(sigma);
      const V2 th1 = from_vec(d0.mu());
      const V2 th = cref2::apply(cref2::inverse(S), th1);  // theta1 of the base point
      const M2 H{dsigma[0] + dmu[0] * th[0], dsigma[1] + (dmu[0] * th[1] + dmu[1] * th[0]) / 2,
                 dsigma[2] + (dmu[1] * th[0] + dmu[0] * th[1]) / 2, dsigma[3] + dmu[1] * th[1]};
      const M2 want2 = cref2::mul(cref2::mul(S, H), S);
      const V2 want1 = cref2::apply(S, {dmu[0], dmu[1]});
      const LD size1 = std::fabs(want1[0]) + std::fabs(want1[1]);
      const LD size2 = std::fabs(want2[0]) + std::fabs(want2[1]) + std::fabs(want2[3]);
      for (int k = 0; k < 2; ++k) EXPECT_LE(std::fabs(cg.dtheta1[k] - want1[k]), 1e-13L * size1) << what << " dtheta1 formula";
      for (int k = 0; k < 4; ++k) EXPECT_LE(std::fabs(cg.dtheta2[k] - 2 * want2[k]), 2e-13L * size2) << what << " dtheta2 formula";
    }
    // finite differences in theta. Steps: theta1 moves mu by Sigma h (1e-5 of the length ell
    // over which the loss varies); theta2 changes Sigma relatively by about h lambda_max(Sigma).
    double min_width = 1e300;
    for (std::size_t j = 0; j < N; ++j) {
      min_width = std::min(min_width, lambda_min({basis.widths[4 * j], basis.widths[4 * j + 1], basis.widths[4 * j + 2],
                                                  basis.widths[4 * j + 3]}));
    }
    const double lmax = static_cast<double>(cref2::eigenvalues(from_mat(sigma))[1]);
    const double ell = std::sqrt(lambda_min(d0.covariance()) + min_width);
    const double h1 = 1e-5 * ell / lmax;
    for (int k = 0; k < 2; ++k) {
      auto plus = theta1, minus = theta1;
      plus[k] += h1;
      minus[k] -= h1;
      const double fd = (loss(plus, theta2) - loss(minus, theta2)) / (2 * h1);
      EXPECT_TRUE(fd_close(cg.dtheta1[k], fd, mass, h1)) << what << " dtheta1[" << k << "]";
    }
    // theta2 moves mu = Sigma theta1 too: by about 2 lmax h |mu|; keep that below 1e-5 ell as well
    const double mu_norm = std::hypot(mu[0], mu[1]);
    const double h2 = 1e-5 * std::min(1 / (2 * lmax), ell / (2 * lmax * std::max(mu_norm, 1e-300)));
    for (const int k : {0, 3}) {
      auto plus = theta2, minus = theta2;
      plus[k] += h2;
      minus[k] -= h2;
      const double fd = (loss(theta1, plus) - loss(theta1, minus)) / (2 * h2);
      EXPECT_TRUE(fd_close(cg.dtheta2[k], fd, mass, h2)) << what << " dtheta2[" << k << "]";
    }
    {
      auto plus = theta2, minus = theta2;
      plus[1] += h2;
      plus[2] += h2;
      minus[1] -= h2;
      minus[2] -= h2;
      const double fd = (loss(theta1, plus) - loss(theta1, minus)) / (2 * h2);
      EXPECT_TRUE(fd_close(cg.dtheta2[1] + cg.dtheta2[2], fd, mass, h2)) << what << " dtheta2[01] + dtheta2[10]";
    }
  }
}

TEST_P(Backward2DFiniteDifferences, CanonicalGradient1D) {
  const double alpha = GetParam();
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  const std::size_t N = basis.size();
  struct Loc {
    double mu, sigma2;
  };
  for (const Loc& l : {Loc{0.5, 1e-4}, Loc{0.3, 0.01}, Loc{-0.4, 0.2}, Loc{1.2, 1.0}, Loc{0.9, 1e-6}}) {
    const double theta1 = l.mu / l.sigma2, theta2 = -1 / (2 * l.sigma2);
    const std::vector<double> g = normal_vector(N, 7u + static_cast<unsigned>(l.sigma2 * 1e6) + static_cast<unsigned>(alpha * 10));
    auto loss = [&](double t1, double t2) {
      const auto d = sparcon::Density1D<double>::from_canonical(alpha, t1, t2);
      const std::vector<double> m{d.mu()}, s{d.sigma2()};
      std::vector<double> r(N);
      sparcon::expectation_1d<double>(alpha, m, s, basis, r);
      double sum = 0;
      for (std::size_t j = 0; j < N; ++j) sum += g[j] * r[j];
      return sum;
    };
    const auto d0 = sparcon::Density1D<double>::from_canonical(alpha, theta1, theta2);
    const std::vector<double> m{d0.mu()}, s{d0.sigma2()};
    std::vector<double> dmu(1), ds2(1), r(N);
    sparcon::expectation_1d_backward<double>(alpha, m, s, basis, g, dmu, ds2, r);
    const auto cg = sparcon::canonical_gradient_1d<double>(m[0], s[0], dmu[0], ds2[0]);
    std::ostringstream what_stream;
    what_stream << "alpha=" << alpha << " mu=" << l.mu << " sigma2=" << l.sigma2;
    const std::string what = what_stream.str();
    // the documented formula
    EXPECT_LE(std::fabs(cg.dtheta1 - s[0] * dmu[0]), 1e-14 * std::fabs(s[0] * dmu[0])) << what;
    const double want2 = 2 * s[0] * s[0] * ds2[0] + 2 * s[0] * m[0] * dmu[0];
    EXPECT_LE(std::fabs(cg.dtheta2 - want2),
              1e-14 * (std::fabs(2 * s[0] * s[0] * ds2[0]) + std::fabs(2 * s[0] * m[0] * dmu[0])))
        << what;
    double mass = 0;
    for (std::size_t j = 0; j < N; ++j) mass += std::fabs(g[j] * r[j]);
    double min_width = 1e300;
    for (const double w : basis.widths) min_width = std::min(min_width, w);
    const double ell = std::sqrt(d0.variance() + min_width);
    const double h1 = 1e-5 * ell / s[0];
    const double fd1 = (loss(theta1 + h1, theta2) - loss(theta1 - h1, theta2)) / (2 * h1);
    EXPECT_TRUE(fd_close(cg.dtheta1, fd1, mass, h1)) << what << " dtheta1";
    const double h2 = 1e-5 * std::min(1 / (2 * s[0]), ell / (2 * s[0] * std::max(std::fabs(m[0]), 1e-300)));
    const double fd2 = (loss(theta1, theta2 + h2) - loss(theta1, theta2 - h2)) / (2 * h2);
    EXPECT_TRUE(fd_close(cg.dtheta2, fd2, mass, h2)) << what << " dtheta2";
  }
}

INSTANTIATE_TEST_SUITE_P(Alphas, Backward2DFiniteDifferences, ::testing::Values(1.0, 1.5, 2.0, 3.0),
                         [](const ::testing::TestParamInfo<double>& info) {
                           // 1 -> "alpha1", 1.5 -> "alpha1_5"
                           const int tenths = static_cast<int>(std::lround(info.param * 10));
                           std::ostringstream name;
                           name << "alpha" << tenths / 10;
                           if (tenths % 10 != 0) name << "_" << tenths % 10;
                           return name.str();
                         });

TEST(Backward2DThreads, TwoThreadsAreBitIdenticalToOne) {
  const Basis basis = gradient_basis();
  const std::size_t N = basis.size();
  const Batch2<double> batch = make_batch<double>(gradient_cases());
  const std::size_t B = batch.cases.size();
  const std::vector<double> g = normal_vector(B * N, 31u);
  for (const double alpha : {1.0, 1.5, 2.0, 3.0}) {
    std::vector<double> dmu1(2 * B), ds1(4 * B), r1(B * N), dmu2(2 * B), ds2(4 * B), r2(B * N);
    sparcon::expectation_2d_backward<double>(alpha, batch.mu, batch.sigma, basis, g, dmu1, ds1, r1, sparcon::Threads{1});
    sparcon::expectation_2d_backward<double>(alpha, batch.mu, batch.sigma, basis, g, dmu2, ds2, r2, sparcon::Threads{2});
    EXPECT_EQ(dmu1, dmu2) << "alpha " << alpha;
    EXPECT_EQ(ds1, ds2) << "alpha " << alpha;
    EXPECT_EQ(r1, r2) << "alpha " << alpha;
  }
}

}  // namespace
}  // namespace sparcon_test
