// Slow, independent references for continuous attention in 1D (docs/math.md section 9): the ridge
// matrix G in long double (Gaussian elimination with partial pivoting, no Cholesky, no Eigen),
// the context from the definition, and the disc+cont moments. Nothing here calls sparcon except
// for reading a basis; expectations E_p[psi_j] come from continuous_reference.h (adaptive
// quadrature in long double).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "continuous_reference.h"
#include "sparcon/basis.h"
#include "test_support.h"

namespace sparcon_test::aref {

using cref::LD;

/// A basis read into long double (the values of T, converted exactly).
struct BasisLD {
  std::vector<LD> centers, widths;
  [[nodiscard]] std::size_t size() const { return centers.size(); }
};

template <class T>
BasisLD to_ld(const sparcon::GaussianBasis1D<T>& b) {
  BasisLD out;
  for (std::size_t j = 0; j < b.centers.size(); ++j) {
    out.centers.push_back(static_cast<LD>(b.centers[j]));
    out.widths.push_back(static_cast<LD>(b.widths[j]));
  }
  return out;
}

/// The positions of a sequence of length L: t_l = (l - 1/2)/L, l = 1..L.
inline std::vector<LD> positions(std::size_t length) {
  std::vector<LD> t(length);
  for (std::size_t l = 0; l < length; ++l) t[l] = (static_cast<LD>(l) + LD(0.5)) / static_cast<LD>(length);
  return t;
}

/// Solves A X = R in place (A n x n, R n x m, both row-major) by Gaussian elimination with
/// partial pivoting; X is left in R.
inline void solve_in_place(std::vector<LD> a, std::size_t n, std::vector<LD>& rhs, std::size_t m) {
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::fabs(a[i * n + k]) > std::fabs(a[piv * n + k])) piv = i;
    if (piv != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[piv * n + j]);
      for (std::size_t j = 0; j < m; ++j) std::swap(rhs[k * m + j], rhs[piv * m + j]);
    }
    const LD d = a[k * n + k];
    for (std::size_t i = k + 1; i < n; ++i) {
      const LD f = a[i * n + k] / d;
      if (f == 0) continue;
      for (std::size_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      for (std::size_t j = 0; j < m; ++j) rhs[i * m + j] -= f * rhs[k * m + j];
    }
  }
  for (std::size_t kk = n; kk-- > 0;) {
    for (std::size_t j = 0; j < m; ++j) {
      LD s = rhs[kk * m + j];
      for (std::size_t i = kk + 1; i < n; ++i) s -= a[kk * n + i] * rhs[i * m + j];
      rhs[kk * m + j] = s / a[kk * n + kk];
    }
  }
}

/// F (N x L, row-major): F[j, l] = psi_j(t_l).
inline std::vector<LD> design(const BasisLD& basis, const std::vector<LD>& t) {
  const std::size_t n = basis.size(), len = t.size();
  std::vector<LD> f(n * len);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < len; ++l) f[j * len + l] = cref::gaussian(t[l], basis.centers[j], basis.widths[j]);
  return f;
}

/// G = F^T (F F^T + lambda I)^-1 (L x N, row-major) at the given positions: X solves
/// (F F^T + lambda I) X = F (N x L), and G = X^T (F F^T + lambda I is symmetric).
inline std::vector<LD> ridge_at(const BasisLD& basis, const std::vector<LD>& t, LD lambda) {
  const std::size_t n = basis.size(), len = t.size();
  const std::vector<LD> f = design(basis, t);
  std::vector<LD> a(n * n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      LD s = 0;
      for (std::size_t l = 0; l < len; ++l) s += f[i * len + l] * f[j * len + l];
      a[i * n + j] = s + (i == j ? lambda : 0);
    }
  std::vector<LD> x = f;
  solve_in_place(a, n, x, len);
  std::vector<LD> g(len * n);
  for (std::size_t l = 0; l < len; ++l)
    for (std::size_t j = 0; j < n; ++j) g[l * n + j] = x[j * len + l];
  return g;
}

inline std::vector<LD> ridge(const BasisLD& basis, std::size_t length, LD lambda) {
  return ridge_at(basis, positions(length), lambda);
}

/// r_j = E_p[psi_j] for the reference density (alpha, mu, sigma2), by adaptive quadrature.
inline std::vector<LD> expectations(LD alpha, LD mu, LD sigma2, const BasisLD& basis) {
  const cref::Density p = cref::make_density(alpha, mu, sigma2);
  std::vector<LD> r(basis.size());
  for (std::size_t j = 0; j < basis.size(); ++j) r[j] = cref::expect(p, basis.centers[j], basis.widths[j]);
  return r;
}

/// The context from the definition: w = G r (one weight per position), c = sum_l w_l h_l.
/// `rows` points at the first value row of the example (`positions` rows of E entries).
struct Context {
  std::vector<LD> c;      ///< the context (E)
  std::vector<LD> scale;  ///< sum_l |h_l| sum_j |G_lj r_j| (E): the size of the terms summed
  std::vector<LD> w;      ///< G r (one per position)
};

template <class T>
Context context(const std::vector<LD>& g, const std::vector<LD>& r, const T* rows, std::size_t positions,
                std::size_t features) {
  const std::size_t n = r.size();
  Context out{std::vector<LD>(features, 0), std::vector<LD>(features, 0), std::vector<LD>(positions, 0)};
  for (std::size_t l = 0; l < positions; ++l) {
    LD w = 0, w_abs = 0;
    for (std::size_t j = 0; j < n; ++j) {
      w += g[l * n + j] * r[j];
      w_abs += std::fabs(g[l * n + j] * r[j]);
    }
    out.w[l] = w;
    for (std::size_t e = 0; e < features; ++e) {
      const LD h = static_cast<LD>(rows[l * features + e]);
      out.c[e] += w * h;
      out.scale[e] += w_abs * std::fabs(h);
    }
  }
  return out;
}

/// The context of one sequence (its first len_b positions) for the density (alpha, mu, sigma2).
template <class T>
Context context(LD alpha, LD mu, LD sigma2, const BasisLD& basis, LD lambda, std::size_t len_b,
                const T* rows, std::size_t features) {
  return context(ridge(basis, len_b, lambda), expectations(alpha, mu, sigma2, basis), rows, len_b, features);
}

/// max |got - want| / max |want| over a matrix (G has entries of every size; its rounding error
/// is relative to the largest).
template <class T>
LD normwise_error(const std::vector<T>& got, const std::vector<LD>& want) {
  LD diff = 0, big = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<LD>(got[i]) - want[i]));
    big = std::max(big, std::fabs(want[i]));
  }
  return diff / big;
}

/// Variance of the reference density (alpha, 0, sigma2), by quadrature (no closed form used).
inline LD density_variance(LD alpha, LD sigma2) {
  const cref::Density p = cref::make_density(alpha, 0, sigma2);
  return cref::integrate([&](LD t) { return t * t * p.pdf(t); }, p.lo(), p.hi(), {0});
}

}  // namespace sparcon_test::aref
