// The ridge-regression matrix G = F^T (F F^T + lambda I)^-1 of docs/math.md section 8 (basis.h):
// against a long-double Gaussian-elimination reference, the fit of a function in the span of
// the basis, the positions (l - 1/2)/L, RidgeCache1D, and bad arguments.
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
#include "continuous_cases.h"
#include "sparcon/basis.h"

namespace sparcon_test {
namespace {

using aref::LD;

using aref::normwise_error;

/// A small, well-conditioned basis: n narrow Gaussians (variance `width`) on linspace(0, 1, n).
template <class T>
sparcon::GaussianBasis1D<T> narrow_basis(std::size_t n, T width) {
  sparcon::GaussianBasis1D<T> b;
  for (std::size_t i = 0; i < n; ++i) {
    b.centers.push_back(static_cast<T>(static_cast<LD>(i) / static_cast<LD>(n - 1)));
    b.widths.push_back(width);
  }
  return b;
}

std::string label(std::size_t n, std::size_t length, LD lambda) {
  std::ostringstream s;
  s << "N=" << n << " L=" << length << " lambda=" << static_cast<double>(lambda);
  return s.str();
}

TEST(RidgeMatrix, MatchesLongDoubleReferenceDouble) {
  // Measured with a double Cholesky solve: normwise 3e-12 at worst over these cases (N = 128,
  // lambda = 0.01, L = 50: 1.5e-11), so 1e-10 leaves room without hiding a wrong formula.
  for (const std::size_t n : {std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
    const auto basis = sparcon::GaussianBasis1D<double>::paper(n);
    const aref::BasisLD ref_basis = aref::to_ld(basis);
    for (const double lambda : {0.01, 0.1, 1.0}) {
      for (const std::size_t length : {1, 2, 3, 4, 7, 10, 33, 50}) {
        const std::vector<double> g = sparcon::ridge_matrix_1d<double>(basis, length, lambda);
        ASSERT_EQ(g.size(), length * n) << label(n, length, lambda);
        const std::vector<LD> want = aref::ridge(ref_basis, length, lambda);
        EXPECT_LE(normwise_error(g, want), 1e-10L) << label(n, length, lambda);
      }
    }
  }
}

TEST(RidgeMatrix, MatchesLongDoubleReferenceCustomBasis) {
  // Centres outside [0, 1] and widths from 1e-4 to 1 (some basis functions vanish at every
  // position: their column of G is then ~0).
  const auto basis = custom_basis<double>();
  const aref::BasisLD ref_basis = aref::to_ld(basis);
  for (const double lambda : {0.01, 1.0}) {
    for (const std::size_t length : {1, 5, 16, 40}) {
      const std::vector<double> g = sparcon::ridge_matrix_1d<double>(basis, length, lambda);
      ASSERT_EQ(g.size(), length * basis.size());
      EXPECT_LE(normwise_error(g, aref::ridge(ref_basis, length, lambda)), 1e-10L)
          << label(basis.size(), length, lambda);
    }
  }
}

TEST(RidgeMatrix, MatchesLongDoubleReferenceFloat) {
  // Computed in double and rounded to float: a few float ulps of the largest entry.
  const auto basis = sparcon::GaussianBasis1D<float>::paper(32);
  const aref::BasisLD ref_basis = aref::to_ld(basis);
  for (const float lambda : {0.01f, 0.1f, 1.0f}) {
    for (const std::size_t length : {1, 3, 10, 50}) {
      const std::vector<float> g = sparcon::ridge_matrix_1d<float>(basis, length, lambda);
      ASSERT_EQ(g.size(), length * 32);
      EXPECT_LE(normwise_error(g, aref::ridge(ref_basis, length, static_cast<LD>(lambda))), 1e-6L)
          << label(32, length, lambda);
    }
  }
}

TEST(RidgeMatrix, LengthOneClosedForm) {
  // L = 1, t = 1/2: by Sherman-Morrison, G = psi^T / (lambda + |psi|^2), psi = psi(1/2).
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  for (const double lambda : {0.01, 0.1, 1.0}) {
    std::vector<LD> psi(basis.size());
    LD norm2 = 0;
    for (std::size_t j = 0; j < basis.size(); ++j) {
      psi[j] = cref::gaussian(0.5L, basis.centers[j], basis.widths[j]);
      norm2 += psi[j] * psi[j];
    }
    std::vector<LD> want(basis.size());
    for (std::size_t j = 0; j < basis.size(); ++j) want[j] = psi[j] / (lambda + norm2);
    const std::vector<double> g = sparcon::ridge_matrix_1d<double>(basis, 1, lambda);
    ASSERT_EQ(g.size(), basis.size());
    EXPECT_LE(normwise_error(g, want), 1e-12L) << "lambda=" << lambda;
  }
}

/// H (E x L) holds h_l = B0 psi(t_l); B = H G, and the fitted values V(t_l) = B psi(t_l).
struct Fit {
  LD coefficient_error = 0;  ///< max |B - B0| / max |B0|
  LD value_error = 0;        ///< max |V(t_l) - h_l| / max |h|
};

Fit fit_in_span(const sparcon::GaussianBasis1D<double>& basis, std::size_t length, double lambda) {
  const std::size_t n = basis.size(), e_dim = 3;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> coef(-1, 1);
  std::vector<double> b0(e_dim * n);
  for (double& v : b0) v = coef(rng);
  const std::vector<LD> t = aref::positions(length);
  std::vector<double> psi(n * length);  // psi[j * L + l]
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < length; ++l)
      psi[j * length + l] = static_cast<double>(cref::gaussian(t[l], basis.centers[j], basis.widths[j]));
  std::vector<double> h(e_dim * length, 0);
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t l = 0; l < length; ++l)
      for (std::size_t j = 0; j < n; ++j) h[e * length + l] += b0[e * n + j] * psi[j * length + l];
  const std::vector<double> g = sparcon::ridge_matrix_1d<double>(basis, length, lambda);
  EXPECT_EQ(g.size(), length * n);
  if (g.size() != length * n) return {1, 1};
  std::vector<double> b(e_dim * n, 0);  // B = H G
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < length; ++l) b[e * n + j] += h[e * length + l] * g[l * n + j];
  Fit fit;
  LD b0_max = 0, h_max = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    fit.coefficient_error = std::max(fit.coefficient_error, std::fabs(static_cast<LD>(b[i]) - b0[i]));
    b0_max = std::max(b0_max, std::fabs(static_cast<LD>(b0[i])));
  }
  for (std::size_t e = 0; e < e_dim; ++e)
    for (std::size_t l = 0; l < length; ++l) {
      LD v = 0;
      for (std::size_t j = 0; j < n; ++j) v += static_cast<LD>(b[e * n + j]) * psi[j * length + l];
      fit.value_error = std::max(fit.value_error, std::fabs(v - h[e * length + l]));
      h_max = std::max(h_max, std::fabs(static_cast<LD>(h[e * length + l])));
    }
  fit.coefficient_error /= b0_max;
  fit.value_error /= h_max;
  return fit;
}

TEST(RidgeMatrix, ReproducesFunctionInSpanWellConditioned) {
  // 8 Gaussians of standard deviation 0.1 on linspace(0, 1, 8): F has condition ~8, so with
  // lambda = 1e-10 both the coefficients and the values come back (measured ~1e-10 and ~1e-11).
  const auto basis = narrow_basis<double>(8, 0.01);
  for (const std::size_t length : {8, 16, 40}) {
    const Fit fit = fit_in_span(basis, length, 1e-10);
    EXPECT_LE(fit.coefficient_error, 1e-6L) << "L=" << length;
    EXPECT_LE(fit.value_error, 1e-6L) << "L=" << length;
  }
}

TEST(RidgeMatrix, ReproducesFunctionInSpanPaperBasis) {
  // The paper's basis (N = 32, widths 0.01 and 0.25) is numerically rank deficient
  // (cond(F) ~ 1e17): B is not identifiable, but the fitted values are (measured ~3e-7 with a
  // double Cholesky solve; the bound is sqrt(lambda)/2 per unit of B0 along each direction).
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  for (const std::size_t length : {32, 64, 100}) {
    const Fit fit = fit_in_span(basis, length, 1e-10);
    EXPECT_LE(fit.value_error, 5e-6L) << "L=" << length;
  }
}

TEST(RidgeMatrix, PositionsAreHalfIntegersOverLength) {
  // Port-bug guard (docs/math.md section 13): positions (l - 1/2)/L, not L/2 (`1./2*L`). The
  // library's G for L = 4 must match positions (1/8, 3/8, 5/8, 7/8) and be far from the G
  // built on the positions a buggy port gets: linspace(L/2, 1 - L/2, L) = (2, 1, 0, -1), or
  // all at L/2 = 2, or the positions of another length (l - 1/2)/L' or l/L.
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  const aref::BasisLD ref_basis = aref::to_ld(basis);
  const std::size_t length = 4;
  const double lambda = 0.01;
  const std::vector<double> g = sparcon::ridge_matrix_1d<double>(basis, length, lambda);
  ASSERT_EQ(g.size(), length * 32);
  EXPECT_EQ(aref::positions(4), (std::vector<LD>{0.125L, 0.375L, 0.625L, 0.875L}));
  EXPECT_LE(normwise_error(g, aref::ridge_at(ref_basis, {0.125L, 0.375L, 0.625L, 0.875L}, lambda)), 1e-10L);
  const std::vector<std::vector<LD>> wrong{{2, 1, 0, -1}, {2, 2, 2, 2}, {0.25L, 0.5L, 0.75L, 1}, {0, 1.0L / 3, 2.0L / 3, 1},
                                           {0.1L, 0.3L, 0.5L, 0.7L}};
  for (const auto& t : wrong) EXPECT_GT(normwise_error(g, aref::ridge_at(ref_basis, t, lambda)), 1e-3L) << t[0];
}

// ---- RidgeCache1D --------------------------------------------------------------------------

TEST(RidgeCache, MatchesRidgeMatrixAndKeepsAddresses) {
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  sparcon::RidgeCache1D<double> cache(basis, 0.1);
  EXPECT_EQ(cache.lambda(), 0.1);
  EXPECT_EQ(cache.basis().centers, basis.centers);
  EXPECT_EQ(cache.basis().widths, basis.widths);
  std::vector<const std::vector<double>*> first;
  const std::vector<std::size_t> lengths{7, 1, 10, 3, 50, 2};
  for (const std::size_t length : lengths) {
    const std::vector<double>& m = cache.matrix(length);
    first.push_back(&m);
    EXPECT_EQ(m, sparcon::ridge_matrix_1d<double>(basis, length, 0.1)) << "L=" << length;
  }
  // Second calls (after other lengths were added): the same object, unchanged.
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const std::vector<double>& m = cache.matrix(lengths[i]);
    EXPECT_EQ(&m, first[i]) << "L=" << lengths[i];
    EXPECT_EQ(m, sparcon::ridge_matrix_1d<double>(basis, lengths[i], 0.1)) << "L=" << lengths[i];
  }
}

TEST(RidgeCache, FloatMatchesRidgeMatrix) {
  const auto basis = sparcon::GaussianBasis1D<float>::paper(64);
  sparcon::RidgeCache1D<float> cache(basis, 0.01f);
  for (const std::size_t length : {5, 12, 5}) EXPECT_EQ(cache.matrix(length), sparcon::ridge_matrix_1d<float>(basis, length, 0.01f));
}

TEST(RidgeCache, TwoThreadsAtOnce) {
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  sparcon::RidgeCache1D<double> cache(basis, 0.01);
  constexpr std::size_t kMax = 40;
  std::vector<const std::vector<double>*> seen_a(kMax + 1, nullptr), seen_b(kMax + 1, nullptr);
  // Thread a walks up, thread b walks down, each twice: both insert and look up concurrently.
  std::thread a([&] {
    for (int round = 0; round < 2; ++round)
      for (std::size_t l = 1; l <= kMax; ++l) seen_a[l] = &cache.matrix(l);
  });
  std::thread b([&] {
    for (int round = 0; round < 2; ++round)
      for (std::size_t l = kMax; l >= 1; --l) seen_b[l] = &cache.matrix(l);
  });
  a.join();
  b.join();
  for (std::size_t l = 1; l <= kMax; ++l) {
    ASSERT_NE(seen_a[l], nullptr);
    EXPECT_EQ(seen_a[l], seen_b[l]) << "L=" << l;
    EXPECT_EQ(seen_a[l], &cache.matrix(l)) << "L=" << l;
    EXPECT_EQ(*seen_a[l], sparcon::ridge_matrix_1d<double>(basis, l, 0.01)) << "L=" << l;
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class RidgeErrors : public ::testing::Test {};
TYPED_TEST_SUITE(RidgeErrors, FloatTypes);

TYPED_TEST(RidgeErrors, RidgeMatrixArguments) {
  using T = TypeParam;
  using Basis = sparcon::GaussianBasis1D<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const Basis basis = Basis::paper(8);
  auto call = [](const Basis& b, std::size_t length, T lambda) {
    return [&b, length, lambda] { (void)sparcon::ridge_matrix_1d<T>(b, length, lambda); };
  };
  EXPECT_TRUE(throws_naming(call(basis, 0, T(0.01)), {{"length", "L"}}));
  EXPECT_TRUE(throws_naming(call(basis, 3, T(-0.5)), {{"lambda"}, {"-0.5"}}));
  EXPECT_TRUE(throws_naming(call(basis, 3, nan), {{"lambda"}, {"nan"}}));
  EXPECT_TRUE(throws_naming(call(basis, 3, inf), {{"lambda"}}));
  const Basis empty;
  EXPECT_TRUE(throws_naming(call(empty, 3, T(0.01)), {{"basis"}}));
  Basis zero_width = basis;
  zero_width.widths[2] = 0;
  EXPECT_TRUE(throws_naming(call(zero_width, 3, T(0.01)), {{"basis", "widths", "width"}}));
  Basis negative_width = basis;
  negative_width.widths[0] = T(-0.01);
  EXPECT_TRUE(throws_naming(call(negative_width, 3, T(0.01)), {{"basis", "widths", "width"}}));
  Basis mismatched = basis;
  mismatched.widths.pop_back();
  EXPECT_TRUE(throws_naming(call(mismatched, 3, T(0.01)), {{"basis", "widths", "centers"}}));
  // lambda = 0 is allowed (F F^T may still be invertible): L >= N with a narrow basis.
  EXPECT_NO_THROW((void)sparcon::ridge_matrix_1d<T>(narrow_basis<T>(4, T(0.01)), 8, T(0)));
}

TYPED_TEST(RidgeErrors, CacheArguments) {
  using T = TypeParam;
  using Basis = sparcon::GaussianBasis1D<T>;
  sparcon::RidgeCache1D<T> cache(Basis::paper(8), T(0.01));
  EXPECT_TRUE(throws_naming([&] { (void)cache.matrix(0); }, {{"length", "L"}}));
  // A bad lambda or basis is rejected by the constructor or, at the latest, by matrix().
  auto bad_cache = [](Basis b, T lambda) {
    return [b, lambda] {
      sparcon::RidgeCache1D<T> c(b, lambda);
      (void)c.matrix(3);
    };
  };
  EXPECT_TRUE(throws_naming(bad_cache(Basis::paper(8), T(-1)), {{"lambda"}}));
  EXPECT_TRUE(throws_naming(bad_cache(Basis{}, T(0.01)), {{"basis"}}));
}

}  // namespace
}  // namespace sparcon_test
