// Fenchel-Young losses with autograd (sparcon/torch/ops.h).
#include <torch/autograd.h>

#include "sparcon/losses.h"
#include "sparcon/torch/ops.h"
#include "tensor_rows.h"

namespace sparcon::torch {
namespace detail {
namespace {

template <class T>
Family<T> loss_family(const std::string& map, double parameter) {
  if (map == "softmax") return Family<T>::softmax();
  if (map == "sparsemax") return Family<T>::sparsemax();
  if (map == "entmax15") return Family<T>::entmax15();
  if (map == "entmax") return Family<T>::entmax(static_cast<T>(parameter));
  if (map == "normmax") return Family<T>::normmax(static_cast<T>(parameter));
  TORCH_CHECK_VALUE(false, "sparcon.fenchel_young_loss: map = '", map,
                    "' must be one of softmax, sparsemax, entmax15, entmax, normmax");
}

class FenchelYoungLoss : public ::torch::autograd::Function<FenchelYoungLoss> {
 public:
  static at::Tensor forward(::torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& target, const std::string& map, double parameter,
                            std::int64_t ignore_index) {
    const char* fn = "fenchel_young_loss";
    TORCH_CHECK_VALUE(x.dim() == 2, "sparcon.", fn, ": x must be 2-D (n, d), got shape ", x.sizes());
    TORCH_CHECK_VALUE(target.dim() == 1 && target.size(0) == x.size(0), "sparcon.", fn,
                      ": target must have shape (", x.size(0), "), got ", target.sizes());
    TORCH_CHECK_VALUE(!at::isFloatingType(target.scalar_type()), "sparcon.", fn,
                      ": target must hold integer class indices, got ", target.scalar_type());
    RowView view = to_rows(x, -1, fn);
    at::Tensor y = target.to(at::kLong).contiguous();
    at::Tensor loss = at::empty({x.size(0)}, view.rows.options());
    at::Tensor grad = at::empty_like(view.rows);
    with_type(view.rows.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        sparcon::fenchel_young_loss(loss_family<T>(map, parameter), const_span_of<T>(view.rows),
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
    return {dx.to(grads[0].scalar_type()), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace
}  // namespace detail

at::Tensor fenchel_young_loss(const at::Tensor& x, const at::Tensor& target, const std::string& map,
                              double parameter, std::int64_t ignore_index) {
  return detail::FenchelYoungLoss::apply(x, target, map, parameter, ignore_index);
}

}  // namespace sparcon::torch
