// sparcon/torch/modules.h: torch::nn modules built on the ops of ops.h.
//
//   Entmax               p = alpha-entmax(x) along a dim (alpha = 1 softmax, 1.5, 2 sparsemax, any > 0)
//   EntmaxAttention      multi-head scaled dot-product attention whose weights over the keys are
//                        alpha-entmax(q k^T / sqrt(d_head)), with a key padding mask
//   ContinuousAttention  attention over the positions of a sequence (1D) or image (2D) by a
//                        continuous alpha-entmax density (docs/math.md sections 9-10b): the context is E_p[V(t)]
//                        with V the ridge fit of the values on a Gaussian basis; mu and Sigma come
//                        from a learned head ("cont") or from the moments of a learned discrete
//                        attention ("disc+cont", whose context is added); one density per example
//                        or one per query (decoder step, question), with optional heads.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <string>

// TORCH_MODULE names torch::nn unqualified, which inside sparcon::torch finds this namespace.
#define SPARCON_TORCH_MODULE(Name)                                        \
  class Name : public ::torch::nn::ModuleHolder<Name##Impl> {             \
   public:                                                                \
    using ::torch::nn::ModuleHolder<Name##Impl>::ModuleHolder;            \
    using Impl = Name##Impl;                                              \
  }

namespace sparcon::torch {

struct EntmaxOptions {
  explicit EntmaxOptions(double alpha = 1.5) : alpha_(alpha) {}
  TORCH_ARG(double, alpha);
  TORCH_ARG(std::int64_t, dim) = -1;
};

class EntmaxImpl : public ::torch::nn::Module {
 public:
  explicit EntmaxImpl(EntmaxOptions options = EntmaxOptions());
  at::Tensor forward(const at::Tensor& x);
  EntmaxOptions options;
};
SPARCON_TORCH_MODULE(Entmax);

struct EntmaxAttentionOptions {
  EntmaxAttentionOptions(std::int64_t embed_dim, std::int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  TORCH_ARG(std::int64_t, embed_dim);
  TORCH_ARG(std::int64_t, num_heads);
  TORCH_ARG(double, alpha) = 1.5;
};

/// query (B, Lq, E), key and value (B, Lk, E), key_padding_mask (B, Lk) bool, true = ignore.
/// Returns the output (B, Lq, E) and the attention weights (B, heads, Lq, Lk).
class EntmaxAttentionImpl : public ::torch::nn::Module {
 public:
  explicit EntmaxAttentionImpl(EntmaxAttentionOptions options);
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& query, const at::Tensor& key,
                                             const at::Tensor& value,
                                             const at::Tensor& key_padding_mask = {});
  EntmaxAttentionOptions options;
  ::torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};
};
SPARCON_TORCH_MODULE(EntmaxAttention);

struct ContinuousAttentionOptions {
  /// features: E of the values; dims: 1 (sequences) or 2 (images).
  ContinuousAttentionOptions(std::int64_t features, int dims) : features_(features), dims_(dims) {}
  TORCH_ARG(std::int64_t, features);
  TORCH_ARG(int, dims);
  /// The family: 1 (Gaussian), 2 (truncated parabola/paraboloid), any alpha > 1.
  TORCH_ARG(double, alpha) = 1.0;
  /// 1D: N basis functions, N/k centres x the k standard deviations `widths` (the paper's).
  TORCH_ARG(std::int64_t, basis_size) = 64;
  TORCH_ARG(std::vector<double>, widths) = std::vector<double>{0.1, 0.5};
  /// 2D: side x side grid of Gaussians of variance `variance`.
  TORCH_ARG(std::int64_t, grid_side) = 10;
  TORCH_ARG(double, variance) = 0.001;
  TORCH_ARG(double, lambda) = 0.01;
  /// "cont" or "disc+cont".
  TORCH_ARG(std::string, mode) = "cont";
  /// Densities per query (or per example): E is split into `heads` chunks, head k attends to chunk k.
  TORCH_ARG(std::int64_t, heads) = 1;
  /// 0: one density per example, from the values themselves (forward(values, lengths) -> (B, E));
  /// Dq > 0: one per query, forward(values, lengths, queries (B, Q, Dq)) -> (B, Q, E).
  TORCH_ARG(std::int64_t, query_features) = 0;
  /// "disc+cont": the discrete map over the positions, alpha-entmax of this alpha (1 softmax,
  /// 1.5 entmax15, 2 sparsemax, any alpha > 0).
  TORCH_ARG(double, discrete_alpha) = 1.0;
  /// Floor of sigma^2 (1D) / added to the diagonal of Sigma (2D) in "cont"; ridge of disc+cont.
  TORCH_ARG(double, min_scale) = 1e-6;
  TORCH_ARG(double, moment_ridge) = 1e-4;
  /// "cont": where the head starts (before training): sigma^2 (1D) or Sigma = initial_scale I (2D).
  /// For alpha = 2 in 1D the support starts (3 initial_scale / 2)^(1/3) either side of mu.
  TORCH_ARG(double, initial_scale) = 0.05;
};

/// Continuous attention (docs/math.md sections 9, 10 and 10b): the context of a density p over the positions of a
/// sequence (1D) or an image (2D) is E_p[V(t)], V the ridge fit of the values on a Gaussian basis.
/// values (B, L, E) with lengths (B, int64, optional) in 1D, (B, H, W, E) in 2D.
/// - query_features = 0: forward(values, lengths) -> (B, E), one density per example: "cont"
///   from a linear head on the mean of the values, "disc+cont" from a discrete attention with a
///   learned score per position (parameters `head`, or `scores`).
/// - query_features = Dq: forward(values, lengths, queries (B, Q, Dq)) -> (B, Q, E), one density
///   per query over the same values: "cont" from a linear head on the query (`head`), "disc+cont"
///   from the discrete attention of the projected query over the values, scaled dot products
///   (`query`). The value model B = G^T H is computed once per example.
/// The head: mu = sigmoid, sigma^2 = max(softplus, min_scale), 2D Sigma = L L^T + min_scale I
/// (density_head), started at mu = 1/2 and sigma^2 = initial_scale. "disc+cont" adds the discrete
/// context. The math is in the functions of ops.h (density_head, query_continuous_attention,
/// disc_cont_attention), shared with the Python module sparcon.ContinuousAttention.
class ContinuousAttentionImpl : public ::torch::nn::Module {
 public:
  explicit ContinuousAttentionImpl(ContinuousAttentionOptions options);
  at::Tensor forward(const at::Tensor& values, const at::Tensor& lengths = {}, const at::Tensor& queries = {});
  /// (mu, Sigma) of the last forward, detached: 1D (B[, Q][, K]), 2D (B[, Q][, K], 2) and
  /// (B[, Q][, K], 2, 2); Q only with queries, K only with heads > 1.
  std::tuple<at::Tensor, at::Tensor> last_density() const { return {last_mu_, last_sigma_}; }
  /// "disc+cont": the discrete weights of the last forward, detached: (B[, Q][, K], L) or
  /// (B[, Q][, K], H, W), dimensions dropped as in last_density.
  at::Tensor last_weights() const { return last_weights_; }
  ContinuousAttentionOptions options;
  at::Tensor centers, widths;                 // buffers: the basis
  ::torch::nn::Linear head{nullptr};          // cont: the density of each query (or mean value)
  ::torch::nn::Linear scores{nullptr};        // disc+cont without queries: a score per position
  ::torch::nn::Linear query{nullptr};         // disc+cont with queries: the query in value space

 private:
  at::Tensor last_mu_, last_sigma_, last_weights_;
};
SPARCON_TORCH_MODULE(ContinuousAttention);

}  // namespace sparcon::torch
