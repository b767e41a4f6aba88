// The classifier of the text-classification experiment, as in the paper scaled for a CPU:
// embeddings trained from scratch -> BiLSTM -> an attention layer chosen by name -> linear.
//
// Attention variants (the name given on the command line):
//   softmax, sparsemax, entmax15           discrete attention over the tokens: weights
//                                          map(w . h_l) over the document's tokens
//   cont-softmax-N, cont-sparsemax-N       continuous attention (alpha 1 or 2) with N basis
//                                          functions, mu and sigma^2 from a head ("cont")
//   disc-softmax-N, disc-sparsemax-N       "disc+cont": mu and sigma^2 from the moments of a
//                                          discrete softmax attention, both contexts summed
#pragma once

#include <torch/torch.h>

#include <string>

#include "sparcon/torch/modules.h"

namespace spam {

/// A parsed variant name.
struct Variant {
  std::string name;
  bool continuous = false;
  std::string map = "softmax";  ///< discrete map, or the continuous family: softmax (alpha 1), sparsemax (alpha 2)
  std::string mode = "cont";    ///< continuous: "cont" or "disc+cont"
  std::int64_t basis = 0;       ///< continuous: N
  [[nodiscard]] double alpha() const { return map == "softmax" ? 1.0 : map == "sparsemax" ? 2.0 : 1.5; }
};

/// Throws std::invalid_argument naming the variant for an unknown name.
Variant parse_variant(const std::string& name);

struct ClassifierOptions {
  std::int64_t vocabulary = 0;
  std::int64_t embedding = 64;
  std::int64_t hidden = 64;  ///< per direction; the BiLSTM states have 2 * hidden features
  Variant variant;
  double initial_scale = 0.05;  ///< continuous "cont": the head's starting sigma^2
};

/// What the attention layer looked at, for the report and the sparsity numbers.
struct AttentionView {
  at::Tensor weights;         ///< discrete weights (B, L), or undefined
  at::Tensor mu, sigma2;      ///< continuous density (B), or undefined
};

class ClassifierImpl : public torch::nn::Module {
 public:
  explicit ClassifierImpl(ClassifierOptions options);
  /// tokens (B, L) int64 padded with 0, lengths (B) int64 >= 1 -> logits (B, 2).
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& lengths, AttentionView* view = nullptr);

  ClassifierOptions options;
  torch::nn::Embedding embedding{nullptr};
  torch::nn::LSTM encoder{nullptr};
  torch::nn::Linear scores{nullptr}, output{nullptr};
  sparcon::torch::ContinuousAttention continuous{nullptr};
};
TORCH_MODULE(Classifier);

}  // namespace spam
