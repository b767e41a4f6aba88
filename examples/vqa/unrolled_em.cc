// Unrolled, differentiable weighted EM on attention maps (unrolled_em.h).
#include "unrolled_em.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vqa {
namespace {

// The cell centres (H W, 2) of an H x W grid, row-major.
at::Tensor cell_centres(std::int64_t h, std::int64_t w, const at::TensorOptions& options) {
  const at::Tensor r = (torch::arange(h, options) + 0.5) / static_cast<double>(h);
  const at::Tensor c = (torch::arange(w, options) + 0.5) / static_cast<double>(w);
  return torch::stack({r.unsqueeze(1).expand({h, w}), c.unsqueeze(0).expand({h, w})}, -1).reshape({h * w, 2});
}

// log N(t_l; mu_k, Sigma_k) for t (L, 2), mu (Q, K, 2), sigma (Q, K, 2, 2): (Q, L, K).
at::Tensor log_gaussian(const at::Tensor& t, const at::Tensor& mu, const at::Tensor& sigma) {
  const at::Tensor s00 = sigma.select(-1, 0).select(-1, 0), s01 = sigma.select(-1, 1).select(-1, 0),
                   s11 = sigma.select(-1, 1).select(-1, 1);
  const at::Tensor det = s00 * s11 - s01 * s01;                              // (Q, K)
  const at::Tensor d = t.unsqueeze(0).unsqueeze(2) - mu.unsqueeze(1);         // (Q, L, K, 2)
  const at::Tensor d0 = d.select(-1, 0), d1 = d.select(-1, 1);
  const at::Tensor q = (s11.unsqueeze(1) * d0 * d0 - 2 * s01.unsqueeze(1) * d0 * d1 + s00.unsqueeze(1) * d1 * d1) /
                       det.unsqueeze(1);
  return -0.5 * q - std::log(2 * M_PI) - 0.5 * torch::log(det).unsqueeze(1);
}

}  // namespace

GaussianMixture unrolled_em(const at::Tensor& maps, int components, int steps, double ridge) {
  if (maps.dim() != 3)
    throw std::invalid_argument("unrolled_em: maps must be (Q, H, W), got " + std::to_string(maps.dim()) + " dimensions");
  if (components < 1 || components > 8)
    throw std::invalid_argument("unrolled_em: components = " + std::to_string(components) + ", expected 1..8");
  if (steps < 0) throw std::invalid_argument("unrolled_em: steps = " + std::to_string(steps) + ", expected >= 0");
  if (!(ridge > 0)) throw std::invalid_argument("unrolled_em: ridge = " + std::to_string(ridge) + ", expected > 0");
  const std::int64_t q = maps.size(0), h = maps.size(1), w = maps.size(2), k = components;
  const at::Tensor t = cell_centres(h, w, maps.options().requires_grad(false));  // (L, 2)
  const at::Tensor p = maps.reshape({q, h * w}) / maps.reshape({q, h * w}).sum(1, true);  // (Q, L)
  const at::Tensor eye = torch::eye(2, t.options());

  // The start: the means are cells picked from the detached maps (piecewise constant in the
  // maps), the covariances follow the maps' spread (differentiable).
  GaussianMixture m;
  const at::Tensor mean = torch::matmul(p, t);                                                       // (Q, 2)
  const at::Tensor trace = (p.unsqueeze(2) * (t.unsqueeze(0) - mean.unsqueeze(1)).pow(2)).sum({1, 2});  // (Q)
  {
    torch::NoGradGuard no_grad;
    const at::Tensor pd = p.detach();
    std::vector<at::Tensor> mu{t.index_select(0, pd.argmax(1))};                  // (Q, 2) each
    at::Tensor nearest = (t.unsqueeze(0) - mu[0].unsqueeze(1)).pow(2).sum(2);     // (Q, L)
    for (std::int64_t j = 1; j < k; ++j) {
      mu.push_back(t.index_select(0, (pd * nearest).argmax(1)));  // argmax: the first maximum
      nearest = torch::minimum(nearest, (t.unsqueeze(0) - mu.back().unsqueeze(1)).pow(2).sum(2));
    }
    m.mean = torch::stack(mu, 1);                                                 // (Q, K, 2)
    m.weight = torch::full({q, k}, 1.0 / static_cast<double>(k), p.options().requires_grad(false));
  }
  const at::Tensor var = trace / static_cast<double>(2 * k) + ridge;
  m.covariance = (var.view({q, 1, 1, 1}) * eye).expand({q, k, 2, 2});
  for (int step = 0; step < steps; ++step) {
    const at::Tensor g = torch::softmax(torch::log(m.weight.clamp_min(1e-12)).unsqueeze(1) + log_gaussian(t, m.mean, m.covariance), 2);
    const at::Tensor a = p.unsqueeze(2) * g;                                  // (Q, L, K)
    m.weight = a.sum(1);                                                      // (Q, K)
    const at::Tensor denominator = m.weight.clamp_min(1e-12);
    m.mean = torch::einsum("qlk,ld->qkd", {a, t}) / denominator.unsqueeze(2);  // (Q, K, 2)
    const at::Tensor d = t.unsqueeze(0).unsqueeze(2) - m.mean.unsqueeze(1);    // (Q, L, K, 2)
    m.covariance = torch::einsum("qlk,qlkd,qlke->qkde", {a, d, d}) / denominator.view({q, k, 1, 1}) + ridge * eye;
  }
  return m;
}

}  // namespace vqa
