// The discrete maps with autograd (sparcon/torch/ops.h): one autograd Function for the whole
// family, the map and its parameter passed as arguments.
#include <torch/autograd.h>

#include <limits>

#include "backend.h"
#include "generic/discrete_generic.h"
#include "map_family.h"
#include "sparcon/discrete.h"
#include "sparcon/torch/ops.h"
#include "tensor_rows.h"

namespace sparcon::torch {
namespace detail {
namespace {

// A tensor parameter (alpha, or the budget) broadcast to one value per row of the RowView of
// x (size 1 along dim); fn and name for messages.
at::Tensor alpha_rows(const at::Tensor& alpha, const at::Tensor& x, const RowView& view, const char* fn,
                      const char* name) {
  std::vector<std::int64_t> shape = x.sizes().vec();
  shape[static_cast<std::size_t>(view.dim)] = 1;
  TORCH_CHECK_VALUE(alpha.dim() <= x.dim(), "sparcon.", fn, ": ", name, " of shape ", alpha.sizes(),
                    " has more dimensions than x of shape ", x.sizes());
  at::Tensor expanded;
  try {
    expanded = alpha.expand(shape);
  } catch (const c10::Error&) {
    TORCH_CHECK_VALUE(false, "sparcon.", fn, ": ", name, " of shape ", alpha.sizes(), " must broadcast to ",
                      at::IntArrayRef(shape), " (the shape of x with size 1 along dim)");
  }
  return expanded.movedim(view.dim, -1).to(view.rows.device(), view.rows.scalar_type()).contiguous();
}

// p = map(x) along dim, in the row layout of `view`; per_row holds the per-row alpha of a
// tensor alpha (empty when the parameter is the number `parameter`).
struct MapRows {
  RowView view;
  at::Tensor p, per_row;
};

MapRows map_rows(const at::Tensor& x, const at::Tensor& alpha, std::int64_t map, double parameter,
                 std::int64_t dim) {
  const char* fn = map_name(static_cast<Map>(map));
  const bool generic = use_generic(x);
  MapRows out{to_rows(x, dim, fn, "x", generic), {}, {}};
  const bool tensor_alpha = alpha.defined() && alpha.numel() > 0;
  if (tensor_alpha)
    out.per_row = alpha_rows(alpha, x, out.view, fn, static_cast<Map>(map) == Map::budget ? "budget" : "alpha");
  if (generic) {
    const generic::Parameter param{parameter, out.per_row};
    generic::check_parameter(fn, "forward", static_cast<Map>(map), param,
                             static_cast<std::int64_t>(out.view.shape.count),
                             static_cast<std::int64_t>(out.view.shape.length));
    out.p = generic::forward(static_cast<Map>(map), param, out.view.rows);
    return out;
  }
  out.p = at::empty_like(out.view.rows);
  with_type(out.view.rows.scalar_type(), [&](auto t) {
    using T = decltype(t);
    const auto fam = family_of<T>(static_cast<Map>(map), parameter,
                                  tensor_alpha ? const_span_of<T>(out.per_row) : std::span<const T>());
    core([&] { sparcon::forward(fam, const_span_of<T>(out.view.rows), span_of<T>(out.p), out.view.shape, threads()); },
         fn);
  });
  return out;
}

// The backward of the alpha-entmax maps in ATen operations, so that autograd can differentiate
// it again (create_graph=True): dx = s (g - q), q = sum s g / sum s, with s = p^(2 - alpha) on
// the support (softmax: s = p; sparsemax: s = 1[p > 0]; entmax-1.5: s = sqrt(p)). The power
// goes through where(p > 0, p, 1) so that its derivative is finite where p = 0. p and g are
// in the row layout (the map's axis last).
at::Tensor differentiable_backward(const at::Tensor& p, const at::Tensor& g, double alpha) {
  const at::Tensor inside = p > 0;
  const at::Tensor safe = at::where(inside, p, at::ones_like(p));
  const at::Tensor s = alpha == 1 ? p
                       : alpha == 2 ? inside.to(p.scalar_type())
                                    : at::where(inside, alpha == 1.5 ? safe.sqrt() : safe.pow(2 - alpha),
                                                at::zeros_like(p));
  const at::Tensor q = (s * g).sum(-1, true) / s.sum(-1, true).clamp_min(std::numeric_limits<double>::min());
  return s * (g - q);
}

class DiscreteMap : public ::torch::autograd::Function<DiscreteMap> {
 public:
  static at::Tensor forward(::torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& alpha, std::int64_t map, double parameter,
                            std::int64_t dim) {
    MapRows r = map_rows(x, alpha, map, parameter, dim);
    at::Tensor out = from_rows(r.p, r.view);
    // alpha is an empty tensor when the parameter is a shared number (torch 1.13's
    // autograd::Function cannot take undefined tensors); so is the saved per_row. p in the row
    // layout serves the core's backward; the output itself (which autograd links to this
    // node) the differentiable backward of create_graph=True.
    ctx->save_for_backward({r.p, r.per_row.defined() ? r.per_row : at::empty({0}, r.p.options()), out});
    ctx->saved_data["map_parameter_dim"] =
        std::vector<double>{static_cast<double>(map), parameter, static_cast<double>(r.view.dim)};
    if (r.per_row.defined()) {
      ctx->saved_data["alpha_sizes"] = alpha.sizes().vec();
      ctx->saved_data["alpha_device"] = alpha.device().str();  // the generic path moved it to x's
    }
    return out;
  }

  static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                   ::torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& p = saved[0];
    const at::Tensor& per_row = saved[1];
    const auto args = ctx->saved_data["map_parameter_dim"].toDoubleVector();
    const auto map = static_cast<Map>(args[0]);
    const double parameter = args[1];
    const auto dim = static_cast<std::int64_t>(args[2]);
    const bool generic = use_generic(p);
    RowView view = to_rows(grads[0], dim, "discrete map backward", "grad", generic);
    at::Tensor g = view.rows.to(p.scalar_type());
    // create_graph=True: the gradient must itself be differentiable, which the core's backward
    // is not. The alpha-entmax maps with a number alpha have it in ATen operations; the others
    // refuse rather than give a silently wrong (zero) second derivative.
    if (::torch::autograd::GradMode::is_enabled()) {
      const bool entmax_family = map == Map::softmax || map == Map::sparsemax || map == Map::entmax15 ||
                                 (map == Map::entmax && per_row.numel() == 0);
      TORCH_CHECK_VALUE(entmax_family, "sparcon.", map_name(map),
                        ": double backward (create_graph=True) is implemented for softmax, sparsemax, entmax15 "
                        "and entmax with a number alpha, not for ",
                        map == Map::entmax ? "a tensor alpha" : map_name(map));
      const double alpha = map == Map::softmax ? 1 : map == Map::sparsemax ? 2 : map == Map::entmax15 ? 1.5 : parameter;
      const at::Tensor p_linked = to_rows(saved[2], dim, "discrete map backward", "p", generic).rows.to(p.scalar_type());
      return {from_rows(differentiable_backward(p_linked, g, alpha), view), at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor()};
    }
    // Only the gradients autograd asks for: a tensor alpha that does not require grad (a fixed
    // alpha per head) costs no alpha gradient (a power and a log per entry of the support), and
    // a learned alpha with x fixed no dx.
    const bool want_dx = ctx->needs_input_grad(0);
    const bool want_dalpha = ctx->needs_input_grad(1) && per_row.numel() > 0 && map == Map::entmax;
    at::Tensor dx;
    at::Tensor dalpha;
    if (generic) {
      if (want_dx) dx = generic::backward(map, {parameter, per_row}, p, g);
      if (want_dalpha) dalpha = generic::entmax_alpha_backward(p, g, per_row);
    } else {
      with_type(p.scalar_type(), [&](auto t) {
        using T = decltype(t);
        const auto fam = family_of<T>(map, parameter,
                                      per_row.numel() > 0 ? const_span_of<T>(per_row) : std::span<const T>());
        if (want_dx) {
          dx = at::empty_like(p);
          core([&] {
            sparcon::backward(fam, const_span_of<T>(p), const_span_of<T>(g), span_of<T>(dx),
                              view.shape, threads());
          });
        }
        if (want_dalpha) {  // normmax and budget: no gradient to the parameter
          dalpha = at::empty_like(per_row);
          core([&] {
            sparcon::entmax_alpha_backward(const_span_of<T>(p), const_span_of<T>(g), span_of<T>(dalpha),
                                           view.shape, PerRow<T>(const_span_of<T>(per_row)), threads());
          });
        }
      });
    }
    at::Tensor dx_out = dx.defined() ? from_rows(dx, view) : at::Tensor();
    at::Tensor dalpha_out;
    if (dalpha.defined()) {
      // Back to the broadcast shape (size 1 along dim), then summed to alpha's own shape.
      const auto sizes = ctx->saved_data["alpha_sizes"].toIntVector();
      dalpha_out = dalpha.movedim(-1, dim).sum_to_size(sizes);
      const c10::Device device(ctx->saved_data["alpha_device"].toStringRef());
      if (!dalpha_out.is_meta() && dalpha_out.device() != device) dalpha_out = dalpha_out.to(device);
    }
    return {dx_out, dalpha_out, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// Through the autograd Function only when a graph is recorded: its node, saved state and
// output wrapping cost more than the map itself on small inputs.
at::Tensor apply(const at::Tensor& x, const at::Tensor& alpha, Map map, double parameter, std::int64_t dim) {
  const bool record = ::torch::autograd::GradMode::is_enabled() &&
                      (x.requires_grad() || (alpha.defined() && alpha.requires_grad()));
  if (!record) {
    const MapRows r = map_rows(x, alpha, static_cast<std::int64_t>(map), parameter, dim);
    return from_rows(r.p, r.view);
  }
  return DiscreteMap::apply(x, alpha.defined() ? alpha : at::empty({0}, x.options()),
                            static_cast<std::int64_t>(map), parameter, dim);
}

}  // namespace

// A tensor parameter: floating, on any device when x runs the generic kernels (it is moved to
// x's device), on the CPU otherwise.
void check_parameter_tensor(const at::Tensor& x, const at::Tensor& parameter, const char* fn, const char* name) {
  if (x.defined() && use_generic(x))
    check_floating_any_device(parameter, fn, name);
  else
    check_floating(parameter, fn, name);
}
}  // namespace detail

at::Tensor softmax(const at::Tensor& x, std::int64_t dim) { return detail::apply(x, {}, Map::softmax, 1, dim); }
at::Tensor sparsemax(const at::Tensor& x, std::int64_t dim) { return detail::apply(x, {}, Map::sparsemax, 2, dim); }
at::Tensor entmax15(const at::Tensor& x, std::int64_t dim) { return detail::apply(x, {}, Map::entmax15, 1.5, dim); }
at::Tensor entmax(const at::Tensor& x, double alpha, std::int64_t dim) {
  return detail::apply(x, {}, Map::entmax, alpha, dim);
}
at::Tensor entmax(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim) {
  detail::check_parameter_tensor(x, alpha, "entmax", "alpha");
  return detail::apply(x, alpha, Map::entmax, 0, dim);
}
at::Tensor normmax(const at::Tensor& x, double alpha, std::int64_t dim) {
  return detail::apply(x, {}, Map::normmax, alpha, dim);
}
at::Tensor normmax(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim) {
  detail::check_parameter_tensor(x, alpha, "normmax", "alpha");
  return detail::apply(x, alpha.detach(), Map::normmax, 0, dim);
}
at::Tensor budget(const at::Tensor& x, double budget, std::int64_t dim) {
  return detail::apply(x, {}, Map::budget, budget, dim);
}
at::Tensor budget(const at::Tensor& x, const at::Tensor& budget, std::int64_t dim) {
  detail::check_parameter_tensor(x, budget, "budget", "budget");
  return detail::apply(x, budget.detach(), Map::budget, 0, dim);
}

}  // namespace sparcon::torch
