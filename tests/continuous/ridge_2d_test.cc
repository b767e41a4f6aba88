// The ridge-regression matrix of images (basis.h, docs/math.md 8): GaussianBasis2D::grid and
// ::paper, ridge_matrix_2d against a long-double Gaussian-elimination reference (square and
// non-square images, anisotropic basis widths), the pixel positions ((i + 1/2)/H, (k + 1/2)/W),
// the fit of a function in the span of the basis, RidgeCache2D (per size, shared between
// threads), and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "attention_reference.h"
#include "attention_reference_2d.h"
#include "continuous_cases.h"
#include "sparcon/basis.h"

namespace sparcon_test {
namespace {

using aref2d::LD;
using sparcon::ImageSize;

std::string label(std::size_t n, ImageSize size, LD lambda) {
  std::ostringstream s;
  s << "N=" << n << " image=" << size.height << "x" << size.width << " lambda=" << static_cast<double>(lambda);
  return s.str();
}

/// A basis with anisotropic, rotated widths and centres inside and outside [0, 1]^2.
template <class T>
sparcon::GaussianBasis2D<T> anisotropic_basis() {
  sparcon::GaussianBasis2D<T> b;
  const std::vector<std::array<LD, 2>> centers{{0.1L, 0.2L}, {0.5L, 0.5L}, {0.8L, 0.3L}, {0.3L, 0.9L},
                                               {-0.2L, 0.6L}, {1.1L, 1.05L}, {0.65L, 0.75L}};
  const std::vector<std::array<LD, 4>> widths{{0.02L, 0.012L, 0.012L, 0.01L},   {0.004L, -0.002L, -0.002L, 0.03L},
                                              {0.05L, 0, 0, 0.002L},             {0.01L, 0.009L, 0.009L, 0.01L},
                                              {0.1L, -0.03L, -0.03L, 0.05L},     {0.003L, 0.001L, 0.001L, 0.003L},
                                              {0.0015L, 0.0005L, 0.0005L, 0.006L}};
  for (std::size_t j = 0; j < centers.size(); ++j) {
    for (const LD c : centers[j]) b.centers.push_back(static_cast<T>(c));
    for (const LD w : widths[j]) b.widths.push_back(static_cast<T>(w));
  }
  return b;
}

// ---- the bases -----------------------------------------------------------------------------

template <class T>
class Basis2D : public ::testing::Test {};
TYPED_TEST_SUITE(Basis2D, FloatTypes);

TYPED_TEST(Basis2D, GridLayout) {
  using T = TypeParam;
  const LD ulps = 4 * static_cast<LD>(std::numeric_limits<T>::epsilon());
  for (const std::size_t side : {std::size_t{2}, std::size_t{4}, std::size_t{7}}) {
    const T variance = T(0.0123);
    const auto b = sparcon::GaussianBasis2D<T>::grid(side, variance);
    ASSERT_EQ(b.size(), side * side);
    ASSERT_EQ(b.centers.size(), 2 * side * side);
    ASSERT_EQ(b.widths.size(), 4 * side * side);
    for (std::size_t i = 0; i < side; ++i)
      for (std::size_t k = 0; k < side; ++k) {
        const std::size_t j = i * side + k;
        const LD ci = static_cast<LD>(i) / static_cast<LD>(side - 1), ck = static_cast<LD>(k) / static_cast<LD>(side - 1);
        EXPECT_NEAR(static_cast<LD>(b.centers[2 * j]), ci, ulps) << "side=" << side << " j=" << j;
        EXPECT_NEAR(static_cast<LD>(b.centers[2 * j + 1]), ck, ulps) << "side=" << side << " j=" << j;
        EXPECT_EQ(b.widths[4 * j], variance) << "side=" << side << " j=" << j;
        EXPECT_EQ(b.widths[4 * j + 1], T(0)) << "side=" << side << " j=" << j;
        EXPECT_EQ(b.widths[4 * j + 2], T(0)) << "side=" << side << " j=" << j;
        EXPECT_EQ(b.widths[4 * j + 3], variance) << "side=" << side << " j=" << j;
      }
    // the corners of linspace(0, 1, side)^2 exactly
    EXPECT_EQ(b.centers[0], T(0));
    EXPECT_EQ(b.centers[1], T(0));
    EXPECT_NEAR(static_cast<LD>(b.centers[2 * (side * side - 1)]), 1.0L, ulps);
    EXPECT_NEAR(static_cast<LD>(b.centers[2 * (side * side - 1) + 1]), 1.0L, ulps);
  }
}

TYPED_TEST(Basis2D, PaperIsTenByTenWithVariance0001) {
  using T = TypeParam;
  const LD ulps = 4 * static_cast<LD>(std::numeric_limits<T>::epsilon());
  const auto b = sparcon::GaussianBasis2D<T>::paper();
  ASSERT_EQ(b.size(), 100u);
  ASSERT_EQ(b.centers.size(), 200u);
  ASSERT_EQ(b.widths.size(), 400u);
  for (std::size_t i = 0; i < 10; ++i)
    for (std::size_t k = 0; k < 10; ++k) {
      const std::size_t j = i * 10 + k;
      EXPECT_NEAR(static_cast<LD>(b.centers[2 * j]), static_cast<LD>(i) / 9, ulps) << "j=" << j;
      EXPECT_NEAR(static_cast<LD>(b.centers[2 * j + 1]), static_cast<LD>(k) / 9, ulps) << "j=" << j;
      EXPECT_EQ(b.widths[4 * j], T(0.001)) << "j=" << j;
      EXPECT_EQ(b.widths[4 * j + 1], T(0)) << "j=" << j;
      EXPECT_EQ(b.widths[4 * j + 2], T(0)) << "j=" << j;
      EXPECT_EQ(b.widths[4 * j + 3], T(0.001)) << "j=" << j;
    }
  const auto g = sparcon::GaussianBasis2D<T>::grid(10, T(0.001));
  EXPECT_EQ(b.centers, g.centers);
  EXPECT_EQ(b.widths, g.widths);
}

// ---- ridge_matrix_2d against the reference ---------------------------------------------------

TEST(RidgeMatrix2D, MatchesLongDoubleReferencePaperBasis) {
  // A double Cholesky solve of a well-conditioned N x N system: ~1e-13 normwise expected.
  const auto basis = sparcon::GaussianBasis2D<double>::paper();
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  for (const double lambda : {0.01, 0.1, 1.0}) {
    for (const ImageSize size : {ImageSize{1, 1}, ImageSize{3, 5}, ImageSize{7, 12}, ImageSize{12, 7}, ImageSize{10, 10},
                                 ImageSize{14, 14}}) {
      const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, size, lambda);
      ASSERT_EQ(g.size(), size.height * size.width * 100) << label(100, size, lambda);
      EXPECT_LE(aref2d::normwise_error(g, aref2d::ridge(ref_basis, size, lambda)), 1e-10L) << label(100, size, lambda);
    }
  }
}

TEST(RidgeMatrix2D, MatchesLongDoubleReferenceGridBases) {
  for (const auto& basis : {sparcon::GaussianBasis2D<double>::grid(4, 0.01), sparcon::GaussianBasis2D<double>::grid(3, 0.05),
                            sparcon::GaussianBasis2D<double>::grid(6, 0.002)}) {
    const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
    for (const double lambda : {0.01, 1.0}) {
      for (const ImageSize size : {ImageSize{1, 1}, ImageSize{2, 9}, ImageSize{7, 12}, ImageSize{5, 6}}) {
        const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, size, lambda);
        ASSERT_EQ(g.size(), size.height * size.width * basis.size()) << label(basis.size(), size, lambda);
        EXPECT_LE(aref2d::normwise_error(g, aref2d::ridge(ref_basis, size, lambda)), 1e-10L)
            << label(basis.size(), size, lambda);
      }
    }
  }
}

TEST(RidgeMatrix2D, MatchesLongDoubleReferenceAnisotropicBasis) {
  // Rotated, elongated widths (off-diagonal entries of either sign) and centres outside the
  // unit square: the full 2 x 2 covariance of each basis function and the orientation of the
  // two coordinates matter.
  const auto basis = anisotropic_basis<double>();
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  for (const double lambda : {0.01, 0.5}) {
    for (const ImageSize size : {ImageSize{1, 1}, ImageSize{4, 9}, ImageSize{9, 4}, ImageSize{8, 8}}) {
      const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, size, lambda);
      ASSERT_EQ(g.size(), size.height * size.width * basis.size());
      EXPECT_LE(aref2d::normwise_error(g, aref2d::ridge(ref_basis, size, lambda)), 1e-10L)
          << label(basis.size(), size, lambda);
    }
  }
}

TEST(RidgeMatrix2D, MatchesLongDoubleReferenceFloat) {
  // Computed in double and rounded to float: a few float ulps of the largest entry.
  for (const auto& basis : {sparcon::GaussianBasis2D<float>::paper(), anisotropic_basis<float>()}) {
    const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
    for (const float lambda : {0.01f, 1.0f}) {
      for (const ImageSize size : {ImageSize{1, 1}, ImageSize{7, 12}, ImageSize{10, 10}}) {
        const std::vector<float> g = sparcon::ridge_matrix_2d<float>(basis, size, lambda);
        ASSERT_EQ(g.size(), size.height * size.width * basis.size());
        EXPECT_LE(aref2d::normwise_error(g, aref2d::ridge(ref_basis, size, static_cast<LD>(lambda))), 1e-6L)
            << label(basis.size(), size, lambda);
      }
    }
  }
}

TEST(RidgeMatrix2D, OnePixelClosedForm) {
  // A 1 x 1 image, t = (1/2, 1/2): by Sherman-Morrison G = psi^T / (lambda + |psi|^2).
  for (const auto& basis : {sparcon::GaussianBasis2D<double>::paper(), anisotropic_basis<double>()}) {
    const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
    for (const double lambda : {0.01, 1.0}) {
      std::vector<LD> psi(basis.size());
      LD norm2 = 0;
      for (std::size_t j = 0; j < basis.size(); ++j) {
        psi[j] = aref2d::gaussian({0.5L, 0.5L}, ref_basis.center(j), ref_basis.width(j));
        norm2 += psi[j] * psi[j];
      }
      for (LD& v : psi) v /= lambda + norm2;
      const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, {1, 1}, lambda);
      ASSERT_EQ(g.size(), basis.size());
      EXPECT_LE(aref2d::normwise_error(g, psi), 1e-12L) << "N=" << basis.size() << " lambda=" << lambda;
    }
  }
}

TEST(RidgeMatrix2D, PositionsRunDownRowsThenAlongColumns) {
  // Value (i, k) of an H x W image (index i*W + k) sits at ((i + 1/2)/H, (k + 1/2)/W). A port
  // that swaps the coordinates, stores column-major, or uses the positions i/H, i/(H-1) gets
  // a G far from the reference.
  const auto basis = anisotropic_basis<double>();
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  const ImageSize size{3, 5};
  const double lambda = 0.01;
  const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, size, lambda);
  ASSERT_EQ(g.size(), 15 * basis.size());
  const std::vector<aref2d::Point> t = aref2d::positions(size);
  EXPECT_EQ(t[0], (aref2d::Point{1.0L / 6, 0.1L}));
  EXPECT_EQ(t[1], (aref2d::Point{1.0L / 6, 0.3L}));
  EXPECT_EQ(t[5], (aref2d::Point{0.5L, 0.1L}));
  EXPECT_LE(aref2d::normwise_error(g, aref2d::ridge_at(ref_basis, t, lambda)), 1e-10L);
  std::vector<aref2d::Point> swapped(15), column_major(15), corner(15), linspace(15);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < 5; ++k) {
      const LD x = (i + 0.5L) / 3, y = (k + 0.5L) / 5;
      swapped[i * 5 + k] = {y, x};
      column_major[k * 3 + i] = {x, y};
      corner[i * 5 + k] = {i / 3.0L, k / 5.0L};
      linspace[i * 5 + k] = {i / 2.0L, k / 4.0L};
    }
  for (const auto& wrong : {swapped, column_major, corner, linspace})
    EXPECT_GT(aref2d::normwise_error(g, aref2d::ridge_at(ref_basis, wrong, lambda)), 1e-3L);
}

// ---- fitting a function in the span of the basis --------------------------------------------

/// h_l = B0 psi(t_l) (E x P) for random B0; B = H G. Returns max |B - B0| / max |B0| and the
/// error of the fitted values V(t_l) = B psi(t_l), relative to max |h|.
struct Fit {
  LD coefficient_error = 0;
  LD value_error = 0;
};

Fit fit_in_span(const sparcon::GaussianBasis2D<double>& basis, ImageSize size, double lambda) {
  const std::size_t n = basis.size(), e_dim = 3, pixels = size.height * size.width;
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> coef(-1, 1);
  std::vector<double> b0(e_dim * n);
  for (double& v : b0) v = coef(rng);
  const std::vector<LD> f = aref2d::design(ref_basis, aref2d::positions(size));  // N x P
  std::vector<double> h(e_dim * pixels, 0);
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t l = 0; l < pixels; ++l) {
      LD s = 0;
      for (std::size_t j = 0; j < n; ++j) s += b0[e * n + j] * f[j * pixels + l];
      h[e * pixels + l] = static_cast<double>(s);
    }
  const std::vector<double> g = sparcon::ridge_matrix_2d<double>(basis, size, lambda);
  EXPECT_EQ(g.size(), pixels * n);
  if (g.size() != pixels * n) return {1, 1};
  std::vector<LD> b(e_dim * n, 0);
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < pixels; ++l) b[e * n + j] += static_cast<LD>(h[e * pixels + l]) * g[l * n + j];
  Fit fit;
  LD b0_max = 0, h_max = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    fit.coefficient_error = std::max(fit.coefficient_error, std::fabs(b[i] - b0[i]));
    b0_max = std::max(b0_max, std::fabs(static_cast<LD>(b0[i])));
  }
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t l = 0; l < pixels; ++l) {
      LD v = 0;
      for (std::size_t j = 0; j < n; ++j) v += b[e * n + j] * f[j * pixels + l];
      fit.value_error = std::max(fit.value_error, std::fabs(v - h[e * pixels + l]));
      h_max = std::max(h_max, std::fabs(static_cast<LD>(h[e * pixels + l])));
    }
  fit.coefficient_error /= b0_max;
  fit.value_error /= h_max;
  return fit;
}

TEST(RidgeMatrix2D, ReproducesFunctionInSpanWellConditioned) {
  // 16 Gaussians of standard deviation 0.1 on linspace(0, 1, 4)^2 (neighbours overlap by
  // exp(-(1/3)^2/(4 * 0.01)) ~ 0.06), sampled on images finer than their width: F has a small
  // condition number, so with lambda = 0 or 1e-10 B = H G recovers B0.
  const auto basis = sparcon::GaussianBasis2D<double>::grid(4, 0.01);
  for (const double lambda : {0.0, 1e-10}) {
    for (const ImageSize size : {ImageSize{12, 12}, ImageSize{9, 14}, ImageSize{20, 16}}) {
      const Fit fit = fit_in_span(basis, size, lambda);
      EXPECT_LE(fit.coefficient_error, 1e-6L) << label(16, size, lambda);
      EXPECT_LE(fit.value_error, 1e-6L) << label(16, size, lambda);
    }
  }
}

TEST(RidgeMatrix2D, ReproducesFunctionInSpanPaperBasis) {
  // The paper's basis (standard deviation 0.032, spacing 1/9) on a 32 x 32 image: the
  // coefficients are identifiable and the fitted values reproduce h.
  const auto basis = sparcon::GaussianBasis2D<double>::paper();
  const Fit fit = fit_in_span(basis, {32, 32}, 1e-10);
  EXPECT_LE(fit.coefficient_error, 1e-5L);
  EXPECT_LE(fit.value_error, 1e-6L);
}

// ---- RidgeCache2D ----------------------------------------------------------------------------

TEST(RidgeCache2D, MatchesRidgeMatrixAndKeepsAddresses) {
  const auto basis = sparcon::GaussianBasis2D<double>::grid(5, 0.004);
  sparcon::RidgeCache2D<double> cache(basis, 0.1);
  EXPECT_EQ(cache.lambda(), 0.1);
  EXPECT_EQ(cache.basis().centers, basis.centers);
  EXPECT_EQ(cache.basis().widths, basis.widths);
  const std::vector<ImageSize> sizes{{7, 12}, {12, 7}, {1, 1}, {5, 5}, {3, 8}, {8, 3}};
  std::vector<const std::vector<double>*> first;
  for (const ImageSize size : sizes) {
    const std::vector<double>& m = cache.matrix(size);
    first.push_back(&m);
    EXPECT_EQ(m.size(), size.height * size.width * basis.size());
    EXPECT_EQ(m, sparcon::ridge_matrix_2d<double>(basis, size, 0.1)) << label(25, size, 0.1);
  }
  // Distinct sizes, distinct matrices (a transposed size is another grid).
  for (std::size_t a = 0; a < sizes.size(); ++a)
    for (std::size_t b = a + 1; b < sizes.size(); ++b) {
      EXPECT_NE(first[a], first[b]) << a << " " << b;
      EXPECT_NE(*first[a], *first[b]) << a << " " << b;
    }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::vector<double>& m = cache.matrix(sizes[i]);
    EXPECT_EQ(&m, first[i]) << label(25, sizes[i], 0.1);
    EXPECT_EQ(m, sparcon::ridge_matrix_2d<double>(basis, sizes[i], 0.1)) << label(25, sizes[i], 0.1);
  }
}

TEST(RidgeCache2D, FloatMatchesRidgeMatrix) {
  const auto basis = sparcon::GaussianBasis2D<float>::paper();
  sparcon::RidgeCache2D<float> cache(basis, 0.01f);
  for (const ImageSize size : {ImageSize{6, 4}, ImageSize{4, 6}, ImageSize{6, 4}})
    EXPECT_EQ(cache.matrix(size), sparcon::ridge_matrix_2d<float>(basis, size, 0.01f));
}

TEST(RidgeCache2D, SeveralThreadsAtOnce) {
  const auto basis = sparcon::GaussianBasis2D<double>::grid(4, 0.01);
  sparcon::RidgeCache2D<double> cache(basis, 0.01);
  std::vector<ImageSize> sizes;
  for (std::size_t h = 1; h <= 6; ++h)
    for (std::size_t w = 1; w <= 6; ++w) sizes.push_back({h, w});
  constexpr std::size_t kThreads = 4;
  std::vector<std::vector<const std::vector<double>*>> seen(kThreads, std::vector<const std::vector<double>*>(sizes.size()));
  std::vector<std::thread> threads;
  for (std::size_t th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      // each thread its own order, twice: insertions and look-ups interleave
      std::vector<std::size_t> order(sizes.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::mt19937 rng(static_cast<unsigned>(th));
      std::shuffle(order.begin(), order.end(), rng);
      for (int round = 0; round < 2; ++round)
        for (const std::size_t i : order) seen[th][i] = &cache.matrix(sizes[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_NE(seen[0][i], nullptr);
    for (std::size_t th = 1; th < kThreads; ++th) EXPECT_EQ(seen[th][i], seen[0][i]) << label(16, sizes[i], 0.01);
    EXPECT_EQ(seen[0][i], &cache.matrix(sizes[i])) << label(16, sizes[i], 0.01);
    EXPECT_EQ(*seen[0][i], sparcon::ridge_matrix_2d<double>(basis, sizes[i], 0.01)) << label(16, sizes[i], 0.01);
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class Ridge2DErrors : public ::testing::Test {};
TYPED_TEST_SUITE(Ridge2DErrors, FloatTypes);

/// The names a message about the basis widths may use.
const std::vector<std::string>& width_names() {
  static const std::vector<std::string> n{"basis", "widths", "width"};
  return n;
}

TYPED_TEST(Ridge2DErrors, RidgeMatrixArguments) {
  using T = TypeParam;
  using Basis = sparcon::GaussianBasis2D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const Basis basis = Basis::grid(3, T(0.01));
  auto call = [](const Basis& b, ImageSize size, T lambda) {
    return [b, size, lambda] { (void)sparcon::ridge_matrix_2d<T>(b, size, lambda); };
  };
  EXPECT_NO_THROW(call(basis, {4, 5}, T(0.01))());
  EXPECT_TRUE(throws_naming(call(basis, {0, 5}, T(0.01)), {{"height", "size"}}));
  EXPECT_TRUE(throws_naming(call(basis, {5, 0}, T(0.01)), {{"width", "size"}}));
  EXPECT_TRUE(throws_naming(call(basis, {0, 0}, T(0.01)), {{"height", "width", "size"}}));
  EXPECT_TRUE(throws_naming(call(basis, {4, 5}, T(-0.5)), {{"lambda"}, {"-0.5"}}));
  EXPECT_TRUE(throws_naming(call(basis, {4, 5}, nan), {{"lambda"}, {"nan"}}));
  EXPECT_TRUE(throws_naming(call(basis, {4, 5}, inf), {{"lambda"}}));
  EXPECT_TRUE(throws_naming(call(Basis{}, {4, 5}, T(0.01)), {{"basis"}}));
  {
    Basis b = basis;  // one width too few
    b.widths.resize(b.widths.size() - 4);
    EXPECT_TRUE(throws_naming(call(b, {4, 5}, T(0.01)), {{"basis", "widths", "centers"}}));
    b = basis;  // one width too many
    b.widths.insert(b.widths.end(), {T(0.01), T(0), T(0), T(0.01)});
    EXPECT_TRUE(throws_naming(call(b, {4, 5}, T(0.01)), {{"basis", "widths", "centers"}}));
    b = basis;  // widths not a multiple of 4
    b.widths.pop_back();
    EXPECT_TRUE(throws_naming(call(b, {4, 5}, T(0.01)), {{"basis", "widths", "centers"}}));
    b = basis;  // an odd number of centre coordinates
    b.centers.push_back(T(0.5));
    EXPECT_TRUE(throws_naming(call(b, {4, 5}, T(0.01)), {{"basis", "widths", "centers"}}));
  }
  // widths that are not symmetric positive definite (basis function 4 of 9)
  const std::vector<std::array<T, 4>> bad_widths{
      {T(0), T(0), T(0), T(0)},                  // zero
      {T(-0.01), T(0), T(0), T(0.01)},           // negative diagonal
      {T(0.01), T(0), T(0), T(-0.01)},           // negative diagonal
      {T(0.01), T(0.02), T(0.02), T(0.01)},      // indefinite (det < 0)
      {T(0.01), T(0.01), T(0.01), T(0.01)},      // singular (det = 0)
      {T(0.01), T(0.005), T(-0.005), T(0.01)},   // not symmetric
      {T(0.01), T(0), T(0.004), T(0.01)},        // not symmetric
      {nan, T(0), T(0), T(0.01)},                // not finite
      {T(0.01), T(0), T(0), inf},                // not finite
  };
  for (const auto& w : bad_widths) {
    Basis b = basis;
    std::copy(w.begin(), w.end(), b.widths.begin() + 16);
    EXPECT_TRUE(throws_naming(call(b, {4, 5}, T(0.01)), {width_names()}))
        << "width {" << w[0] << ", " << w[1] << ", " << w[2] << ", " << w[3] << "}";
  }
  // lambda = 0 is allowed when F F^T is invertible: a small, well-separated basis on a finer grid
  EXPECT_NO_THROW((void)sparcon::ridge_matrix_2d<T>(Basis::grid(3, T(0.01)), {8, 8}, T(0)));
}

TYPED_TEST(Ridge2DErrors, CacheArguments) {
  using T = TypeParam;
  using Basis = sparcon::GaussianBasis2D<T>;
  sparcon::RidgeCache2D<T> cache(Basis::grid(3, T(0.01)), T(0.01));
  EXPECT_TRUE(throws_naming([&] { (void)cache.matrix({0, 4}); }, {{"height", "size"}}));
  EXPECT_TRUE(throws_naming([&] { (void)cache.matrix({4, 0}); }, {{"width", "size"}}));
  EXPECT_NO_THROW((void)cache.matrix({4, 4}));
  // A bad lambda or basis is rejected by the constructor or, at the latest, by matrix().
  auto bad_cache = [](Basis b, T lambda) {
    return [b, lambda] {
      sparcon::RidgeCache2D<T> c(b, lambda);
      (void)c.matrix({3, 3});
    };
  };
  EXPECT_TRUE(throws_naming(bad_cache(Basis::grid(3, T(0.01)), T(-1)), {{"lambda"}}));
  EXPECT_TRUE(throws_naming(bad_cache(Basis{}, T(0.01)), {{"basis"}}));
  Basis asym = Basis::grid(3, T(0.01));
  asym.widths[1] = T(0.004);  // m01 != m10 = 0
  EXPECT_TRUE(throws_naming(bad_cache(asym, T(0.01)), {width_names()}));
}

}  // namespace
}  // namespace sparcon_test
