// Loads a TorchScript module written by save_scripted.py (Python), which calls
// torch.ops.sparcon.{sparsemax, entmax15, continuous_attention}, and checks from C++ that
//   - the sparcon operators are registered in this process (this program links sparcon_torch and
//     references a symbol of it, so the library's TORCH_LIBRARY registration runs at start-up),
//   - the loaded graph calls the three operators,
//   - forward on the stored example input gives the stored expected output, and the input
//     gradient of (output * output_weights).sum() the stored expected gradient (within 1e-12).
// Further arguments are package modules written by save_scripted.py --package (every nn.Module of
// the sparcon package, scripted in Python): each is loaded with torch::jit::load, its graph must
// call a sparcon operator, and forward on its stored inputs must give the stored outputs, and
// the gradients of sum(output * weight) with respect to its floating inputs and its parameters
// the stored ones (within 1e-12), the parameters in the order and with the names Python saw.
// Usage: sparcon_torchscript_runner MODULE.pt [PACKAGE_CASE.pt ...]. Exit code 0 when every
// check passes, 1 otherwise.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
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

at::Tensor buffer(const torch::jit::Module& module, const std::string& name) {
  return module.attr(name).toTensor();
}

// Integer outputs (support sizes) must be equal; floating ones within kTolerance.
bool output_matches(const std::string& what, const at::Tensor& got, const at::Tensor& expected) {
  if (at::isFloatingType(expected.scalar_type())) return matches(what.c_str(), got, expected);
  const bool ok = got.sizes() == expected.sizes() && got.scalar_type() == expected.scalar_type() &&
                  at::equal(got, expected);
  std::printf("%s: %s\n", what.c_str(), ok ? "equal" : "DIFFERENT");
  return ok;
}

// A package module saved by save_scripted.py --package (see the top of this file).
int run_package_case(const std::string& path) {
  std::unordered_map<std::string, std::string> extra{{"case_parameters.txt", ""}};
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const std::exception& e) {
    return fail("torch::jit::load(" + path + "): " + e.what());
  }
  std::printf("-- %s\n", path.c_str());
  // The forward graph with the functions and methods it calls inlined (the modules call the ops
  // from helper functions).
  const std::shared_ptr<torch::jit::Graph> graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  std::set<std::string> kinds;
  collect_kinds(graph->block(), kinds);
  bool calls_sparcon = false;
  for (const auto& kind : kinds) calls_sparcon = calls_sparcon || kind.rfind("sparcon::", 0) == 0;
  if (!calls_sparcon) return fail(path + ": the loaded module calls no sparcon operator");

  // Inputs: the stored tensors (None where flagged), floating ones requiring grad.
  const at::Tensor is_none = buffer(module, "tsc_input_is_none");
  std::vector<c10::IValue> inputs;
  std::vector<at::Tensor> leaves;
  for (std::int64_t i = 0; i < is_none.numel(); ++i) {
    if (is_none[i].item<std::int64_t>() != 0) {
      inputs.emplace_back();
      leaves.emplace_back();
      continue;
    }
    at::Tensor x = buffer(module, "tsc_input_" + std::to_string(i)).detach().clone();
    if (at::isFloatingType(x.scalar_type())) x.requires_grad_(true);
    inputs.emplace_back(x);
    leaves.push_back(x);
  }

  std::vector<at::Tensor> outputs;
  try {
    const c10::IValue result = module.forward(inputs);
    if (result.isTuple()) {
      for (const auto& element : result.toTupleRef().elements()) outputs.push_back(element.toTensor());
    } else {
      outputs.push_back(result.toTensor());
    }
  } catch (const std::exception& e) {
    return fail(path + ": forward threw: " + e.what());
  }
  const auto count = buffer(module, "tsc_output_count").item<std::int64_t>();
  if (static_cast<std::int64_t>(outputs.size()) != count)
    return fail(path + ": forward returned " + std::to_string(outputs.size()) + " outputs, expected " +
                std::to_string(count));

  bool ok = true;
  at::Tensor total;
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    const std::string suffix = std::to_string(j);
    ok = output_matches("output " + suffix, outputs[j].detach(), buffer(module, "tsc_output_" + suffix)) && ok;
    const at::Tensor weight = buffer(module, "tsc_output_weight_" + suffix);
    if (weight.numel() == 0) continue;  // an integer output
    const at::Tensor term = (outputs[j] * weight).sum();
    total = total.defined() ? total + term : term;
  }
  try {
    total.backward();
  } catch (const std::exception& e) {
    return fail(path + ": backward threw: " + e.what());
  }
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const std::string suffix = std::to_string(i);
    const at::Tensor expected = buffer(module, "tsc_input_grad_" + suffix);
    if (!leaves[i].defined() || !leaves[i].requires_grad()) continue;
    if (!leaves[i].grad().defined()) {
      ok = expected.numel() == 0 && ok;  // no gradient reached this input, as in Python
      continue;
    }
    ok = matches(("input gradient " + suffix).c_str(), leaves[i].grad(), expected) && ok;
  }
  std::istringstream names(extra["case_parameters.txt"]);
  std::string name;
  std::size_t k = 0;
  for (const auto& parameter : module.named_parameters(/*recurse=*/true)) {
    if (!std::getline(names, name) || name != parameter.name)
      return fail(path + ": parameter " + parameter.name + " is not the one Python saved (" + name + ")");
    const at::Tensor expected = buffer(module, "tsc_param_grad_" + std::to_string(k));
    const at::Tensor grad = parameter.value.grad();
    ok = (grad.defined() ? matches(("gradient of " + parameter.name).c_str(), grad, expected)
                         : expected.numel() == 0) && ok;
    ++k;
  }
  if (std::getline(names, name)) return fail(path + ": the loaded module lacks the parameter " + name);
  if (!ok) return fail(path + ": outputs or gradients differ from Python's");
  std::printf("PASS: %s\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODULE.pt [PACKAGE_CASE.pt ...] (written by tests/torchscript/save_scripted.py)\n",
                 argv[0]);
    return 1;
  }
  int status = 0;
  try {
    status = run(argv[1]);
    for (int i = 2; i < argc; ++i) status = run_package_case(argv[i]) != 0 ? 1 : status;
  } catch (const std::exception& e) {
    return fail(std::string("unexpected exception: ") + e.what());
  }
  if (argc > 2) std::printf("%s: %d package modules checked\n", status == 0 ? "PASS" : "FAIL", argc - 2);
  return status;
}
