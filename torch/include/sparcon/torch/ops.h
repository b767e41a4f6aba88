// sparcon/torch/ops.h: the core operations as LibTorch functions with autograd (the torch layer
// of docs/architecture.md). Each is also registered once as torch.ops.sparcon.<name>
// (register.cc), so the same kernels serve C++, Python and TorchScript.
//
// Tensors: any rank, any strides; `dim` selects the axis a discrete map normalises over.
// float and double are computed in their own precision; bfloat16 and half in float, the result
// cast back. Gradients flow to x (and to a tensor alpha where one is accepted) and, for the
// continuous operations, to values, mu and Sigma. Bad arguments raise c10::ValueError (Python
// ValueError) whose message names the argument.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <c10/util/Optional.h>

namespace sparcon::torch {

/// p = softmax(x) along dim.
at::Tensor softmax(const at::Tensor& x, std::int64_t dim = -1);
/// p = sparsemax(x) = argmin_{p in simplex} ||p - x||^2 along dim (exact threshold).
at::Tensor sparsemax(const at::Tensor& x, std::int64_t dim = -1);
/// p = 1.5-entmax(x) = [x/2 - tau]_+^2 along dim (exact threshold).
at::Tensor entmax15(const at::Tensor& x, std::int64_t dim = -1);
/// p = alpha-entmax(x) = [(alpha - 1) x - tau]_+^(1/(alpha-1)), alpha > 0 (alpha < 1: dense).
at::Tensor entmax(const at::Tensor& x, double alpha, std::int64_t dim = -1);
/// The same with a tensor alpha broadcastable to x with size 1 along dim (one alpha per row);
/// differentiable with respect to alpha.
at::Tensor entmax(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim = -1);
/// alpha-normmax (alpha > 1): argmax_p <p, x> - ||p||_alpha over the simplex.
at::Tensor normmax(const at::Tensor& x, double alpha, std::int64_t dim = -1);
/// The same with one alpha per row: a floating tensor broadcastable to x with size 1 along dim;
/// no gradient to alpha.
at::Tensor normmax(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim = -1);
/// Projection onto the capped simplex {0 <= p <= 1, sum p = budget}, 0 < budget <= n.
at::Tensor budget(const at::Tensor& x, double budget, std::int64_t dim = -1);
/// The same with one budget per row (a floating tensor broadcastable to x with size 1 along
/// dim); no gradient to the budget.
at::Tensor budget(const at::Tensor& x, const at::Tensor& budget, std::int64_t dim = -1);

/// The discrete maps by name, for the losses: "softmax", "sparsemax", "entmax15", "entmax",
/// "normmax" (parameter = alpha for the last two).
/// Per-row Fenchel-Young loss L(x, y) = Omega*(x) - x_y (shape: x (n, d) -> (n,)), gradient
/// p - e_y; rows whose target equals ignore_index get loss 0 and no gradient.
at::Tensor fenchel_young_loss(const at::Tensor& x, const at::Tensor& target, const std::string& map,
                              double parameter = 0, std::int64_t ignore_index = -100);
/// The same with one alpha per row for "entmax" and "normmax": a floating tensor of n values;
/// no gradient to it.
at::Tensor fenchel_young_loss(const at::Tensor& x, const at::Tensor& target, const std::string& map,
                              const at::Tensor& parameter, std::int64_t ignore_index = -100);

/// r = E_p[psi_j] (continuous.h): 1D mu (B), sigma (B) variance scales, centers (N), widths (N);
/// 2D mu (B, 2), sigma (B, 2, 2), centers (N, 2), widths (N, 2, 2). Returns (B, N).
/// In 2D every op uses sym(sigma) = (sigma + sigma^T)/2 (so an unconstrained parametrisation or
/// gradcheck may perturb one off-diagonal entry); it must be positive definite.
at::Tensor continuous_expectation(const at::Tensor& mu, const at::Tensor& sigma,
                                  const at::Tensor& centers, const at::Tensor& widths, double alpha);

/// The ridge matrix G (L x N) of the basis on a grid: {L} for a sequence, {H, W} for an image.
at::Tensor ridge_matrix(const at::Tensor& centers, const at::Tensor& widths, at::IntArrayRef grid,
                        double lambda);

/// Continuous attention contexts (B, E): 1D values (B, L, E) with optional lengths (B, int64;
/// default L), mu (B), sigma (B); 2D values (B, H, W, E), mu (B, 2), sigma (B, 2, 2). G is
/// cached per basis, lambda and grid.
at::Tensor continuous_attention(const at::Tensor& values, const at::Tensor& mu,
                                const at::Tensor& sigma, const at::Tensor& centers,
                                const at::Tensor& widths, double lambda, double alpha,
                                const c10::optional<at::Tensor>& lengths = c10::nullopt);

/// disc+cont: (mu, sigma) of the density of family alpha whose mean and (co)variance are those
/// of the discrete distributions p over positions, plus ridge: 1D p (B, L) with optional
/// lengths -> mu (B), sigma (B); 2D p (B, H, W) -> mu (B, 2), sigma (B, 2, 2).
std::tuple<at::Tensor, at::Tensor> density_from_moments(const at::Tensor& p, double alpha,
                                                        double ridge,
                                                        const c10::optional<at::Tensor>& lengths = c10::nullopt);

}  // namespace sparcon::torch
