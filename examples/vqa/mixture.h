// A mixture of K 2D Gaussians fitted to a discrete attention map by weighted EM (shared/MATH.md
// section 5), torch-free: the reference for the model's unrolled, differentiable EM of the
// multimodal attention variant, and a way to read two-item attention maps in the report.
//
// The map is a rows x cols grid of weights p_l >= 0 over the unit square, cell l = (r, c)
// centred at t_l = ((r + 1/2) / rows, (c + 1/2) / cols) (box.h). With the weights normalised to
// sum to 1, each step computes
//   responsibilities  g_lk = pi_k N(t_l; mu_k, Sigma_k) / sum_j pi_j N(t_l; mu_j, Sigma_j),
//   pi_k = sum_l p_l g_lk,  mu_k = sum_l p_l g_lk t_l / pi_k,
//   Sigma_k = sum_l p_l g_lk (t_l - mu_k)(t_l - mu_k)^T / pi_k + ridge I.
// Start (deterministic, no seed): mu_1 = the heaviest cell's centre; mu_k = the cell maximising
// p_l min_{j<k} |t_l - mu_j|^2 (weighted farthest point, ties to the lowest index); Sigma_k =
// (1/(2K)) trace(C) I + ridge I with C the map's covariance; pi_k = 1/K. A component whose pi_k
// falls below 1e-12 keeps its previous mean and covariance.
#pragma once

#include <array>
#include <vector>

#include "kit/matrix.h"

namespace vqa {

struct Component {
  double weight = 0;                      ///< pi_k
  std::array<double, 2> mean{};           ///< mu_k = (t0, t1)
  std::array<double, 4> covariance{};     ///< Sigma_k, row-major {s00, s01, s10, s11}
};

struct EmOptions {
  int components = 2;   ///< K, 1..8
  int steps = 30;       ///< EM steps after the start
  double ridge = 1e-4;  ///< added to the covariances' diagonal (a cell of the 14 x 14 grid has variance 4.3e-4)
};

/// The start and options.steps EM steps (see above); components by decreasing weight. Throws
/// std::invalid_argument for an empty or non-finite map, a negative weight, weights summing to
/// 0, K outside 1..8 or more than the cells with weight > 0, steps < 0, or ridge <= 0.
std::vector<Component> fit_mixture(const kit::Matrix& weights, const EmOptions& options = {});

/// sum_l p_l log sum_k pi_k N(t_l; mu_k, Sigma_k) with p normalised: the objective EM does not
/// decrease.
double weighted_log_likelihood(const kit::Matrix& weights, const std::vector<Component>& components);

}  // namespace vqa
