// Slow, independent references for continuous attention on images (docs/math.md section 9, the 2D
// case of attention.h): the pixel positions of an ImageSize, the design matrix F, the ridge
// matrix G = F^T (F F^T + lambda I)^-1 by Gaussian elimination in long double, the closed-form
// expectations of the Gaussian family (alpha = 1), the context from the definition, the
// disc+cont moments and the scale of a target covariance. Nothing here calls sparcon except for
// reading a basis (its values converted exactly to long double).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "attention_reference.h"
#include "sparcon/basis.h"

namespace sparcon_test::aref2d {

using LD = long double;
inline constexpr LD kPi2d = 3.141592653589793238462643383279502884L;

using Point = std::array<LD, 2>;
using Mat2 = std::array<LD, 4>;  // row-major {m00, m01, m10, m11}

/// A 2D basis read into long double: centers (N x 2), widths (N x 4, row-major).
struct BasisLD2D {
  std::vector<LD> centers, widths;
  [[nodiscard]] std::size_t size() const { return centers.size() / 2; }
  [[nodiscard]] Point center(std::size_t j) const { return {centers[2 * j], centers[2 * j + 1]}; }
  [[nodiscard]] Mat2 width(std::size_t j) const {
    return {widths[4 * j], widths[4 * j + 1], widths[4 * j + 2], widths[4 * j + 3]};
  }
};

template <class T>
BasisLD2D to_ld(const sparcon::GaussianBasis2D<T>& b) {
  BasisLD2D out;
  for (const T c : b.centers) out.centers.push_back(static_cast<LD>(c));
  for (const T w : b.widths) out.widths.push_back(static_cast<LD>(w));
  return out;
}

/// The positions of an image, index i * width + k at ((i + 1/2)/height, (k + 1/2)/width).
inline std::vector<Point> positions(std::size_t height, std::size_t width) {
  std::vector<Point> t(height * width);
  for (std::size_t i = 0; i < height; ++i)
    for (std::size_t k = 0; k < width; ++k)
      t[i * width + k] = {(static_cast<LD>(i) + LD(0.5)) / static_cast<LD>(height),
                          (static_cast<LD>(k) + LD(0.5)) / static_cast<LD>(width)};
  return t;
}
inline std::vector<Point> positions(sparcon::ImageSize size) { return positions(size.height, size.width); }

inline LD det(const Mat2& m) { return m[0] * m[3] - m[1] * m[2]; }

/// N(t; c, S), the bivariate Gaussian density with covariance S (symmetric positive definite).
inline LD gaussian(const Point& t, const Point& c, const Mat2& s) {
  const LD d0 = t[0] - c[0], d1 = t[1] - c[1];
  const LD dt = det(s);
  // d^T S^-1 d with S^-1 = [s11 -s01; -s10 s00] / det
  const LD q = (d0 * d0 * s[3] - d0 * d1 * (s[1] + s[2]) + d1 * d1 * s[0]) / dt;
  return std::exp(-q / 2) / (2 * kPi2d * std::sqrt(dt));
}

/// F (N x P, row-major): F[j, l] = psi_j(t_l).
inline std::vector<LD> design(const BasisLD2D& basis, const std::vector<Point>& t) {
  const std::size_t n = basis.size(), len = t.size();
  std::vector<LD> f(n * len);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < len; ++l) f[j * len + l] = gaussian(t[l], basis.center(j), basis.width(j));
  return f;
}

/// G = F^T (F F^T + lambda I)^-1 (P x N, row-major) at the given positions: X solves
/// (F F^T + lambda I) X = F, and G = X^T.
inline std::vector<LD> ridge_at(const BasisLD2D& basis, const std::vector<Point>& t, LD lambda) {
  const std::size_t n = basis.size(), len = t.size();
  const std::vector<LD> f = design(basis, t);
  std::vector<LD> a(n * n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      LD s = 0;
      for (std::size_t l = 0; l < len; ++l) s += f[i * len + l] * f[j * len + l];
      a[i * n + j] = a[j * n + i] = s;
    }
  for (std::size_t i = 0; i < n; ++i) a[i * n + i] += lambda;
  std::vector<LD> x = f;
  aref::solve_in_place(a, n, x, len);
  std::vector<LD> g(len * n);
  for (std::size_t l = 0; l < len; ++l)
    for (std::size_t j = 0; j < n; ++j) g[l * n + j] = x[j * len + l];
  return g;
}

inline std::vector<LD> ridge(const BasisLD2D& basis, sparcon::ImageSize size, LD lambda) {
  return ridge_at(basis, positions(size), lambda);
}

/// alpha = 1: r_j = E_{N(mu, Sigma)}[N(t; c_j, S_j)] = N(mu; c_j, Sigma + S_j).
inline std::vector<LD> gaussian_expectations(const Point& mu, const Mat2& sigma, const BasisLD2D& basis) {
  std::vector<LD> r(basis.size());
  for (std::size_t j = 0; j < basis.size(); ++j) {
    const Mat2 w = basis.width(j);
    const Mat2 sum{sigma[0] + w[0], sigma[1] + w[1], sigma[2] + w[2], sigma[3] + w[3]};
    r[j] = gaussian(mu, basis.center(j), sum);
  }
  return r;
}

/// The context of one image from the definition: w = G r (P), c_e = sum_l w_l h_{l,e}, with
/// `rows` at the image's first value vector (P rows of E entries).
using aref::Context;
using aref::context;

/// disc+cont moments of one distribution p over the pixels (P entries): mu = sum p t and
/// C = sum p t t^T - mu mu^T + ridge I.
struct Moments {
  Point mu;
  Mat2 covariance;
};

template <class T>
Moments moments(const T* p, sparcon::ImageSize size, LD ridge) {
  const std::vector<Point> t = positions(size);
  Point mu{0, 0};
  Mat2 second{0, 0, 0, 0};
  for (std::size_t l = 0; l < t.size(); ++l) {
    const LD w = static_cast<LD>(p[l]);
    mu[0] += w * t[l][0];
    mu[1] += w * t[l][1];
    second[0] += w * t[l][0] * t[l][0];
    second[1] += w * t[l][0] * t[l][1];
    second[3] += w * t[l][1] * t[l][1];
  }
  second[2] = second[1];
  return {mu,
          {second[0] - mu[0] * mu[0] + ridge, second[1] - mu[0] * mu[1], second[2] - mu[1] * mu[0],
           second[3] - mu[1] * mu[1] + ridge}};
}

/// The scale Sigma = k C of the 2D alpha-entmax density whose covariance is C, from the
/// beta-Gaussian formulas (docs/math.md section 6, D = 2): covariance = R^2 det(Sigma)^(-gamma) /
/// (2 + 2 alpha/(alpha-1)) Sigma, gamma = 1/(2 + 2/(alpha-1)), so
/// k^(1 - 2 gamma) = (2 + 2 alpha/(alpha-1)) det(C)^gamma / R^2; alpha = 1: k = 1.
inline LD scale_factor(LD alpha, const Mat2& c) {
  if (alpha == 1) return 1;
  const LD am1 = alpha - 1;
  // R = [Gamma(1 + a/(a-1)) / (Gamma(a/(a-1)) pi) (2/(a-1))^(1/(a-1))]^((a-1)/(2 + 2(a-1))),
  // Gamma(1 + x)/Gamma(x) = x; in logarithms ((2/(a-1))^(1/(a-1)) overflows near alpha = 1).
  const LD log_inner = std::log(alpha / am1 / kPi2d) + std::log(2 / am1) / am1;
  const LD log_r2 = 2 * log_inner * am1 / (2 + 2 * am1);
  const LD gamma = 1 / (2 + 2 / am1);
  const LD d = 2 + 2 * alpha / am1;
  return std::exp((std::log(d) + gamma * std::log(det(c)) - log_r2) / (1 - 2 * gamma));
}

using aref::normwise_error;

}  // namespace sparcon_test::aref2d
