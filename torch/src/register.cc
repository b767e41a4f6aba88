// The one registration of the sparcon operators: torch.ops.sparcon.<name> in Python and
// TorchScript, c10::Dispatcher in C++. Each kernel is the function of sparcon/torch/ops.h, whose
// autograd Function records the graph, so one registration serves forward and backward.
#include <torch/library.h>

#include "sparcon/torch/ops.h"

namespace {

namespace ops = sparcon::torch;

at::Tensor entmax_scalar(const at::Tensor& x, double alpha, std::int64_t dim) { return ops::entmax(x, alpha, dim); }
at::Tensor entmax_tensor(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim) {
  return ops::entmax(x, alpha, dim);
}
at::Tensor normmax_scalar(const at::Tensor& x, double alpha, std::int64_t dim) { return ops::normmax(x, alpha, dim); }
at::Tensor budget_scalar(const at::Tensor& x, double budget, std::int64_t dim) { return ops::budget(x, budget, dim); }
at::Tensor normmax_tensor(const at::Tensor& x, const at::Tensor& alpha, std::int64_t dim) {
  return ops::normmax(x, alpha, dim);
}
at::Tensor budget_tensor(const at::Tensor& x, const at::Tensor& budget, std::int64_t dim) {
  return ops::budget(x, budget, dim);
}
at::Tensor loss(const at::Tensor& x, const at::Tensor& target, std::string map, double parameter,
                std::int64_t ignore_index) {
  return ops::fenchel_young_loss(x, target, map, parameter, ignore_index);
}
at::Tensor loss_per_row(const at::Tensor& x, const at::Tensor& target, std::string map, const at::Tensor& parameter,
                        std::int64_t ignore_index) {
  return ops::fenchel_young_loss(x, target, map, parameter, ignore_index);
}
at::Tensor ridge(const at::Tensor& centers, const at::Tensor& widths, std::vector<std::int64_t> grid,
                 double lam) {
  return ops::ridge_matrix(centers, widths, grid, lam);
}

std::tuple<at::Tensor, at::Tensor> basis_1d(std::int64_t size, std::vector<double> sds) {
  return ops::basis_1d(size, sds);
}

}  // namespace

TORCH_LIBRARY(sparcon, m) {
  m.def("softmax(Tensor x, int dim=-1) -> Tensor", &ops::softmax);
  m.def("sparsemax(Tensor x, int dim=-1) -> Tensor", &ops::sparsemax);
  m.def("entmax15(Tensor x, int dim=-1) -> Tensor", &ops::entmax15);
  m.def("entmax(Tensor x, float alpha, int dim=-1) -> Tensor", &entmax_scalar);
  m.def("entmax_tensor_alpha(Tensor x, Tensor alpha, int dim=-1) -> Tensor", &entmax_tensor);
  m.def("normmax(Tensor x, float alpha, int dim=-1) -> Tensor", &normmax_scalar);
  m.def("normmax_tensor_alpha(Tensor x, Tensor alpha, int dim=-1) -> Tensor", &normmax_tensor);
  m.def("budget(Tensor x, float budget, int dim=-1) -> Tensor", &budget_scalar);
  m.def("budget_tensor(Tensor x, Tensor budget, int dim=-1) -> Tensor", &budget_tensor);
  m.def("fenchel_young_loss(Tensor x, Tensor target, str map, float parameter=0, int ignore_index=-100) -> Tensor",
        &loss);
  m.def("fenchel_young_loss_per_row(Tensor x, Tensor target, str map, Tensor parameter, int ignore_index=-100) "
        "-> Tensor",
        &loss_per_row);
  m.def("continuous_expectation(Tensor mu, Tensor sigma, Tensor centers, Tensor widths, float alpha=1) -> Tensor",
        &ops::continuous_expectation);
  m.def("ridge_matrix(Tensor centers, Tensor widths, int[] grid, float lam) -> Tensor", &ridge);
  m.def("continuous_attention(Tensor values, Tensor mu, Tensor sigma, Tensor centers, Tensor widths, "
        "float lam, float alpha, Tensor? lengths=None) -> Tensor",
        &ops::continuous_attention);
  m.def("density_from_moments(Tensor p, float alpha, float ridge, Tensor? lengths=None) -> (Tensor, Tensor)",
        &ops::density_from_moments);
  m.def("value_model(Tensor values, Tensor centers, Tensor widths, float lam, Tensor? lengths=None) -> Tensor",
        &ops::value_model);
  // The math of the attention modules (ops.h, last section).
  m.def("alpha_entmax(Tensor x, float alpha, int dim=-1) -> Tensor", &ops::alpha_entmax);
  m.def("basis_1d(int size, float[] sds) -> (Tensor, Tensor)", &basis_1d);
  m.def("basis_2d(int side, float variance) -> (Tensor, Tensor)", &ops::basis_2d);
  m.def("density_head(Tensor raw, int dims, int heads, float min_scale) -> (Tensor, Tensor)", &ops::density_head);
  m.def("density_head_bias(int dims, int heads, float initial_scale) -> Tensor", &ops::density_head_bias);
  m.def("mean_value(Tensor values, Tensor? lengths=None) -> Tensor", &ops::mean_value);
  m.def("query_scores(Tensor queries, Tensor values, int heads) -> Tensor", &ops::query_scores);
  m.def("query_continuous_attention(Tensor values, Tensor mu, Tensor sigma, Tensor centers, Tensor widths, "
        "float lam, float alpha, Tensor? lengths=None) -> Tensor",
        &ops::query_continuous_attention);
  m.def("disc_cont_attention(Tensor values, Tensor scores, Tensor centers, Tensor widths, float lam, float alpha, "
        "float discrete_alpha, float moment_ridge, Tensor? lengths=None) -> (Tensor, Tensor, Tensor, Tensor)",
        &ops::disc_cont_attention);
}
