// How the LibTorch layer hands tensors to the core: the normalised axis moved last and made
// contiguous, in the compute dtype (float for bfloat16 and half), as a batch of rows; core
// exceptions turned into c10::ValueError.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <span>
#include <stdexcept>
#include <utility>

#include "sparcon/rows.h"

namespace sparcon::torch::detail {

/// The dtype the core computes in for a tensor of this dtype.
inline at::ScalarType compute_type(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}

/// Checks that x is a floating tensor, on any device (ops with a generic kernel, backend.h);
/// `name` is used in the message.
inline void check_floating_any_device(const at::Tensor& x, const char* fn, const char* name) {
  TORCH_CHECK_VALUE(x.defined(), "sparcon.", fn, ": ", name, " is undefined");
  TORCH_CHECK_VALUE(at::isFloatingType(x.scalar_type()), "sparcon.", fn, ": ", name,
                    " must be a floating tensor, got ", x.scalar_type());
}

/// Checks that x is a floating tensor on the CPU (ops with no generic kernel); `name` is used
/// in the message.
inline void check_floating(const at::Tensor& x, const char* fn, const char* name) {
  check_floating_any_device(x, fn, name);
  TORCH_CHECK_VALUE(x.device().is_cpu(), "sparcon.", fn, ": ", name,
                    " must be on the CPU (sparcon has no GPU kernels), got ", x.device());
}

/// Checks that `other` is on the device of `main` (the generic kernels compute where `main` is).
inline void check_same_device(const at::Tensor& main, const at::Tensor& other, const char* fn, const char* main_name,
                              const char* name) {
  TORCH_CHECK_VALUE(other.device() == main.device(), "sparcon.", fn, ": ", name, " is on ", other.device(),
                    " but ", main_name, " is on ", main.device(), " (they must be on the same device)");
}

/// x with `dim` moved last, contiguous, in the compute dtype, seen as rows.
struct RowView {
  at::Tensor rows;        ///< contiguous, shape (..., length) with `dim` last
  sparcon::Rows shape;    ///< count x length
  std::int64_t dim;       ///< the wrapped dim of the original tensor
  at::ScalarType dtype;   ///< the original dtype
};

/// any_device: the op has a generic kernel (x may be on any device), else x must be on the CPU.
inline RowView to_rows(const at::Tensor& x, std::int64_t dim, const char* fn, const char* name = "x",
                       bool any_device = false) {
  if (any_device)
    check_floating_any_device(x, fn, name);
  else
    check_floating(x, fn, name);
  TORCH_CHECK_VALUE(x.dim() >= 1, "sparcon.", fn, ": ", name, " must have at least one dimension");
  TORCH_CHECK_VALUE(dim >= -x.dim() && dim < x.dim(), "sparcon.", fn, ": dim = ", dim,
                    " is out of range for ", name, " of ", x.dim(), " dimensions");
  const std::int64_t d = dim < 0 ? dim + x.dim() : dim;
  // Each of movedim, to and contiguous costs a dispatch (and movedim a view) even when it
  // changes nothing: skipped when dim is already last and the dtype is the compute one.
  const at::Tensor moved = d == x.dim() - 1 ? x : x.movedim(d, -1);
  const at::ScalarType compute = compute_type(x.scalar_type());
  at::Tensor rows = (moved.scalar_type() == compute ? moved : moved.to(compute)).contiguous();
  const auto length = static_cast<std::size_t>(rows.size(-1));
  const auto count = length == 0 ? 0 : static_cast<std::size_t>(rows.numel()) / length;
  return {rows, {count, length}, d, x.scalar_type()};
}

/// A tensor in the layout of a RowView back in the original layout and dtype.
inline at::Tensor from_rows(const at::Tensor& rows, const RowView& view) {
  const at::Tensor moved = view.dim == rows.dim() - 1 ? rows : rows.movedim(-1, view.dim);
  return moved.scalar_type() == view.dtype ? moved : moved.to(view.dtype);
}

template <class T>
std::span<T> span_of(at::Tensor& t) {
  return {t.data_ptr<T>(), static_cast<std::size_t>(t.numel())};
}
template <class T>
std::span<const T> const_span_of(const at::Tensor& t) {
  return {t.data_ptr<T>(), static_cast<std::size_t>(t.numel())};
}

/// Calls f(T{}) with T the core type of a compute dtype.
template <class F>
decltype(auto) with_type(at::ScalarType compute, F&& f) {
  if (compute == at::kDouble) return f(double{});
  return f(float{});
}

/// The core's thread count: torch's intra-op setting.
inline sparcon::Threads threads() {
  return {static_cast<unsigned>(std::max(1, at::get_num_threads()))};
}

/// Runs a core call, turning its std::invalid_argument into c10::ValueError (prefixed with the
/// name of the op, when given, since the core names its own function).
template <class F>
decltype(auto) core(F&& f, const char* op = nullptr) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    if (op != nullptr) TORCH_CHECK_VALUE(false, "sparcon.", op, ": ", e.what());
    TORCH_CHECK_VALUE(false, e.what());
  }
}

}  // namespace sparcon::torch::detail
