// The VQA model (model.h).
#include "model.h"

#include <cmath>
#include <stdexcept>

#include "sparcon/torch/ops.h"
#include "unrolled_em.h"

namespace vqa {

namespace ops = sparcon::torch;

std::vector<std::string> variant_names() {
  return {"softmax",      "sparsemax",      "entmax15", "cont-softmax", "cont-sparsemax",
          "disc-softmax", "disc-sparsemax", "mix2",     "mix3"};
}

Variant parse_variant(const std::string& name) { return kit::parse_attention_variant(name, variant_names()); }

VqaModelImpl::VqaModelImpl(ModelOptions options_) : options(std::move(options_)) {
  const std::int64_t e = options.features;
  if (e <= 0 || e % 4 != 0 || options.words <= 1 || options.answers <= 1)
    throw std::invalid_argument("VqaModel: features must be a positive multiple of 4 and the vocabularies > 1 (features " +
                                std::to_string(e) + ", words " + std::to_string(options.words) + ", answers " +
                                std::to_string(options.answers) + ")");
  namespace nn = torch::nn;
  cnn = register_module("cnn", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::BatchNorm2d(16),
                                              nn::ReLU(), nn::MaxPool2d(2),  // 42 x 42
                                              nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::BatchNorm2d(32),
                                              nn::ReLU(), nn::MaxPool2d(3),  // 14 x 14
                                              nn::Conv2d(nn::Conv2dOptions(32, e, 3).padding(1)), nn::BatchNorm2d(e),
                                              nn::ReLU()));
  position = register_parameter("position", 0.1 * torch::randn({1, 14, 14, e}));
  self_attention = register_module("self_attention", nn::MultiheadAttention(nn::MultiheadAttentionOptions(e, 4)));
  norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({e})));
  embedding = register_module("embedding", nn::Embedding(nn::EmbeddingOptions(options.words, e).padding_idx(0)));
  question = register_module("question", nn::LSTM(nn::LSTMOptions(e, e).batch_first(true)));
  query = register_module("query", nn::Linear(e, e));
  project = register_module("project", nn::Linear(e, e));
  classifier = register_module("classifier",
                               nn::Sequential(nn::Linear(3 * e, 2 * e), nn::ReLU(), nn::Linear(2 * e, options.answers)));
  if (options.variant.continuous()) {
    auto [c, w] = ops::basis_2d(options.grid_side, options.basis_variance);
    centers = register_buffer("centers", c.to(torch::kFloat));
    widths = register_buffer("widths", w.to(torch::kFloat));
  }
}

at::Tensor VqaModelImpl::encode_images(const at::Tensor& images) {
  const at::Tensor grid = cnn->forward(images).permute({0, 2, 3, 1}) + position;  // (S, 14, 14, E)
  const std::int64_t s = grid.size(0), e = grid.size(3);
  const at::Tensor cells = grid.reshape({s, 196, e}).transpose(0, 1);             // (196, S, E)
  const at::Tensor mixed = std::get<0>(self_attention(cells, cells, cells));
  return norm(cells + mixed).transpose(0, 1).reshape({s, 14, 14, e});
}

at::Tensor VqaModelImpl::encode_questions(const at::Tensor& words, const at::Tensor& lengths) {
  const auto packed = torch::nn::utils::rnn::pack_padded_sequence(embedding(words), lengths, /*batch_first=*/true,
                                                                  /*enforce_sorted=*/false);
  const auto [unused, state] = question->forward_with_packed_input(packed);
  return std::get<0>(state).squeeze(0);  // the last layer's final hidden state (Q, E)
}

at::Tensor VqaModelImpl::forward(const Batch& batch, AttentionView* view) {
  const Variant& variant = options.variant;
  const at::Tensor grids = encode_images(batch.images).index_select(0, batch.scene);  // (Q, 14, 14, E)
  const at::Tensor q = encode_questions(batch.words, batch.lengths);
  const std::int64_t n = grids.size(0), e = grids.size(3);
  const at::Tensor scores = ops::query_scores(query(q).unsqueeze(1), grids, 1).reshape({n, 196});
  const at::Tensor cells = grids.reshape({n, 196, e});
  auto discrete_context = [&](const at::Tensor& p) { return torch::bmm(p.unsqueeze(1), cells).squeeze(1); };
  at::Tensor context, weights, mean, sigma, weight;
  if (variant.kind == "discrete") {
    weights = ops::alpha_entmax(scores, variant.alpha, -1);
    context = discrete_context(weights);
  } else {
    weights = torch::softmax(scores, -1);
    const at::Tensor map = weights.reshape({n, 14, 14});
    if (variant.kind == "mixture") {
      const GaussianMixture m = unrolled_em(map, variant.components, options.em_steps, options.moment_ridge);
      const at::Tensor contexts = ops::query_continuous_attention(grids, m.mean, m.covariance, centers, widths,
                                                                  options.lambda, 1.0);  // (Q, K, E)
      context = (m.weight.unsqueeze(2) * contexts).sum(1);
      mean = m.mean, sigma = m.covariance, weight = m.weight;
    } else {
      std::tie(mean, sigma) = ops::density_from_moments(map, variant.alpha, options.moment_ridge);
      context = ops::continuous_attention(grids, mean, sigma, centers, widths, options.lambda, variant.alpha);
      if (variant.kind == "disc+cont") context = context + discrete_context(weights);
      mean = mean.unsqueeze(1), sigma = sigma.unsqueeze(1), weight = torch::ones({n, 1}, mean.options());
    }
  }
  if (view != nullptr) {
    view->weights = weights.detach().reshape({n, 14, 14});
    view->mean = mean.defined() ? mean.detach() : at::Tensor();
    view->sigma = sigma.defined() ? sigma.detach() : at::Tensor();
    view->weight = weight.defined() ? weight.detach() : at::Tensor();
  }
  return classifier->forward(torch::cat({context, q, context * project(q)}, 1));
}

}  // namespace vqa
