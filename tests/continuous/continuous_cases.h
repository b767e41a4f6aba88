// Shared cases and tolerances of the continuous tests: the alphas, the (mu, sigma2) grid, the
// bases, and the per-type tolerances. Nothing here calls sparcon except for building bases.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "continuous_reference.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {

using cref::LD;

/// The alphas of the brief: closed forms (1, 2) and quadrature (the others).
inline const std::vector<LD>& all_alphas() {
  static const std::vector<LD> a{1, 1.25L, 1.5L, 2, 2.5L, 3, 4};
  return a;
}

/// (mu, sigma2) pairs: mu inside and outside [0, 1], sigma2 from 1e-6 to 10.
struct Location {
  LD mu, sigma2;
};
inline const std::vector<Location>& locations() {
  static const std::vector<Location> l{{0.5L, 1e-6L}, {0.25L, 1e-6L}, {-1, 1e-4L}, {0.3L, 1e-3L},
                                       {0.9L, 0.05L}, {-0.4L, 0.2L},  {0.1L, 1},   {1.7L, 10},
                                       {0.5L, 10}};
  return l;
}

/// Per-type tolerances (relative): tight in double, a few float ulps (times conditioning) in float.
template <class T>
struct Tol;
template <>
struct Tol<double> {
  static constexpr LD tight = 1e-12L;  ///< densities: tau, half_width, moments
  static constexpr LD expect = 1e-10L; ///< expectations
  static constexpr LD pdf = 1e-12L;
};
template <>
struct Tol<float> {
  static constexpr LD tight = 1e-6L;
  static constexpr LD expect = 1e-5L;
  static constexpr LD pdf = 1e-5L;
};

/// Quadrature options for integrating a library function of type T: in float the integrand is
/// noisy at the 1e-7 level, so the tolerance stops above the noise and the panel count is capped.
template <class T>
cref::QuadOptions quad_for() {
  cref::QuadOptions o;
  if constexpr (std::is_same_v<T, float>) {
    o.rel_tol = 1e-9L;
    o.max_panels = 400;
  }
  return o;
}

/// A custom basis with widths from 1e-4 to 1, centres inside and outside [0, 1].
template <class T>
sparcon::GaussianBasis1D<T> custom_basis() {
  sparcon::GaussianBasis1D<T> b;
  for (const LD c : {-0.3L, 0.0L, 0.25L, 0.5L, 0.77L, 1.0L, 1.4L}) {
    for (const LD w : {1e-4L, 1e-3L, 1e-2L, 0.1L, 1.0L}) {
      b.centers.push_back(static_cast<T>(c));
      b.widths.push_back(static_cast<T>(w));
    }
  }
  return b;
}

inline std::string describe(LD alpha, LD mu, LD sigma2) {
  std::ostringstream s;
  s.precision(9);
  s << "alpha=" << static_cast<double>(alpha) << " mu=" << static_cast<double>(mu)
    << " sigma2=" << static_cast<double>(sigma2);
  return s.str();
}

}  // namespace sparcon_test
