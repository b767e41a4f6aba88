// Fenchel-Young losses with autograd (sparcon/torch/ops.h).
#include <torch/autograd.h>

#include <optional>

#include "backend.h"
#include "generic/loss_generic.h"
#include "map_family.h"
#include "sparcon/losses.h"
#include "sparcon/torch/ops.h"
#include "tensor_rows.h"

namespace sparcon::torch {
namespace detail {
namespace {

// The map of a loss by its name; per_row: the parameter is one value per row.
std::optional<Map> loss_map(const std::string& map, bool per_row) {
  const std::optional<Map> m = map_named(map);
  TORCH_CHECK_VALUE(!m || named(*m).has_parameter || !per_row, "sparcon.fenchel_young_loss: map = '", map,
                    "' takes no parameter, got one per row");
  TORCH_CHECK_VALUE(m && *m != Map::budget, "sparcon.fenchel_young_loss: map = '", map,
                    "' must be one of softmax, sparsemax, entmax15, entmax, normmax");
  return m;
}

// The map's family with the number `parameter`, or one alpha per row (per_row not empty).
template <class T>
Family<T> loss_family(const std::string& map, double parameter, std::span<const T> per_row) {
  return family_of<T>(*loss_map(map, !per_row.empty()), parameter, per_row);
}

class FenchelYoungLoss : public ::torch::autograd::Function<FenchelYoungLoss> {
 public:
  static at::Tensor forward(::torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& target, const std::string& map, double parameter,
                            const at::Tensor& per_row_parameter, std::int64_t ignore_index) {
    const char* fn = "fenchel_young_loss";
    TORCH_CHECK_VALUE(x.dim() == 2, "sparcon.", fn, ": x must be 2-D (n, d), got shape ", x.sizes());
    TORCH_CHECK_VALUE(target.dim() == 1 && target.size(0) == x.size(0), "sparcon.", fn,
                      ": target must have shape (", x.size(0), "), got ", target.sizes());
    TORCH_CHECK_VALUE(!at::isFloatingType(target.scalar_type()), "sparcon.", fn,
                      ": target must hold integer class indices, got ", target.scalar_type());
    const bool generic = use_generic(x);
    RowView view = to_rows(x, -1, fn, "x", generic);
    // One parameter per row, or an empty tensor for the number (torch 1.13's autograd::Function
    // takes no undefined tensors).
    const bool per_row = per_row_parameter.numel() > 0;
    TORCH_CHECK_VALUE(!per_row || per_row_parameter.numel() == x.size(0), "sparcon.", fn, ": parameter of shape ",
                      per_row_parameter.sizes(), " must hold one value per row of x (", x.size(0), ")");
    const at::Tensor parameters =
        per_row_parameter.reshape(-1).to(view.rows.device(), view.rows.scalar_type()).contiguous();
    at::Tensor y = target.to(view.rows.device(), at::kLong).contiguous();
    if (generic) {
      // The core's checks in its order: the map, the parameter, the targets.
      const std::optional<Map> m = loss_map(map, per_row);
      const generic::Parameter param{parameter, per_row ? parameters.reshape({-1, 1}) : at::Tensor()};
      generic::check_parameter(nullptr, fn, *m, param, x.size(0), x.size(1));
      auto [loss, grad] = generic::fenchel_young_loss(*m, param, view.rows, y, ignore_index);
      ctx->save_for_backward({grad});
      return loss.to(x.scalar_type());
    }
    at::Tensor loss = at::empty({x.size(0)}, view.rows.options());
    at::Tensor grad = at::empty_like(view.rows);
    with_type(view.rows.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        const auto family = loss_family<T>(map, parameter, per_row ? const_span_of<T>(parameters) : std::span<const T>());
        sparcon::fenchel_young_loss(family, const_span_of<T>(view.rows),
                                    const_span_of<std::int64_t>(y), span_of<T>(loss), span_of<T>(grad),
                                    view.shape, ignore_index, threads());
      });
    });
    ctx->save_for_backward({grad});
    return loss.to(x.scalar_type());
  }

  static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                   ::torch::autograd::variable_list grads) {
    const at::Tensor grad = ctx->get_saved_variables()[0];
    const at::Tensor dx = grad * grads[0].to(grad.scalar_type()).unsqueeze(1);
    return {dx.to(grads[0].scalar_type()), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace
}  // namespace detail

at::Tensor fenchel_young_loss(const at::Tensor& x, const at::Tensor& target, const std::string& map,
                              double parameter, std::int64_t ignore_index) {
  return detail::FenchelYoungLoss::apply(x, target, map, parameter, at::empty({0}, x.options()), ignore_index);
}

at::Tensor fenchel_young_loss(const at::Tensor& x, const at::Tensor& target, const std::string& map,
                              const at::Tensor& parameter, std::int64_t ignore_index) {
  if (detail::use_generic(x))
    detail::check_floating_any_device(parameter, "fenchel_young_loss", "parameter");
  else
    detail::check_floating(parameter, "fenchel_young_loss", "parameter");
  TORCH_CHECK_VALUE(parameter.numel() > 0, "sparcon.fenchel_young_loss: parameter is an empty tensor");
  return detail::FenchelYoungLoss::apply(x, target, map, 0.0, parameter.detach(), ignore_index);
}

}  // namespace sparcon::torch
