// Expectations of Gaussian basis functions under 1D continuous alpha-entmax densities, and their
// gradients (sparcon/continuous.h; docs/math.md sections 6, 7 and 11).
//
// For one density p (location mu, scale sigma2, half-width a) and one basis function
// psi(t) = N(t; c, w), with u = t - mu and d = c - mu:
//   r       = int p(u) psi dt
//   dr/dmu  = int p(u) psi (c - t)/w dt                       (psi' under the integral)
//   dr/ds2  = 1/((alpha+1) sigma2) int p(u) u psi (c - t)/w dt
// The last holds because every member of the family is a scale family in u with scale
// a ~ sigma2^(1/(alpha+1)) (alpha = 1: the standard deviation), so r(sigma2) = int h(x)
// psi(mu + a x) dx and dr/da = (1/a) int p u psi' dt.
//
// alpha = 1: closed form, r = N(mu; c, sigma2 + w).
// alpha > 1: p(u) = C (1 - u^2/a^2)^k, k = 1/(alpha-1), C = p(0) = ((alpha-1)(-tau))^k, so the
//   three integrals are combinations of P_m = int (1 - u^2/a^2)^k u^m N(u; d, w) du, m = 0..2
//   (profile_moments.h: closed form for alpha = 2 -- centred, not the form
//   theta . E[phi psi] - tau E[psi] that cancels in float (docs/math.md section 13) --
//   quadrature otherwise).
// Everything is computed in double, whatever T.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "check.h"
#include "continuous/batch.h"
#include "continuous/beta_gaussian.h"
#include "continuous/checks.h"
#include "continuous/profile_moments.h"
#include "parallel_rows.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

// The three integrals of one (density, basis function) pair.
struct Integrals {
  double r = 0, dmu = 0, dsigma2 = 0;
};

Integrals gaussian(double mu, double sigma2, double c, double w) {
  const double v = sigma2 + w, d = c - mu;
  Integrals out;
  out.r = std::exp(-0.5 * d * d / v) / std::sqrt(2 * std::numbers::pi * v);
  out.dmu = out.r * d / v;
  out.dsigma2 = 0.5 * out.r * (d * d / (v * v) - 1 / v);
  return out;
}

Integrals beta_gaussian(double alpha, double mu, double sigma2, double tau, double a, double c,
                        double w) {
  const double k = 1 / (alpha - 1), d = c - mu, coefficient = std::pow((alpha - 1) * -tau, k);
  const auto P = profile_moments(k, a, -a, a, d, std::sqrt(w));
  Integrals out;
  out.r = coefficient * P[0];
  out.dmu = coefficient * (d * P[0] - P[1]) / w;
  out.dsigma2 = coefficient * (d * P[1] - P[2]) / (w * (alpha + 1) * sigma2);
  return out;
}

template <class T>
void check_inputs(const char* fn, T alpha, std::span<const T> mu, std::span<const T> sigma2,
                  const GaussianBasis1D<T>& basis) {
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  check_size(fn, "sigma2", sigma2, mu.size(), "mu.size()");
  check_basis(fn, basis);
  for (std::size_t b = 0; b < mu.size(); ++b)
    check_density_arguments(fn, alpha, mu[b], sigma2[b]);
}

// Calls visit(b, j, integrals) for every pair, examples spread over the threads.
template <class T, class Visit>
void for_each_pair(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                   const GaussianBasis1D<T>& basis, Threads threads, const Visit& visit) {
  auto examples = [&](std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b) {
      const Density1D<double> density(alpha, mu[b], sigma2[b]);  // tau, a in double for any T
      const double m = mu[b], s2 = sigma2[b], a = density.half_width(), tau = density.tau();
      for (std::size_t j = 0; j < basis.size(); ++j) {
        const double c = basis.centers[j], w = basis.widths[j];
        visit(b, j, alpha == 1 ? gaussian(m, s2, c, w) : beta_gaussian(alpha, m, s2, tau, a, c, w));
      }
    }
  };
  parallel_rows(example_rows(mu.size(), basis.size()), threads, examples);
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void expectation_1d(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                    const GaussianBasis1D<T>& basis, std::span<T> r, Threads threads) {
  const char* fn = "expectation_1d";
  detail::check_inputs(fn, alpha, mu, sigma2, basis);
  detail::check_size(fn, "r", r, mu.size() * basis.size(), "mu.size() * basis.size()");
  const std::size_t n = basis.size();
  detail::for_each_pair(alpha, mu, sigma2, basis, threads, [&](std::size_t b, std::size_t j, const auto& i) {
    r[b * n + j] = static_cast<T>(i.r);
  });
}

template <std::floating_point T>
void expectation_1d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                             const GaussianBasis1D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma2, std::span<T> r,
                             Threads threads) {
  const char* fn = "expectation_1d_backward";
  detail::check_inputs(fn, alpha, mu, sigma2, basis);
  detail::check_size(fn, "g", g, mu.size() * basis.size(), "mu.size() * basis.size()");
  detail::check_size(fn, "dmu", dmu, mu.size(), "mu.size()");
  detail::check_size(fn, "dsigma2", dsigma2, mu.size(), "mu.size()");
  if (!r.empty()) detail::check_size(fn, "r", r, mu.size() * basis.size(), "mu.size() * basis.size()");
  const std::size_t n = basis.size();
  std::vector<double> by_mu(mu.size()), by_sigma2(mu.size());
  detail::for_each_pair(alpha, mu, sigma2, basis, threads, [&](std::size_t b, std::size_t j, const auto& i) {
    if (!r.empty()) r[b * n + j] = static_cast<T>(i.r);
    by_mu[b] += static_cast<double>(g[b * n + j]) * i.dmu;
    by_sigma2[b] += static_cast<double>(g[b * n + j]) * i.dsigma2;
  });
  for (std::size_t b = 0; b < mu.size(); ++b) {
    dmu[b] = static_cast<T>(by_mu[b]);
    dsigma2[b] = static_cast<T>(by_sigma2[b]);
  }
}

template void expectation_1d(float, std::span<const float>, std::span<const float>,
                             const GaussianBasis1D<float>&, std::span<float>, Threads);
template void expectation_1d(double, std::span<const double>, std::span<const double>,
                             const GaussianBasis1D<double>&, std::span<double>, Threads);
template void expectation_1d_backward(float, std::span<const float>, std::span<const float>,
                                      const GaussianBasis1D<float>&, std::span<const float>,
                                      std::span<float>, std::span<float>, std::span<float>, Threads);
template void expectation_1d_backward(double, std::span<const double>, std::span<const double>,
                                      const GaussianBasis1D<double>&, std::span<const double>,
                                      std::span<double>, std::span<double>, std::span<double>, Threads);

}  // namespace sparcon
