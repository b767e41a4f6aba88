// sparcon/continuous.h: continuous alpha-entmax densities in one dimension (MATH.md section 2)
// and their expectations of Gaussian basis functions (section 3), with gradients.
//
// For a quadratic score f(t) = -(t - mu)^2 / (2 sigma2) and alpha >= 1:
//
//   p = argmax_p E_p[f] - Omega_alpha(p),   p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1))
//
// with tau such that p integrates to 1 (tau is in units of the score, the convention of the
// beta-Gaussian; MATH.md's headline form [(alpha-1) f - tau'] has tau' = (alpha-1) tau, the same
// for alpha = 2). alpha = 1 is the Gaussian N(mu, sigma2); alpha = 2 the truncated parabola
//   p(t) = (a^2 - (t - mu)^2) / (2 sigma2) on [mu - a, mu + a],  a = (3 sigma2 / 2)^(1/3);
// any alpha > 1 the beta-Gaussian, supported on |t - mu| <= a = sqrt(-2 tau sigma2), with
//   -tau = (R^2/2) sigma2^(-1/(1 + 2/(alpha-1))),
//   R = [Gamma(1/2 + alpha/(alpha-1)) / (Gamma(alpha/(alpha-1)) sqrt(pi)) (2/(alpha-1))^(1/(alpha-1))]^((alpha-1)/(alpha+1)).
// sigma2 is the scale of the score; it is the variance only for alpha = 1. The variance is
//   -2 tau sigma2 / (1 + 2 alpha/(alpha-1))   (alpha > 1; a^2/5 for alpha = 2).
//
// Bad arguments (alpha < 1 or not finite, sigma2 <= 0 or not finite, mu not finite) throw
// std::invalid_argument naming the argument and its value.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include "sparcon/basis.h"

namespace sparcon {

/// A continuous alpha-entmax density on the real line, from location mu and scale sigma2.
template <std::floating_point T>
class Density1D {
 public:
  /// Checks the arguments (see above).
  Density1D(T alpha, T mu, T sigma2);
  /// The density whose variance is `variance` (the scale that gives it).
  static Density1D with_variance(T alpha, T mu, T variance);

  [[nodiscard]] T alpha() const { return alpha_; }
  [[nodiscard]] T mu() const { return mu_; }
  [[nodiscard]] T sigma2() const { return sigma2_; }
  /// tau of p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1)); for alpha = 1, p = exp(f - tau),
  /// tau = log sqrt(2 pi sigma2).
  [[nodiscard]] T tau() const { return tau_; }
  /// a: the support is [mu - a, mu + a]; +inf for alpha = 1.
  [[nodiscard]] T half_width() const { return half_width_; }
  [[nodiscard]] T pdf(T t) const;
  [[nodiscard]] T mean() const { return mu_; }
  [[nodiscard]] T variance() const;

 private:
  T alpha_, mu_, sigma2_, tau_, half_width_;
};

/// r[b * N + j] = E_{p_b}[psi_j] for the densities p_b of the shared alpha with locations mu[b]
/// and scales sigma2[b] (B = mu.size()), and the N basis functions. Closed forms for alpha = 1
/// and alpha = 2 (exact to rounding); any other alpha by composite Gauss-Legendre quadrature
/// over the support, with panels sized to the basis width (see expectation_1d.cc; the tests
/// hold it to 1e-10 relative against adaptive quadrature). Computed in double for either T.
/// Shapes: mu, sigma2 (B); r (B x N).
template <std::floating_point T>
void expectation_1d(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                    const GaussianBasis1D<T>& basis, std::span<T> r);

/// Vector-Jacobian product of expectation_1d: given g = dL/dr (B x N), dmu[b] = sum_j g[b,j]
/// dr[b,j]/dmu[b] and dsigma2[b] = sum_j g[b,j] dr[b,j]/dsigma2[b]. `r`, if not empty,
/// receives the forward values, computed on the way. Shapes: mu, sigma2, dmu, dsigma2 (B);
/// g, r (B x N).
template <std::floating_point T>
void expectation_1d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                             const GaussianBasis1D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma2, std::span<T> r = {});

}  // namespace sparcon
