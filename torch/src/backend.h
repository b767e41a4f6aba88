// Which kernels an op runs: the Highway core for CPU tensors, the device-generic kernels of
// torch/src/generic/ (written only with ATen tensor operations) for tensors on any other device
// (CUDA, meta, ...). The environment variable SPARCON_BACKEND, read at every call, can send CPU
// tensors to the generic kernels too (so that CI tests them without a GPU):
//   unset, "" or "core": CPU tensors go to the core;   "generic": every tensor goes to the generic kernels.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <string_view>

namespace sparcon::torch::detail {

/// Whether SPARCON_BACKEND=generic is set now (an unknown value raises c10::ValueError naming it).
inline bool generic_forced() {
  const char* env = std::getenv("SPARCON_BACKEND");
  if (env == nullptr) return false;
  const std::string_view value(env);
  if (value.empty() || value == "core") return false;
  TORCH_CHECK_VALUE(value == "generic", "sparcon: SPARCON_BACKEND = '", value,
                    "' must be 'core', 'generic' or unset");
  return true;
}

/// Set on this thread while a CoreScope lives: CPU tensors go to the core whatever
/// SPARCON_BACKEND says (the generic kernels rerun a failed check on the host copies of their
/// inputs through the core, so that the message is the core's).
inline bool& core_scope_active() {
  static thread_local bool active = false;
  return active;
}

/// Sends CPU tensors to the core for its lifetime (this thread only).
class CoreScope {
 public:
  CoreScope() : previous_(core_scope_active()) { core_scope_active() = true; }
  ~CoreScope() { core_scope_active() = previous_; }
  CoreScope(const CoreScope&) = delete;
  CoreScope& operator=(const CoreScope&) = delete;

 private:
  bool previous_;
};

/// Whether an op whose main input is x runs the generic kernels: x is not on the CPU, or
/// SPARCON_BACKEND=generic (outside a CoreScope).
inline bool use_generic(const at::Tensor& x) {
  return !x.device().is_cpu() || (!core_scope_active() && generic_forced());
}

}  // namespace sparcon::torch::detail
