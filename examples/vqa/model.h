// The VQA model: a small CNN turns the scene (84 x 84 grey) into a 14 x 14 grid of features, a
// question encoder (embeddings + LSTM) into a vector, the question attends over the grid, and a
// classifier answers from the attended feature fused with the question:
//
//   V   = SelfAttention(CNN(image) + P)          (S, 14, 14, E); P a learned position embedding,
//                                                 one layer of multi-head self-attention over the
//                                                 196 cells (residual, layer norm), MCAN-like
//   q   = LSTM(embed(words)) final state          (Q, E)
//   s_l = <W_q q, V_l> / sqrt(E)                  scores over the 196 cells of the question's scene
//   c   = attend(V, s)                            the variant's attention (below)
//   logits = MLP([c; q; c * W_p q])               (Q, 17 answers)
//
// Attention variants (by name):
//   softmax, sparsemax, entmax15   discrete: p = alpha-entmax(s) over the cells, c = sum_l p_l V_l
//   cont-softmax, cont-sparsemax   continuous alone (the paper's VQA model): (mu, Sigma) the
//                                  mean and covariance of the discrete softmax(s), c = E_p[V(t)]
//                                  for the 2D density p of family alpha = 1 or 2
//   disc-softmax, disc-sparsemax   disc+cont: the same density, c = sum_l p_l V_l + E_p[V(t)]
//   mix2, mix3                     multimodal (beyond the paper): K = 2, 3 Gaussians fitted to
//                                  softmax(s) by unrolled EM (unrolled_em.h), c = sum_k pi_k E_{p_k}[V(t)]
// E_p[V(t)] = B^T E_p[psi(t)] with V the ridge fit of the cells on 100 Gaussians of variance
// 0.001 centred on a 10 x 10 grid of [0, 1]^2 (the paper's basis), lambda 0.01; cell (r, c) at
// t = ((r + 1/2) / 14, (c + 1/2) / 14) (sparcon's image convention, box.h).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kit/attention_variant.h"

namespace vqa {

using Variant = kit::AttentionVariant;

/// The variant of a name of variant_names() (kit/attention_variant.h); throws std::invalid_argument
/// naming it and the known names.
Variant parse_variant(const std::string& name);
/// Every variant name, in the order of the results table.
std::vector<std::string> variant_names();

struct ModelOptions {
  Variant variant;
  std::int64_t features = 64;   ///< E: the grid's features and the question vector
  std::int64_t words = 48;      ///< the question vocabulary (word_vocabulary().size())
  std::int64_t answers = 17;    ///< answer_vocabulary().size()
  std::int64_t grid_side = 10;  ///< the continuous variants' basis: grid_side^2 Gaussians
  double basis_variance = 0.001;
  double lambda = 0.01;         ///< the ridge penalty of the value model
  double moment_ridge = 1e-4;   ///< added to the moments' covariance (a cell has variance 4.3e-4)
  int em_steps = 3;             ///< "mixture": unrolled EM steps
};

/// What the attention of each question looked at (detached), for the metrics and the report.
struct AttentionView {
  at::Tensor weights;     ///< (Q, 14, 14): the discrete map (for the continuous variants, the softmax their density comes from)
  at::Tensor mean;        ///< continuous: (Q, K, 2), K = 1 but for the mixtures
  at::Tensor sigma;       ///< continuous: the density's scale (Q, K, 2, 2) (the covariance for alpha = 1)
  at::Tensor weight;      ///< continuous: pi (Q, K) (ones for K = 1)
};

/// A batch: the scenes and the questions about them.
struct Batch {
  at::Tensor images;   ///< (S, 1, 84, 84) float in [0, 1]
  at::Tensor scene;    ///< (Q) int64: each question's scene, an index into images
  at::Tensor words;    ///< (Q, T) int64 padded with kWordPad
  at::Tensor lengths;  ///< (Q) int64 in 1..T
  at::Tensor answers;  ///< (Q) int64 (-1 when unknown, as for predict)
};

class VqaModelImpl : public torch::nn::Module {
 public:
  explicit VqaModelImpl(ModelOptions options);
  /// images (S, 1, 84, 84) -> V (S, 14, 14, E).
  at::Tensor encode_images(const at::Tensor& images);
  /// words (Q, T), lengths (Q) -> q (Q, E).
  at::Tensor encode_questions(const at::Tensor& words, const at::Tensor& lengths);
  /// The answer logits (Q, answers); view, if given, receives the attention.
  at::Tensor forward(const Batch& batch, AttentionView* view = nullptr);

  ModelOptions options;
  torch::nn::Sequential cnn{nullptr};
  at::Tensor position;  ///< P (1, 14, 14, E)
  torch::nn::MultiheadAttention self_attention{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Embedding embedding{nullptr};
  torch::nn::LSTM question{nullptr};
  torch::nn::Linear query{nullptr}, project{nullptr};
  torch::nn::Sequential classifier{nullptr};
  at::Tensor centers, widths;  ///< continuous: the basis (buffers)
};
TORCH_MODULE(VqaModel);

}  // namespace vqa
