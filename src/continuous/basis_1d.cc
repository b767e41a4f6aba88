// Gaussian basis functions and the ridge regression of the value model (sparcon/basis.h).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <numbers>

#include "check.h"
#include "continuous/checks.h"
#include "sparcon/basis.h"

namespace sparcon {

template <std::floating_point T>
GaussianBasis1D<T> GaussianBasis1D<T>::paper(std::size_t n) {
  if (n == 0 || n % 2 != 0)
    detail::fail("sparcon::GaussianBasis1D::paper: n = ", n, " must be even and > 0");
  GaussianBasis1D basis;
  const std::size_t half = n / 2;
  // In the order of the paper's code: meshgrid(linspace(0, 1, n/2), [0.1, 0.5]) flattened.
  for (std::size_t i = 0; i < half; ++i) {
    for (const T sd : {T(0.1), T(0.5)}) {
      basis.centers.push_back(half == 1 ? T(0) : static_cast<T>(static_cast<double>(i) / (half - 1)));
      basis.widths.push_back(sd * sd);
    }
  }
  return basis;
}

namespace detail {

template <class T>
void check_basis(const char* fn, const GaussianBasis1D<T>& basis) {
  if (basis.size() == 0) fail("sparcon::", fn, ": the basis is empty (N = 0)");
  check_size(fn, "basis.widths", std::span<const T>(basis.widths), basis.centers.size(),
             "basis.centers.size()");
  for (std::size_t j = 0; j < basis.size(); ++j) {
    if (!std::isfinite(basis.centers[j]))
      fail("sparcon::", fn, ": basis.centers[", j, "] = ", basis.centers[j], " must be finite");
    if (!(basis.widths[j] > 0) || !std::isfinite(basis.widths[j]))
      fail("sparcon::", fn, ": basis.widths[", j, "] = ", basis.widths[j], " must be > 0");
  }
}

template void check_basis(const char*, const GaussianBasis1D<float>&);
template void check_basis(const char*, const GaussianBasis1D<double>&);

}  // namespace detail

template <std::floating_point T>
std::vector<T> ridge_matrix_1d(const GaussianBasis1D<T>& basis, std::size_t length, T lambda) {
  const char* fn = "ridge_matrix_1d";
  detail::check_basis(fn, basis);
  if (length == 0) detail::fail("sparcon::", fn, ": length = 0 must be > 0");
  if (!(lambda >= 0) || !std::isfinite(lambda))
    detail::fail("sparcon::", fn, ": lambda = ", lambda, " must be a finite number >= 0");
  const auto n = static_cast<Eigen::Index>(basis.size()), l = static_cast<Eigen::Index>(length);
  Eigen::MatrixXd f(n, l);  // F[j, l] = psi_j(t_l), t_l = (l + 1/2)/L for l = 0..L-1
  for (Eigen::Index i = 0; i < l; ++i) {
    const double t = (static_cast<double>(i) + 0.5) / static_cast<double>(length);
    for (Eigen::Index j = 0; j < n; ++j) {
      const double w = basis.widths[j], e = t - static_cast<double>(basis.centers[j]);
      f(j, i) = std::exp(-0.5 * e * e / w) / std::sqrt(2 * std::numbers::pi * w);
    }
  }
  Eigen::MatrixXd gram = f * f.transpose();
  gram.diagonal().array() += static_cast<double>(lambda);
  // G^T = (F F^T + lambda I)^-1 F, by Cholesky (LDL^T, robust to a semi-definite Gram when
  // lambda = 0).
  const Eigen::MatrixXd g_transposed = gram.ldlt().solve(f);
  std::vector<T> g(static_cast<std::size_t>(l * n));
  for (Eigen::Index i = 0; i < l; ++i)
    for (Eigen::Index j = 0; j < n; ++j) g[static_cast<std::size_t>(i * n + j)] = static_cast<T>(g_transposed(j, i));
  return g;
}

template <std::floating_point T>
RidgeCache1D<T>::RidgeCache1D(GaussianBasis1D<T> basis, T lambda)
    : basis_(std::move(basis)), lambda_(lambda) {
  ridge_matrix_1d(basis_, 1, lambda_);  // checks the arguments now rather than at first use
}

template <std::floating_point T>
const std::vector<T>& RidgeCache1D<T>::matrix(std::size_t length) {
  const std::lock_guard lock(mutex_);
  auto found = matrices_.find(length);
  if (found == matrices_.end())
    found = matrices_.emplace(length, ridge_matrix_1d(basis_, length, lambda_)).first;
  return found->second;
}

template struct GaussianBasis1D<float>;
template struct GaussianBasis1D<double>;
template std::vector<float> ridge_matrix_1d(const GaussianBasis1D<float>&, std::size_t, float);
template std::vector<double> ridge_matrix_1d(const GaussianBasis1D<double>&, std::size_t, double);
template class RidgeCache1D<float>;
template class RidgeCache1D<double>;

}  // namespace sparcon
