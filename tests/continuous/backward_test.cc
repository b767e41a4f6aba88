// expectation_1d_backward: against central finite differences of the library's forward (double),
// and for alpha = 1 and 2 against the direct 1D gradients of docs/math.md 7 evaluated with the
// long-double reference quadrature.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "continuous_cases.h"
#include "continuous_reference.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

/// The batch of the gradient tests: mu inside and outside [0, 1], sigma2 from 1e-6 to 10.
struct Batch {
  std::vector<double> mu{0.5, 0.25, -1, 0.3, 0.9, -0.4, 0.1, 1.7};
  std::vector<double> sigma2{1e-6, 1e-5, 1e-4, 1e-3, 0.05, 0.2, 1, 10};
};

/// sum_j g[b, j] r[b, j] for row b with mu[b] and sigma2[b] replaced.
double row_loss(double alpha, double mu, double sigma2, const sparcon::GaussianBasis1D<double>& basis,
                std::span<const double> g_row) {
  std::vector<double> r(basis.size());
  const std::vector<double> m{mu}, s{sigma2};
  sparcon::expectation_1d<double>(alpha, m, s, basis, r);
  double sum = 0;
  for (std::size_t j = 0; j < r.size(); ++j) sum += g_row[j] * r[j];
  return sum;
}

void check_finite_differences(double alpha, const sparcon::GaussianBasis1D<double>& basis, const char* name) {
  const Batch batch;
  const std::size_t B = batch.mu.size(), N = basis.size();
  const std::vector<double> g = normal_vector(B * N, 12345u + static_cast<unsigned>(alpha * 100) + static_cast<unsigned>(N));
  std::vector<double> dmu(B, -7), dsigma2(B, -7);
  sparcon::expectation_1d_backward<double>(alpha, batch.mu, batch.sigma2, basis, g, dmu, dsigma2);
  std::vector<double> r(B * N);
  sparcon::expectation_1d<double>(alpha, batch.mu, batch.sigma2, basis, r);
  double min_width = basis.widths[0];
  for (double w : basis.widths) min_width = std::min(min_width, w);
  for (std::size_t b = 0; b < B; ++b) {
    const std::span<const double> g_row(g.data() + b * N, N);
    const double mu = batch.mu[b], s2 = batch.sigma2[b];
    // the length over which r varies with mu: the density's spread combined with the narrowest psi
    const double ell = std::sqrt(sparcon::Density1D<double>(alpha, mu, s2).variance() + min_width);
    const double h_mu = 1e-6 * ell, h_s2 = 1e-6 * s2;
    const double fd_mu = (row_loss(alpha, mu + h_mu, s2, basis, g_row) - row_loss(alpha, mu - h_mu, s2, basis, g_row)) / (2 * h_mu);
    const double fd_s2 = (row_loss(alpha, mu, s2 + h_s2, basis, g_row) - row_loss(alpha, mu, s2 - h_s2, basis, g_row)) / (2 * h_s2);
    // absolute floor: 1e-7 of the size the terms of the sum over j can have
    double mass = 0;
    for (std::size_t j = 0; j < N; ++j) mass += std::fabs(g_row[j] * r[b * N + j]);
    EXPECT_LE(std::fabs(dmu[b] - fd_mu), 1e-6 * std::fabs(fd_mu) + 1e-7 * mass / ell)
        << name << " " << describe(alpha, mu, s2) << " dmu " << dmu[b] << " fd " << fd_mu;
    EXPECT_LE(std::fabs(dsigma2[b] - fd_s2), 1e-6 * std::fabs(fd_s2) + 1e-7 * mass / s2)
        << name << " " << describe(alpha, mu, s2) << " dsigma2 " << dsigma2[b] << " fd " << fd_s2;
  }
}

class ContinuousBackward : public ::testing::TestWithParam<double> {};

TEST_P(ContinuousBackward, MatchesFiniteDifferencesOfTheForward) {
  check_finite_differences(GetParam(), sparcon::GaussianBasis1D<double>::paper(32), "paper(32)");
  check_finite_differences(GetParam(), custom_basis<double>(), "custom");
}

INSTANTIATE_TEST_SUITE_P(Alphas, ContinuousBackward, ::testing::Values(1.0, 1.5, 2.0, 3.0),
                         [](const ::testing::TestParamInfo<double>& info) {
                           // 1 -> "alpha1", 1.5 -> "alpha1_5"
                           const int tenths = static_cast<int>(std::lround(info.param * 10));
                           return "alpha" + std::to_string(tenths / 10) +
                                  (tenths % 10 != 0 ? "_" + std::to_string(tenths % 10) : std::string());
                         });

/// Per-basis-function gradients (dr_j/dmu, dr_j/dsigma2), the direct formulas of docs/math.md 7.
struct Direct {
  LD dmu, dsigma2;
};
Direct direct_gradient(LD alpha, LD mu, LD sigma2, LD c, LD w) {
  const cref::Density p = cref::make_density(alpha, mu, sigma2);
  if (alpha == 1) {
    // dr/dmu = r (c - mu)/v, dr/dsigma2 = r ((mu - c)^2/v^2 - 1/v)/2, v = sigma2 + w; r by quadrature
    const LD r = cref::expect(p, c, w), v = sigma2 + w;
    return {r * (c - mu) / v, r * ((mu - c) * (mu - c) / (v * v) - 1 / v) / 2};
  }
  // alpha = 2: dr/dmu = int_S (t - mu) psi / sigma2, dr/dsigma2 = int_S ((t - mu)^2 - a^2/3) psi / (2 sigma2^2)
  const LD a2 = p.half_width * p.half_width;
  const LD i1 = cref::support_integral(p, c, w, [&](LD t) { return t - mu; });
  const LD i2 = cref::support_integral(p, c, w, [&](LD t) { return (t - mu) * (t - mu) - a2 / 3; });
  return {i1 / sigma2, i2 / (2 * sigma2 * sigma2)};
}

template <class T>
void check_direct(LD alpha, const sparcon::GaussianBasis1D<T>& basis, LD rel) {
  const Batch batch;
  std::vector<T> mu, s2;
  for (double m : batch.mu) mu.push_back(static_cast<T>(m));
  for (double s : batch.sigma2) s2.push_back(static_cast<T>(s));
  const std::size_t B = mu.size(), N = basis.size();
  const std::vector<double> gd = normal_vector(B * N, 777u + static_cast<unsigned>(N));
  const std::vector<T> g(gd.begin(), gd.end());
  std::vector<T> dmu(B), dsigma2(B);
  sparcon::expectation_1d_backward<T>(static_cast<T>(alpha), mu, s2, basis, g, dmu, dsigma2);
  for (std::size_t b = 0; b < B; ++b) {
    LD want_mu = 0, want_s2 = 0, abs_mu = 0, abs_s2 = 0;
    for (std::size_t j = 0; j < N; ++j) {
      const Direct d = direct_gradient(alpha, mu[b], s2[b], basis.centers[j], basis.widths[j]);
      want_mu += g[b * N + j] * d.dmu;
      want_s2 += g[b * N + j] * d.dsigma2;
      abs_mu += std::fabs(g[b * N + j] * d.dmu);
      abs_s2 += std::fabs(g[b * N + j] * d.dsigma2);
    }
    // relative to the result, with the floor rel * sum_j |g_j dr_j| (the conditioning of the sum)
    EXPECT_LE(std::fabs(dmu[b] - want_mu), rel * (std::fabs(want_mu) + abs_mu))
        << describe(alpha, mu[b], s2[b]) << " dmu " << dmu[b] << " want " << static_cast<double>(want_mu);
    EXPECT_LE(std::fabs(dsigma2[b] - want_s2), rel * (std::fabs(want_s2) + abs_s2))
        << describe(alpha, mu[b], s2[b]) << " dsigma2 " << dsigma2[b] << " want " << static_cast<double>(want_s2);
  }
}

TEST(ContinuousBackwardDirect, SoftmaxGradientsDouble) {
  check_direct<double>(1, sparcon::GaussianBasis1D<double>::paper(32), 1e-10L);
  check_direct<double>(1, custom_basis<double>(), 1e-10L);
}
TEST(ContinuousBackwardDirect, SparsemaxGradientsDouble) {
  check_direct<double>(2, sparcon::GaussianBasis1D<double>::paper(32), 1e-10L);
  check_direct<double>(2, custom_basis<double>(), 1e-10L);
}
TEST(ContinuousBackwardDirect, SoftmaxGradientsFloat) {
  check_direct<float>(1, sparcon::GaussianBasis1D<float>::paper(32), 1e-5L);
  check_direct<float>(1, custom_basis<float>(), 1e-5L);
}
TEST(ContinuousBackwardDirect, SparsemaxGradientsFloat) {
  check_direct<float>(2, sparcon::GaussianBasis1D<float>::paper(32), 1e-5L);
  check_direct<float>(2, custom_basis<float>(), 1e-5L);
}

}  // namespace
}  // namespace sparcon_test
