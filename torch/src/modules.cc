// torch::nn modules on the sparcon ops (sparcon/torch/modules.h).
#include "sparcon/torch/modules.h"

#include <torch/torch.h>

#include <cmath>

#include "sparcon/torch/ops.h"

namespace sparcon::torch {

// ---- Entmax ---------------------------------------------------------------------------------

EntmaxImpl::EntmaxImpl(EntmaxOptions options_) : options(options_) {
  TORCH_CHECK_VALUE(options.alpha() > 0, "sparcon.Entmax: alpha = ", options.alpha(), " must be > 0");
}

at::Tensor EntmaxImpl::forward(const at::Tensor& x) {
  return alpha_entmax(x, options.alpha(), options.dim());
}

// ---- EntmaxAttention ------------------------------------------------------------------------

EntmaxAttentionImpl::EntmaxAttentionImpl(EntmaxAttentionOptions options_) : options(options_) {
  const auto e = options.embed_dim(), h = options.num_heads();
  TORCH_CHECK_VALUE(e > 0 && h > 0 && e % h == 0, "sparcon.EntmaxAttention: embed_dim = ", e,
                    " must be a positive multiple of num_heads = ", h);
  TORCH_CHECK_VALUE(options.alpha() > 0, "sparcon.EntmaxAttention: alpha = ", options.alpha(), " must be > 0");
  q_proj = register_module("q_proj", ::torch::nn::Linear(e, e));
  k_proj = register_module("k_proj", ::torch::nn::Linear(e, e));
  v_proj = register_module("v_proj", ::torch::nn::Linear(e, e));
  out_proj = register_module("out_proj", ::torch::nn::Linear(e, e));
}

std::tuple<at::Tensor, at::Tensor> EntmaxAttentionImpl::forward(const at::Tensor& query, const at::Tensor& key,
                                                                const at::Tensor& value,
                                                                const at::Tensor& key_padding_mask) {
  const auto e = options.embed_dim(), h = options.num_heads(), d = e / h;
  TORCH_CHECK_VALUE(query.dim() == 3 && query.size(2) == e, "sparcon.EntmaxAttention: query must be (B, Lq, ",
                    e, "), got ", query.sizes());
  TORCH_CHECK_VALUE(key.dim() == 3 && key.sizes() == value.sizes() && key.size(0) == query.size(0) &&
                        key.size(2) == e,
                    "sparcon.EntmaxAttention: key and value must be (B, Lk, ", e, "), got ", key.sizes(),
                    " and ", value.sizes());
  const auto b = query.size(0), lq = query.size(1), lk = key.size(1);
  auto heads = [&](const at::Tensor& x, std::int64_t l) { return x.view({b, l, h, d}).transpose(1, 2); };
  const at::Tensor q = heads(q_proj(query), lq), k = heads(k_proj(key), lk), v = heads(v_proj(value), lk);
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(d));
  if (key_padding_mask.defined()) {
    TORCH_CHECK_VALUE(key_padding_mask.sizes() == at::IntArrayRef({b, lk}) &&
                          key_padding_mask.scalar_type() == at::kBool,
                      "sparcon.EntmaxAttention: key_padding_mask must be bool (", b, ", ", lk, "), got ",
                      key_padding_mask.scalar_type(), " ", key_padding_mask.sizes());
    scores = scores.masked_fill(key_padding_mask.view({b, 1, 1, lk}), -std::numeric_limits<double>::infinity());
  }
  const at::Tensor weights = alpha_entmax(scores, options.alpha(), -1);
  const at::Tensor out = at::matmul(weights, v).transpose(1, 2).reshape({b, lq, e});
  return {out_proj(out), weights};
}

// ---- ContinuousAttention --------------------------------------------------------------------

ContinuousAttentionImpl::ContinuousAttentionImpl(ContinuousAttentionOptions options_) : options(options_) {
  const char* fn = "sparcon.ContinuousAttention";
  TORCH_CHECK_VALUE(options.dims() == 1 || options.dims() == 2, fn, ": dims = ", options.dims(), " must be 1 or 2");
  TORCH_CHECK_VALUE(options.alpha() >= 1, fn, ": alpha = ", options.alpha(), " must be >= 1");
  TORCH_CHECK_VALUE(options.features() > 0, fn, ": features = ", options.features(), " must be > 0");
  TORCH_CHECK_VALUE(options.initial_scale() > 0 && std::isfinite(options.initial_scale()), fn,
                    ": initial_scale = ", options.initial_scale(), " must be finite and > 0");
  TORCH_CHECK_VALUE(options.mode() == "cont" || options.mode() == "disc+cont", fn, ": mode = '",
                    options.mode(), "' must be 'cont' or 'disc+cont'");
  TORCH_CHECK_VALUE(options.heads() >= 1 && options.features() % options.heads() == 0, fn, ": heads = ",
                    options.heads(), " must be >= 1 and divide features = ", options.features());
  TORCH_CHECK_VALUE(options.query_features() >= 0, fn, ": query_features = ", options.query_features(),
                    " must be >= 0 (0: no queries)");
  TORCH_CHECK_VALUE(options.discrete_alpha() > 0, fn, ": discrete_alpha = ", options.discrete_alpha(),
                    " must be > 0");
  if (options.dims() == 1) {
    const auto per_centre = static_cast<std::int64_t>(options.widths().size());
    TORCH_CHECK_VALUE(per_centre > 0 && options.basis_size() > 0 && options.basis_size() % per_centre == 0, fn,
                      ": basis_size = ", options.basis_size(), " must be a positive multiple of the number of widths (",
                      per_centre, ")");
  }
  auto [c, w] = options.dims() == 1 ? basis_1d(options.basis_size(), options.widths())
                                    : basis_2d(options.grid_side(), options.variance());
  centers = register_buffer("centers", c.to(at::kFloat));
  widths = register_buffer("widths", w.to(at::kFloat));
  const std::int64_t queries = options.query_features(), heads = options.heads();
  if (options.mode() == "cont") {
    const std::int64_t per_head = options.dims() == 1 ? 2 : 5;
    head = register_module("head", ::torch::nn::Linear(queries > 0 ? queries : options.features(), heads * per_head));
    const ::torch::NoGradGuard no_grad;
    head->bias.copy_(density_head_bias(options.dims(), heads, options.initial_scale()));
  } else if (queries == 0) {
    scores = register_module("scores", ::torch::nn::Linear(options.features(), heads));
  } else {
    query = register_module("query", ::torch::nn::Linear(queries, options.features()));
  }
}

at::Tensor ContinuousAttentionImpl::forward(const at::Tensor& values, const at::Tensor& lengths,
                                            const at::Tensor& queries) {
  const char* fn = "sparcon.ContinuousAttention";
  const bool two = options.dims() == 2, queried = options.query_features() > 0;
  TORCH_CHECK_VALUE(values.dim() == (two ? 4 : 3) && values.size(-1) == options.features(), fn,
                    ": values must be ", two ? "(B, H, W, " : "(B, L, ", options.features(), "), got ",
                    values.sizes());
  TORCH_CHECK_VALUE(!two || !lengths.defined(), fn, ": lengths must be undefined for 2D (images use every pixel)");
  TORCH_CHECK_VALUE(queried == queries.defined(), fn,
                    queried ? ": queries (B, Q, query_features) are required (query_features = "
                            : ": queries were given but query_features = ",
                    options.query_features(), ")");
  if (queried)
    TORCH_CHECK_VALUE(queries.dim() == 3 && queries.size(0) == values.size(0) &&
                          queries.size(2) == options.query_features(),
                      fn, ": queries must be (B, Q, ", options.query_features(), ") with B = ", values.size(0),
                      ", got ", queries.sizes());
  const c10::optional<at::Tensor> lens = lengths.defined() ? c10::optional<at::Tensor>(lengths) : c10::nullopt;
  const at::Tensor c = centers.to(values.scalar_type()), w = widths.to(values.scalar_type());
  at::Tensor context, mu, sigma, p;  // p: the discrete weights of disc+cont
  if (options.mode() == "cont") {
    // (B, Q, heads * P): the head on each query, or on the mean value as the one query.
    const at::Tensor raw = queried ? head(queries) : head(mean_value(values, lens)).unsqueeze(1);
    std::tie(mu, sigma) = density_head(raw, options.dims(), options.heads(), options.min_scale());
    context = query_continuous_attention(values, mu, sigma, c, w, options.lambda(), options.alpha(), lens);
  } else {
    const at::Tensor s = queried ? query_scores(query(queries), values, options.heads())
                                 : scores(values).movedim(-1, 1).unsqueeze(1);  // (B, 1, K, positions)
    std::tie(context, mu, sigma, p) = disc_cont_attention(values, s, c, w, options.lambda(), options.alpha(),
                                                          options.discrete_alpha(), options.moment_ridge(), lens);
  }
  // (B, Q, K, ...) -> without K for one head, without Q for one density per example.
  auto drop = [&](at::Tensor t, bool density) {
    if (density && options.heads() == 1) t = t.squeeze(2);
    return queried ? t : t.squeeze(1);
  };
  last_mu_ = drop(mu.detach(), true);
  last_sigma_ = drop(sigma.detach(), true);
  last_weights_ = p.defined() ? drop(p.detach(), true) : at::Tensor();
  return drop(context, false);
}

}  // namespace sparcon::torch
