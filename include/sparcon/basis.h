// sparcon/basis.h: the value model of continuous attention (docs/math.md section 8): Gaussian
// basis functions and the ridge regression that fits V(t) = B psi(t) to the L value vectors of a
// sequence (positions t_l = (l - 1/2)/L) or an image (the grid analogue, see ImageSize).
#pragma once

#include <compare>
#include <concepts>
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace sparcon {

/// Gaussian radial basis functions psi_j(t) = N(t; center_j, width_j), width_j a variance.
template <std::floating_point T>
struct GaussianBasis1D {
  using Scalar = T;
  /// What one ridge matrix is computed for: the length L of a sequence.
  using Grid = std::size_t;

  std::vector<T> centers;
  std::vector<T> widths;

  /// n functions (n a positive multiple of k = sds.size()): n/k centres linspace(0, 1, n/k)
  /// (one centre at 0 when n = k), each with every standard deviation of `sds` (widths sd^2),
  /// centre by centre: (c_0, sd_0^2), (c_0, sd_1^2), ..., (c_1, sd_0^2), ... Centres and
  /// widths are computed in double and rounded once to T.
  static GaussianBasis1D grid(std::size_t n, const std::vector<double>& sds);
  /// The paper's basis of size n (even): grid(n, {0.1, 0.5}), widths 0.01 and 0.25, in the
  /// order of the paper's code.
  static GaussianBasis1D paper(std::size_t n) { return grid(n, {0.1, 0.5}); }
  [[nodiscard]] std::size_t size() const { return centers.size(); }
};

/// The grid of an image of height x width values. Value (i, k) (row i, column k, stored at
/// i * width + k) sits at position t = ((i + 1/2)/height, (k + 1/2)/width): the first coordinate
/// runs down the rows, the second along the columns, both in [0, 1].
struct ImageSize {
  std::size_t height = 0;
  std::size_t width = 0;
  auto operator<=>(const ImageSize&) const = default;
};

/// Gaussian basis functions on the plane, psi_j(t) = N(t; center_j, width_j) with width_j a
/// 2 x 2 covariance. Shapes: centers (N x 2), widths (N x 4, row-major, symmetric positive
/// definite).
template <std::floating_point T>
struct GaussianBasis2D {
  using Scalar = T;
  using Grid = ImageSize;

  std::vector<T> centers;
  std::vector<T> widths;

  /// side x side centres linspace(0, 1, side)^2, centre j = i * side + k at
  /// (i/(side-1), k/(side-1)), each with covariance variance * I.
  static GaussianBasis2D grid(std::size_t side, T variance);
  /// The paper's basis: grid(10, 0.001), 100 functions.
  static GaussianBasis2D paper() { return grid(10, T(0.001)); }
  [[nodiscard]] std::size_t size() const { return centers.size() / 2; }
};

/// The ridge-regression matrix of one length L (row-major, L x N):
///   G = F^T (F F^T + lambda I)^-1,   F = [psi(t_1) ... psi(t_L)] (N x L),   t_l = (l - 1/2)/L,
/// so that B = H G fits the values H (E x L) and c = B r = H (G r). Computed in double (an
/// N x N Cholesky solve, Eigen). Throws for L = 0, lambda < 0 or not finite, or an invalid basis
/// (empty, widths <= 0).
template <std::floating_point T>
std::vector<T> ridge_matrix_1d(const GaussianBasis1D<T>& basis, std::size_t length, T lambda);

/// The same for an image: G is (height * width) x N, with the positions of ImageSize. Throws
/// also for a basis width that is not symmetric positive definite.
template <std::floating_point T>
std::vector<T> ridge_matrix_2d(const GaussianBasis2D<T>& basis, ImageSize size, T lambda);

/// G for every grid met (sequence length or image size), computed once each and kept; safe to
/// share between threads.
template <class Basis>
class RidgeCache {
 public:
  using Scalar = typename Basis::Scalar;
  using Grid = typename Basis::Grid;

  /// Checks the basis and lambda now rather than at first use.
  RidgeCache(Basis basis, Scalar lambda);
  /// G of this grid (L x N, row-major); the reference stays valid as long as the cache.
  const std::vector<Scalar>& matrix(Grid grid);
  [[nodiscard]] const Basis& basis() const { return basis_; }
  [[nodiscard]] Scalar lambda() const { return lambda_; }

 private:
  Basis basis_;
  Scalar lambda_;
  std::mutex mutex_;
  std::map<Grid, std::vector<Scalar>> matrices_;
};

template <std::floating_point T>
using RidgeCache1D = RidgeCache<GaussianBasis1D<T>>;
template <std::floating_point T>
using RidgeCache2D = RidgeCache<GaussianBasis2D<T>>;

}  // namespace sparcon
