// sparcon/losses.h: Fenchel-Young losses of the discrete family (docs/math.md section 5).
//
// For a row x with target class y (one-hot e_y) and p = map(x):
//
//   entmax family:  loss = H^T_alpha(p) + <p - e_y, x>,  H^T_alpha(p) = (1 - sum p^alpha)/(alpha(alpha-1))
//                   (alpha = 1: H = -sum p log p, and loss = logsumexp(x) - x_y, the cross-entropy)
//   normmax:        loss = 1 - ||p||_alpha + <p - e_y, x>
//   d loss / d x  = p - e_y   (for every member)
//
// The loss is >= 0 and is 0 exactly when p = e_y; rounding can not make it negative (it is
// clamped at 0). Entries x_i = -inf have p_i = 0 and contribute 0 (0 * -inf counts as 0).
// A target whose score is -inf gets loss +inf (p can never reach e_y) and the finite gradient
// p - e_y. The budget map has no Fenchel-Young loss here (its outputs do not sum to 1).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>

#include "sparcon/discrete.h"
#include "sparcon/rows.h"

namespace sparcon {

/// How per-row losses become one number, as in torch and the `entmax` package.
enum class Reduction {
  none,  ///< keep the per-row losses
  sum,   ///< sum over rows that are not ignored
  mean,  ///< sum / number of rows that are not ignored ("elementwise_mean"); 0 when all are ignored
};

/// Per-row Fenchel-Young losses. x: rows.count x rows.length scores; target: rows.count class
/// indices in [0, rows.length), or ignore_index; loss: rows.count outputs; grad: empty (not
/// computed) or rows.size() outputs receiving d loss_r / d x_r = p_r - e_{y_r}. Rows whose
/// target equals ignore_index (any value, negative included) get loss 0 and gradient 0.
/// Throws std::invalid_argument for a target outside [0, rows.length) that is not ignored, and
/// for Map::budget.
template <std::floating_point T>
void fenchel_young_loss(const Family<T>& family, std::span<const T> x,
                        std::span<const std::int64_t> target, std::span<T> loss,
                        std::span<T> grad, Rows rows, std::int64_t ignore_index = -100,
                        Threads threads = {});

/// Reduces per-row losses: the sum, or the mean over rows whose target is not ignore_index.
/// With Reduction::none the per-row losses are the result; this then returns their sum.
template <std::floating_point T>
T reduce_loss(std::span<const T> loss, std::span<const std::int64_t> target, Reduction reduction,
              std::int64_t ignore_index = -100);

/// The factor that turns per-row gradients into gradients of the reduced loss:
/// 1 for none and sum, 1 / (rows not ignored) for mean (0 when every row is ignored).
template <std::floating_point T>
T reduction_scale(std::span<const std::int64_t> target, Reduction reduction,
                  std::int64_t ignore_index = -100);

}  // namespace sparcon
