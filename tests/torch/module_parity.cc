// sparcon_module_parity OUT: builds sparcon::torch::ContinuousAttention in every mode from a fixed
// seed, runs it in double on fixed inputs with a fixed upstream gradient, and writes what Python
// must reproduce (tests/python/test_query_attention.py) as one dict of tensors
// (torch::pickle_save, read by torch.load): for configuration C, "C/param/<name>",
// "C/grad/<name>", "C/values", "C/lengths", "C/queries", "C/weights" (the upstream gradient),
// "C/context", "C/values_grad", "C/mu", "C/sigma".
#include <torch/serialize.h>
#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <string>

#include "sparcon/torch/modules.h"

namespace st = sparcon::torch;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sparcon_module_parity OUT\n";
    return 2;
  }
  c10::Dict<std::string, at::Tensor> out;
  for (const int dims : {1, 2})
    for (const std::string mode : {"cont", "disc+cont"})
      for (const std::int64_t heads : {1, 2})
        for (const std::int64_t query_features : {0, 3}) {
          const std::string name = std::to_string(dims) + "d-" + mode + "-h" + std::to_string(heads) + "-q" +
                                   std::to_string(query_features);
          torch::manual_seed(2020);
          st::ContinuousAttention attention(st::ContinuousAttentionOptions(4, dims)
                                                .alpha(dims == 1 ? 2.0 : 1.0)
                                                .basis_size(8)
                                                .grid_side(3)
                                                .variance(0.01)
                                                .mode(mode)
                                                .heads(heads)
                                                .query_features(query_features)
                                                .discrete_alpha(1.5));
          attention->to(torch::kDouble);
          torch::manual_seed(7);
          at::Tensor values = (dims == 1 ? torch::randn({3, 6, 4}) : torch::randn({2, 4, 5, 4})).to(torch::kDouble);
          values.requires_grad_();
          const at::Tensor lengths = dims == 1 ? torch::tensor({6, 4, 2}, torch::kLong) : at::Tensor();
          const at::Tensor queries = query_features > 0 ? torch::randn({values.size(0), 5, 3}).to(torch::kDouble) : at::Tensor();
          const at::Tensor context = attention(values, lengths, queries);
          const at::Tensor weights = torch::randn(context.sizes()).to(torch::kDouble);
          (context * weights).sum().backward();
          for (const auto& p : attention->named_parameters()) {
            out.insert(name + "/param/" + p.key(), p.value().detach());
            out.insert(name + "/grad/" + p.key(), p.value().grad());
          }
          out.insert(name + "/values", values.detach());
          if (lengths.defined()) out.insert(name + "/lengths", lengths);
          if (queries.defined()) out.insert(name + "/queries", queries);
          out.insert(name + "/weights", weights);
          out.insert(name + "/context", context.detach());
          out.insert(name + "/values_grad", values.grad());
          const auto [mu, sigma] = attention->last_density();
          out.insert(name + "/mu", mu);
          out.insert(name + "/sigma", sigma);
        }
  const std::vector<char> bytes = torch::pickle_save(out);
  std::ofstream file(argv[1], std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return file ? 0 : 1;
}
