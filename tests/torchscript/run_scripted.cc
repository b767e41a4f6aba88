// Loads a TorchScript module written by save_scripted.py (Python), which calls
// torch.ops.sparcon.{sparsemax, entmax15, continuous_attention}, and checks from C++ that
//   - the sparcon operators are registered in this process (this program links sparcon_torch and
//     references a symbol of it, so the library's TORCH_LIBRARY registration runs at start-up),
//   - the loaded graph calls the three operators,
//   - forward on the stored example input gives the stored expected output, and the input
//     gradient of (output * output_weights).sum() the stored expected gradient (within 1e-12).
// Usage: sparcon_torchscript_runner MODULE.pt. Exit code 0 when every check passes, 1 otherwise.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/script.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sparcon/torch/ops.h"

namespace {

constexpr double kTolerance = 1e-12;
const std::vector<std::string> kOps = {"sparcon::sparsemax", "sparcon::entmax15",
                                       "sparcon::continuous_attention"};

int fail(const std::string& message) {
  std::fprintf(stderr, "FAIL: %s\n", message.c_str());
  return 1;
}

// Every node kind in a graph, nested blocks included.
void collect_kinds(const torch::jit::Block* block, std::set<std::string>& kinds) {
  for (const torch::jit::Node* node : block->nodes()) {
    kinds.insert(node->kind().toQualString());
    for (const torch::jit::Block* inner : node->blocks()) collect_kinds(inner, kinds);
  }
}

// Compares two tensors: same shape and dtype, max |a - b| <= kTolerance. Prints the outcome.
bool matches(const char* what, const at::Tensor& got, const at::Tensor& expected) {
  if (got.sizes() != expected.sizes() || got.scalar_type() != expected.scalar_type()) {
    std::fprintf(stderr, "FAIL: %s: got %s %s, expected %s %s\n", what, c10::toString(got.scalar_type()),
                 c10::str(got.sizes()).c_str(), c10::toString(expected.scalar_type()),
                 c10::str(expected.sizes()).c_str());
    return false;
  }
  const bool equal = at::equal(got, expected);
  const double diff = got.numel() == 0 ? 0.0 : (got - expected).abs().max().item<double>();
  std::printf("%s: %s (max |difference| = %.3g)\n", what, equal ? "bitwise equal" : "not bitwise equal", diff);
  if (!(diff <= kTolerance)) {  // (also catches NaN)
    std::fprintf(stderr, "FAIL: %s differs from the expected values by %.3g > %.0e\n", what, diff, kTolerance);
    return false;
  }
  return true;
}

int run(const std::string& path) {
  // 1. The operators are registered (by linking sparcon_torch).
  for (const auto& op : kOps)
    if (!c10::Dispatcher::singleton().findSchema({op, ""}).has_value())
      return fail(op + " is not registered: is libsparcon_torch.so linked into this program?");

  // 2. Load; the graph calls the operators.
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    return fail("torch::jit::load(" + path + "): " + e.what());
  }
  std::set<std::string> kinds;
  collect_kinds(module.get_method("forward").graph()->block(), kinds);
  for (const auto& op : kOps)
    if (kinds.count(op) == 0) return fail("the loaded forward graph does not call " + op);

  const at::Tensor input = module.attr("example_input").toTensor();
  const at::Tensor expected = module.attr("expected_output").toTensor();
  const at::Tensor weights = module.attr("output_weights").toTensor();
  const at::Tensor expected_grad = module.attr("expected_input_grad").toTensor();
  if (input.numel() == 0 || expected.numel() == 0) return fail("the module holds no example input / output");

  // 3. Forward and backward through the scripted graph.
  const at::Tensor x = input.detach().clone().requires_grad_(true);
  at::Tensor output;
  try {
    output = module.forward({x}).toTensor();
    (output * weights).sum().backward();
  } catch (const std::exception& e) {
    return fail(std::string("forward/backward threw: ") + e.what());
  }
  bool ok = matches("forward output", output.detach(), expected);
  ok = x.grad().defined() ? matches("input gradient", x.grad(), expected_grad) && ok
                          : (fail("no gradient reached the input"), false);

  // The direct C++ call agrees with the scripted one on the sparsemax columns (and references a
  // symbol of sparcon_torch, so the linker keeps the library even with --as-needed).
  const std::int64_t length = input.size(1);
  const at::Tensor scripted_p = output.detach().narrow(1, 0, length);
  const at::Tensor direct_p = sparcon::torch::sparsemax(scripted_p, -1);  // p is a fixed point
  ok = matches("sparcon::torch::sparsemax(p) == p", direct_p, scripted_p) && ok;

  if (!ok) return 1;
  std::printf("PASS: %s runs in C++ with the expected output and gradient\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODULE.pt (written by tests/torchscript/save_scripted.py)\n", argv[0]);
    return 1;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    return fail(std::string("unexpected exception: ") + e.what());
  }
}
