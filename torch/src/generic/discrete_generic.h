// The device-generic kernels of the discrete maps (backend.h): the same maps, thresholds and
// backward formulas as the core (sparcon/discrete.h, docs/math.md sections 1-2), written only with
// ATen tensor operations over the whole batch, so that they run on any device (CUDA; on meta
// tensors they give shapes only).
//
// Rows: a tensor (..., n) in float or double (the torch layer converts half and bfloat16), the
// map's axis last, on any device. A parameter per row is a tensor (..., 1) of the same dtype and
// device. Conventions of the core: an entry -inf gets p = 0 and gradient 0; a row of -inf only
// gets p = 0 (tau = +inf); a row holding NaN or +inf gets p = NaN on the whole row (tau = NaN).
//
// Thresholds are exact as the core's: per row, bracketed Newton steps on the row's threshold
// equation, all rows of the batch at once (for sparsemax they are Michelot's steps and end on the
// exact threshold of the support; entmax-1.5 finishes with the closed form on the identified
// support; other alpha converge until the row's sum is 1 to its rounding), then one write pass.
// Once the rows' supports are small, the steps run on each row's largest entries only (topk of
// the most any row keeps at a lower bound of its threshold). Float rows are solved in float
// (alpha > 2: in double, where p = u^k is ill-conditioned at the support's edge): they agree
// with the core, which solves in double, to about 2e-6 (1e-5 for alpha within 0.01 of 1, where
// p = u^(1/(alpha-1)) amplifies the threshold's rounding); double rows to 1e-12.
#pragma once

#include <ATen/ATen.h>

#include "sparcon/discrete.h"

namespace sparcon::torch::generic {

/// A map's parameter (alpha, or the budget): the number `value`, or one value per row when
/// `per_row` is defined and not empty (shape (..., 1) of the rows).
struct Parameter {
  double value = 0;
  at::Tensor per_row;

  [[nodiscard]] bool is_per_row() const { return per_row.defined() && per_row.numel() > 0; }
};

/// Throws c10::ValueError, with the core's message ("sparcon::<function>: alpha = 0 (row 0) must
/// be a finite number > 0", prefixed by "sparcon.<op>: " when op is not null), unless the
/// parameter is valid for `map` on `count` rows of `length` entries (checks nothing when
/// count = 0, as the core).
void check_parameter(const char* op, const char* function, Map map, const Parameter& parameter,
                     std::int64_t count, std::int64_t length);

/// p = map(x) along the last axis of rows (..., n). With tau not null, *tau gets each row's
/// threshold (..., 1) in the unshifted form of sparcon::forward (softmax: logsumexp(x);
/// entmax: p_i = [(alpha-1) x_i - tau]_+^(1/(alpha-1)); normmax: p_i ~ [x_i - tau]_+^(1/(alpha-1));
/// budget: p_i = clip(x_i - tau, 0, 1)). The parameter must have been checked.
at::Tensor forward(Map map, const Parameter& parameter, const at::Tensor& rows, at::Tensor* tau = nullptr);

/// dx = J(x)^T g from p = map(x) and g (both (..., n)): for every map but normmax,
///   dx = s (g - sum s g / sum s),  s = p^(2-alpha) on the support (softmax: p; sparsemax: 1[p > 0];
///   entmax-1.5: sqrt p; budget: 1[0 < p < 1]); sum s = 0 gives dx = 0.
/// normmax: dx = C [s (g - A) - p B], s = p^(2-alpha), A = p.g, B = s.g - A sum s,
///   C = ||p||_alpha^(alpha-1) / (alpha-1).
at::Tensor backward(Map map, const Parameter& parameter, const at::Tensor& p, const at::Tensor& g);

/// d<g, entmax_alpha(x)>/d alpha per row, (..., 1), alpha (..., 1) one value per row, the
/// formulas of sparcon::entmax_alpha_backward: the direct form for |alpha - 1| >= 1/4, the
/// rearrangement in d = alpha - 1 below, the limit at alpha = 1.
at::Tensor entmax_alpha_backward(const at::Tensor& p, const at::Tensor& g, const at::Tensor& alpha);

}  // namespace sparcon::torch::generic
