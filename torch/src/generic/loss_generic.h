// The device-generic kernel of the Fenchel-Young losses (backend.h; the core's sparcon/losses.h):
// ATen tensor operations only, on any device.
#pragma once

#include <ATen/ATen.h>

#include <utility>

#include "generic/discrete_generic.h"

namespace sparcon::torch::generic {

/// Per-row Fenchel-Young loss of `map` (softmax, sparsemax, entmax15, entmax, normmax; the
/// parameter checked) and its gradient: x (n, d) float or double, target (n) int64.
///   softmax (and entmax with alpha = 1): L = logsumexp(x) - x_y;
///   otherwise L = Omega(p) + <p, x - x_y>, p = map(x), Omega the entmax regulariser
///   (1 - sum p^alpha)/(alpha (alpha - 1)) or normmax's 1 - ||p||_alpha; clamped at 0.
/// A row with NaN gets NaN, x_y = -inf gives +inf; rows whose target is ignore_index get 0 and
/// a zero gradient. grad = p - e_y. A target outside [0, d) that is not ignore_index raises the
/// core's message ("sparcon::fenchel_young_loss: target[r] = t is outside [0, rows.length = d) and
/// is not ignore_index = i"). Returns (loss (n), grad (n, d)).
std::pair<at::Tensor, at::Tensor> fenchel_young_loss(Map map, const Parameter& parameter, const at::Tensor& x,
                                                     const at::Tensor& target, std::int64_t ignore_index);

}  // namespace sparcon::torch::generic
