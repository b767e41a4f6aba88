// sparcon/continuous.h: continuous alpha-entmax densities in one and two dimensions
// (docs/math.md section 6) and their expectations of Gaussian basis functions (section 7), with
// gradients.
//
// For a quadratic score f(t) = -(t - mu)^2 / (2 sigma2) and alpha >= 1:
//
//   p = argmax_p E_p[f] - Omega_alpha(p),   p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1))
//
// with tau such that p integrates to 1 (tau is in units of the score, the convention of the
// beta-Gaussian; the paper's headline form [(alpha-1) f - tau'] has tau' = (alpha-1) tau, the same
// for alpha = 2). alpha = 1 is the Gaussian N(mu, sigma2); alpha = 2 the truncated parabola
//   p(t) = (a^2 - (t - mu)^2) / (2 sigma2) on [mu - a, mu + a],  a = (3 sigma2 / 2)^(1/3);
// any alpha > 1 the beta-Gaussian, supported on |t - mu| <= a = sqrt(-2 tau sigma2), with
//   -tau = (R^2/2) sigma2^(-1/(1 + 2/(alpha-1))),
//   R = [Gamma(1/2 + alpha/(alpha-1)) / (Gamma(alpha/(alpha-1)) sqrt(pi)) (2/(alpha-1))^(1/(alpha-1))]^((alpha-1)/(alpha+1)).
// sigma2 is the scale of the score; it is the variance only for alpha = 1. The variance is
//   -2 tau sigma2 / (1 + 2 alpha/(alpha-1))   (alpha > 1; a^2/5 for alpha = 2).
//
//
// In two dimensions the score is f(t) = -1/2 (t - mu)^T Sigma^-1 (t - mu) with Sigma a 2 x 2
// symmetric positive definite scale; p has the same form, with support the ellipse
// (t - mu)^T Sigma^-1 (t - mu) <= -2 tau, and (D = 2)
//   -tau = (R^2/2) det(Sigma)^(-gamma),   gamma = 1/(D + 2/(alpha-1)),
//   covariance = -2 tau / (D + 2 alpha/(alpha-1)) Sigma
// (alpha = 2: the truncated paraboloid, covariance Sigma / (3 sqrt(pi) det(Sigma)^(1/4)), and
// the scale of a target covariance C is 9 pi sqrt(det C) C).
//
// Canonical parameters theta = (Sigma^-1 mu, -1/2 Sigma^-1) (1D: (mu/sigma2, -1/(2 sigma2)))
// are an alternative parametrisation: from_canonical builds a density from them and
// canonical_gradient_* turns gradients with respect to (mu, Sigma) into gradients with respect
// to theta.
//
// Matrices are 2 x 2, row-major {m00, m01, m10, m11}. A scale Sigma must be symmetric (to
// 8 ulp of its diagonal; the mean of the two off-diagonal entries is used) and positive
// definite. Gradients with respect to a symmetric matrix are returned symmetric: they are the
// gradients of L(sym(Sigma)), sym(S) = (S + S^T)/2, so that they agree with autograd through an
// explicit symmetrisation.
//
// Bad arguments (alpha < 1 or not finite, sigma2 <= 0 or not finite, a Sigma that is not
// symmetric positive definite, mu not finite) throw std::invalid_argument naming the argument
// and its value.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include "sparcon/basis.h"
#include "sparcon/rows.h"

namespace sparcon {

/// A continuous alpha-entmax density on the real line, from location mu and scale sigma2.
template <std::floating_point T>
class Density1D {
 public:
  /// Checks the arguments (see above).
  Density1D(T alpha, T mu, T sigma2);
  /// The density whose variance is `variance` (the scale that gives it).
  static Density1D with_variance(T alpha, T mu, T variance);
  /// The density of canonical parameters theta1 = mu/sigma2, theta2 = -1/(2 sigma2) < 0.
  static Density1D from_canonical(T alpha, T theta1, T theta2);

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
                    const GaussianBasis1D<T>& basis, std::span<T> r, Threads threads = {});

/// Vector-Jacobian product of expectation_1d: given g = dL/dr (B x N), dmu[b] = sum_j g[b,j]
/// dr[b,j]/dmu[b] and dsigma2[b] = sum_j g[b,j] dr[b,j]/dsigma2[b]. `r`, if not empty,
/// receives the forward values, computed on the way. Shapes: mu, sigma2, dmu, dsigma2 (B);
/// g, r (B x N).
template <std::floating_point T>
void expectation_1d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma2,
                             const GaussianBasis1D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma2, std::span<T> r = {},
                             Threads threads = {});

/// Gradients with respect to the canonical parameters from those with respect to (mu, sigma2):
///   dtheta1 = sigma2 dmu,   dtheta2 = 2 sigma2^2 dsigma2 + 2 sigma2 mu dmu.
template <std::floating_point T>
struct CanonicalGradient1D {
  T dtheta1, dtheta2;
};
template <std::floating_point T>
CanonicalGradient1D<T> canonical_gradient_1d(T mu, T sigma2, T dmu, T dsigma2);

/// A point of the plane and a 2 x 2 matrix, row-major {m00, m01, m10, m11}.
template <std::floating_point T>
using Vector2 = std::array<T, 2>;
template <std::floating_point T>
using Matrix2 = std::array<T, 4>;

/// A continuous alpha-entmax density on the plane, from location mu and scale Sigma (see the top
/// of this file).
template <std::floating_point T>
class Density2D {
 public:
  /// Checks the arguments (see above).
  Density2D(T alpha, Vector2<T> mu, Matrix2<T> sigma);
  /// The density whose covariance is `covariance` (symmetric positive definite).
  static Density2D with_covariance(T alpha, Vector2<T> mu, Matrix2<T> covariance);
  /// The density of canonical parameters theta1 = Sigma^-1 mu, theta2 = -1/2 Sigma^-1 (theta2
  /// symmetric negative definite).
  static Density2D from_canonical(T alpha, Vector2<T> theta1, Matrix2<T> theta2);

  [[nodiscard]] T alpha() const { return alpha_; }
  [[nodiscard]] Vector2<T> mu() const { return mu_; }
  /// Sigma, symmetrised.
  [[nodiscard]] Matrix2<T> sigma() const { return sigma_; }
  /// tau of p(t) = [(alpha - 1)(f(t) - tau)]_+^(1/(alpha-1)); for alpha = 1, p = exp(f - tau),
  /// tau = log(2 pi sqrt(det Sigma)).
  [[nodiscard]] T tau() const { return tau_; }
  /// -2 tau: the support is the ellipse (t - mu)^T Sigma^-1 (t - mu) <= support_radius2(); +inf
  /// for alpha = 1.
  [[nodiscard]] T support_radius2() const { return radius2_; }
  /// Area of the support, pi support_radius2() sqrt(det Sigma); +inf for alpha = 1.
  [[nodiscard]] T support_area() const;
  [[nodiscard]] T pdf(Vector2<T> t) const;
  [[nodiscard]] Vector2<T> mean() const { return mu_; }
  [[nodiscard]] Matrix2<T> covariance() const;

 private:
  T alpha_;
  Vector2<T> mu_;
  Matrix2<T> sigma_;
  T tau_, radius2_;
};

/// r[b * N + j] = E_{p_b}[psi_j] for 2D densities p_b of the shared alpha with locations
/// mu[b] and scales Sigma[b], and the N basis functions. Closed form for alpha = 1. For alpha > 1
/// the ellipse is mapped to a disk of radius rho_max = sqrt(-2 tau),
/// t = mu + Sigma^(1/2) rho (cos v, sin v): the integral over rho is closed form for alpha = 2
/// (Gaussian moments, as in 1D) and by composite Gauss-Legendre quadrature for other alpha; the
/// integral over v uses the periodic trapezoid rule v_i = 2 pi i / n, with n chosen per pair
/// from the ratio of the support radius to the basis width (see expectation_2d.cc). For alpha > 1
/// a pair whose r is provably below 1e-17 of max_j r_bj (r_j <= max of psi_j over the support)
/// is not integrated: r = 0, and zero gradients in the backward. The tests hold every path to
/// 1e-10 relative to max_j r_bj against adaptive quadrature.
/// Shapes: mu (B x 2), sigma (B x 4); r (B x N). Computed in double for either T.
template <std::floating_point T>
void expectation_2d(T alpha, std::span<const T> mu, std::span<const T> sigma,
                    const GaussianBasis2D<T>& basis, std::span<T> r, Threads threads = {});

/// Vector-Jacobian product of expectation_2d: from g = dL/dr (B x N), dmu (B x 2) and dsigma
/// (B x 4, symmetric). `r`, if not empty, receives the forward values. With u = t - mu, the
/// gradients are, for every alpha (p is an elliptical family whose shape scales as
/// Sigma det(Sigma)^(-gamma)):
///   dr/dmu    = E_p[grad psi],                 grad psi(t) = S^-1 (c - t) psi(t)
///   dr/dSigma = 1/2 [sym(M Sigma^-1) - gamma tr(M) Sigma^-1],   M = E_p[grad psi u^T]
/// (gamma = 0 for alpha = 1, where this is Price's theorem dr/dSigma = E[hess psi]/2).
template <std::floating_point T>
void expectation_2d_backward(T alpha, std::span<const T> mu, std::span<const T> sigma,
                             const GaussianBasis2D<T>& basis, std::span<const T> g,
                             std::span<T> dmu, std::span<T> dsigma, std::span<T> r = {},
                             Threads threads = {});

/// Gradients with respect to the canonical parameters from those with respect to (mu, Sigma)
/// (dsigma symmetric): with H = dsigma + sym(dmu theta1^T),
///   dtheta1 = Sigma dmu,   dtheta2 = 2 Sigma H Sigma.
template <std::floating_point T>
struct CanonicalGradient2D {
  Vector2<T> dtheta1;
  Matrix2<T> dtheta2;
};
template <std::floating_point T>
CanonicalGradient2D<T> canonical_gradient_2d(Vector2<T> mu, Matrix2<T> sigma, Vector2<T> dmu,
                                             Matrix2<T> dsigma);

}  // namespace sparcon
