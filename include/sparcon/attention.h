// sparcon/attention.h: continuous attention over sequences (1D) and images (2D), docs/math.md
// sections 9 and 10.
//
// Example b has L_b <= L value vectors h_1..h_{L_b} in R^E (rows of `values`, padded to L) at
// positions t_l = (l - 1/2)/L_b, and a density p_b (continuous.h) with location mu[b] and scale
// sigma2[b]. With the ridge matrix G of its own length (basis.h) and r_b = E_{p_b}[psi]:
//
//   context_b = sum_{l <= L_b} (G_{L_b} r_b)_l h_l          (= H_b G r_b)
//
// Gradients (backward): with dc the upstream gradient of the context and w_b = G_{L_b} r_b,
//   dvalues[b, l] = w_b[l] dc_b,    dr_b = G_{L_b}^T (H_b^T dc_b),
// and dmu, dsigma2 from dr_b through expectation_1d_backward. Padding rows (l > L_b) get zero
// gradient and never influence the context.
//
// "disc+cont" (the paper's second way of producing mu and sigma2): from a discrete attention
// distribution p_b over the positions, mu_b = sum_l p_l t_l and
// variance_b = sum_l p_l t_l^2 - mu_b^2 + ridge, and sigma2_b is the scale that gives a
// density of family alpha that variance (Density1D::with_variance).
//
// Shapes: values (B x L x E) and dvalues alike; lengths, mu, sigma2, dmu, dsigma2 (B); context,
// dcontext (B x E); p, dp (B x L, entries past L_b ignored and given zero gradient).
//
// Images (2D): example b is an image of height x width value vectors (values B x H x W x E, the
// grid of ImageSize in basis.h, every image the same size), its density p_b has location mu[b]
// (2) and scale Sigma[b] (2 x 2), and the context is H_b G r_b as above with the G of the image
// size (RidgeCache2D) and r_b from expectation_2d; dsigma is symmetric (continuous.h). The 2D
// disc+cont takes p_b over the pixels: mu_b = sum p t, covariance_b = sum p t t^T - mu mu^T +
// ridge I, and Sigma_b = Density2D::with_covariance(...).sigma().
//
// Every function takes a thread count; examples are spread over the threads and the results do
// not depend on it. Bad arguments throw std::invalid_argument naming the argument and the value.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "sparcon/basis.h"
#include "sparcon/rows.h"

namespace sparcon {

/// The dimensions of a padded batch of sequences: batch x length x features.
struct SequenceShape {
  std::size_t batch = 0;
  std::size_t length = 0;
  std::size_t features = 0;
};

template <std::floating_point T>
void continuous_attention_1d(T alpha, RidgeCache1D<T>& ridge, std::span<const T> values,
                             SequenceShape shape, std::span<const std::int64_t> lengths,
                             std::span<const T> mu, std::span<const T> sigma2,
                             std::span<T> context, Threads threads = {});

template <std::floating_point T>
void continuous_attention_1d_backward(T alpha, RidgeCache1D<T>& ridge, std::span<const T> values,
                                      SequenceShape shape, std::span<const std::int64_t> lengths,
                                      std::span<const T> mu, std::span<const T> sigma2,
                                      std::span<const T> dcontext, std::span<T> dvalues,
                                      std::span<T> dmu, std::span<T> dsigma2,
                                      Threads threads = {});

/// The value model of each example on its own: B_b = G_b^T H_b (N x E), the coefficients of
/// V_b(t) = B_b^T psi(t), so that the context of any density over example b is B_b^T r. Computed
/// once per example and shared by all its queries (query-conditioned attention):
/// O(L N E) per example, and O(N E) per query after it.
///   model[b, j, f] = sum_{l < L_b} G_{L_b}[l, j] values[b, l, f]
/// Shapes: values (B x L x E), lengths (B), model (B x N x E). Sums in double.
template <std::floating_point T>
void value_model_1d(RidgeCache1D<T>& ridge, std::span<const T> values, SequenceShape shape,
                    std::span<const std::int64_t> lengths, std::span<T> model,
                    Threads threads = {});

/// Vector-Jacobian product of value_model_1d: dvalues[b, l] = sum_j G_{L_b}[l, j] dmodel[b, j]
/// for l < L_b, zero for padding rows. Shapes: dmodel (B x N x E), dvalues (B x L x E).
template <std::floating_point T>
void value_model_1d_backward(RidgeCache1D<T>& ridge, SequenceShape shape,
                             std::span<const std::int64_t> lengths, std::span<const T> dmodel,
                             std::span<T> dvalues, Threads threads = {});

/// disc+cont: mu and sigma2 from the moments of discrete distributions p (B x L) over each
/// example's positions (see above). ridge > 0 keeps the variance positive.
template <std::floating_point T>
void density_from_moments_1d(T alpha, std::span<const T> p, std::size_t length,
                             std::span<const std::int64_t> lengths, T ridge, std::span<T> mu,
                             std::span<T> sigma2);

/// Vector-Jacobian product of density_from_moments_1d: dp from dmu and dsigma2.
template <std::floating_point T>
void density_from_moments_1d_backward(T alpha, std::span<const T> p, std::size_t length,
                                      std::span<const std::int64_t> lengths, T ridge,
                                      std::span<const T> dmu, std::span<const T> dsigma2,
                                      std::span<T> dp);

/// The dimensions of a batch of images: batch x height x width x features.
struct ImageShape {
  std::size_t batch = 0;
  std::size_t height = 0;
  std::size_t width = 0;
  std::size_t features = 0;
};

/// Shapes: values (B x H x W x E), mu (B x 2), sigma (B x 4), context (B x E).
template <std::floating_point T>
void continuous_attention_2d(T alpha, RidgeCache2D<T>& ridge, std::span<const T> values,
                             ImageShape shape, std::span<const T> mu, std::span<const T> sigma,
                             std::span<T> context, Threads threads = {});

/// Shapes: as the forward; dcontext (B x E), dvalues (B x H x W x E), dmu (B x 2), dsigma (B x 4).
template <std::floating_point T>
void continuous_attention_2d_backward(T alpha, RidgeCache2D<T>& ridge, std::span<const T> values,
                                      ImageShape shape, std::span<const T> mu,
                                      std::span<const T> sigma, std::span<const T> dcontext,
                                      std::span<T> dvalues, std::span<T> dmu,
                                      std::span<T> dsigma, Threads threads = {});

/// The value model of each image, B_b = G^T H_b (N x E), as value_model_1d with the G of the
/// image size. Shapes: values (B x H x W x E), model (B x N x E).
template <std::floating_point T>
void value_model_2d(RidgeCache2D<T>& ridge, std::span<const T> values, ImageShape shape,
                    std::span<T> model, Threads threads = {});

/// Vector-Jacobian product of value_model_2d. Shapes: dmodel (B x N x E), dvalues (B x H x W x E).
template <std::floating_point T>
void value_model_2d_backward(RidgeCache2D<T>& ridge, ImageShape shape, std::span<const T> dmodel,
                             std::span<T> dvalues, Threads threads = {});

/// disc+cont on images: mu (B x 2) and sigma (B x 4) from discrete distributions p (B x H x W)
/// over the pixel positions (see above).
template <std::floating_point T>
void density_from_moments_2d(T alpha, std::span<const T> p, std::size_t batch, ImageSize size,
                             T ridge, std::span<T> mu, std::span<T> sigma);

/// Vector-Jacobian product of density_from_moments_2d: dp (B x H x W) from dmu and dsigma
/// (dsigma read as the gradient of a symmetric matrix: only its symmetric part matters).
template <std::floating_point T>
void density_from_moments_2d_backward(T alpha, std::span<const T> p, std::size_t batch,
                                      ImageSize size, T ridge, std::span<const T> dmu,
                                      std::span<const T> dsigma, std::span<T> dp);

}  // namespace sparcon
