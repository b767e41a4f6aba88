// Gaussian basis functions and the ridge regression of the value model (sparcon/basis.h).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <type_traits>

#include "check.h"
#include "continuous/checks.h"
#include "sparcon/basis.h"

namespace sparcon {

template <std::floating_point T>
GaussianBasis1D<T> GaussianBasis1D<T>::grid(std::size_t n, const std::vector<double>& sds) {
  const std::size_t k = sds.size();
  if (k == 0 || n == 0 || n % k != 0)
    detail::fail("sparcon::GaussianBasis1D::grid: n = ", n,
                 " must be a positive multiple of the number of standard deviations (", k, ")");
  for (std::size_t s = 0; s < k; ++s)
    if (!(sds[s] > 0) || !std::isfinite(sds[s]))
      detail::fail("sparcon::GaussianBasis1D::grid: sds[", s, "] = ", sds[s], " must be finite and > 0");
  GaussianBasis1D basis;
  const std::size_t centres = n / k;
  for (std::size_t i = 0; i < centres; ++i) {
    const double c = centres == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(centres - 1);
    for (const double sd : sds) {
      basis.centers.push_back(static_cast<T>(c));
      basis.widths.push_back(static_cast<T>(sd * sd));
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

template <class T>
Eigen::Matrix2d symmetric_positive_definite(const char* fn, const char* name, const T* m,
                                            std::ptrdiff_t index) {
  auto describe = [&]() {
    std::ostringstream out;
    out.precision(17);
    out << name;
    if (index >= 0) out << "[" << index << "]";
    out << " = {" << m[0] << ", " << m[1] << ", " << m[2] << ", " << m[3] << "}";
    return out.str();
  };
  for (int i = 0; i < 4; ++i)
    if (!std::isfinite(m[i])) fail("sparcon::", fn, ": ", describe(), " must be finite");
  const double scale = std::abs(static_cast<double>(m[0])) + std::abs(static_cast<double>(m[3]));
  if (std::abs(static_cast<double>(m[1]) - static_cast<double>(m[2])) >
      8 * std::numeric_limits<T>::epsilon() * scale)
    fail("sparcon::", fn, ": ", describe(), " must be symmetric");
  Eigen::Matrix2d out;
  const double off = 0.5 * (static_cast<double>(m[1]) + static_cast<double>(m[2]));
  out << m[0], off, off, m[3];
  if (!(out(0, 0) > 0) || !(out(1, 1) > 0) || !(out(0, 0) * out(1, 1) - off * off > 0))
    fail("sparcon::", fn, ": ", describe(), " must be positive definite");
  return out;
}

template <class T>
void check_basis(const char* fn, const GaussianBasis2D<T>& basis) {
  if (basis.centers.size() % 2 != 0)
    fail("sparcon::", fn, ": basis.centers has ", basis.centers.size(),
         " entries, expected an even number (N x 2)");
  if (basis.size() == 0) fail("sparcon::", fn, ": the basis is empty (N = 0)");
  check_size(fn, "basis.widths", std::span<const T>(basis.widths), 4 * basis.size(),
             "4 * basis.size()");
  for (std::size_t j = 0; j < basis.size(); ++j) {
    if (!std::isfinite(basis.centers[2 * j]) || !std::isfinite(basis.centers[2 * j + 1]))
      fail("sparcon::", fn, ": basis.centers[", j, "] = (", basis.centers[2 * j], ", ",
           basis.centers[2 * j + 1], ") must be finite");
    symmetric_positive_definite(fn, "basis.widths", basis.widths.data() + 4 * j,
                                static_cast<std::ptrdiff_t>(j));
  }
}

template void check_basis(const char*, const GaussianBasis1D<float>&);
template void check_basis(const char*, const GaussianBasis1D<double>&);
template void check_basis(const char*, const GaussianBasis2D<float>&);
template void check_basis(const char*, const GaussianBasis2D<double>&);
template Eigen::Matrix2d symmetric_positive_definite(const char*, const char*, const float*,
                                                     std::ptrdiff_t);
template Eigen::Matrix2d symmetric_positive_definite(const char*, const char*, const double*,
                                                     std::ptrdiff_t);

namespace {

void check_lambda(const char* fn, double lambda) {
  if (!(lambda >= 0) || !std::isfinite(lambda))
    fail("sparcon::", fn, ": lambda = ", lambda, " must be a finite number >= 0");
}

// G = F^T (F F^T + lambda I)^-1 (L x N, row-major) from the design matrix F (N x L), by an
// LDL^T solve of the N x N Gram matrix (robust to a semi-definite Gram when lambda = 0).
template <class T>
std::vector<T> ridge_solve(const Eigen::MatrixXd& f, double lambda) {
  Eigen::MatrixXd gram = f * f.transpose();
  gram.diagonal().array() += lambda;
  const Eigen::MatrixXd g_transposed = gram.ldlt().solve(f);  // G^T (N x L)
  const Eigen::Index n = f.rows(), l = f.cols();
  std::vector<T> g(static_cast<std::size_t>(l * n));
  for (Eigen::Index i = 0; i < l; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      g[static_cast<std::size_t>(i * n + j)] = static_cast<T>(g_transposed(j, i));
  return g;
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
std::vector<T> ridge_matrix_1d(const GaussianBasis1D<T>& basis, std::size_t length, T lambda) {
  const char* fn = "ridge_matrix_1d";
  detail::check_basis(fn, basis);
  if (length == 0) detail::fail("sparcon::", fn, ": length = 0 must be > 0");
  detail::check_lambda(fn, lambda);
  const auto n = static_cast<Eigen::Index>(basis.size()), l = static_cast<Eigen::Index>(length);
  Eigen::MatrixXd f(n, l);  // F[j, l] = psi_j(t_l), t_l = (l + 1/2)/L for l = 0..L-1
  for (Eigen::Index i = 0; i < l; ++i) {
    const double t = (static_cast<double>(i) + 0.5) / static_cast<double>(length);
    for (Eigen::Index j = 0; j < n; ++j) {
      const double w = basis.widths[j], e = t - static_cast<double>(basis.centers[j]);
      f(j, i) = std::exp(-0.5 * e * e / w) / std::sqrt(2 * std::numbers::pi * w);
    }
  }
  return detail::ridge_solve<T>(f, lambda);
}

template <std::floating_point T>
GaussianBasis2D<T> GaussianBasis2D<T>::grid(std::size_t side, T variance) {
  if (side == 0) detail::fail("sparcon::GaussianBasis2D::grid: side = 0 must be > 0");
  if (!(variance > 0) || !std::isfinite(variance))
    detail::fail("sparcon::GaussianBasis2D::grid: variance = ", variance, " must be > 0");
  GaussianBasis2D basis;
  auto at = [&](std::size_t i) {
    return side == 1 ? T(0) : static_cast<T>(static_cast<double>(i) / static_cast<double>(side - 1));
  };
  for (std::size_t i = 0; i < side; ++i) {
    for (std::size_t k = 0; k < side; ++k) {
      basis.centers.insert(basis.centers.end(), {at(i), at(k)});
      basis.widths.insert(basis.widths.end(), {variance, T(0), T(0), variance});
    }
  }
  return basis;
}

template <std::floating_point T>
std::vector<T> ridge_matrix_2d(const GaussianBasis2D<T>& basis, ImageSize size, T lambda) {
  const char* fn = "ridge_matrix_2d";
  detail::check_basis(fn, basis);
  if (size.height == 0 || size.width == 0)
    detail::fail("sparcon::", fn, ": size = ", size.height, " x ", size.width,
                 " must have height > 0 and width > 0");
  detail::check_lambda(fn, lambda);
  const auto n = static_cast<Eigen::Index>(basis.size());
  const auto l = static_cast<Eigen::Index>(size.height * size.width);
  std::vector<Eigen::Matrix2d> precision(basis.size());
  std::vector<double> norm(basis.size());
  for (std::size_t j = 0; j < basis.size(); ++j) {
    const Eigen::Matrix2d s = detail::symmetric_positive_definite(fn, "basis.widths", basis.widths.data() + 4 * j);
    precision[j] = s.inverse();
    norm[j] = 1 / (2 * std::numbers::pi * std::sqrt(s.determinant()));
  }
  Eigen::MatrixXd f(n, l);  // F[j, i W + k] = psi_j(((i + 1/2)/H, (k + 1/2)/W))
  for (std::size_t i = 0; i < size.height; ++i) {
    for (std::size_t k = 0; k < size.width; ++k) {
      const Eigen::Vector2d t((static_cast<double>(i) + 0.5) / static_cast<double>(size.height),
                              (static_cast<double>(k) + 0.5) / static_cast<double>(size.width));
      const auto column = static_cast<Eigen::Index>(i * size.width + k);
      for (Eigen::Index j = 0; j < n; ++j) {
        const Eigen::Vector2d e = t - Eigen::Vector2d(basis.centers[2 * j], basis.centers[2 * j + 1]);
        f(j, column) = norm[j] * std::exp(-0.5 * e.dot(precision[j] * e));
      }
    }
  }
  return detail::ridge_solve<T>(f, lambda);
}

namespace detail {
namespace {

template <class T>
std::vector<T> ridge_matrix_of(const GaussianBasis1D<T>& basis, std::size_t length, T lambda) {
  return ridge_matrix_1d(basis, length, lambda);
}
template <class T>
std::vector<T> ridge_matrix_of(const GaussianBasis2D<T>& basis, ImageSize size, T lambda) {
  return ridge_matrix_2d(basis, size, lambda);
}

}  // namespace
}  // namespace detail

template <class Basis>
RidgeCache<Basis>::RidgeCache(Basis basis, Scalar lambda) : basis_(std::move(basis)), lambda_(lambda) {
  Grid smallest{};  // the grid of one value, to check the arguments now rather than at first use
  if constexpr (std::is_same_v<Grid, std::size_t>) smallest = 1;
  else smallest = {1, 1};
  detail::ridge_matrix_of(basis_, smallest, lambda_);
}

template <class Basis>
const std::vector<typename Basis::Scalar>& RidgeCache<Basis>::matrix(Grid grid) {
  const std::lock_guard lock(mutex_);
  auto found = matrices_.find(grid);
  if (found == matrices_.end())
    found = matrices_.emplace(grid, detail::ridge_matrix_of(basis_, grid, lambda_)).first;
  return found->second;
}

template struct GaussianBasis1D<float>;
template struct GaussianBasis1D<double>;
template std::vector<float> ridge_matrix_1d(const GaussianBasis1D<float>&, std::size_t, float);
template std::vector<double> ridge_matrix_1d(const GaussianBasis1D<double>&, std::size_t, double);
template struct GaussianBasis2D<float>;
template struct GaussianBasis2D<double>;
template std::vector<float> ridge_matrix_2d(const GaussianBasis2D<float>&, ImageSize, float);
template std::vector<double> ridge_matrix_2d(const GaussianBasis2D<double>&, ImageSize, double);
template class RidgeCache<GaussianBasis1D<float>>;
template class RidgeCache<GaussianBasis1D<double>>;
template class RidgeCache<GaussianBasis2D<float>>;
template class RidgeCache<GaussianBasis2D<double>>;

}  // namespace sparcon
