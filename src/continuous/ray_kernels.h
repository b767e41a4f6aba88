// The angular rule of the 2D expectation for one (density, basis function) pair
// (expectation_2d.cc, docs/math.md sections 7 and 11), its rays evaluated several at a time with
// Google Highway: ray_kernels-inl.h holds the kernel, ray_kernels.cc compiles it for every target
// and dispatches to the best one for the running CPU, as the discrete kernels do.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sparcon::simd {

/// One pair in whitened polar coordinates: along the ray of unit direction u_i = (cos v_i, sin v_i),
/// psi = exp(-(a_i rho^2 - 2 b_i rho + kappa) / 2) with a_i = u_i^T A u_i, b_i = beta . u_i, and the
/// density's profile (1 - rho^2 / R^2)^k on [0, R].
struct RayPair {
  const double* cos = nullptr;  ///< cos v_i, i < n
  const double* sin = nullptr;  ///< sin v_i, i < n
  std::size_t n = 0;            ///< number of rays
  double a00 = 0, a01 = 0, a11 = 0;  ///< A (symmetric, positive definite)
  double b0 = 0, b1 = 0;             ///< beta
  double kappa = 0, radius = 0, k = 1;
  double scale = 0;  ///< the weight of a ray is scale s exp(log f) (expectation_2d.cc)
};

/// The rule's sums over the rays that are not negligible: e0 = sum w P_1, e1 = sum w P_2 u,
/// e2 = sum w P_3 u u^T (xx, xy, yy), with P_m the radial profile moments of the ray
/// (profile_moments.h) and w its weight.
struct RaySums {
  double e0 = 0;
  double e1[2] = {0, 0};
  double e2[3] = {0, 0, 0};
};

RaySums ray_sums(const RayPair& pair);

/// What one target's kernel is, for the tests that run every target.
struct RayKernelTable {
  RaySums (*ray_sums)(const RayPair&);
  std::int64_t target;
};

namespace detail {

/// As reselect_value_kernels (value_kernels.h), for the ray kernel; returns the target in use.
std::int64_t reselect_ray_kernels();

}  // namespace detail

}  // namespace sparcon::simd
