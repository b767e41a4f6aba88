// Device-generic Fenchel-Young losses (generic/loss_generic.h).
#include "generic/loss_generic.h"

#include <c10/util/Exception.h>

#include <limits>

namespace sparcon::torch::generic {

std::pair<at::Tensor, at::Tensor> fenchel_young_loss(Map map, const Parameter& parameter, const at::Tensor& x,
                                                     const at::Tensor& target, std::int64_t ignore_index) {
  const std::int64_t n = x.size(0), d = x.size(1);
  if (x.is_meta()) return {at::empty({n}, x.options()), at::empty_like(x)};
  const at::Tensor ignored = target == ignore_index;
  const at::Tensor bad = ~ignored & ((target < 0) | (target >= d));
  if (bad.any().item<bool>()) {
    const std::int64_t r = bad.nonzero().flatten()[0].item<std::int64_t>();
    TORCH_CHECK_VALUE(false, "sparcon::fenchel_young_loss: target[", r, "] = ", target[r].item<std::int64_t>(),
                      " is outside [0, rows.length = ", d, ") and is not ignore_index = ", ignore_index);
  }
  if (n == 0 || d == 0) return {at::zeros({n}, x.options()), at::zeros_like(x)};
  at::Tensor tau;
  const at::Tensor p = forward(map, parameter, x, &tau);
  const at::Tensor y = at::where(ignored, 0, target).unsqueeze(1);
  const at::Tensor xy = x.gather(1, y);
  const at::Tensor positive = p > 0;
  const at::Tensor alpha = map == Map::sparsemax ? at::full({n, 1}, 2.0, x.options())
                           : map == Map::entmax15 ? at::full({n, 1}, 1.5, x.options())
                           : parameter.is_per_row() ? parameter.per_row.reshape({n, 1})
                                                    : at::full({n, 1}, parameter.value, x.options());
  const at::Tensor powers = at::where(positive, at::exp(alpha * at::log(at::where(positive, p, 1.0))), 0.0).sum(-1, true);
  const at::Tensor regulariser = map == Map::normmax ? 1 - at::pow(powers, 1 / alpha)
                                                     : (1 - powers) / (alpha * (alpha - 1));
  const at::Tensor inner = at::where(positive, p * (x - xy), 0.0).sum(-1, true);
  const bool softmax_map = map == Map::softmax;
  const at::Tensor softmax_rows = softmax_map ? at::ones_like(xy, xy.options().dtype(at::kBool))
                                  : map == Map::entmax ? alpha == 1
                                                       : at::zeros_like(xy, xy.options().dtype(at::kBool));
  at::Tensor loss = at::where(softmax_rows, tau - xy, regulariser + inner).clamp_min(0);
  loss = at::where(xy == -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), loss);
  loss = at::where(at::isnan(tau), std::numeric_limits<double>::quiet_NaN(), loss);
  loss = at::where(ignored.unsqueeze(1), 0.0, loss).reshape({n});
  at::Tensor grad = p - at::zeros_like(p).scatter_(1, y, 1.0);
  grad = at::where(ignored.unsqueeze(1), 0.0, grad);
  return {loss, grad};
}

}  // namespace sparcon::torch::generic
