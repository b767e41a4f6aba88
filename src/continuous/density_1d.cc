// Continuous alpha-entmax densities in 1D (sparcon/continuous.h, docs/math.md section 6).
#include <cmath>
#include <limits>
#include <numbers>

#include "check.h"
#include "continuous/beta_gaussian.h"
#include "sparcon/continuous.h"

namespace sparcon {

namespace detail {

double beta_gaussian_radius(double alpha, int dimension) {
  const double a1 = alpha - 1, q = alpha / a1, d = dimension;
  const double log_inner = std::lgamma(d / 2 + q) - std::lgamma(q) - (d / 2) * std::log(std::numbers::pi) +
                           std::log(2 / a1) / a1;
  return std::exp(log_inner * a1 / (2 + a1 * d));
}

void check_density_arguments(const char* function, double alpha, double mu, double scale,
                             const char* scale_name) {
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", function, ": alpha = ", alpha, " must be a finite number >= 1");
  if (!std::isfinite(mu)) fail("sparcon::", function, ": mu = ", mu, " must be finite");
  if (!(scale > 0) || !std::isfinite(scale))
    fail("sparcon::", function, ": ", scale_name, " = ", scale, " must be a finite number > 0");
}

}  // namespace detail

template <std::floating_point T>
Density1D<T>::Density1D(T alpha, T mu, T sigma2) : alpha_(alpha), mu_(mu), sigma2_(sigma2) {
  detail::check_density_arguments("Density1D", alpha, mu, sigma2);
  const double s2 = sigma2;
  if (alpha == 1) {
    tau_ = static_cast<T>(0.5 * std::log(2 * std::numbers::pi * s2));
    half_width_ = std::numeric_limits<T>::infinity();
    return;
  }
  const double a1 = static_cast<double>(alpha) - 1;
  const double radius = detail::beta_gaussian_radius(alpha, 1);
  const double minus_tau = 0.5 * radius * radius * std::pow(s2, -a1 / (a1 + 2));
  tau_ = static_cast<T>(-minus_tau);
  half_width_ = static_cast<T>(std::sqrt(2 * minus_tau * s2));
}

template <std::floating_point T>
Density1D<T> Density1D<T>::with_variance(T alpha, T mu, T variance) {
  detail::check_density_arguments("Density1D::with_variance", alpha, mu, variance, "variance");
  if (alpha == 1) return Density1D(alpha, mu, variance);
  // variance = R^2 sigma2^(2/(alpha+1)) / (1 + 2 alpha/(alpha-1))
  const double a1 = static_cast<double>(alpha) - 1, radius = detail::beta_gaussian_radius(alpha, 1);
  const double ratio = static_cast<double>(variance) * (1 + 2 * alpha / a1) / (radius * radius);
  return Density1D(alpha, mu, static_cast<T>(std::pow(ratio, (alpha + 1) / 2.0)));
}

template <std::floating_point T>
Density1D<T> Density1D<T>::from_canonical(T alpha, T theta1, T theta2) {
  if (!(theta2 < 0) || !std::isfinite(theta2))
    detail::fail("sparcon::Density1D::from_canonical: theta2 = ", theta2, " must be a finite number < 0");
  if (!std::isfinite(theta1))
    detail::fail("sparcon::Density1D::from_canonical: theta1 = ", theta1, " must be finite");
  const double sigma2 = -0.5 / static_cast<double>(theta2);
  return Density1D(alpha, static_cast<T>(theta1 * sigma2), static_cast<T>(sigma2));
}

template <std::floating_point T>
CanonicalGradient1D<T> canonical_gradient_1d(T mu, T sigma2, T dmu, T dsigma2) {
  const double s2 = sigma2;
  return {static_cast<T>(s2 * dmu), static_cast<T>(2 * s2 * (s2 * dsigma2 + static_cast<double>(mu) * dmu))};
}

template <std::floating_point T>
T Density1D<T>::pdf(T t) const {
  const double u = static_cast<double>(t) - mu_, f = -u * u / (2.0 * sigma2_);
  if (alpha_ == 1) return static_cast<T>(std::exp(f - tau_));
  const double a1 = static_cast<double>(alpha_) - 1, base = a1 * (f - tau_);
  return base > 0 ? static_cast<T>(std::pow(base, 1 / a1)) : T(0);
}

template <std::floating_point T>
T Density1D<T>::variance() const {
  if (alpha_ == 1) return sigma2_;
  const double a1 = static_cast<double>(alpha_) - 1;
  return static_cast<T>(-2.0 * tau_ * sigma2_ / (1 + 2 * alpha_ / a1));
}

template class Density1D<float>;
template class Density1D<double>;
template CanonicalGradient1D<float> canonical_gradient_1d(float, float, float, float);
template CanonicalGradient1D<double> canonical_gradient_1d(double, double, double, double);

}  // namespace sparcon
