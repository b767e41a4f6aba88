// The math of the attention modules as functions of tensors (sparcon/torch/ops.h, last section):
// the bases, the density head, query-conditioned continuous attention and disc+cont. The C++
// modules (modules.cc) and the Python modules (python/sparcon/attention.py) hold only their
// parameters and call these, registered once as torch.ops.sparcon.<name> (register.cc). They are
// compositions of the autograd ops of continuous_ops.cc and discrete_ops.cc and of ATen
// operations, so autograd differentiates them as they are written; they run on any device where
// the ops they call do (backend.h), so their own checks accept tensors on any device.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <limits>

#include "sparcon/basis.h"
#include "map_family.h"
#include "sparcon/torch/ops.h"
#include "tensor_rows.h"

namespace sparcon::torch {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The values of a module: (B, L, E) for a 1D basis, (B, H, W, E) for a 2D one.
void check_values(const char* fn, const at::Tensor& values, bool two) {
  detail::check_floating_any_device(values, fn, "values");
  TORCH_CHECK_VALUE(values.dim() == (two ? 4 : 3), "sparcon.", fn, ": values must be ",
                    two ? "(B, H, W, E)" : "(B, L, E)", " for a ", two ? "2D" : "1D", " basis, got shape ",
                    values.sizes());
}

// (B, L) true at the positions l < lengths[b], after checking lengths; undefined without lengths
// (every position counts).
at::Tensor valid_positions(const char* fn, const at::Tensor& values, const c10::optional<at::Tensor>& lengths) {
  if (values.dim() != 3 || !lengths.has_value() || !lengths->defined()) return {};
  const std::int64_t b = values.size(0), l = values.size(1);
  TORCH_CHECK_VALUE(!at::isFloatingType(lengths->scalar_type()) && lengths->dim() == 1 && lengths->size(0) == b,
                    "sparcon.", fn, ": lengths must be an integer tensor of shape (", b, "), got ",
                    lengths->scalar_type(), " ", lengths->sizes());
  if (b > 0) {
    const std::int64_t lo = lengths->min().item<std::int64_t>(), hi = lengths->max().item<std::int64_t>();
    TORCH_CHECK_VALUE(lo >= 1 && hi <= l, "sparcon.", fn, ": lengths must lie in [1, L = ", l, "], got ",
                      *lengths);
  }
  return at::arange(l, lengths->options().dtype(at::kLong)).unsqueeze(0) < lengths->to(at::kLong).unsqueeze(1);
}

// The number of heads K of densities mu (B, Q[, K][, 2]) and a check of sigma's shape.
std::int64_t heads_of(const char* fn, const at::Tensor& values, const at::Tensor& mu, const at::Tensor& sigma,
                      bool two) {
  detail::check_floating_any_device(mu, fn, "mu");
  detail::check_floating_any_device(sigma, fn, "sigma");
  const std::int64_t point = two ? 1 : 0;  // the trailing (2) of a 2D location
  TORCH_CHECK_VALUE((mu.dim() == 2 + point || mu.dim() == 3 + point) && mu.size(0) == values.size(0) &&
                        (!two || mu.size(-1) == 2),
                    "sparcon.", fn, ": mu must be ", two ? "(B, Q, 2) or (B, Q, K, 2)" : "(B, Q) or (B, Q, K)",
                    " with B = ", values.size(0), ", got ", mu.sizes());
  std::vector<std::int64_t> want = mu.sizes().vec();
  if (two) {
    want.back() = 2;
    want.push_back(2);
  }
  TORCH_CHECK_VALUE(sigma.sizes() == at::IntArrayRef(want), "sparcon.", fn, ": sigma must be ",
                    at::IntArrayRef(want), " for mu of shape ", mu.sizes(), ", got ", sigma.sizes());
  const std::int64_t heads = mu.dim() == 3 + point ? mu.size(2) : 1;
  TORCH_CHECK_VALUE(heads >= 1 && values.size(-1) % heads == 0, "sparcon.", fn, ": the features E = ",
                    values.size(-1), " of values must be a multiple of the number of heads K = ", heads);
  return heads;
}

}  // namespace

at::Tensor alpha_entmax(const at::Tensor& x, double alpha, std::int64_t dim) {
  switch (detail::map_of_alpha(alpha)) {
    case Map::softmax: return sparcon::torch::softmax(x, dim);
    case Map::entmax15: return sparcon::torch::entmax15(x, dim);
    case Map::sparsemax: return sparcon::torch::sparsemax(x, dim);
    default: return sparcon::torch::entmax(x, alpha, dim);
  }
}

std::tuple<at::Tensor, at::Tensor> basis_1d(std::int64_t size, const std::vector<double>& sds) {
  TORCH_CHECK_VALUE(size > 0, "sparcon.basis_1d: size = ", size, " must be > 0");
  const auto basis = detail::core([&] { return GaussianBasis1D<double>::grid(static_cast<std::size_t>(size), sds); },
                                  "basis_1d");
  return {at::tensor(at::ArrayRef<double>(basis.centers)), at::tensor(at::ArrayRef<double>(basis.widths))};
}

std::tuple<at::Tensor, at::Tensor> basis_2d(std::int64_t side, double variance) {
  TORCH_CHECK_VALUE(side > 0, "sparcon.basis_2d: side = ", side, " must be > 0");
  const auto basis = detail::core(
      [&] { return GaussianBasis2D<double>::grid(static_cast<std::size_t>(side), variance); },
      "basis_2d");
  const std::int64_t n = side * side;
  return {at::tensor(at::ArrayRef<double>(basis.centers)).view({n, 2}),
          at::tensor(at::ArrayRef<double>(basis.widths)).view({n, 2, 2})};
}

std::tuple<at::Tensor, at::Tensor> density_head(const at::Tensor& raw, std::int64_t dims, std::int64_t heads,
                                                double min_scale) {
  const char* fn = "density_head";
  TORCH_CHECK_VALUE(dims == 1 || dims == 2, "sparcon.", fn, ": dims = ", dims, " must be 1 or 2");
  TORCH_CHECK_VALUE(heads >= 1, "sparcon.", fn, ": heads = ", heads, " must be >= 1");
  TORCH_CHECK_VALUE(min_scale >= 0 && std::isfinite(min_scale), "sparcon.", fn, ": min_scale = ", min_scale,
                    " must be finite and >= 0");
  detail::check_floating_any_device(raw, fn, "raw");
  const std::int64_t per_head = dims == 1 ? 2 : 5;
  TORCH_CHECK_VALUE(raw.dim() >= 1 && raw.size(-1) == heads * per_head, "sparcon.", fn,
                    ": raw must be (..., heads * ", per_head, ") = (..., ", heads * per_head, "), got ", raw.sizes());
  std::vector<std::int64_t> shape = raw.sizes().vec();
  shape.back() = heads;
  shape.push_back(per_head);
  const at::Tensor o = raw.reshape(shape);
  if (dims == 1) return {at::sigmoid(o.select(-1, 0)), at::clamp_min(at::softplus(o.select(-1, 1)), min_scale)};
  const at::Tensor l00 = at::softplus(o.select(-1, 2)), l10 = o.select(-1, 3), l11 = at::softplus(o.select(-1, 4));
  const at::Tensor zero = at::zeros_like(l00);
  const at::Tensor l = at::stack({at::stack({l00, zero}, -1), at::stack({l10, l11}, -1)}, -2);
  return {at::sigmoid(o.slice(-1, 0, 2)), at::matmul(l, l.transpose(-2, -1)) + min_scale * at::eye(2, raw.options())};
}

at::Tensor density_head_bias(std::int64_t dims, std::int64_t heads, double initial_scale) {
  const char* fn = "density_head_bias";
  TORCH_CHECK_VALUE(dims == 1 || dims == 2, "sparcon.", fn, ": dims = ", dims, " must be 1 or 2");
  TORCH_CHECK_VALUE(heads >= 1, "sparcon.", fn, ": heads = ", heads, " must be >= 1");
  TORCH_CHECK_VALUE(initial_scale > 0 && std::isfinite(initial_scale), "sparcon.", fn,
                    ": initial_scale = ", initial_scale, " must be finite and > 0");
  const std::int64_t per_head = dims == 1 ? 2 : 5;
  // 2D: the Cholesky diagonal starts at sqrt(s), so that Sigma = L L^T starts at s I.
  const double v = dims == 1 ? initial_scale : std::sqrt(initial_scale);
  const double start = v + std::log(-std::expm1(-v));  // softplus^-1(v)
  at::Tensor bias = at::zeros({heads * per_head}, at::kFloat);
  for (std::int64_t h = 0; h < heads; ++h) {
    if (dims == 1) {
      bias[h * per_head + 1].fill_(start);
    } else {
      bias[h * per_head + 2].fill_(start);
      bias[h * per_head + 4].fill_(start);
    }
  }
  return bias;
}

at::Tensor mean_value(const at::Tensor& values, const c10::optional<at::Tensor>& lengths) {
  const char* fn = "mean_value";
  detail::check_floating_any_device(values, fn, "values");
  TORCH_CHECK_VALUE(values.dim() == 3 || values.dim() == 4, "sparcon.", fn,
                    ": values must be (B, L, E) or (B, H, W, E), got shape ", values.sizes());
  TORCH_CHECK_VALUE(values.dim() == 3 || !lengths.has_value() || !lengths->defined(), "sparcon.", fn,
                    ": lengths must be None for images (B, H, W, E)");
  const at::Tensor flat = values.dim() == 4 ? values.flatten(1, 2) : values;
  at::Tensor valid = valid_positions(fn, values, lengths);
  if (!valid.defined()) valid = at::ones({flat.size(0), flat.size(1)}, values.options().dtype(at::kBool));
  // masked_fill, not a product with the mask: padding may hold anything, NaN included.
  return flat.masked_fill(~valid.unsqueeze(-1), 0).sum(1) / valid.to(values.scalar_type()).sum(1, true);
}

at::Tensor query_scores(const at::Tensor& queries, const at::Tensor& values, std::int64_t heads) {
  const char* fn = "query_scores";
  detail::check_floating_any_device(queries, fn, "queries");
  detail::check_floating_any_device(values, fn, "values");
  TORCH_CHECK_VALUE(values.dim() == 3 || values.dim() == 4, "sparcon.", fn,
                    ": values must be (B, L, E) or (B, H, W, E), got shape ", values.sizes());
  const std::int64_t b = values.size(0), e = values.size(-1);
  TORCH_CHECK_VALUE(queries.dim() == 3 && queries.size(0) == b && queries.size(2) == e, "sparcon.", fn,
                    ": queries must be (B, Q, E) = (", b, ", Q, ", e, "), got ", queries.sizes());
  TORCH_CHECK_VALUE(heads >= 1 && e % heads == 0, "sparcon.", fn, ": heads = ", heads,
                    " must be >= 1 and divide E = ", e);
  const std::int64_t q = queries.size(1), d = e / heads;
  const at::Tensor flat = values.dim() == 4 ? values.flatten(1, 2) : values;
  const at::Tensor s = at::einsum("bqkd,bpkd->bqkp", {queries.reshape({b, q, heads, d}),
                                                      flat.reshape({b, flat.size(1), heads, d})}) /
                       std::sqrt(static_cast<double>(d));
  return values.dim() == 4 ? s.reshape({b, q, heads, values.size(1), values.size(2)}) : s;
}

at::Tensor query_continuous_attention(const at::Tensor& values, const at::Tensor& mu, const at::Tensor& sigma,
                                      const at::Tensor& centers, const at::Tensor& widths, double lambda,
                                      double alpha, const c10::optional<at::Tensor>& lengths) {
  const char* fn = "query_continuous_attention";
  detail::check_floating_any_device(centers, fn, "centers");
  const bool two = centers.dim() == 2;
  check_values(fn, values, two);
  const std::int64_t heads = heads_of(fn, values, mu, sigma, two);
  const std::int64_t b = values.size(0), q = mu.size(1), e = values.size(-1), n = centers.size(0);
  if (b == 0 || q == 0) return at::zeros({b, q, e}, values.options());
  const std::vector<std::int64_t> point = two ? std::vector<std::int64_t>{-1, 2} : std::vector<std::int64_t>{-1};
  const std::vector<std::int64_t> scale =
      two ? std::vector<std::int64_t>{-1, 2, 2} : std::vector<std::int64_t>{-1};
  if (q == 1 && heads == 1)  // one density per example: the fused kernel, O(L (N + E)), no B_b
    return continuous_attention(values, mu.reshape(point), sigma.reshape(scale), centers, widths, lambda, alpha,
                                lengths)
        .unsqueeze(1);
  const at::Tensor model = value_model(values, centers, widths, lambda, lengths);  // (B, N, E)
  const at::Tensor r = continuous_expectation(mu.reshape(point), sigma.reshape(scale), centers, widths, alpha)
                           .to(model.scalar_type())
                           .view({b, q, heads, n});
  return at::einsum("bqkn,bnke->bqke", {r, model.view({b, n, heads, e / heads})}).reshape({b, q, e});
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> disc_cont_attention(
    const at::Tensor& values, const at::Tensor& scores, const at::Tensor& centers, const at::Tensor& widths,
    double lambda, double alpha, double discrete_alpha, double moment_ridge,
    const c10::optional<at::Tensor>& lengths) {
  const char* fn = "disc_cont_attention";
  detail::check_floating_any_device(centers, fn, "centers");
  detail::check_floating_any_device(scores, fn, "scores");
  const bool two = centers.dim() == 2;
  check_values(fn, values, two);
  const std::int64_t b = values.size(0), e = values.size(-1);
  const std::int64_t positions = two ? values.size(1) * values.size(2) : values.size(1);
  const bool shaped = two ? scores.dim() == 5 && scores.size(3) == values.size(1) && scores.size(4) == values.size(2)
                          : scores.dim() == 4 && scores.size(3) == values.size(1);
  TORCH_CHECK_VALUE(shaped && scores.size(0) == b, "sparcon.", fn, ": scores must be ",
                    two ? "(B, Q, K, H, W)" : "(B, Q, K, L)", " for values of shape ", values.sizes(), ", got ",
                    scores.sizes());
  const std::int64_t q = scores.size(1), heads = scores.size(2);
  TORCH_CHECK_VALUE(heads >= 1 && e % heads == 0, "sparcon.", fn, ": the features E = ", e,
                    " of values must be a multiple of the number of heads K = ", heads);
  const at::Tensor valid = valid_positions(fn, values, lengths);
  at::Tensor flat = two ? values.flatten(1, 2) : values;  // (B, positions, E)
  at::Tensor s = two ? scores.flatten(3, 4) : scores;    // (B, Q, K, positions)
  if (valid.defined()) {
    s = s.masked_fill(~valid.view({b, 1, 1, positions}), -kInf);
    flat = flat.masked_fill(~valid.unsqueeze(-1), 0);  // p = 0 there, but padding may hold NaN
  }
  const at::Tensor p = alpha_entmax(s, discrete_alpha, -1);
  const at::Tensor discrete =
      at::einsum("bqkp,bpke->bqke", {p, flat.reshape({b, positions, heads, e / heads})}).reshape({b, q, e});
  const std::int64_t rows = b * q * heads;
  c10::optional<at::Tensor> row_lengths;
  if (valid.defined()) row_lengths = lengths->to(at::kLong).repeat_interleave(q * heads);
  const auto [mu_rows, sigma_rows] =
      density_from_moments(two ? p.reshape({rows, values.size(1), values.size(2)}) : p.reshape({rows, positions}),
                           alpha, moment_ridge, row_lengths);
  const at::Tensor mu = two ? mu_rows.view({b, q, heads, 2}) : mu_rows.view({b, q, heads});
  const at::Tensor sigma = two ? sigma_rows.view({b, q, heads, 2, 2}) : sigma_rows.view({b, q, heads});
  const at::Tensor context =
      query_continuous_attention(values, mu, sigma, centers, widths, lambda, alpha, lengths) + discrete;
  return {context, mu, sigma, two ? p.view(scores.sizes()) : p};
}

}  // namespace sparcon::torch
