// 2 x 2 matrices of the 2D continuous core: conversions between the public row-major arrays and
// Eigen, and the closed forms the core needs.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>

namespace sparcon::detail {

template <class T>
Eigen::Matrix2d to_matrix(const std::array<T, 4>& m) {
  Eigen::Matrix2d out;
  out << m[0], m[1], m[2], m[3];
  return out;
}

template <class T>
std::array<T, 4> to_array(const Eigen::Matrix2d& m) {
  return {static_cast<T>(m(0, 0)), static_cast<T>(m(0, 1)), static_cast<T>(m(1, 0)),
          static_cast<T>(m(1, 1))};
}

inline Eigen::Matrix2d symmetrised(const Eigen::Matrix2d& m) { return 0.5 * (m + m.transpose()); }

/// The symmetric square root of a symmetric positive definite M:
///   sqrt(M) = (M + sqrt(det M) I) / sqrt(tr M + 2 sqrt(det M)).
inline Eigen::Matrix2d spd_sqrt(const Eigen::Matrix2d& m) {
  const double root_det = std::sqrt(m.determinant());
  return (m + root_det * Eigen::Matrix2d::Identity()) / std::sqrt(m.trace() + 2 * root_det);
}

/// The larger eigenvalue of a symmetric M.
inline double largest_eigenvalue(const Eigen::Matrix2d& m) {
  const double half_trace = 0.5 * m.trace(), half_gap = 0.5 * (m(0, 0) - m(1, 1));
  return half_trace + std::hypot(half_gap, m(0, 1));
}

/// The smaller eigenvalue of a symmetric M.
inline double smallest_eigenvalue(const Eigen::Matrix2d& m) {
  return m.determinant() / largest_eigenvalue(m);  // stable: the product over the larger
}

/// gamma of the elliptical family in 2D: the shape of p scales as Sigma det(Sigma)^(-gamma),
/// gamma = (alpha - 1)/(2 alpha) (0 for the Gaussian).
double elliptical_gamma(double alpha);

}  // namespace sparcon::detail
