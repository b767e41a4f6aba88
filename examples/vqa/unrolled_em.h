// The multimodal attention's mixture: K 2D Gaussians fitted to a batch of discrete attention maps
// by a few weighted-EM steps written in torch operations, so that autograd differentiates the
// fitted (pi, mu, Sigma) with respect to the maps (shared/MATH.md section 5). The same start and
// steps as the torch-free reference vqa::fit_mixture (mixture.h), which the tests hold it to:
//
//   map p (Q, H, W) over the cells t_l = ((r + 1/2) / H, (c + 1/2) / W), normalised per map;
//   start (no gradient): mu_1 the heaviest cell, mu_k the cell maximising p_l min_{j<k} |t_l - mu_j|^2,
//     Sigma_k = (trace(C) / (2K) + ridge) I with C the map's covariance, pi_k = 1/K;
//   each step: g_lk = softmax_k(log pi_k + log N(t_l; mu_k, Sigma_k)),
//     pi_k = sum_l p_l g_lk,  mu_k = sum_l p_l g_lk t_l / pi_k,
//     Sigma_k = sum_l p_l g_lk (t_l - mu_k)(t_l - mu_k)^T / pi_k + ridge I.
// (fit_mixture keeps a component whose pi_k < 1e-12 where it was; here its pi_k is floored at
// 1e-12 in the divisions instead, which differs only for such components.)
#pragma once

#include <torch/torch.h>

namespace vqa {

struct GaussianMixture {
  at::Tensor weight;      ///< pi (Q, K), each row sums to 1
  at::Tensor mean;        ///< mu (Q, K, 2) = (t0, t1)
  at::Tensor covariance;  ///< Sigma (Q, K, 2, 2), symmetric positive definite
};

/// The mixture of `components` Gaussians after `steps` EM steps on maps (Q, H, W) of weights
/// >= 0 (each summing to > 0; float or double). Throws std::invalid_argument naming the argument
/// for a map tensor that is not 3D, components outside 1..8, steps < 0 or ridge <= 0.
GaussianMixture unrolled_em(const at::Tensor& maps, int components, int steps, double ridge);

}  // namespace vqa
