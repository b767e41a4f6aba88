// Continuous alpha-entmax densities in 2D (sparcon/continuous.h, docs/math.md section 6).
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <limits>
#include <numbers>

#include "check.h"
#include "continuous/beta_gaussian.h"
#include "continuous/checks.h"
#include "continuous/matrix2.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {

double elliptical_gamma(double alpha) { return alpha == 1 ? 0 : (alpha - 1) / (2 * alpha); }

}  // namespace detail

template <std::floating_point T>
Density2D<T>::Density2D(T alpha, Vector2<T> mu, Matrix2<T> sigma) : alpha_(alpha), mu_(mu) {
  const char* fn = "Density2D";
  if (!(alpha >= 1) || !std::isfinite(alpha))
    detail::fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  if (!std::isfinite(mu[0]) || !std::isfinite(mu[1]))
    detail::fail("sparcon::", fn, ": mu = (", mu[0], ", ", mu[1], ") must be finite");
  const Eigen::Matrix2d s = detail::symmetric_positive_definite(fn, "sigma", sigma.data());
  sigma_ = detail::to_array<T>(s);
  const double det = s.determinant();
  if (alpha == 1) {
    tau_ = static_cast<T>(std::log(2 * std::numbers::pi * std::sqrt(det)));
    radius2_ = std::numeric_limits<T>::infinity();
    return;
  }
  // -tau = (R^2/2) det(Sigma)^(-gamma), gamma = 1/(2 + 2/(alpha-1)) = (alpha-1)/(2 alpha)
  const double radius = detail::beta_gaussian_radius(alpha, 2);
  const double minus_tau = 0.5 * radius * radius * std::pow(det, -detail::elliptical_gamma(alpha));
  tau_ = static_cast<T>(-minus_tau);
  radius2_ = static_cast<T>(2 * minus_tau);
}

template <std::floating_point T>
Density2D<T> Density2D<T>::with_covariance(T alpha, Vector2<T> mu, Matrix2<T> covariance) {
  const char* fn = "Density2D::with_covariance";
  if (!(alpha >= 1) || !std::isfinite(alpha))
    detail::fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  const Eigen::Matrix2d c = detail::symmetric_positive_definite(fn, "covariance", covariance.data());
  if (alpha == 1) return Density2D(alpha, mu, detail::to_array<T>(c));
  // covariance = kappa det(Sigma)^(-gamma) Sigma, kappa = R^2/(2 + 2 alpha/(alpha-1)); then
  // det(covariance) = kappa^2 det(Sigma)^(1/alpha).
  const double a = alpha, radius = detail::beta_gaussian_radius(a, 2);
  const double kappa = radius * radius / (2 + 2 * a / (a - 1));
  const double det_sigma = std::pow(c.determinant() / (kappa * kappa), a);
  const Eigen::Matrix2d s = c * (std::pow(det_sigma, detail::elliptical_gamma(a)) / kappa);
  return Density2D(alpha, mu, detail::to_array<T>(s));
}

template <std::floating_point T>
Density2D<T> Density2D<T>::from_canonical(T alpha, Vector2<T> theta1, Matrix2<T> theta2) {
  const char* fn = "Density2D::from_canonical";
  const Matrix2<T> minus_theta2{-theta2[0], -theta2[1], -theta2[2], -theta2[3]};
  if (!std::isfinite(theta2[0]) || !std::isfinite(theta2[1]) || !std::isfinite(theta2[2]) ||
      !std::isfinite(theta2[3]) || !(theta2[0] < 0) || !(theta2[3] < 0))
    detail::fail("sparcon::", fn, ": theta2 = {", theta2[0], ", ", theta2[1], ", ", theta2[2], ", ",
                 theta2[3], "} must be symmetric negative definite");
  if (!std::isfinite(theta1[0]) || !std::isfinite(theta1[1]))
    detail::fail("sparcon::", fn, ": theta1 = (", theta1[0], ", ", theta1[1], ") must be finite");
  const Eigen::Matrix2d precision = 2 * detail::symmetric_positive_definite(fn, "theta2", minus_theta2.data());
  const Eigen::Matrix2d s = precision.inverse();  // Sigma = -1/2 theta2^-1
  const Eigen::Vector2d mu = s * Eigen::Vector2d(theta1[0], theta1[1]);
  return Density2D(alpha, {static_cast<T>(mu[0]), static_cast<T>(mu[1])}, detail::to_array<T>(s));
}

template <std::floating_point T>
T Density2D<T>::support_area() const {
  if (alpha_ == 1) return std::numeric_limits<T>::infinity();
  return static_cast<T>(std::numbers::pi * static_cast<double>(radius2_) *
                        std::sqrt(detail::to_matrix(sigma_).determinant()));
}

template <std::floating_point T>
T Density2D<T>::pdf(Vector2<T> t) const {
  const Eigen::Vector2d u(static_cast<double>(t[0]) - mu_[0], static_cast<double>(t[1]) - mu_[1]);
  const double f = -0.5 * u.dot(detail::to_matrix(sigma_).inverse() * u);
  if (alpha_ == 1) return static_cast<T>(std::exp(f - tau_));
  const double a1 = static_cast<double>(alpha_) - 1, base = a1 * (f - tau_);
  return base > 0 ? static_cast<T>(std::pow(base, 1 / a1)) : T(0);
}

template <std::floating_point T>
Matrix2<T> Density2D<T>::covariance() const {
  if (alpha_ == 1) return sigma_;
  const double a = alpha_;
  return detail::to_array<T>(detail::to_matrix(sigma_) * (static_cast<double>(radius2_) / (2 + 2 * a / (a - 1))));
}

template <std::floating_point T>
CanonicalGradient2D<T> canonical_gradient_2d(Vector2<T> mu, Matrix2<T> sigma, Vector2<T> dmu,
                                             Matrix2<T> dsigma) {
  const Eigen::Matrix2d s = detail::symmetric_positive_definite("canonical_gradient_2d", "sigma", sigma.data());
  const Eigen::Vector2d g(dmu[0], dmu[1]);
  const Eigen::Vector2d theta1 = s.inverse() * Eigen::Vector2d(mu[0], mu[1]);
  const Eigen::Matrix2d outer = g * theta1.transpose();
  const Eigen::Matrix2d h = detail::symmetrised(detail::to_matrix(dsigma)) + 0.5 * (outer + outer.transpose());
  const Eigen::Vector2d dtheta1 = s * g;
  return {{static_cast<T>(dtheta1[0]), static_cast<T>(dtheta1[1])},
          detail::to_array<T>(2 * s * h * s)};
}

template class Density2D<float>;
template class Density2D<double>;
template CanonicalGradient2D<float> canonical_gradient_2d(Vector2<float>, Matrix2<float>,
                                                          Vector2<float>, Matrix2<float>);
template CanonicalGradient2D<double> canonical_gradient_2d(Vector2<double>, Matrix2<double>,
                                                           Vector2<double>, Matrix2<double>);

}  // namespace sparcon
