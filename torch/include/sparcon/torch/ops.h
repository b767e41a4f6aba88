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

#include <c10/util/Optional.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

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

/// The value model of query-conditioned attention: B_b = G_b^T H_b per example, (B, N, E), so
/// that the context of a density of example b is B_b^T r (attention.h). values (B, L, E) with
/// optional lengths (B; padding rows get zero gradient) or (B, H, W, E). Differentiable in values.
at::Tensor value_model(const at::Tensor& values, const at::Tensor& centers, const at::Tensor& widths,
                       double lambda, const c10::optional<at::Tensor>& lengths = c10::nullopt);

/// disc+cont: (mu, sigma) of the density of family alpha whose mean and (co)variance are those
/// of the discrete distributions p over positions, plus ridge: 1D p (B, L) with optional
/// lengths -> mu (B), sigma (B); 2D p (B, H, W) -> mu (B, 2), sigma (B, 2, 2).
std::tuple<at::Tensor, at::Tensor> density_from_moments(const at::Tensor& p, double alpha,
                                                        double ridge,
                                                        const c10::optional<at::Tensor>& lengths = c10::nullopt);

// ---- the math of the attention modules, as functions (modules.h and the Python package are
// thin over these; attention_functional.cc) ---------------------------------------------------

/// p = alpha-entmax(x) along dim through the exact map of the value: softmax (1), entmax15
/// (1.5), sparsemax (2), entmax (any other alpha > 0).
at::Tensor alpha_entmax(const at::Tensor& x, double alpha, std::int64_t dim = -1);

/// The Gaussian basis of a 1D module: size functions, size/k centres linspace(0, 1, size/k) each
/// with the k standard deviations sds (GaussianBasis1D::grid): centers (N), widths (N) variances,
/// float64 (the modules keep them as float32 buffers). The paper's: basis_1d(N, {0.1, 0.5}).
std::tuple<at::Tensor, at::Tensor> basis_1d(std::int64_t size, const std::vector<double>& sds);
/// The 2D basis: side x side centres linspace(0, 1, side)^2, covariance variance I
/// (GaussianBasis2D::grid): centers (N, 2), widths (N, 2, 2), float64. The paper's: (10, 0.001).
std::tuple<at::Tensor, at::Tensor> basis_2d(std::int64_t side, double variance);

/// The density head: raw outputs (..., heads * P) of a linear layer -> one density per head.
/// 1D (P = 2): mu = sigmoid(o_0), sigma^2 = max(softplus(o_1), min_scale): mu, sigma (..., heads).
/// 2D (P = 5): mu = sigmoid(o_0, o_1), Sigma = L L^T + min_scale I, L = [[softplus(o_2), 0],
/// [o_3, softplus(o_4)]]: mu (..., heads, 2), sigma (..., heads, 2, 2).
std::tuple<at::Tensor, at::Tensor> density_head(const at::Tensor& raw, std::int64_t dims, std::int64_t heads,
                                                double min_scale);
/// The bias (heads * P, float32) that starts density_head at mu = 1/2 and sigma^2 =
/// initial_scale (2D: Sigma = initial_scale I, up to min_scale): zero but the scale outputs,
/// softplus^-1(v) = v + log(1 - e^-v) of v = initial_scale (1D) or sqrt(initial_scale) (2D).
at::Tensor density_head_bias(std::int64_t dims, std::int64_t heads, double initial_scale);

/// The mean of each example's values over its positions: (B, L, E) with optional lengths ->
/// sum_{l < L_b} h_l / L_b; (B, H, W, E) -> the mean over the pixels. (B, E).
at::Tensor mean_value(const at::Tensor& values, const c10::optional<at::Tensor>& lengths = c10::nullopt);

/// Scaled dot-product scores of queries against the values, per head: queries (B, Q, E), values
/// (B, L, E) or (B, H, W, E), E split into `heads` chunks of d = E/heads:
/// s[b, q, k, l] = <queries[b, q, chunk k], values[b, l, chunk k]> / sqrt(d). Returns (B, Q, heads,
/// L) or (B, Q, heads, H, W).
at::Tensor query_scores(const at::Tensor& queries, const at::Tensor& values, std::int64_t heads);

/// Query-conditioned continuous attention: one density per query (and head) over the same
/// values. values (B, L, E) with optional lengths, or (B, H, W, E); 1D mu, sigma (B, Q) or
/// (B, Q, K); 2D mu (B, Q, 2) or (B, Q, K, 2), sigma (B, Q, 2, 2) or (B, Q, K, 2, 2). With K
/// heads, E is split into K chunks and head k's density attends to chunk k:
///   context[b, q, chunk k] = B_b[:, chunk k]^T r_{b,q,k},   r = E_p[psi],   B_b = value_model.
/// Returns (B, Q, E). Cost O(L N E) per example for B_b plus O(N E) per query; a single query
/// and head per example goes through continuous_attention (O(L (N + E)), never forming B_b).
at::Tensor query_continuous_attention(const at::Tensor& values, const at::Tensor& mu, const at::Tensor& sigma,
                                      const at::Tensor& centers, const at::Tensor& widths, double lambda,
                                      double alpha, const c10::optional<at::Tensor>& lengths = c10::nullopt);

/// disc+cont, query-conditioned: scores (B, Q, K, L) or (B, Q, K, H, W) over the positions
/// (masked past each length), p = alpha_entmax(scores, discrete_alpha) over the positions,
/// (mu, sigma) = density_from_moments(p, alpha, moment_ridge) per query and head, and
///   context = sum_l p_l h_l (chunk k for head k) + query_continuous_attention(mu, sigma).
/// Returns (context (B, Q, E), mu, sigma (shapes of query_continuous_attention with K), p (the
/// shape of scores)).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> disc_cont_attention(
    const at::Tensor& values, const at::Tensor& scores, const at::Tensor& centers, const at::Tensor& widths,
    double lambda, double alpha, double discrete_alpha, double moment_ridge,
    const c10::optional<at::Tensor>& lengths = c10::nullopt);

}  // namespace sparcon::torch
