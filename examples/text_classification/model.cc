// The classifier (model.h).
#include "model.h"

#include <limits>
#include <stdexcept>

#include "sparcon/torch/ops.h"

namespace spam {

Variant parse_variant(const std::string& name) {
  Variant v;
  v.name = name;
  if (name == "softmax" || name == "sparsemax" || name == "entmax15") {
    v.map = name;
    return v;
  }
  const auto first = name.find('-'), last = name.rfind('-');
  if (first != std::string::npos && last > first) {
    const std::string kind = name.substr(0, first), map = name.substr(first + 1, last - first - 1);
    const std::string n = name.substr(last + 1);
    const bool known_kind = kind == "cont" || kind == "disc";
    const bool known_map = map == "softmax" || map == "sparsemax";
    // At most 6 digits: std::stoll below cannot overflow, and no basis is that large anyway.
    const bool number = !n.empty() && n.size() <= 6 && n.find_first_not_of("0123456789") == std::string::npos;
    if (known_kind && known_map && number && std::stoll(n) >= 2 && std::stoll(n) % 2 == 0) {
      v.continuous = true;
      v.map = map;
      v.mode = kind == "cont" ? "cont" : "disc+cont";
      v.basis = std::stoll(n);
      return v;
    }
  }
  throw std::invalid_argument("unknown attention variant '" + name +
                              "': expected softmax, sparsemax, entmax15, or {cont,disc}-{softmax,sparsemax}-N "
                              "with N even (e.g. cont-sparsemax-64)");
}

ClassifierImpl::ClassifierImpl(ClassifierOptions options_) : options(std::move(options_)) {
  embedding = register_module("embedding", torch::nn::Embedding(
      torch::nn::EmbeddingOptions(options.vocabulary, options.embedding).padding_idx(0)));
  encoder = register_module("encoder", torch::nn::LSTM(
      torch::nn::LSTMOptions(options.embedding, options.hidden).bidirectional(true).batch_first(true)));
  const auto features = 2 * options.hidden;
  if (options.variant.continuous) {
    continuous = register_module("continuous", sparcon::torch::ContinuousAttention(
        sparcon::torch::ContinuousAttentionOptions(features, 1)
            .alpha(options.variant.alpha())
            .basis_size(options.variant.basis)
            .mode(options.variant.mode)
            .initial_scale(options.initial_scale)));
  } else {
    scores = register_module("scores", torch::nn::Linear(features, 1));
  }
  output = register_module("output", torch::nn::Linear(features, 2));
}

at::Tensor ClassifierImpl::forward(const at::Tensor& tokens, const at::Tensor& lengths, AttentionView* view) {
  const at::Tensor embedded = embedding(tokens);
  const auto packed = torch::nn::utils::rnn::pack_padded_sequence(embedded, lengths, /*batch_first=*/true,
                                                                  /*enforce_sorted=*/false);
  const auto [states_packed, unused] = encoder->forward_with_packed_input(packed);
  const at::Tensor states = std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(
      states_packed, /*batch_first=*/true, /*padding_value=*/0.0, tokens.size(1)));  // (B, L, 2h)
  at::Tensor context;
  if (options.variant.continuous) {
    context = continuous(states, lengths);
    if (view != nullptr) std::tie(view->mu, view->sigma2) = continuous->last_density();
  } else {
    const at::Tensor valid = torch::arange(tokens.size(1)).unsqueeze(0) < lengths.unsqueeze(1);
    const at::Tensor s = scores(states).squeeze(-1).masked_fill(~valid, -std::numeric_limits<float>::infinity());
    const auto& map = options.variant.map;
    const at::Tensor p = map == "softmax"     ? sparcon::torch::softmax(s, -1)
                         : map == "sparsemax" ? sparcon::torch::sparsemax(s, -1)
                                              : sparcon::torch::entmax15(s, -1);
    context = torch::matmul(p.unsqueeze(1), states).squeeze(1);
    if (view != nullptr) view->weights = p.detach();
  }
  return output(context);
}

}  // namespace spam
