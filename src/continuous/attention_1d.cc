// Continuous attention over sequences and the disc+cont density (sparcon/attention.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "check.h"
#include "continuous/value_model.h"
#include "sparcon/attention.h"
#include "sparcon/continuous.h"

namespace sparcon {
namespace detail {
namespace {

template <class T>
void check_sequences(const char* fn, std::span<const T> values, SequenceShape shape,
                     std::span<const std::int64_t> lengths, const char* name = "values") {
  check_size(fn, name, values, shape.batch * shape.length * shape.features,
             "batch * length * features");
  check_size(fn, "lengths", lengths, shape.batch, "batch");
  for (std::size_t b = 0; b < shape.batch; ++b)
    if (lengths[b] < 1 || static_cast<std::uint64_t>(lengths[b]) > shape.length)
      fail("sparcon::", fn, ": lengths[", b, "] = ", lengths[b], " must lie in [1, length = ",
           shape.length, "]");
}

// Example b of a padded batch of sequences: the grid is its length.
struct SequenceGrid {
  std::span<const std::int64_t> lengths;
  ExampleGrid<std::size_t> operator()(std::size_t b) const {
    const auto length = static_cast<std::size_t>(lengths[b]);
    return {length, length};
  }
};

}  // namespace
}  // namespace detail

template <std::floating_point T>
void continuous_attention_1d(T alpha, RidgeCache1D<T>& ridge, std::span<const T> values,
                             SequenceShape shape, std::span<const std::int64_t> lengths,
                             std::span<const T> mu, std::span<const T> sigma2,
                             std::span<T> context, Threads threads) {
  const char* fn = "continuous_attention_1d";
  detail::check_sequences(fn, values, shape, lengths);
  detail::check_size(fn, "mu", mu, shape.batch, "batch");
  detail::check_size(fn, "context", context, shape.batch * shape.features, "batch * features");
  std::vector<T> r(shape.batch * ridge.basis().size());
  expectation_1d(alpha, mu, sigma2, ridge.basis(), std::span<T>(r), threads);
  detail::contexts(ridge, values, {shape.batch, shape.length, shape.features},
                   detail::SequenceGrid{lengths}, std::span<const T>(r), context, threads);
}

template <std::floating_point T>
void continuous_attention_1d_backward(T alpha, RidgeCache1D<T>& ridge, std::span<const T> values,
                                      SequenceShape shape, std::span<const std::int64_t> lengths,
                                      std::span<const T> mu, std::span<const T> sigma2,
                                      std::span<const T> dcontext, std::span<T> dvalues,
                                      std::span<T> dmu, std::span<T> dsigma2, Threads threads) {
  const char* fn = "continuous_attention_1d_backward";
  detail::check_sequences(fn, values, shape, lengths);
  detail::check_size(fn, "mu", mu, shape.batch, "batch");
  detail::check_size(fn, "dcontext", dcontext, shape.batch * shape.features, "batch * features");
  detail::check_size(fn, "dvalues", dvalues, values.size(), "values.size()");
  // dr needs no r, so r comes out of the same pass as dmu and dsigma2.
  const detail::ValueLayout layout{shape.batch, shape.length, shape.features};
  const detail::SequenceGrid grid{lengths};
  const std::vector<T> dr = detail::basis_gradients(ridge, values, layout, grid, dcontext, threads);
  std::vector<T> r(dr.size());
  expectation_1d_backward(alpha, mu, sigma2, ridge.basis(), std::span<const T>(dr), dmu, dsigma2,
                          std::span<T>(r), threads);
  detail::value_gradients(ridge, layout, grid, std::span<const T>(r), dcontext, dvalues, threads);
}

template <std::floating_point T>
void value_model_1d(RidgeCache1D<T>& ridge, std::span<const T> values, SequenceShape shape,
                    std::span<const std::int64_t> lengths, std::span<T> model, Threads threads) {
  const char* fn = "value_model_1d";
  detail::check_sequences(fn, values, shape, lengths);
  detail::check_size(fn, "model", model, shape.batch * ridge.basis().size() * shape.features,
                     "batch * N * features");
  detail::value_models(ridge, values, {shape.batch, shape.length, shape.features},
                       detail::SequenceGrid{lengths}, model, threads);
}

template <std::floating_point T>
void value_model_1d_backward(RidgeCache1D<T>& ridge, SequenceShape shape,
                             std::span<const std::int64_t> lengths, std::span<const T> dmodel,
                             std::span<T> dvalues, Threads threads) {
  const char* fn = "value_model_1d_backward";
  detail::check_sequences(fn, std::span<const T>(dvalues), shape, lengths, "dvalues");
  detail::check_size(fn, "dmodel", dmodel, shape.batch * ridge.basis().size() * shape.features,
                     "batch * N * features");
  detail::value_model_gradients(ridge, {shape.batch, shape.length, shape.features},
                                detail::SequenceGrid{lengths}, dmodel, dvalues, threads);
}

namespace detail {
namespace {

template <class T>
void check_moments(const char* fn, T alpha, std::span<const T> p, std::size_t length,
                   std::span<const std::int64_t> lengths, T ridge) {
  check_sequences(fn, p, SequenceShape{lengths.size(), length, 1}, lengths, "p");
  if (!(alpha >= 1) || !std::isfinite(alpha))
    fail("sparcon::", fn, ": alpha = ", alpha, " must be a finite number >= 1");
  if (!(ridge >= 0) || !std::isfinite(ridge))
    fail("sparcon::", fn, ": ridge = ", ridge, " must be a finite number >= 0");
}

// Position l of an example of length L: (l + 1/2)/L.
double position(std::size_t l, std::int64_t length) {
  return (static_cast<double>(l) + 0.5) / static_cast<double>(length);
}

struct Moments {
  double mu, variance;
};

template <class T>
Moments moments(std::span<const T> p, std::size_t b, std::size_t length, std::int64_t size,
                double ridge) {
  double m1 = 0, m2 = 0;
  for (std::size_t l = 0; l < static_cast<std::size_t>(size); ++l) {
    const double t = position(l, size), pl = p[b * length + l];
    m1 += pl * t;
    m2 += pl * t * t;
  }
  return {m1, m2 - m1 * m1 + ridge};
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void density_from_moments_1d(T alpha, std::span<const T> p, std::size_t length,
                             std::span<const std::int64_t> lengths, T ridge, std::span<T> mu,
                             std::span<T> sigma2) {
  const char* fn = "density_from_moments_1d";
  detail::check_moments(fn, alpha, p, length, lengths, ridge);
  detail::check_size(fn, "mu", mu, lengths.size(), "lengths.size()");
  detail::check_size(fn, "sigma2", sigma2, lengths.size(), "lengths.size()");
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const detail::Moments m = detail::moments(p, b, length, lengths[b], ridge);
    if (!(m.variance > 0))
      detail::fail("sparcon::", fn, ": the variance of row ", b, " is ", m.variance,
                   " (a one-hot p needs ridge > 0)");
    mu[b] = static_cast<T>(m.mu);
    sigma2[b] = Density1D<T>::with_variance(alpha, static_cast<T>(m.mu), static_cast<T>(m.variance))
                    .sigma2();
  }
}

template <std::floating_point T>
void density_from_moments_1d_backward(T alpha, std::span<const T> p, std::size_t length,
                                      std::span<const std::int64_t> lengths, T ridge,
                                      std::span<const T> dmu, std::span<const T> dsigma2,
                                      std::span<T> dp) {
  const char* fn = "density_from_moments_1d_backward";
  detail::check_moments(fn, alpha, p, length, lengths, ridge);
  detail::check_size(fn, "dmu", dmu, lengths.size(), "lengths.size()");
  detail::check_size(fn, "dsigma2", dsigma2, lengths.size(), "lengths.size()");
  detail::check_size(fn, "dp", dp, p.size(), "p.size()");
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const detail::Moments m = detail::moments(p, b, length, lengths[b], ridge);
    // sigma2 = v for alpha = 1 and proportional to v^((alpha+1)/2) otherwise.
    double dsigma2_dv = 1;
    if (alpha != 1) {
      const double s2 = Density1D<double>::with_variance(alpha, m.mu, m.variance).sigma2();
      dsigma2_dv = 0.5 * (static_cast<double>(alpha) + 1) * s2 / m.variance;
    }
    const double dv = static_cast<double>(dsigma2[b]) * dsigma2_dv;
    const double dm1 = static_cast<double>(dmu[b]) - 2 * m.mu * dv;  // v = m2 - m1^2 + ridge
    for (std::size_t l = 0; l < length; ++l) {
      const double t = detail::position(l, lengths[b]);
      dp[b * length + l] =
          l < static_cast<std::size_t>(lengths[b]) ? static_cast<T>(dm1 * t + dv * t * t) : T(0);
    }
  }
}

template void continuous_attention_1d(float, RidgeCache1D<float>&, std::span<const float>,
                                      SequenceShape, std::span<const std::int64_t>,
                                      std::span<const float>, std::span<const float>,
                                      std::span<float>, Threads);
template void continuous_attention_1d(double, RidgeCache1D<double>&, std::span<const double>,
                                      SequenceShape, std::span<const std::int64_t>,
                                      std::span<const double>, std::span<const double>,
                                      std::span<double>, Threads);
template void continuous_attention_1d_backward(float, RidgeCache1D<float>&, std::span<const float>,
                                               SequenceShape, std::span<const std::int64_t>,
                                               std::span<const float>, std::span<const float>,
                                               std::span<const float>, std::span<float>,
                                               std::span<float>, std::span<float>, Threads);
template void continuous_attention_1d_backward(double, RidgeCache1D<double>&,
                                               std::span<const double>, SequenceShape,
                                               std::span<const std::int64_t>,
                                               std::span<const double>, std::span<const double>,
                                               std::span<const double>, std::span<double>,
                                               std::span<double>, std::span<double>, Threads);
template void value_model_1d(RidgeCache1D<float>&, std::span<const float>, SequenceShape,
                             std::span<const std::int64_t>, std::span<float>, Threads);
template void value_model_1d(RidgeCache1D<double>&, std::span<const double>, SequenceShape,
                             std::span<const std::int64_t>, std::span<double>, Threads);
template void value_model_1d_backward(RidgeCache1D<float>&, SequenceShape,
                                      std::span<const std::int64_t>, std::span<const float>,
                                      std::span<float>, Threads);
template void value_model_1d_backward(RidgeCache1D<double>&, SequenceShape,
                                      std::span<const std::int64_t>, std::span<const double>,
                                      std::span<double>, Threads);
template void density_from_moments_1d(float, std::span<const float>, std::size_t,
                                      std::span<const std::int64_t>, float, std::span<float>,
                                      std::span<float>);
template void density_from_moments_1d(double, std::span<const double>, std::size_t,
                                      std::span<const std::int64_t>, double, std::span<double>,
                                      std::span<double>);
template void density_from_moments_1d_backward(float, std::span<const float>, std::size_t,
                                               std::span<const std::int64_t>, float,
                                               std::span<const float>, std::span<const float>,
                                               std::span<float>);
template void density_from_moments_1d_backward(double, std::span<const double>, std::size_t,
                                               std::span<const std::int64_t>, double,
                                               std::span<const double>, std::span<const double>,
                                               std::span<double>);

}  // namespace sparcon
