// Shared cases, conversions and tolerances of the 2D density / expectation / backward tests
// (density_2d_test.cc, expectation_2d_test.cc, backward_2d_test.cc). The references themselves
// are in continuous_reference_2d.h and never call sparcon.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "continuous_reference_2d.h"
#include "sparcon/basis.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test::cases2d {

using cref2::LD;
using cref2::M2;
using cref2::V2;

/// Per-type tolerances (relative).
template <class T>
struct Tol2;
template <>
struct Tol2<double> {
  static constexpr LD tight = 1e-12L;  ///< tau, radius, mass, moments
  static constexpr LD pdf = 1e-12L;
};
template <>
struct Tol2<float> {
  static constexpr LD tight = 2e-6L;
  static constexpr LD pdf = 1e-5L;
};

/// The alphas of the density tests.
inline const std::vector<LD>& alphas() {
  static const std::vector<LD> a{1, 1.25L, 1.5L, 2, 3};
  return a;
}

/// A location and a scale (symmetric; off-diagonals bit-identical).
struct Case {
  V2 mu;
  M2 sigma;
};

/// Densities of the density tests: isotropic, anisotropic, rotated (non-zero off-diagonal),
/// from tiny (1e-6) to large (30) scales, mu inside and outside [0, 1]^2.
inline const std::vector<Case>& density_cases() {
  static const std::vector<Case> c{
      {{0.5L, 0.5L}, {1e-6L, 0, 0, 1e-6L}},
      {{0.25L, 0.75L}, {0.01L, 0, 0, 0.01L}},
      {{0.1L, 0.9L}, {0.05L, 0, 0, 0.002L}},
      {{0.3L, 0.7L}, cref2::rotated(0.02L, 0.002L, 0.6L)},
      {{-0.2L, 1.3L}, cref2::rotated(0.5L, 0.1L, -0.3L)},
      {{0.77L, 0.23L}, cref2::rotated(1e-3L, 1e-5L, 1.0L)},
      {{2, -1}, cref2::rotated(30, 5, 2.0L)},
  };
  return c;
}

template <class T>
sparcon::Vector2<T> to_vec(const V2& v) {
  return {static_cast<T>(v[0]), static_cast<T>(v[1])};
}
template <class T>
sparcon::Matrix2<T> to_mat(const M2& m) {
  return {static_cast<T>(m[0]), static_cast<T>(m[1]), static_cast<T>(m[2]), static_cast<T>(m[3])};
}
template <class T>
V2 from_vec(const sparcon::Vector2<T>& v) {
  return {static_cast<LD>(v[0]), static_cast<LD>(v[1])};
}
template <class T>
M2 from_mat(const sparcon::Matrix2<T>& m) {
  return {static_cast<LD>(m[0]), static_cast<LD>(m[1]), static_cast<LD>(m[2]), static_cast<LD>(m[3])};
}
/// The case with its parameters rounded to T (the reference then uses exactly what the library got).
template <class T>
Case rounded(const Case& c) {
  return {from_vec(to_vec<T>(c.mu)), from_mat(to_mat<T>(c.sigma))};
}

inline std::string describe(LD alpha, const V2& mu, const M2& sigma) {
  std::ostringstream s;
  s.precision(9);
  s << "alpha=" << static_cast<double>(alpha) << " mu=(" << static_cast<double>(mu[0]) << ", "
    << static_cast<double>(mu[1]) << ") Sigma={" << static_cast<double>(sigma[0]) << ", "
    << static_cast<double>(sigma[1]) << ", " << static_cast<double>(sigma[2]) << ", "
    << static_cast<double>(sigma[3]) << "}";
  return s.str();
}

inline LD rel_err(LD got, LD want) { return want == 0 ? std::fabs(got) : std::fabs(got - want) / std::fabs(want); }

/// The basis of the expectation and gradient tests: the paper's 10 x 10 grid (0.001 I) and a
/// few hand-made functions with anisotropic, rotated widths, some centred far outside the
/// supports of the densities.
template <class T>
sparcon::GaussianBasis2D<T> test_basis() {
  sparcon::GaussianBasis2D<T> b = sparcon::GaussianBasis2D<T>::paper();
  const std::vector<Case> extra{
      {{3, -2}, {0.5L, 0.2L, 0.2L, 0.3L}},
      {{-1, 0.5L}, {1e-3L, 0, 0, 0.04L}},
      {{0.5L, 0.5L}, {0.01L, -0.008L, -0.008L, 0.01L}},
      {{1.6L, 1.1L}, cref2::rotated(0.08L, 0.004L, 0.9L)},
      {{0.35L, 0.6L}, cref2::rotated(2e-4L, 5e-3L, -0.4L)},
  };
  for (const Case& e : extra) {
    b.centers.push_back(static_cast<T>(e.mu[0]));
    b.centers.push_back(static_cast<T>(e.mu[1]));
    for (int k = 0; k < 4; ++k) b.widths.push_back(static_cast<T>(e.sigma[k]));
  }
  return b;
}

/// The reference basis functions of a library basis (its values as stored, in long double).
template <class T>
std::vector<cref2::Gaussian> reference_basis(const sparcon::GaussianBasis2D<T>& basis) {
  std::vector<cref2::Gaussian> out;
  for (std::size_t j = 0; j < basis.size(); ++j) {
    out.push_back(cref2::make_gaussian(
        {basis.centers[2 * j], basis.centers[2 * j + 1]},
        {basis.widths[4 * j], basis.widths[4 * j + 1], basis.widths[4 * j + 2], basis.widths[4 * j + 3]}));
  }
  return out;
}

/// Flattened batch arrays (mu: B x 2, sigma: B x 4) of a list of cases, in T.
template <class T>
struct Batch2 {
  std::vector<T> mu, sigma;
  std::vector<Case> cases;  ///< the values as stored (rounded to T)
};
template <class T>
Batch2<T> make_batch(const std::vector<Case>& cases) {
  Batch2<T> b;
  for (const Case& c : cases) {
    const Case r = rounded<T>(c);
    b.cases.push_back(r);
    for (int k = 0; k < 2; ++k) b.mu.push_back(static_cast<T>(r.mu[k]));
    for (int k = 0; k < 4; ++k) b.sigma.push_back(static_cast<T>(r.sigma[k]));
  }
  return b;
}

}  // namespace sparcon_test::cases2d
