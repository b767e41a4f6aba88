// Continuous attention over images (attention.h, docs/math.md section 9): the context against a
// long-double reference built from the definition (G by Gaussian elimination, r in closed form
// for alpha = 1; for alpha = 1.5 and 2 r from the library's expectation_2d, tested elsewhere,
// so that only the assembly c = H G r is checked), the backward pass against finite differences
// of the forward pass (Sigma perturbed symmetrically), thread-count independence, empty batches,
// and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_reference.h"
#include "attention_reference_2d.h"
#include "continuous_cases.h"
#include "sparcon/attention.h"
#include "sparcon/basis.h"
#include "sparcon/continuous.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using aref2d::LD;

/// B images of H x W values with E features; locations inside and outside [0, 1]^2, scales
/// from narrow and rotated to broad.
template <class T>
struct Images {
  sparcon::ImageShape shape;
  std::vector<T> values, mu, sigma;

  explicit Images(sparcon::ImageShape s = {3, 5, 6, 4}, unsigned seed = 42)
      : shape(s), values(s.batch * s.height * s.width * s.features) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (T& v : values) v = static_cast<T>(u(rng));
    static const std::vector<std::array<double, 2>> locations{{0.3, 0.6}, {0.55, 0.2}, {1.1, -0.05}, {0.5, 0.5}, {0.8, 0.9}};
    static const std::vector<std::array<double, 4>> scales{{0.01, 0.003, 0.003, 0.02},
                                                           {0.002, -0.001, -0.001, 0.004},
                                                           {0.05, 0, 0, 0.03},
                                                           {0.2, 0.05, 0.05, 0.1},
                                                           {0.004, 0.0035, 0.0035, 0.005}};
    for (std::size_t b = 0; b < s.batch; ++b) {
      for (const double m : locations[b % locations.size()]) mu.push_back(static_cast<T>(m));
      for (const double m : scales[b % scales.size()]) sigma.push_back(static_cast<T>(m));
    }
  }
  [[nodiscard]] std::size_t pixels() const { return shape.height * shape.width; }
  [[nodiscard]] std::size_t context_size() const { return shape.batch * shape.features; }
  [[nodiscard]] const T* image(std::size_t b) const { return values.data() + b * pixels() * shape.features; }
  [[nodiscard]] aref2d::Point mu_of(std::size_t b) const { return {static_cast<LD>(mu[2 * b]), static_cast<LD>(mu[2 * b + 1])}; }
  [[nodiscard]] aref2d::Mat2 sigma_of(std::size_t b) const {
    return {static_cast<LD>(sigma[4 * b]), static_cast<LD>(sigma[4 * b + 1]), static_cast<LD>(sigma[4 * b + 2]),
            static_cast<LD>(sigma[4 * b + 3])};
  }
};

template <class T>
std::vector<T> forward(T alpha, sparcon::RidgeCache2D<T>& cache, const Images<T>& x, unsigned threads = 1) {
  std::vector<T> context(x.context_size(), T(0));
  sparcon::continuous_attention_2d<T>(alpha, cache, std::span<const T>(x.values), x.shape, std::span<const T>(x.mu),
                                      std::span<const T>(x.sigma), std::span<T>(context), sparcon::Threads{threads});
  return context;
}

template <class T>
struct Grads {
  std::vector<T> dvalues, dmu, dsigma;
};

template <class T>
Grads<T> backward(T alpha, sparcon::RidgeCache2D<T>& cache, const Images<T>& x, const std::vector<T>& dcontext,
                  unsigned threads = 1, T fill = T(0)) {
  Grads<T> g{std::vector<T>(x.values.size(), fill), std::vector<T>(x.mu.size(), fill), std::vector<T>(x.sigma.size(), fill)};
  sparcon::continuous_attention_2d_backward<T>(alpha, cache, std::span<const T>(x.values), x.shape, std::span<const T>(x.mu),
                                               std::span<const T>(x.sigma), std::span<const T>(dcontext),
                                               std::span<T>(g.dvalues), std::span<T>(g.dmu), std::span<T>(g.dsigma),
                                               sparcon::Threads{threads});
  return g;
}

std::string where(LD alpha, std::size_t b, std::size_t e, const std::string& basis) {
  std::ostringstream s;
  s << "alpha=" << static_cast<double>(alpha) << " image=" << b << " feature=" << e << " basis=" << basis;
  return s.str();
}

template <class T>
struct NamedBasis {
  std::string name;
  sparcon::GaussianBasis2D<T> basis;
};

template <class T>
std::vector<NamedBasis<T>> bases() {
  return {{"grid(4, 0.01)", sparcon::GaussianBasis2D<T>::grid(4, T(0.01))}, {"paper", sparcon::GaussianBasis2D<T>::paper()}};
}

// ---- forward -------------------------------------------------------------------------------

template <class T>
class Attention2DForward : public ::testing::Test {};
TYPED_TEST_SUITE(Attention2DForward, FloatTypes);

TYPED_TEST(Attention2DForward, GaussianMatchesReference) {
  // alpha = 1: r_j = N(mu; c_j, Sigma + S_j), G by elimination, all in long double. Relative to
  // sum_l |h_l| sum_j |G_lj r_j| (the size of the terms summed).
  using T = TypeParam;
  const LD tol = std::is_same_v<T, double> ? 1e-10L : 1e-5L;
  for (const auto& [name, basis] : bases<T>()) {
    const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
    for (const T lambda : {T(0.01), T(0.1)}) {
      sparcon::RidgeCache2D<T> cache(basis, lambda);
      for (const sparcon::ImageShape shape : {sparcon::ImageShape{3, 5, 6, 4}, sparcon::ImageShape{2, 7, 3, 2}}) {
        const Images<T> x(shape);
        const std::vector<LD> g = aref2d::ridge(ref_basis, {shape.height, shape.width}, static_cast<LD>(lambda));
        const std::vector<T> context = forward(T(1), cache, x);
        ASSERT_EQ(context.size(), x.context_size());
        for (std::size_t b = 0; b < shape.batch; ++b) {
          const std::vector<LD> r = aref2d::gaussian_expectations(x.mu_of(b), x.sigma_of(b), ref_basis);
          const aref2d::Context want = aref2d::context(g, r, x.image(b), x.pixels(), shape.features);
          for (std::size_t e = 0; e < shape.features; ++e) {
            const T got = context[b * shape.features + e];
            ASSERT_TRUE(std::isfinite(got)) << where(1, b, e, name);
            EXPECT_NEAR(static_cast<LD>(got), want.c[e], tol * want.scale[e])
                << where(1, b, e, name) << " lambda=" << lambda << " image " << shape.height << "x" << shape.width;
          }
        }
      }
    }
  }
}

TYPED_TEST(Attention2DForward, SparseFamiliesAssembleHGr) {
  // alpha = 1.5 and 2 (and 1): r from the library's expectation_2d, G from the reference; the
  // context must be sum_l (G r)_l h_l.
  using T = TypeParam;
  const LD tol = std::is_same_v<T, double> ? 1e-10L : 1e-5L;
  for (const auto& [name, basis] : bases<T>()) {
    const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
    const T lambda = T(0.01);
    sparcon::RidgeCache2D<T> cache(basis, lambda);
    const Images<T> x({5, 5, 6, 4});
    const std::vector<LD> g = aref2d::ridge(ref_basis, {5, 6}, static_cast<LD>(lambda));
    for (const LD alpha : {1.5L, 2.0L, 1.0L}) {
      std::vector<T> r(x.shape.batch * basis.size());
      sparcon::expectation_2d<T>(static_cast<T>(alpha), std::span<const T>(x.mu), std::span<const T>(x.sigma), basis,
                                 std::span<T>(r));
      const std::vector<T> context = forward(static_cast<T>(alpha), cache, x);
      ASSERT_EQ(context.size(), x.context_size());
      for (std::size_t b = 0; b < x.shape.batch; ++b) {
        const std::vector<LD> rb(r.begin() + static_cast<std::ptrdiff_t>(b * basis.size()),
                                 r.begin() + static_cast<std::ptrdiff_t>((b + 1) * basis.size()));
        const aref2d::Context want = aref2d::context(g, rb, x.image(b), x.pixels(), x.shape.features);
        for (std::size_t e = 0; e < x.shape.features; ++e) {
          const T got = context[b * x.shape.features + e];
          ASSERT_TRUE(std::isfinite(got)) << where(alpha, b, e, name);
          EXPECT_NEAR(static_cast<LD>(got), want.c[e], tol * want.scale[e]) << where(alpha, b, e, name);
        }
      }
    }
  }
}

TYPED_TEST(Attention2DForward, ThreadsDoNotChangeTheResult) {
  using T = TypeParam;
  sparcon::RidgeCache2D<T> cache(sparcon::GaussianBasis2D<T>::paper(), T(0.01));
  const Images<T> x({5, 5, 6, 3});
  const std::vector<T> dc = [&] {
    const std::vector<double> d = uniform_vector(x.context_size(), 17);
    return std::vector<T>(d.begin(), d.end());
  }();
  for (const LD alpha : {1.0L, 1.5L, 2.0L}) {
    const T a = static_cast<T>(alpha);
    const std::vector<T> one = forward(a, cache, x, 1);
    const Grads<T> g1 = backward(a, cache, x, dc, 1);
    for (const unsigned threads : {2u, 3u}) {
      EXPECT_EQ(forward(a, cache, x, threads), one) << "alpha=" << static_cast<double>(alpha) << " threads=" << threads;
      const Grads<T> gn = backward(a, cache, x, dc, threads);
      EXPECT_EQ(gn.dvalues, g1.dvalues) << "alpha=" << static_cast<double>(alpha) << " threads=" << threads;
      EXPECT_EQ(gn.dmu, g1.dmu) << "alpha=" << static_cast<double>(alpha) << " threads=" << threads;
      EXPECT_EQ(gn.dsigma, g1.dsigma) << "alpha=" << static_cast<double>(alpha) << " threads=" << threads;
    }
  }
}

TYPED_TEST(Attention2DForward, EachImageIndependentOfTheBatch) {
  // An image gives the context it gives alone (B = 1).
  using T = TypeParam;
  const LD tol = std::is_same_v<T, double> ? 1e-14L : 1e-6L;
  sparcon::RidgeCache2D<T> cache(sparcon::GaussianBasis2D<T>::grid(4, T(0.01)), T(0.01));
  const Images<T> x({4, 5, 6, 4});
  for (const LD alpha : {1.0L, 1.5L, 2.0L}) {
    const std::vector<T> batched = forward(static_cast<T>(alpha), cache, x);
    for (std::size_t b = 0; b < x.shape.batch; ++b) {
      Images<T> one({1, 5, 6, 4});
      one.values.assign(x.image(b), x.image(b) + x.pixels() * x.shape.features);
      one.mu.assign(x.mu.begin() + 2 * b, x.mu.begin() + 2 * b + 2);
      one.sigma.assign(x.sigma.begin() + 4 * b, x.sigma.begin() + 4 * b + 4);
      const std::vector<T> alone = forward(static_cast<T>(alpha), cache, one);
      LD size = 0;
      for (const T v : alone) size = std::max(size, std::fabs(static_cast<LD>(v)));
      for (std::size_t e = 0; e < x.shape.features; ++e)
        EXPECT_NEAR(static_cast<LD>(batched[b * x.shape.features + e]), static_cast<LD>(alone[e]), tol * size)
            << where(alpha, b, e, "grid(4, 0.01)");
    }
  }
}

TEST(Attention2DForward, OverwritesContextAndEmptyBatch) {
  sparcon::RidgeCache2D<double> cache(sparcon::GaussianBasis2D<double>::grid(4, 0.01), 0.01);
  const Images<double> x;
  for (const double alpha : {1.0, 1.5, 2.0}) {
    const std::vector<double> clean = forward(alpha, cache, x);
    std::vector<double> context(x.context_size(), std::numeric_limits<double>::quiet_NaN());
    sparcon::continuous_attention_2d<double>(alpha, cache, std::span<const double>(x.values), x.shape,
                                             std::span<const double>(x.mu), std::span<const double>(x.sigma),
                                             std::span<double>(context));
    EXPECT_EQ(context, clean) << "alpha=" << alpha;
  }
  // batch 0: nothing to do, no error (forward and backward)
  const Images<double> empty({0, 5, 6, 4});
  EXPECT_TRUE(empty.values.empty() && empty.mu.empty() && empty.sigma.empty());
  for (const double alpha : {1.0, 1.5, 2.0}) {
    EXPECT_NO_THROW(EXPECT_TRUE(forward(alpha, cache, empty, 2).empty())) << "alpha=" << alpha;
    EXPECT_NO_THROW((void)backward(alpha, cache, empty, std::vector<double>{}, 2)) << "alpha=" << alpha;
  }
}

// ---- backward ------------------------------------------------------------------------------

/// sum_{b,e} dc[b,e] context[b,e], accumulated in long double.
double loss(double alpha, sparcon::RidgeCache2D<double>& cache, const Images<double>& x, const std::vector<double>& dc) {
  const std::vector<double> c = forward(alpha, cache, x);
  LD s = 0;
  for (std::size_t i = 0; i < c.size(); ++i) s += static_cast<LD>(dc[i]) * c[i];
  return static_cast<double>(s);
}

/// Five-point central difference of f along a perturbation set(d) (set(0) restores).
template <class F, class S>
double derivative(F&& f, S&& set, double h) {
  return five_point_difference(
      [&](double d) {
        set(d);
        const double v = f();
        set(0);
        return v;
      },
      h);
}

TEST(Attention2DBackward, MatchesFiniteDifferences) {
  // grid(4, 0.01): three images, every gradient; the paper's basis (slower): two images, dmu
  // and dsigma only (its dvalues are checked against the reference weights below).
  for (const auto& [name, basis] : bases<double>()) {
    const bool paper = name == "paper";
    sparcon::RidgeCache2D<double> cache(basis, 0.01);
    for (const double alpha : {1.0, 1.5, 2.0}) {
      Images<double> x({paper ? std::size_t{2} : std::size_t{3}, 5, 6, 2});
      const std::vector<double> dc = uniform_vector(x.context_size(), 7);
      const Grads<double> g = backward(alpha, cache, x, dc);
      ASSERT_EQ(g.dvalues.size(), x.values.size());
      auto f = [&] { return loss(alpha, cache, x, dc); };
      const std::string tag = "alpha=" + std::to_string(alpha) + " basis=" + name;

      // values: the loss is linear in them
      double dv_max = 0;
      for (const double v : g.dvalues) dv_max = std::max(dv_max, std::fabs(v));
      ASSERT_GT(dv_max, 0) << tag;
      for (std::size_t i = 0; i < (paper ? 0 : x.values.size()); i += 5) {  // every fifth entry
        const double v0 = x.values[i];
        x.values[i] = v0 + 0.5;
        const double up = f();
        x.values[i] = v0 - 0.5;
        const double down = f();
        x.values[i] = v0;
        const double fd = up - down;  // exact for a linear function, up to rounding
        EXPECT_NEAR(g.dvalues[i], fd, 1e-9 * dv_max) << tag << " value " << i;
      }

      for (std::size_t b = 0; b < x.shape.batch; ++b) {
        // mu: step 1e-4 (the narrowest scale has standard deviation ~0.03)
        for (std::size_t c = 0; c < 2; ++c) {
          const double m0 = x.mu[2 * b + c];
          const double fd = derivative(f, [&](double d) { x.mu[2 * b + c] = m0 + d; }, 1e-4);
          EXPECT_NEAR(g.dmu[2 * b + c], fd, 1e-6 * std::fabs(fd) + 1e-8) << tag << " dmu[" << b << "," << c << "]";
        }
        // Sigma: diagonal entries one at a time; the off-diagonal pair together (the loss of a
        // symmetric Sigma + d (E01 + E10) changes at the rate dsigma[01] + dsigma[10]).
        const double s00 = x.sigma[4 * b], s11 = x.sigma[4 * b + 3], s01 = x.sigma[4 * b + 1];
        const double h = 1e-3 * std::min(s00, s11);
        const double fd00 = derivative(f, [&](double d) { x.sigma[4 * b] = s00 + d; }, h);
        const double fd11 = derivative(f, [&](double d) { x.sigma[4 * b + 3] = s11 + d; }, h);
        const double fd01 = derivative(
            f,
            [&](double d) {
              x.sigma[4 * b + 1] = s01 + d;
              x.sigma[4 * b + 2] = s01 + d;
            },
            h);
        const double* ds = &g.dsigma[4 * b];
        const double size = std::max({std::fabs(fd00), std::fabs(fd11), std::fabs(fd01)});
        EXPECT_NEAR(ds[0], fd00, 1e-6 * std::fabs(fd00) + 1e-9 * size) << tag << " dsigma00 image " << b;
        EXPECT_NEAR(ds[3], fd11, 1e-6 * std::fabs(fd11) + 1e-9 * size) << tag << " dsigma11 image " << b;
        EXPECT_NEAR(ds[1] + ds[2], fd01, 1e-6 * std::fabs(fd01) + 1e-9 * size) << tag << " dsigma01+10 image " << b;
        EXPECT_NEAR(ds[1], ds[2], 1e-14 * size) << tag << " dsigma not symmetric, image " << b;
      }
    }
  }
}

TEST(Attention2DBackward, DvaluesAreWeightsTimesUpstreamGaussian) {
  // alpha = 1: dvalues[b, l] = w_b[l] dc_b with the reference w = G r (r in closed form).
  const auto basis = sparcon::GaussianBasis2D<double>::paper();
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  sparcon::RidgeCache2D<double> cache(basis, 0.01);
  const Images<double> x({3, 5, 6, 4});
  const std::vector<LD> g = aref2d::ridge(ref_basis, {5, 6}, 0.01L);
  const std::vector<double> dc = uniform_vector(x.context_size(), 11);
  const Grads<double> grads = backward(1.0, cache, x, dc);
  for (std::size_t b = 0; b < x.shape.batch; ++b) {
    const std::vector<LD> r = aref2d::gaussian_expectations(x.mu_of(b), x.sigma_of(b), ref_basis);
    const aref2d::Context want = aref2d::context(g, r, x.image(b), x.pixels(), x.shape.features);
    LD w_max = 0;
    for (const LD w : want.w) w_max = std::max(w_max, std::fabs(w));
    for (std::size_t l = 0; l < x.pixels(); ++l)
      for (std::size_t e = 0; e < x.shape.features; ++e)
        EXPECT_NEAR(static_cast<LD>(grads.dvalues[(b * x.pixels() + l) * x.shape.features + e]),
                    want.w[l] * dc[b * x.shape.features + e], 1e-10L * w_max)
            << "image " << b << " pixel " << l << " feature " << e;
  }
}

TEST(Attention2DBackward, GaussianDmuDsigmaClosedForm) {
  // alpha = 1: with w_b = G^T (H_b^T dc_b) (N), dr_j/dmu = r_j V_j^-1 (c_j - mu) and
  // dr_j/dSigma = r_j/2 (V_j^-1 d d^T V_j^-1 - V_j^-1), V_j = Sigma + S_j, d = mu - c_j.
  const auto basis = sparcon::GaussianBasis2D<double>::grid(4, 0.01);
  const aref2d::BasisLD2D ref_basis = aref2d::to_ld(basis);
  sparcon::RidgeCache2D<double> cache(basis, 0.01);
  const Images<double> x({3, 5, 6, 4});
  const std::vector<LD> g = aref2d::ridge(ref_basis, {5, 6}, 0.01L);
  const std::vector<double> dc = uniform_vector(x.context_size(), 23);
  const Grads<double> grads = backward(1.0, cache, x, dc);
  const std::size_t n = basis.size(), pixels = x.pixels(), features = x.shape.features;
  for (std::size_t b = 0; b < x.shape.batch; ++b) {
    const aref2d::Point mu = x.mu_of(b);
    const aref2d::Mat2 sigma = x.sigma_of(b);
    const std::vector<LD> r = aref2d::gaussian_expectations(mu, sigma, ref_basis);
    LD dmu[2] = {0, 0}, dsig[4] = {0, 0, 0, 0}, size_mu = 0, size_sig = 0;
    for (std::size_t j = 0; j < n; ++j) {
      LD dr = 0;  // dL/dr_j = sum_l G_lj sum_e h_le dc_e
      for (std::size_t l = 0; l < pixels; ++l) {
        LD hd = 0;
        for (std::size_t e = 0; e < features; ++e) hd += static_cast<LD>(x.image(b)[l * features + e]) * dc[b * features + e];
        dr += g[l * n + j] * hd;
      }
      const aref2d::Mat2 s = ref_basis.width(j);
      const aref2d::Mat2 v{sigma[0] + s[0], sigma[1] + s[1], sigma[2] + s[2], sigma[3] + s[3]};
      const LD dt = aref2d::det(v);
      const aref2d::Mat2 vi{v[3] / dt, -v[1] / dt, -v[2] / dt, v[0] / dt};
      const aref2d::Point c = ref_basis.center(j);
      const LD d0 = mu[0] - c[0], d1 = mu[1] - c[1];
      const LD a0 = vi[0] * d0 + vi[1] * d1, a1 = vi[2] * d0 + vi[3] * d1;  // V^-1 d
      dmu[0] += dr * r[j] * -a0;
      dmu[1] += dr * r[j] * -a1;
      const LD m[4] = {a0 * a0 - vi[0], a0 * a1 - vi[1], a1 * a0 - vi[2], a1 * a1 - vi[3]};
      for (int k = 0; k < 4; ++k) dsig[k] += dr * r[j] * m[k] / 2;
      size_mu += std::fabs(dr * r[j]) * (std::fabs(a0) + std::fabs(a1));
      size_sig += std::fabs(dr * r[j]) * (std::fabs(m[0]) + std::fabs(m[1]) + std::fabs(m[3]));
    }
    for (int c = 0; c < 2; ++c)
      EXPECT_NEAR(static_cast<LD>(grads.dmu[2 * b + c]), dmu[c], 1e-10L * size_mu) << "dmu image " << b << " c=" << c;
    for (int k = 0; k < 4; ++k)
      EXPECT_NEAR(static_cast<LD>(grads.dsigma[4 * b + k]), dsig[k], 1e-10L * size_sig) << "dsigma image " << b << " k=" << k;
  }
}

TEST(Attention2DBackward, OverwritesOutputs) {
  sparcon::RidgeCache2D<double> cache(sparcon::GaussianBasis2D<double>::grid(4, 0.01), 0.01);
  const Images<double> x;
  const std::vector<double> dc = uniform_vector(x.context_size(), 3);
  for (const double alpha : {1.0, 1.5, 2.0}) {
    const Grads<double> clean = backward(alpha, cache, x, dc, 1, 0.0);
    const Grads<double> dirty = backward(alpha, cache, x, dc, 1, std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(dirty.dvalues, clean.dvalues) << "alpha=" << alpha;
    EXPECT_EQ(dirty.dmu, clean.dmu) << "alpha=" << alpha;
    EXPECT_EQ(dirty.dsigma, clean.dsigma) << "alpha=" << alpha;
  }
}

TEST(Attention2DBackward, FloatAgreesWithDouble) {
  // Same (float-representable) inputs in float and double.
  const auto basis_f = sparcon::GaussianBasis2D<float>::grid(4, 0.01f);
  sparcon::GaussianBasis2D<double> basis_d;
  basis_d.centers.assign(basis_f.centers.begin(), basis_f.centers.end());
  basis_d.widths.assign(basis_f.widths.begin(), basis_f.widths.end());
  sparcon::RidgeCache2D<float> cache_f(basis_f, 0.01f);
  sparcon::RidgeCache2D<double> cache_d(basis_d, static_cast<double>(0.01f));
  const Images<float> xf;
  Images<double> xd;
  xd.values.assign(xf.values.begin(), xf.values.end());
  xd.mu.assign(xf.mu.begin(), xf.mu.end());
  xd.sigma.assign(xf.sigma.begin(), xf.sigma.end());
  std::vector<double> dc_d = uniform_vector(xd.context_size(), 5);
  for (double& v : dc_d) v = static_cast<float>(v);
  const std::vector<float> dc_f(dc_d.begin(), dc_d.end());
  for (const double alpha : {1.0, 1.5, 2.0}) {
    const std::vector<double> cd = forward(alpha, cache_d, xd);
    const std::vector<float> cf = forward(static_cast<float>(alpha), cache_f, xf);
    double c_max = 0;
    for (const double v : cd) c_max = std::max(c_max, std::fabs(v));
    for (std::size_t i = 0; i < cd.size(); ++i) EXPECT_NEAR(cf[i], cd[i], 1e-5 * c_max) << "alpha=" << alpha << " i=" << i;
    const Grads<double> gd = backward(alpha, cache_d, xd, dc_d);
    const Grads<float> gf = backward(static_cast<float>(alpha), cache_f, xf, dc_f);
    auto compare = [&](const std::vector<float>& f, const std::vector<double>& d, const char* what) {
      double m = 0;
      for (const double v : d) m = std::max(m, std::fabs(v));
      for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(f[i], d[i], 1e-4 * m) << what << " alpha=" << alpha << " i=" << i;
    };
    compare(gf.dvalues, gd.dvalues, "dvalues");
    compare(gf.dmu, gd.dmu, "dmu");
    compare(gf.dsigma, gd.dsigma, "dsigma");
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class Attention2DErrors : public ::testing::Test {};
TYPED_TEST_SUITE(Attention2DErrors, FloatTypes);

TYPED_TEST(Attention2DErrors, ForwardArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  sparcon::RidgeCache2D<T> cache(sparcon::GaussianBasis2D<T>::grid(3, T(0.01)), T(0.01));
  const Images<T> good;
  auto call = [&](const Images<T>& x, std::size_t context_size, T alpha = T(1.5)) {
    return [&cache, x, context_size, alpha] {
      std::vector<T> context(context_size);
      sparcon::continuous_attention_2d<T>(alpha, cache, std::span<const T>(x.values), x.shape, std::span<const T>(x.mu),
                                          std::span<const T>(x.sigma), std::span<T>(context));
    };
  };
  const std::size_t nc = good.context_size();
  EXPECT_NO_THROW(call(good, nc)());
  {
    Images<T> x = good;
    x.values.pop_back();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"values"}}));
    x.values.resize(good.values.size() + 4);
    EXPECT_TRUE(throws_naming(call(x, nc), {{"values"}}));
  }
  {
    Images<T> x = good;
    x.mu.pop_back();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    x = good;
    x.mu.insert(x.mu.end(), {T(0.5), T(0.5)});
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    x = good;
    x.sigma.pop_back();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma"}}));
    x = good;
    x.sigma.insert(x.sigma.end(), {T(0.01), T(0), T(0), T(0.01)});
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma"}}));
  }
  EXPECT_TRUE(throws_naming(call(good, nc - 1), {{"context"}}));
  EXPECT_TRUE(throws_naming(call(good, nc + 1), {{"context"}}));
  {
    Images<T> x = good;
    x.mu[3] = nan;
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    x = good;
    x.mu[0] = std::numeric_limits<T>::infinity();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    for (const std::array<T, 4> bad : {std::array<T, 4>{T(-0.01), T(0), T(0), T(0.01)},
                                       std::array<T, 4>{T(0.01), T(0.02), T(0.02), T(0.01)},
                                       std::array<T, 4>{T(0.01), T(0.005), T(-0.005), T(0.01)},
                                       std::array<T, 4>{T(0), T(0), T(0), T(0)}, std::array<T, 4>{nan, T(0), T(0), T(0.01)}}) {
      x = good;
      std::copy(bad.begin(), bad.end(), x.sigma.begin() + 4);
      EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma", "Sigma"}}))
          << "sigma {" << bad[0] << ", " << bad[1] << ", " << bad[2] << ", " << bad[3] << "}";
    }
  }
  EXPECT_TRUE(throws_naming(call(good, nc, T(0.5)), {{"alpha"}}));
  EXPECT_TRUE(throws_naming(call(good, nc, nan), {{"alpha"}}));
  {
    Images<T> x = good;  // an image of no pixels
    x.shape.height = 0;
    x.values.clear();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"height", "size", "shape", "values"}}));
  }
}

TYPED_TEST(Attention2DErrors, BackwardArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  sparcon::RidgeCache2D<T> cache(sparcon::GaussianBasis2D<T>::grid(3, T(0.01)), T(0.01));
  const Images<T> good;
  struct Sizes {
    std::size_t dcontext, dvalues, dmu, dsigma;
  };
  const Sizes ok{good.context_size(), good.values.size(), good.mu.size(), good.sigma.size()};
  auto call = [&](const Images<T>& x, Sizes s, T alpha = T(2)) {
    return [&cache, x, s, alpha] {
      std::vector<T> dc(s.dcontext, T(1)), dv(s.dvalues), dm(s.dmu), ds(s.dsigma);
      sparcon::continuous_attention_2d_backward<T>(alpha, cache, std::span<const T>(x.values), x.shape,
                                                   std::span<const T>(x.mu), std::span<const T>(x.sigma),
                                                   std::span<const T>(dc), std::span<T>(dv), std::span<T>(dm),
                                                   std::span<T>(ds));
    };
  };
  EXPECT_NO_THROW(call(good, ok)());
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext - 1, ok.dvalues, ok.dmu, ok.dsigma}), {{"dcontext"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext + 1, ok.dvalues, ok.dmu, ok.dsigma}), {{"dcontext"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues + 1, ok.dmu, ok.dsigma}), {{"dvalues"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues - 1, ok.dmu, ok.dsigma}), {{"dvalues"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues, ok.dmu - 1, ok.dsigma}), {{"dmu"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues, ok.dmu, ok.dsigma + 4}), {{"dsigma"}}));
  Images<T> x = good;
  x.values.pop_back();
  EXPECT_TRUE(throws_naming(call(x, ok), {{"values"}}));
  x = good;
  x.mu.pop_back();
  EXPECT_TRUE(throws_naming(call(x, ok), {{"mu"}}));
  x = good;
  x.sigma.resize(8);
  EXPECT_TRUE(throws_naming(call(x, ok), {{"sigma"}}));
  x = good;
  x.mu[1] = nan;
  EXPECT_TRUE(throws_naming(call(x, ok), {{"mu"}}));
  x = good;
  x.sigma[9] = T(0.004);  // image 2: m01 = 0.004, m10 = 0
  EXPECT_TRUE(throws_naming(call(x, ok), {{"sigma", "Sigma"}}));
  EXPECT_TRUE(throws_naming(call(good, ok, T(0.9)), {{"alpha"}}));
}

}  // namespace
}  // namespace sparcon_test
