// The device-generic kernels of continuous attention (backend.h; the core's sparcon/attention.h,
// docs/math.md sections 9-10): compositions of differentiable ATen operations, so that autograd
// gives their backward (the formulas of attention.h: dvalues[b, l] = w_b[l] dc_b,
// dr_b = G^T (H_b^T dc_b), and the chain rule through the moments). The ridge matrices G depend
// only on the basis, lambda and the grid; the torch layer computes them once by the core on the
// host (cached) and passes them here on the device.
#pragma once

#include <ATen/ATen.h>

#include <utility>

namespace sparcon::torch::generic {

/// The value model B_b = G_b^T H_b: values (B, L, E) and G padded per example, (B, L, N) with
/// rows l >= L_b zero (1D), or G (P, N) shared and values (B, P, E) over the P pixels (2D).
/// Returns (B, N, E).
at::Tensor value_model(const at::Tensor& values, const at::Tensor& g);

/// Contexts c_b = sum_l (G_b r_b)_l h_l (B, E) from values and G as in value_model and
/// r = E_p[psi] (B, N): O(L (N + E)) per example, B_b never formed.
at::Tensor attention_context(const at::Tensor& values, const at::Tensor& g, const at::Tensor& r);

/// disc+cont, 1D: mu_b = sum_{l < L_b} p_l t_l, v_b = sum p t^2 - mu^2 + ridge, t_l = (l + 1/2)/L_b,
/// sigma2_b the scale of family alpha with variance v_b: v (alpha = 1), else
/// (v (1 + 2 alpha/(alpha-1)) / R^2)^((alpha+1)/2). p (B, L), lengths (B) int64 on p's device.
/// Returns (mu, sigma2, v) (B each).
std::tuple<at::Tensor, at::Tensor, at::Tensor> moments_1d(const at::Tensor& p, const at::Tensor& lengths, double alpha,
                                                          double ridge);

/// disc+cont, 2D: p (B, H, W) over the pixels t = ((i + 1/2)/H, (k + 1/2)/W), mu = sum p t,
/// C = sum p t t^T - mu mu^T + ridge I, Sigma = C (alpha = 1), else C det(Sigma)^gamma / kappa
/// with det(Sigma) = (det C / kappa^2)^alpha, gamma = (alpha-1)/(2 alpha),
/// kappa = R^2/(2 + 2 alpha/(alpha-1)) (Density2D::with_covariance). Returns (mu (B, 2),
/// Sigma (B, 2, 2), C (B, 2, 2)).
std::tuple<at::Tensor, at::Tensor, at::Tensor> moments_2d(const at::Tensor& p, double alpha, double ridge);

}  // namespace sparcon::torch::generic
