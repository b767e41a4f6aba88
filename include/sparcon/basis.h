// sparcon/basis.h: the value model of continuous attention (MATH.md section 3): Gaussian basis
// functions and the ridge regression that fits V(t) = B psi(t) to L vectors at positions
// t_l = (l - 1/2)/L.
#pragma once

#include <concepts>
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace sparcon {

/// Gaussian radial basis functions psi_j(t) = N(t; center_j, width_j), width_j a variance.
template <std::floating_point T>
struct GaussianBasis1D {
  std::vector<T> centers;
  std::vector<T> widths;

  /// The paper's basis of size n (even): n/2 centres linspace(0, 1, n/2), each with the
  /// standard deviations 0.1 and 0.5 (widths 0.01 and 0.25), in the order of the paper's code
  /// (centre by centre: (c_0, 0.01), (c_0, 0.25), (c_1, 0.01), ...).
  static GaussianBasis1D paper(std::size_t n);
  [[nodiscard]] std::size_t size() const { return centers.size(); }
};

/// The ridge-regression matrix of one length L (row-major, L x N):
///   G = F^T (F F^T + lambda I)^-1,   F = [psi(t_1) ... psi(t_L)] (N x L),   t_l = (l - 1/2)/L,
/// so that B = H G fits the values H (E x L) and c = B r = H (G r). Computed in double (an
/// N x N Cholesky solve, Eigen). Throws for L = 0, lambda < 0 or not finite, or an invalid basis
/// (empty, widths <= 0).
template <std::floating_point T>
std::vector<T> ridge_matrix_1d(const GaussianBasis1D<T>& basis, std::size_t length, T lambda);

/// G for every length met, computed once each and kept; safe to share between threads.
template <std::floating_point T>
class RidgeCache1D {
 public:
  RidgeCache1D(GaussianBasis1D<T> basis, T lambda);
  /// G of this length (L x N, row-major); the reference stays valid as long as the cache.
  const std::vector<T>& matrix(std::size_t length);
  [[nodiscard]] const GaussianBasis1D<T>& basis() const { return basis_; }
  [[nodiscard]] T lambda() const { return lambda_; }

 private:
  GaussianBasis1D<T> basis_;
  T lambda_;
  std::mutex mutex_;
  std::map<std::size_t, std::vector<T>> matrices_;
};

}  // namespace sparcon
