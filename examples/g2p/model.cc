// The sequence-to-sequence model (model.h).
#include "model.h"

#include <limits>
#include <stdexcept>

#include "sparcon/torch/ops.h"
#include "vocabulary.h"

namespace g2p {

std::vector<std::string> variant_names() {
  return {"softmax", "sparsemax", "entmax15", "cont-softmax", "cont-sparsemax", "disc-softmax", "disc-sparsemax"};
}

Variant parse_variant(const std::string& name) { return kit::parse_attention_variant(name, variant_names()); }

Seq2SeqImpl::Seq2SeqImpl(ModelOptions options_) : options(std::move(options_)) {
  const std::int64_t e = options.embedding, h = options.hidden, d = 2 * h;
  if (options.letters <= kLetterUnknown || options.phonemes <= kPhonemeEnd || e <= 0 || h <= 0)
    throw std::invalid_argument("Seq2Seq: vocabulary and layer sizes must be positive (letters " +
                                std::to_string(options.letters) + ", phonemes " + std::to_string(options.phonemes) +
                                ", embedding " + std::to_string(e) + ", hidden " + std::to_string(h) + ")");
  letter_embedding = register_module(
      "letter_embedding", torch::nn::Embedding(torch::nn::EmbeddingOptions(options.letters, e).padding_idx(kLetterPad)));
  phoneme_embedding = register_module(
      "phoneme_embedding",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(options.phonemes, e).padding_idx(kPhonemePad)));
  encoder = register_module(
      "encoder", torch::nn::LSTM(torch::nn::LSTMOptions(e, h).bidirectional(true).batch_first(true)));
  bridge = register_module("bridge", torch::nn::Linear(d, d));
  decoder = register_module("decoder", torch::nn::LSTMCell(e + d, d));
  if (options.variant.continuous()) {
    continuous = register_module(
        "continuous", sparcon::torch::ContinuousAttention(sparcon::torch::ContinuousAttentionOptions(d, 1)
                                                              .alpha(options.variant.alpha)
                                                              .basis_size(options.basis)
                                                              .widths(options.widths)
                                                              .lambda(options.lambda)
                                                              .mode(options.variant.kind)
                                                              .query_features(d)
                                                              .initial_scale(options.initial_scale)));
  } else {
    query = register_module("query", torch::nn::Linear(d, d));
  }
  combine = register_module("combine", torch::nn::Linear(2 * d, d));
  output = register_module("output", torch::nn::Linear(d, options.phonemes));
}

Encoded Seq2SeqImpl::encode(const at::Tensor& letters, const at::Tensor& lengths) {
  const auto packed = torch::nn::utils::rnn::pack_padded_sequence(letter_embedding(letters), lengths,
                                                                  /*batch_first=*/true, /*enforce_sorted=*/false);
  const auto [states_packed, unused] = encoder->forward_with_packed_input(packed);
  Encoded encoded;
  encoded.states = std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(states_packed, /*batch_first=*/true,
                                                                          /*padding_value=*/0.0, letters.size(1)));
  encoded.lengths = lengths;
  encoded.valid = torch::arange(letters.size(1)).unsqueeze(0) < lengths.unsqueeze(1);
  return encoded;
}

DecoderState Seq2SeqImpl::start(const Encoded& encoded) {
  const at::Tensor mean = sparcon::torch::mean_value(encoded.states, encoded.lengths);
  const at::Tensor h = torch::tanh(bridge(mean));
  return {h, torch::zeros_like(h), torch::zeros_like(h)};
}

at::Tensor Seq2SeqImpl::step(const Encoded& encoded, DecoderState& state, const at::Tensor& previous, StepView* view) {
  const at::Tensor x = torch::cat({phoneme_embedding(previous), state.context}, 1);
  std::tie(state.h, state.c) = decoder(x, std::make_tuple(state.h, state.c));
  if (options.variant.continuous()) {
    state.context = continuous(encoded.states, encoded.lengths, state.h.unsqueeze(1)).squeeze(1);
    if (view != nullptr) {
      std::tie(view->mu, view->sigma2) = continuous->last_density();
      view->mu = view->mu.squeeze(1);
      view->sigma2 = view->sigma2.squeeze(1);
      const at::Tensor w = continuous->last_weights();
      view->weights = w.defined() ? w.squeeze(1) : at::Tensor();
    }
  } else {
    const at::Tensor s = sparcon::torch::query_scores(query(state.h).unsqueeze(1), encoded.states, 1)
                             .squeeze(2)
                             .squeeze(1)
                             .masked_fill(~encoded.valid, -std::numeric_limits<float>::infinity());
    const at::Tensor p = sparcon::torch::alpha_entmax(s, options.variant.alpha, -1);  // (B, L)
    state.context = torch::bmm(p.unsqueeze(1), encoded.states).squeeze(1);
    if (view != nullptr) view->weights = p.detach();
  }
  return output(torch::tanh(combine(torch::cat({state.h, state.context}, 1))));
}

at::Tensor Seq2SeqImpl::forward(const at::Tensor& letters, const at::Tensor& lengths, const at::Tensor& inputs) {
  const Encoded encoded = encode(letters, lengths);
  DecoderState state = start(encoded);
  std::vector<at::Tensor> logits;
  logits.reserve(static_cast<std::size_t>(inputs.size(1)));
  for (std::int64_t t = 0; t < inputs.size(1); ++t) logits.push_back(step(encoded, state, inputs.select(1, t)));
  return torch::stack(logits, 1);
}

}  // namespace g2p
