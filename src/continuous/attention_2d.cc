// Continuous attention over images and the 2D disc+cont density (sparcon/attention.h).
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <vector>

#include "check.h"
#include "continuous/checks.h"
#include "continuous/matrix2.h"
#include "continuous/value_model.h"
#include "sparcon/attention.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

// Every image of the batch has the same grid.
struct ImageGrid {
  ImageSize size;
  ExampleGrid<ImageSize> operator()(std::size_t /*b*/) const { return {size, size.height * size.width}; }
};

template <class T>
void check_images(const char* fn, std::span<const T> values, ImageShape shape) {
  if (shape.height == 0 || shape.width == 0)
    fail("sparcon::", fn, ": shape = ", shape.height, " x ", shape.width,
         " must have height > 0 and width > 0");
  check_size(fn, "values", values, shape.batch * shape.height * shape.width * shape.features,
             "batch * height * width * features");
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void continuous_attention_2d(T alpha, RidgeCache2D<T>& ridge, std::span<const T> values,
                             ImageShape shape, std::span<const T> mu, std::span<const T> sigma,
                             std::span<T> context, Threads threads) {
  const char* fn = "continuous_attention_2d";
  detail::check_images(fn, values, shape);
  detail::check_size(fn, "mu", mu, 2 * shape.batch, "2 * batch");
  detail::check_size(fn, "context", context, shape.batch * shape.features, "batch * features");
  std::vector<T> r(shape.batch * ridge.basis().size());
  expectation_2d(alpha, mu, sigma, ridge.basis(), std::span<T>(r), threads);
  const ImageSize size{shape.height, shape.width};
  detail::contexts(ridge, values, {shape.batch, shape.height * shape.width, shape.features},
                   detail::ImageGrid{size}, std::span<const T>(r), context, threads);
}

template <std::floating_point T>
void continuous_attention_2d_backward(T alpha, RidgeCache2D<T>& ridge, std::span<const T> values,
                                      ImageShape shape, std::span<const T> mu,
                                      std::span<const T> sigma, std::span<const T> dcontext,
                                      std::span<T> dvalues, std::span<T> dmu,
                                      std::span<T> dsigma, Threads threads) {
  const char* fn = "continuous_attention_2d_backward";
  detail::check_images(fn, values, shape);
  detail::check_size(fn, "mu", mu, 2 * shape.batch, "2 * batch");
  detail::check_size(fn, "dcontext", dcontext, shape.batch * shape.features, "batch * features");
  detail::check_size(fn, "dvalues", dvalues, values.size(), "values.size()");
  const detail::ValueLayout layout{shape.batch, shape.height * shape.width, shape.features};
  const detail::ImageGrid grid{{shape.height, shape.width}};
  const std::vector<T> dr = detail::basis_gradients(ridge, values, layout, grid, dcontext, threads);
  std::vector<T> r(dr.size());
  expectation_2d_backward(alpha, mu, sigma, ridge.basis(), std::span<const T>(dr), dmu, dsigma,
                          std::span<T>(r), threads);
  detail::value_gradients(ridge, layout, grid, std::span<const T>(r), dcontext, dvalues, threads);
}

template <std::floating_point T>
void value_model_2d(RidgeCache2D<T>& ridge, std::span<const T> values, ImageShape shape,
                    std::span<T> model, Threads threads) {
  const char* fn = "value_model_2d";
  detail::check_images(fn, values, shape);
  detail::check_size(fn, "model", model, shape.batch * ridge.basis().size() * shape.features,
                     "batch * N * features");
  detail::value_models(ridge, values, {shape.batch, shape.height * shape.width, shape.features},
                       detail::ImageGrid{{shape.height, shape.width}}, model, threads);
}

template <std::floating_point T>
void value_model_2d_backward(RidgeCache2D<T>& ridge, ImageShape shape, std::span<const T> dmodel,
                             std::span<T> dvalues, Threads threads) {
  const char* fn = "value_model_2d_backward";
  detail::check_images(fn, std::span<const T>(dvalues), shape);
  detail::check_size(fn, "dmodel", dmodel, shape.batch * ridge.basis().size() * shape.features,
                     "batch * N * features");
  detail::value_model_gradients(ridge, {shape.batch, shape.height * shape.width, shape.features},
                                detail::ImageGrid{{shape.height, shape.width}}, dmodel, dvalues,
                                threads);
}

namespace detail {
namespace {

template <class T>
void check_moments(const char* fn, T alpha, std::span<const T> p, std::size_t batch, ImageSize size,
                   T ridge) {
  if (size.height == 0 || size.width == 0)
    fail("sparcon::", fn, ": size = ", size.height, " x ", size.width,
         " must have height > 0 and width > 0");
  check_size(fn, "p", p, batch * size.height * size.width, "batch * height * width");
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  if (!(ridge >= 0) || !std::isfinite(ridge))
    fail("sparcon::", fn, ": ridge = ", ridge, " must be a finite number >= 0");
}

Eigen::Vector2d pixel(std::size_t i, std::size_t k, ImageSize size) {
  return {(static_cast<double>(i) + 0.5) / static_cast<double>(size.height),
          (static_cast<double>(k) + 0.5) / static_cast<double>(size.width)};
}

struct Moments2D {
  Eigen::Vector2d mu;
  Eigen::Matrix2d covariance;
};

template <class T>
Moments2D moments(const char* fn, std::span<const T> p, std::size_t b, ImageSize size, double ridge) {
  Eigen::Vector2d m1 = Eigen::Vector2d::Zero();
  Eigen::Matrix2d m2 = Eigen::Matrix2d::Zero();
  const std::size_t pixels = size.height * size.width;
  for (std::size_t i = 0; i < size.height; ++i) {
    for (std::size_t k = 0; k < size.width; ++k) {
      const double weight = p[b * pixels + i * size.width + k];
      const Eigen::Vector2d t = pixel(i, k, size);
      m1 += weight * t;
      m2 += weight * (t * t.transpose());
    }
  }
  Moments2D out{m1, m2 - m1 * m1.transpose() + ridge * Eigen::Matrix2d::Identity()};
  // The two off-diagonal sums can round apart (contracted multiply-adds of w t0 t1 and w t1 t0),
  // by enough for Density2D's symmetry check in double: one value for both.
  out.covariance(0, 1) = out.covariance(1, 0) = 0.5 * (out.covariance(0, 1) + out.covariance(1, 0));
  if (!(out.covariance(0, 0) > 0) || !(out.covariance.determinant() > 0))
    fail("sparcon::", fn, ": the covariance of row ", b, " is {", out.covariance(0, 0), ", ",
         out.covariance(0, 1), ", ", out.covariance(1, 0), ", ", out.covariance(1, 1),
         "}, not positive definite (p concentrated on a line needs ridge > 0)");
  return out;
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void density_from_moments_2d(T alpha, std::span<const T> p, std::size_t batch, ImageSize size,
                             T ridge, std::span<T> mu, std::span<T> sigma) {
  const char* fn = "density_from_moments_2d";
  detail::check_moments(fn, alpha, p, batch, size, ridge);
  detail::check_size(fn, "mu", mu, 2 * batch, "2 * batch");
  detail::check_size(fn, "sigma", sigma, 4 * batch, "4 * batch");
  for (std::size_t b = 0; b < batch; ++b) {
    const detail::Moments2D m = detail::moments(fn, p, b, size, ridge);
    const auto density = Density2D<double>::with_covariance(alpha, {m.mu[0], m.mu[1]},
                                                            detail::to_array<double>(m.covariance));
    mu[2 * b] = static_cast<T>(m.mu[0]);
    mu[2 * b + 1] = static_cast<T>(m.mu[1]);
    for (int i = 0; i < 4; ++i) sigma[4 * b + i] = static_cast<T>(density.sigma()[i]);
  }
}

template <std::floating_point T>
void density_from_moments_2d_backward(T alpha, std::span<const T> p, std::size_t batch,
                                      ImageSize size, T ridge, std::span<const T> dmu,
                                      std::span<const T> dsigma, std::span<T> dp) {
  const char* fn = "density_from_moments_2d_backward";
  detail::check_moments(fn, alpha, p, batch, size, ridge);
  detail::check_size(fn, "dmu", dmu, 2 * batch, "2 * batch");
  detail::check_size(fn, "dsigma", dsigma, 4 * batch, "4 * batch");
  detail::check_size(fn, "dp", dp, p.size(), "p.size()");
  const std::size_t pixels = size.height * size.width;
  for (std::size_t b = 0; b < batch; ++b) {
    const detail::Moments2D m = detail::moments(fn, p, b, size, ridge);
    const Eigen::Matrix2d g_sigma = detail::symmetrised(detail::to_matrix(
        std::array<double, 4>{dsigma[4 * b], dsigma[4 * b + 1], dsigma[4 * b + 2], dsigma[4 * b + 3]}));
    // Sigma = f C with f = c0 det(C)^eta, eta = (alpha - 1)/2 (f = 1 for alpha = 1), so
    // dL/dC = f (G + eta tr(G C) C^-1).
    Eigen::Matrix2d g_cov = g_sigma;
    if (alpha != 1) {
      const auto density = Density2D<double>::with_covariance(alpha, {m.mu[0], m.mu[1]},
                                                              detail::to_array<double>(m.covariance));
      const double f = density.sigma()[0] / m.covariance(0, 0);
      const double eta = 0.5 * (static_cast<double>(alpha) - 1);
      g_cov = f * (g_sigma + eta * (g_sigma * m.covariance).trace() * m.covariance.inverse());
    }
    // covariance = sum p t t^T - mu mu^T + ridge I, mu = sum p t.
    const Eigen::Vector2d g_mu = Eigen::Vector2d(dmu[2 * b], dmu[2 * b + 1]) - 2 * g_cov * m.mu;
    for (std::size_t i = 0; i < size.height; ++i) {
      for (std::size_t k = 0; k < size.width; ++k) {
        const Eigen::Vector2d t = detail::pixel(i, k, size);
        dp[b * pixels + i * size.width + k] = static_cast<T>(t.dot(g_cov * t) + g_mu.dot(t));
      }
    }
  }
}

template void continuous_attention_2d(float, RidgeCache2D<float>&, std::span<const float>,
                                      ImageShape, std::span<const float>, std::span<const float>,
                                      std::span<float>, Threads);
template void continuous_attention_2d(double, RidgeCache2D<double>&, std::span<const double>,
                                      ImageShape, std::span<const double>, std::span<const double>,
                                      std::span<double>, Threads);
template void continuous_attention_2d_backward(float, RidgeCache2D<float>&, std::span<const float>,
                                               ImageShape, std::span<const float>,
                                               std::span<const float>, std::span<const float>,
                                               std::span<float>, std::span<float>,
                                               std::span<float>, Threads);
template void continuous_attention_2d_backward(double, RidgeCache2D<double>&,
                                               std::span<const double>, ImageShape,
                                               std::span<const double>, std::span<const double>,
                                               std::span<const double>, std::span<double>,
                                               std::span<double>, std::span<double>, Threads);
template void value_model_2d(RidgeCache2D<float>&, std::span<const float>, ImageShape,
                             std::span<float>, Threads);
template void value_model_2d(RidgeCache2D<double>&, std::span<const double>, ImageShape,
                             std::span<double>, Threads);
template void value_model_2d_backward(RidgeCache2D<float>&, ImageShape, std::span<const float>,
                                      std::span<float>, Threads);
template void value_model_2d_backward(RidgeCache2D<double>&, ImageShape, std::span<const double>,
                                      std::span<double>, Threads);
template void density_from_moments_2d(float, std::span<const float>, std::size_t, ImageSize, float,
                                      std::span<float>, std::span<float>);
template void density_from_moments_2d(double, std::span<const double>, std::size_t, ImageSize,
                                      double, std::span<double>, std::span<double>);
template void density_from_moments_2d_backward(float, std::span<const float>, std::size_t,
                                               ImageSize, float, std::span<const float>,
                                               std::span<const float>, std::span<float>);
template void density_from_moments_2d_backward(double, std::span<const double>, std::size_t,
                                               ImageSize, double, std::span<const double>,
                                               std::span<const double>, std::span<double>);

}  // namespace sparcon
