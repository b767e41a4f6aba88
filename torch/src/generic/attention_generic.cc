// Device-generic continuous attention (generic/attention_generic.h).
#include "generic/attention_generic.h"

#include <cmath>
#include <numbers>

namespace sparcon::torch::generic {
namespace {

// R of docs/math.md section 6 (the core's beta_gaussian_radius).
double radius(double alpha, int dimension) {
  const double a1 = alpha - 1, q = alpha / a1, d = dimension;
  const double log_inner = std::lgamma(d / 2 + q) - std::lgamma(q) - (d / 2) * std::log(std::numbers::pi) +
                           std::log(2 / a1) / a1;
  return std::exp(log_inner * a1 / (2 + a1 * d));
}

}  // namespace

at::Tensor value_model(const at::Tensor& values, const at::Tensor& g) {
  return g.dim() == 3 ? at::einsum("bln,ble->bne", {g, values}) : at::einsum("pn,bpe->bne", {g, values});
}

at::Tensor attention_context(const at::Tensor& values, const at::Tensor& g, const at::Tensor& r) {
  const at::Tensor w = g.dim() == 3 ? at::einsum("bln,bn->bl", {g, r}) : at::matmul(r, g.t());
  return at::einsum("bl,ble->be", {w, values});
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> moments_1d(const at::Tensor& p, const at::Tensor& lengths, double alpha,
                                                          double ridge) {
  const std::int64_t L = p.size(1);
  const at::Tensor l = at::arange(L, p.options()).unsqueeze(0);
  const at::Tensor size = lengths.to(p.scalar_type()).unsqueeze(1);
  const at::Tensor t = (l + 0.5) / size;
  const at::Tensor q = at::where(l < size, p, at::zeros_like(p));
  const at::Tensor m1 = (q * t).sum(1), m2 = (q * t * t).sum(1);
  const at::Tensor v = m2 - m1 * m1 + ridge;
  if (alpha == 1) return {m1, v, v};
  const double R = radius(alpha, 1);
  return {m1, at::pow(v * (1 + 2 * alpha / (alpha - 1)) / (R * R), (alpha + 1) / 2), v};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> moments_2d(const at::Tensor& p, double alpha, double ridge) {
  const std::int64_t H = p.size(1), W = p.size(2);
  const at::Tensor ti = ((at::arange(H, p.options()) + 0.5) / static_cast<double>(H)).view({1, H, 1});
  const at::Tensor tk = ((at::arange(W, p.options()) + 0.5) / static_cast<double>(W)).view({1, 1, W});
  const at::Tensor mi = (p * ti).sum({1, 2}), mk = (p * tk).sum({1, 2});
  const at::Tensor cii = (p * ti * ti).sum({1, 2}) - mi * mi + ridge;
  const at::Tensor cik = (p * ti * tk).sum({1, 2}) - mi * mk;
  const at::Tensor ckk = (p * tk * tk).sum({1, 2}) - mk * mk + ridge;
  const at::Tensor mu = at::stack({mi, mk}, 1);
  const at::Tensor c = at::stack({at::stack({cii, cik}, -1), at::stack({cik, ckk}, -1)}, -2);
  if (alpha == 1) return {mu, c, c};
  const double R = radius(alpha, 2), kappa = R * R / (2 + 2 * alpha / (alpha - 1)), gamma = (alpha - 1) / (2 * alpha);
  const at::Tensor det_c = cii * ckk - cik * cik;
  const at::Tensor det_sigma = at::pow(det_c / (kappa * kappa), alpha);
  return {mu, c * (at::pow(det_sigma, gamma) / kappa).view({-1, 1, 1}), c};
}

}  // namespace sparcon::torch::generic
