// The sequence-to-sequence model of the grapheme-to-phoneme experiment: letter embeddings and a
// BiLSTM encoder; an LSTM decoder that at each output step attends over the encoder states with
// its own state as the query, the context fed to the next step (input feeding):
//
//   x_t   = [embed(y_{t-1}); c_{t-1}]           y_0 = <s>, c_0 = 0
//   h_t   = LSTMCell(x_t, h_{t-1})               h_0 = tanh(W_b mean_l s_l), cell 0
//   c_t   = attend(s_1..s_L, query h_t)          the variant's attention
//   o_t   = tanh(W_o [h_t; c_t]),  logits_t = W_v o_t
//
// Attention variants (by name):
//   softmax, sparsemax, entmax15      discrete: p = alpha-entmax(<W_q h_t, s_l> / sqrt(E)) over
//                                     the word's letters, c_t = sum_l p_l s_l
//   cont-softmax, cont-sparsemax      continuous (alpha 1, 2): (mu, sigma^2) from a linear head on
//                                     h_t, c_t = E_p[V(t)] with V the ridge fit of the states
//   disc-softmax, disc-sparsemax      disc+cont: (mu, sigma^2) from the moments of the discrete
//                                     softmax attention of the query, both contexts summed
// Continuous variants use sparcon::torch::ContinuousAttention with query_features = the decoder
// state; letter l of an L-letter word sits at t = (l + 1/2) / L, so words of 2 to 20 letters
// share one basis (ModelOptions::basis, ::widths).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kit/attention_variant.h"
#include "sparcon/torch/modules.h"

namespace g2p {

using Variant = kit::AttentionVariant;

/// The variant of a name of variant_names() (kit/attention_variant.h); throws std::invalid_argument
/// naming it and the known names.
Variant parse_variant(const std::string& name);
/// Every variant name, in the order of the results table.
std::vector<std::string> variant_names();

struct ModelOptions {
  std::int64_t letters = 0, phonemes = 0;  ///< vocabulary sizes (with the specials)
  std::int64_t embedding = 64;             ///< letter and phoneme embeddings
  std::int64_t hidden = 128;               ///< encoder units per direction; the decoder has 2 * hidden
  Variant variant;
  /// Continuous: N Gaussians, N / 2 centres linspace(0, 1) x the standard deviations `widths`.
  /// 32 with {0.03, 0.1}: centres 1/15 apart, narrow ones about a letter of a 20-letter word wide.
  std::int64_t basis = 32;
  std::vector<double> widths{0.03, 0.1};
  double lambda = 0.01;         ///< the ridge penalty of the value model
  double initial_scale = 0.02;  ///< "cont": the head's starting sigma^2
};

/// The encoder's output for a batch of words.
struct Encoded {
  at::Tensor states;   ///< (B, L, 2 hidden), zero past each length
  at::Tensor lengths;  ///< (B) int64
  at::Tensor valid;    ///< (B, L) bool: position < length
};

struct DecoderState {
  at::Tensor h, c, context;  ///< (B, 2 hidden) each
};

/// What one step's attention looked at (detached).
struct StepView {
  at::Tensor weights;     ///< discrete weights (B, L), or undefined ("cont")
  at::Tensor mu, sigma2;  ///< the density (B), or undefined (discrete)
};

class Seq2SeqImpl : public torch::nn::Module {
 public:
  explicit Seq2SeqImpl(ModelOptions options);

  /// letters (B, L) int64 padded with 0, lengths (B) int64 in 1..L.
  Encoded encode(const at::Tensor& letters, const at::Tensor& lengths);
  /// The decoder's state before the first step.
  DecoderState start(const Encoded& encoded);
  /// One decoder step: previous (B) int64 the previous output (<s> first); updates state and
  /// returns logits (B, phonemes). view, if given, receives the attention.
  at::Tensor step(const Encoded& encoded, DecoderState& state, const at::Tensor& previous, StepView* view = nullptr);
  /// Teacher forcing: inputs (B, T) int64 (<s> then the reference) -> logits (B, T, phonemes).
  at::Tensor forward(const at::Tensor& letters, const at::Tensor& lengths, const at::Tensor& inputs);

  ModelOptions options;
  torch::nn::Embedding letter_embedding{nullptr}, phoneme_embedding{nullptr};
  torch::nn::LSTM encoder{nullptr};
  torch::nn::Linear bridge{nullptr};
  torch::nn::LSTMCell decoder{nullptr};
  torch::nn::Linear query{nullptr};  ///< discrete: W_q
  sparcon::torch::ContinuousAttention continuous{nullptr};
  torch::nn::Linear combine{nullptr}, output{nullptr};
};
TORCH_MODULE(Seq2Seq);

}  // namespace g2p
