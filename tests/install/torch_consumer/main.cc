// Exits 0 when an installed sparcon::torch runs an op and a module: sparsemax([1, 0.5, -1]) =
// [0.75, 0.25, 0] with its gradient, the same op through the dispatcher (torch.ops.sparcon.*,
// registered by the installed library), and a ContinuousAttention module forward and backward.
#include <cmath>
#include <iostream>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/torch.h>

#include <sparcon/torch/modules.h>
#include <sparcon/torch/ops.h>

namespace st = sparcon::torch;

static bool check(bool ok, const char* what) {
  if (!ok) std::cerr << "torch_consumer: " << what << " failed\n";
  return ok;
}

int main() {
  bool ok = true;
  const auto options = torch::dtype(torch::kDouble);
  at::Tensor x = torch::tensor({1.0, 0.5, -1.0}, options.requires_grad(true));
  at::Tensor p = st::sparsemax(x, -1);
  ok &= check(torch::allclose(p, torch::tensor({0.75, 0.25, 0.0}, options), 0.0, 1e-15), "sparsemax");
  // d/dx of <p, [1, 0, 0]>: the support's centred row of the Jacobian, (0.5, -0.5, 0).
  (p * torch::tensor({1.0, 0.0, 0.0}, options)).sum().backward();
  ok &= check(torch::allclose(x.grad(), torch::tensor({0.5, -0.5, 0.0}, options), 0.0, 1e-15), "sparsemax backward");

  auto op = c10::Dispatcher::singleton().findSchemaOrThrow("sparcon::sparsemax", "").typed<at::Tensor(const at::Tensor&, int64_t)>();
  ok &= check(torch::equal(op.call(x.detach(), -1), p.detach()), "torch.ops.sparcon.sparsemax");

  torch::manual_seed(0);
  st::ContinuousAttention attention(st::ContinuousAttentionOptions(/*features=*/4, /*dims=*/1)
                                        .alpha(2.0).basis_size(8).mode("disc+cont"));
  at::Tensor values = torch::randn({2, 10, 4}, torch::requires_grad());
  at::Tensor context = attention(values, torch::tensor({10, 7}, torch::kLong));
  ok &= check(context.sizes() == at::IntArrayRef({2, 4}) && torch::isfinite(context).all().item<bool>(),
              "ContinuousAttention forward");
  context.pow(2).sum().backward();
  ok &= check(values.grad().defined() && torch::isfinite(values.grad()).all().item<bool>() &&
                  values.grad().abs().sum().item<double>() > 0,
              "ContinuousAttention backward");
  for (const auto& parameter : attention->parameters())
    ok &= check(parameter.grad().defined(), "ContinuousAttention parameter gradient");
  if (ok) std::cout << "torch_consumer: sparsemax and ContinuousAttention from the installed sparcon::torch: ok\n";
  return ok ? 0 : 1;
}
