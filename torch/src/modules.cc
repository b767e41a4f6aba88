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
  const double a = options.alpha();
  if (a == 1) return sparcon::torch::softmax(x, options.dim());
  if (a == 2) return sparcon::torch::sparsemax(x, options.dim());
  if (a == 1.5) return sparcon::torch::entmax15(x, options.dim());
  return sparcon::torch::entmax(x, a, options.dim());
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
  const double a = options.alpha();
  const at::Tensor weights = a == 1 ? sparcon::torch::softmax(scores, -1)
                             : a == 2 ? sparcon::torch::sparsemax(scores, -1)
                             : a == 1.5 ? sparcon::torch::entmax15(scores, -1)
                                        : sparcon::torch::entmax(scores, a, -1);
  const at::Tensor out = at::matmul(weights, v).transpose(1, 2).reshape({b, lq, e});
  return {out_proj(out), weights};
}

// ---- ContinuousAttention --------------------------------------------------------------------

namespace {

// Starts the "cont" head at a density of moderate width: the bias of the outputs that go
// through softplus set so that they begin at `value` (a density as wide as the whole domain
// gives weak, drifting gradients), the mean at the centre (bias 0 through the sigmoid).
// softplus^-1(v) = log(e^v - 1) = v + log(1 - e^-v).
void start_head_at(::torch::nn::Linear& head, std::initializer_list<std::int64_t> outputs, double value) {
  const ::torch::NoGradGuard no_grad;
  head->bias.zero_();
  for (const auto i : outputs) head->bias[i].fill_(value + std::log(-std::expm1(-value)));
}

}  // namespace

ContinuousAttentionImpl::ContinuousAttentionImpl(ContinuousAttentionOptions options_) : options(options_) {
  const char* fn = "sparcon.ContinuousAttention";
  TORCH_CHECK_VALUE(options.dims() == 1 || options.dims() == 2, fn, ": dims = ", options.dims(), " must be 1 or 2");
  TORCH_CHECK_VALUE(options.alpha() >= 1, fn, ": alpha = ", options.alpha(), " must be >= 1");
  TORCH_CHECK_VALUE(options.features() > 0, fn, ": features = ", options.features(), " must be > 0");
  TORCH_CHECK_VALUE(options.initial_scale() > 0 && std::isfinite(options.initial_scale()), fn,
                    ": initial_scale = ", options.initial_scale(), " must be finite and > 0");
  TORCH_CHECK_VALUE(options.mode() == "cont" || options.mode() == "disc+cont", fn, ": mode = '",
                    options.mode(), "' must be 'cont' or 'disc+cont'");
  if (options.dims() == 1) {
    const auto n = options.basis_size();
    const auto per_centre = static_cast<std::int64_t>(options.widths().size());
    TORCH_CHECK_VALUE(per_centre > 0 && n > 0 && n % per_centre == 0, fn, ": basis_size = ", n,
                      " must be a positive multiple of the number of widths (", per_centre, ")");
    const auto k = n / per_centre;
    const at::Tensor c = k == 1 ? at::zeros({1}, at::kFloat) : at::linspace(0, 1, k, at::kFloat);
    const at::Tensor sd = at::tensor(options.widths(), at::kFloat);
    // The paper's order: centre by centre, each with every width.
    centers = register_buffer("centers", c.repeat_interleave(per_centre));
    widths = register_buffer("widths", (sd * sd).repeat({k}));
    head = register_module("head", ::torch::nn::Linear(options.features(), 2));
    start_head_at(head, {1}, options.initial_scale());
  } else {
    const auto side = options.grid_side();
    TORCH_CHECK_VALUE(side > 0, fn, ": grid_side = ", side, " must be > 0");
    TORCH_CHECK_VALUE(options.variance() > 0, fn, ": variance = ", options.variance(), " must be > 0");
    const at::Tensor c = side == 1 ? at::zeros({1}, at::kFloat) : at::linspace(0, 1, side, at::kFloat);
    const auto grid = at::meshgrid({c, c}, "ij");
    centers = register_buffer("centers", at::stack({grid[0].reshape(-1), grid[1].reshape(-1)}, 1));
    widths = register_buffer("widths", (options.variance() * at::eye(2, at::kFloat)).expand({side * side, 2, 2}).clone());
    head = register_module("head", ::torch::nn::Linear(options.features(), 5));  // mu (2), Cholesky (3)
    start_head_at(head, {2, 4}, std::sqrt(options.initial_scale()));  // L = sqrt(s) I
  }
  if (options.mode() == "disc+cont") scores = register_module("scores", ::torch::nn::Linear(options.features(), 1));
}

at::Tensor ContinuousAttentionImpl::forward(const at::Tensor& values, const at::Tensor& lengths) {
  const char* fn = "sparcon.ContinuousAttention";
  const bool two = options.dims() == 2;
  TORCH_CHECK_VALUE(values.dim() == (two ? 4 : 3) && values.size(-1) == options.features(), fn,
                    ": values must be ", two ? "(B, H, W, " : "(B, L, ", options.features(), "), got ",
                    values.sizes());
  const auto b = values.size(0);
  const at::Tensor flat = two ? values.flatten(1, 2) : values;  // (B, positions, E)
  const auto positions = flat.size(1);
  // Which positions are real (1D lengths); images use every pixel.
  at::Tensor valid = at::ones({b, positions}, values.options().dtype(at::kBool));
  c10::optional<at::Tensor> lens;
  if (!two && lengths.defined()) {
    valid = at::arange(positions, lengths.options()).unsqueeze(0) < lengths.unsqueeze(1);
    lens = lengths;
  }
  const at::Tensor weights = valid.to(values.scalar_type());
  const at::Tensor c = centers.to(values.scalar_type()), w = widths.to(values.scalar_type());
  at::Tensor mu, sigma, discrete_context;
  if (options.mode() == "cont") {
    const at::Tensor mean = (flat * weights.unsqueeze(-1)).sum(1) / weights.sum(1, true);
    const at::Tensor out = head(mean);
    if (two) {
      mu = at::sigmoid(out.slice(1, 0, 2));
      // Sigma = L L^T + min_scale I, L lower triangular with a softplus diagonal.
      const at::Tensor l00 = at::softplus(out.select(1, 2)), l10 = out.select(1, 3), l11 = at::softplus(out.select(1, 4));
      const at::Tensor zero = at::zeros_like(l00);
      const at::Tensor l = at::stack({at::stack({l00, zero}, 1), at::stack({l10, l11}, 1)}, 1);
      sigma = at::matmul(l, l.transpose(1, 2)) + options.min_scale() * at::eye(2, values.options());
    } else {
      mu = at::sigmoid(out.select(1, 0));
      sigma = at::clamp_min(at::softplus(out.select(1, 1)), options.min_scale());
    }
  } else {
    const at::Tensor s = scores(flat).squeeze(-1).masked_fill(~valid, -std::numeric_limits<double>::infinity());
    const at::Tensor p = sparcon::torch::softmax(s, -1);  // (B, positions)
    discrete_context = at::matmul(p.unsqueeze(1), flat).squeeze(1);
    std::tie(mu, sigma) = sparcon::torch::density_from_moments(two ? p.view({b, values.size(1), values.size(2)}) : p,
                                               options.alpha(), options.moment_ridge(), lens);
  }
  last_mu_ = mu.detach();
  last_sigma_ = sigma.detach();
  at::Tensor context = sparcon::torch::continuous_attention(values, mu, sigma, c, w, options.lambda(), options.alpha(), lens);
  return discrete_context.defined() ? context + discrete_context : context;
}

}  // namespace sparcon::torch
