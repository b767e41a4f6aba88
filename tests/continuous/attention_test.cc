// Continuous attention over padded batches of sequences (attention.h, docs/math.md section 9):
// the context against a long-double reference built from the definition (ridge matrix by
// Gaussian elimination, E_p[psi] by adaptive quadrature), per-example lengths and positions,
// padding that must never matter, the backward pass against finite differences of the forward
// pass, and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_reference.h"
#include "continuous_cases.h"
#include "sparcon/attention.h"
#include "sparcon/basis.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using aref::LD;

/// A padded batch: B = 3 examples of lengths {3, 7, 10} in L = 10, E = 4 features; mu inside
/// and outside [0, 1], sigma2 from 0.002 to 0.05.
template <class T>
struct Batch {
  sparcon::SequenceShape shape{3, 10, 4};
  std::vector<std::int64_t> lengths{3, 7, 10};
  std::vector<T> values;
  std::vector<T> mu{T(0.3), T(0.62), T(1.1)};
  std::vector<T> sigma2{T(0.01), T(0.002), T(0.05)};

  explicit Batch(T padding) : values(shape.batch * shape.length * shape.features) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t b = 0; b < shape.batch; ++b)
      for (std::size_t l = 0; l < shape.length; ++l)
        for (std::size_t e = 0; e < shape.features; ++e)
          at(b, l, e) = l < static_cast<std::size_t>(lengths[b]) ? static_cast<T>(u(rng)) : padding;
  }
  T& at(std::size_t b, std::size_t l, std::size_t e) { return values[(b * shape.length + l) * shape.features + e]; }
  [[nodiscard]] std::size_t context_size() const { return shape.batch * shape.features; }
};

template <class T>
std::vector<T> forward(T alpha, sparcon::RidgeCache1D<T>& cache, const Batch<T>& x) {
  std::vector<T> context(x.context_size(), T(0));
  sparcon::continuous_attention_1d<T>(alpha, cache, std::span<const T>(x.values), x.shape,
                                      std::span<const std::int64_t>(x.lengths), std::span<const T>(x.mu),
                                      std::span<const T>(x.sigma2), std::span<T>(context));
  return context;
}

template <class T>
void backward(T alpha, sparcon::RidgeCache1D<T>& cache, const Batch<T>& x, const std::vector<T>& dcontext,
              std::vector<T>& dvalues, std::vector<T>& dmu, std::vector<T>& dsigma2) {
  sparcon::continuous_attention_1d_backward<T>(alpha, cache, std::span<const T>(x.values), x.shape,
                                               std::span<const std::int64_t>(x.lengths), std::span<const T>(x.mu),
                                               std::span<const T>(x.sigma2), std::span<const T>(dcontext),
                                               std::span<T>(dvalues), std::span<T>(dmu), std::span<T>(dsigma2));
}

std::string describe_case(LD alpha, std::size_t b, std::size_t e) {
  std::ostringstream s;
  s << "alpha=" << static_cast<double>(alpha) << " example=" << b << " feature=" << e;
  return s.str();
}

const std::vector<LD>& attention_alphas() {
  static const std::vector<LD> a{1, 1.5L, 2};
  return a;
}

// ---- forward -------------------------------------------------------------------------------

template <class T>
class AttentionForward : public ::testing::Test {};
TYPED_TEST_SUITE(AttentionForward, FloatTypes);

TYPED_TEST(AttentionForward, MatchesReferenceWithGarbagePadding) {
  using T = TypeParam;
  // Relative to sum_l |h_l| sum_j |G_lj r_j| (the size of the terms summed): G from a double
  // solve (~1e-12), r to 1e-10 (quadrature, alpha = 1.5); in float, a few ulps times N.
  const LD tol = std::is_same_v<T, double> ? 1e-9L : 2e-5L;
  const auto basis = sparcon::GaussianBasis1D<T>::paper(32);
  const aref::BasisLD ref_basis = aref::to_ld(basis);
  const T lambda = T(0.01);
  sparcon::RidgeCache1D<T> cache(basis, lambda);
  for (const T padding : {T(1e30), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    Batch<T> x(padding);
    for (const LD alpha : attention_alphas()) {
      const std::vector<T> context = forward(static_cast<T>(alpha), cache, x);
      ASSERT_EQ(context.size(), x.context_size());
      for (std::size_t b = 0; b < x.shape.batch; ++b) {
        const auto len_b = static_cast<std::size_t>(x.lengths[b]);
        const aref::Context want =
            aref::context(alpha, static_cast<LD>(x.mu[b]), static_cast<LD>(x.sigma2[b]), ref_basis,
                          static_cast<LD>(lambda), len_b, &x.at(b, 0, 0), x.shape.features);
        for (std::size_t e = 0; e < x.shape.features; ++e) {
          const T got = context[b * x.shape.features + e];
          ASSERT_TRUE(std::isfinite(got)) << describe_case(alpha, b, e) << " padding=" << padding;
          EXPECT_NEAR(static_cast<LD>(got), want.c[e], tol * want.scale[e])
              << describe_case(alpha, b, e) << " padding=" << padding;
        }
      }
    }
  }
}

TYPED_TEST(AttentionForward, PaddingNeverMatters) {
  using T = TypeParam;
  sparcon::RidgeCache1D<T> cache(sparcon::GaussianBasis1D<T>::paper(32), T(0.1));
  for (const LD alpha : attention_alphas()) {
    const std::vector<T> reference = forward(static_cast<T>(alpha), cache, Batch<T>(T(0)));
    for (const T padding : {T(1e30), -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()})
      EXPECT_EQ(forward(static_cast<T>(alpha), cache, Batch<T>(padding)), reference)
          << "alpha=" << static_cast<double>(alpha) << " padding=" << padding;
  }
}

TYPED_TEST(AttentionForward, EachExampleUsesItsOwnLength) {
  // An example in a padded batch gives the context it gives alone, unpadded (B = 1, L = L_b):
  // positions (l - 1/2)/L_b and G_{L_b}, not those of the batch length.
  using T = TypeParam;
  const LD tol = std::is_same_v<T, double> ? 1e-13L : 1e-5L;
  sparcon::RidgeCache1D<T> cache(sparcon::GaussianBasis1D<T>::paper(32), T(0.01));
  Batch<T> x(std::numeric_limits<T>::quiet_NaN());
  for (const LD alpha : attention_alphas()) {
    const std::vector<T> batched = forward(static_cast<T>(alpha), cache, x);
    for (std::size_t b = 0; b < x.shape.batch; ++b) {
      const auto len_b = static_cast<std::size_t>(x.lengths[b]);
      Batch<T> one(T(0));
      one.shape = {1, len_b, x.shape.features};
      one.lengths = {x.lengths[b]};
      one.values.assign(&x.at(b, 0, 0), &x.at(b, 0, 0) + len_b * x.shape.features);
      one.mu = {x.mu[b]};
      one.sigma2 = {x.sigma2[b]};
      const std::vector<T> alone = forward(static_cast<T>(alpha), cache, one);
      LD size = 0;
      for (std::size_t e = 0; e < x.shape.features; ++e) size = std::max(size, std::fabs(static_cast<LD>(alone[e])));
      for (std::size_t e = 0; e < x.shape.features; ++e)
        EXPECT_NEAR(static_cast<LD>(batched[b * x.shape.features + e]), static_cast<LD>(alone[e]), tol * size)
            << describe_case(alpha, b, e);
    }
  }
}

TEST(AttentionForward, OverwritesContext) {
  sparcon::RidgeCache1D<double> cache(sparcon::GaussianBasis1D<double>::paper(32), 0.01);
  const Batch<double> x(0.0);
  const std::vector<double> clean = forward(1.5, cache, x);
  std::vector<double> context(x.context_size(), std::numeric_limits<double>::quiet_NaN());
  sparcon::continuous_attention_1d<double>(1.5, cache, std::span<const double>(x.values), x.shape,
                                           std::span<const std::int64_t>(x.lengths), std::span<const double>(x.mu),
                                           std::span<const double>(x.sigma2), std::span<double>(context));
  EXPECT_EQ(context, clean);
}

// ---- backward ------------------------------------------------------------------------------

/// sum_{b,e} dc[b,e] context[b,e].
double loss(double alpha, sparcon::RidgeCache1D<double>& cache, const Batch<double>& x, const std::vector<double>& dc) {
  const std::vector<double> c = forward(alpha, cache, x);
  long double s = 0;
  for (std::size_t i = 0; i < c.size(); ++i) s += static_cast<long double>(dc[i]) * c[i];
  return static_cast<double>(s);
}

TEST(AttentionBackward, MatchesFiniteDifferences) {
  sparcon::RidgeCache1D<double> cache(sparcon::GaussianBasis1D<double>::paper(32), 0.01);
  for (const LD alpha_ld : attention_alphas()) {
    const auto alpha = static_cast<double>(alpha_ld);
    Batch<double> x(0.75);  // finite padding, so that it can be perturbed
    const std::vector<double> dc = uniform_vector(x.context_size(), 7);
    std::vector<double> dvalues(x.values.size(), 0), dmu(3, 0), dsigma2(3, 0);
    backward(alpha, cache, x, dc, dvalues, dmu, dsigma2);
    auto f = [&] { return loss(alpha, cache, x, dc); };

    // values: the loss is linear in them, the difference is exact up to rounding.
    double dv_max = 0;
    for (const double v : dvalues) dv_max = std::max(dv_max, std::fabs(v));
    ASSERT_GT(dv_max, 0) << "alpha=" << alpha;
    for (std::size_t b = 0; b < x.shape.batch; ++b)
      for (std::size_t l = 0; l < x.shape.length; ++l)
        for (std::size_t e = 0; e < x.shape.features; ++e) {
          const std::size_t i = (b * x.shape.length + l) * x.shape.features + e;
          const double fd = five_point_derivative(f, x.values[i], 1e-3);
          if (l >= static_cast<std::size_t>(x.lengths[b])) {
            EXPECT_EQ(dvalues[i], 0.0) << "padding: " << describe_case(alpha_ld, b, e) << " l=" << l;
            EXPECT_EQ(fd, 0.0) << "padding influences the context: " << describe_case(alpha_ld, b, e) << " l=" << l;
          } else {
            EXPECT_NEAR(dvalues[i], fd, 1e-9 * dv_max) << describe_case(alpha_ld, b, e) << " l=" << l;
          }
        }

    // mu and sigma2: smooth in both; steps 1e-4 and 1e-3 sigma2, truncation ~1e-11 relative.
    for (std::size_t b = 0; b < x.shape.batch; ++b) {
      const double fd_mu = five_point_derivative(f, x.mu[b], 1e-4);
      EXPECT_NEAR(dmu[b], fd_mu, 1e-6 * std::fabs(fd_mu) + 1e-9) << "dmu alpha=" << alpha << " example=" << b;
      const double fd_s2 = five_point_derivative(f, x.sigma2[b], 1e-3 * x.sigma2[b]);
      EXPECT_NEAR(dsigma2[b], fd_s2, 1e-6 * std::fabs(fd_s2) + 1e-9 / x.sigma2[b])
          << "dsigma2 alpha=" << alpha << " example=" << b;
    }
  }
}

TEST(AttentionBackward, DvaluesAreWeightsTimesUpstream) {
  // dvalues[b, l] = w_b[l] dc_b with the reference w = G_{L_b} r_b (and 0 on the padding).
  const auto basis = sparcon::GaussianBasis1D<double>::paper(32);
  const aref::BasisLD ref_basis = aref::to_ld(basis);
  sparcon::RidgeCache1D<double> cache(basis, 0.01);
  const Batch<double> x(std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> dc = uniform_vector(x.context_size(), 11);
  for (const LD alpha : attention_alphas()) {
    std::vector<double> dvalues(x.values.size(), 0), dmu(3, 0), dsigma2(3, 0);
    backward(static_cast<double>(alpha), cache, x, dc, dvalues, dmu, dsigma2);
    for (std::size_t b = 0; b < x.shape.batch; ++b) {
      const auto len_b = static_cast<std::size_t>(x.lengths[b]);
      const aref::Context want = aref::context(alpha, static_cast<LD>(x.mu[b]), static_cast<LD>(x.sigma2[b]), ref_basis, 0.01L,
                                               len_b, &x.values[b * x.shape.length * x.shape.features], x.shape.features);
      LD w_max = 0;
      for (const LD w : want.w) w_max = std::max(w_max, std::fabs(w));
      for (std::size_t l = 0; l < x.shape.length; ++l)
        for (std::size_t e = 0; e < x.shape.features; ++e) {
          const double got = dvalues[(b * x.shape.length + l) * x.shape.features + e];
          if (l >= len_b) {
            EXPECT_EQ(got, 0.0) << describe_case(alpha, b, e) << " l=" << l;
          } else {
            EXPECT_NEAR(static_cast<LD>(got), want.w[l] * dc[b * x.shape.features + e], 1e-9L * w_max)
                << describe_case(alpha, b, e) << " l=" << l;
          }
        }
      for (const double g : {dmu[b], dsigma2[b]}) EXPECT_TRUE(std::isfinite(g)) << describe_case(alpha, b, 0);
    }
  }
}

TEST(AttentionBackward, OverwritesOutputs) {
  sparcon::RidgeCache1D<double> cache(sparcon::GaussianBasis1D<double>::paper(32), 0.01);
  const Batch<double> x(std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> dc = uniform_vector(x.context_size(), 3);
  for (const LD alpha : attention_alphas()) {
    std::vector<double> dv0(x.values.size(), 0), dm0(3, 0), ds0(3, 0);
    backward(static_cast<double>(alpha), cache, x, dc, dv0, dm0, ds0);
    std::vector<double> dv(x.values.size(), 7), dm(3, 7), ds(3, 7);
    backward(static_cast<double>(alpha), cache, x, dc, dv, dm, ds);
    EXPECT_EQ(dv, dv0) << "alpha=" << static_cast<double>(alpha);
    EXPECT_EQ(dm, dm0) << "alpha=" << static_cast<double>(alpha);
    EXPECT_EQ(ds, ds0) << "alpha=" << static_cast<double>(alpha);
  }
}

TEST(AttentionBackward, FloatAgreesWithDouble) {
  // Same (float-representable) inputs in float and double: the float gradients to ~1e-4.
  sparcon::RidgeCache1D<double> cache_d(sparcon::GaussianBasis1D<double>::paper(32), 0.01);
  sparcon::RidgeCache1D<float> cache_f(sparcon::GaussianBasis1D<float>::paper(32), 0.01f);
  const Batch<float> xf(std::numeric_limits<float>::quiet_NaN());
  Batch<double> xd(std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < xf.values.size(); ++i) xd.values[i] = xf.values[i];
  for (std::size_t b = 0; b < 3; ++b) {
    xd.mu[b] = xf.mu[b];
    xd.sigma2[b] = xf.sigma2[b];
  }
  std::vector<double> dc_d = uniform_vector(xd.context_size(), 5);
  for (double& v : dc_d) v = static_cast<float>(v);
  const std::vector<float> dc_f(dc_d.begin(), dc_d.end());
  // the double basis/lambda differ from the float ones by rounding: compare loosely
  for (const LD alpha : attention_alphas()) {
    std::vector<double> dv_d(xd.values.size(), 0), dm_d(3, 0), ds_d(3, 0);
    std::vector<float> dv_f(xf.values.size(), 0), dm_f(3, 0), ds_f(3, 0);
    backward(static_cast<double>(alpha), cache_d, xd, dc_d, dv_d, dm_d, ds_d);
    backward(static_cast<float>(alpha), cache_f, xf, dc_f, dv_f, dm_f, ds_f);
    double dv_max = 0;
    for (const double v : dv_d) dv_max = std::max(dv_max, std::fabs(v));
    for (std::size_t i = 0; i < dv_d.size(); ++i)
      EXPECT_NEAR(dv_f[i], dv_d[i], 1e-4 * dv_max) << "alpha=" << static_cast<double>(alpha) << " i=" << i;
    for (std::size_t b = 0; b < 3; ++b) {
      EXPECT_NEAR(dm_f[b], dm_d[b], 1e-3 * std::fabs(dm_d[b]) + 1e-4) << "alpha=" << static_cast<double>(alpha) << " b=" << b;
      EXPECT_NEAR(ds_f[b], ds_d[b], 1e-3 * std::fabs(ds_d[b]) + 1e-4 / xd.sigma2[b])
          << "alpha=" << static_cast<double>(alpha) << " b=" << b;
    }
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class T>
class AttentionErrors : public ::testing::Test {};
TYPED_TEST_SUITE(AttentionErrors, FloatTypes);

TYPED_TEST(AttentionErrors, ForwardArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  sparcon::RidgeCache1D<T> cache(sparcon::GaussianBasis1D<T>::paper(8), T(0.01));
  const Batch<T> good(T(0));
  auto call = [&](const Batch<T>& x, std::size_t context_size, T alpha = T(1.5)) {
    return [&cache, x, context_size, alpha] {
      std::vector<T> context(context_size);
      sparcon::continuous_attention_1d<T>(alpha, cache, std::span<const T>(x.values), x.shape,
                                          std::span<const std::int64_t>(x.lengths), std::span<const T>(x.mu),
                                          std::span<const T>(x.sigma2), std::span<T>(context));
    };
  };
  const std::size_t nc = good.context_size();
  EXPECT_NO_THROW(call(good, nc)());
  {
    Batch<T> x = good;
    x.lengths = {3, 7};
    EXPECT_TRUE(throws_naming(call(x, nc), {{"lengths"}}));
    x.lengths = {3, 7, 10, 2};
    EXPECT_TRUE(throws_naming(call(x, nc), {{"lengths"}}));
    x.lengths = {3, 0, 10};
    EXPECT_TRUE(throws_naming(call(x, nc), {{"lengths"}}));
    x.lengths = {3, 11, 10};
    EXPECT_TRUE(throws_naming(call(x, nc), {{"lengths"}, {"11"}}));
    x.lengths = {-2, 7, 10};
    EXPECT_TRUE(throws_naming(call(x, nc), {{"lengths"}, {"-2"}}));
  }
  {
    Batch<T> x = good;
    x.values.pop_back();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"values"}}));
    x.values.resize(good.values.size() + 4);
    EXPECT_TRUE(throws_naming(call(x, nc), {{"values"}}));
  }
  {
    Batch<T> x = good;
    x.mu.pop_back();
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    x = good;
    x.sigma2.push_back(T(1));
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma2"}}));
  }
  EXPECT_TRUE(throws_naming(call(good, nc - 1), {{"context"}}));
  EXPECT_TRUE(throws_naming(call(good, nc + 1), {{"context"}}));
  {
    Batch<T> x = good;
    x.mu[1] = nan;
    EXPECT_TRUE(throws_naming(call(x, nc), {{"mu"}}));
    x = good;
    x.sigma2[2] = T(0);
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma2"}}));
    x.sigma2[2] = T(-0.5);
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma2"}, {"-0.5"}}));
    x.sigma2[2] = nan;
    EXPECT_TRUE(throws_naming(call(x, nc), {{"sigma2"}}));
  }
  EXPECT_TRUE(throws_naming(call(good, nc, T(0.5)), {{"alpha"}}));
  EXPECT_TRUE(throws_naming(call(good, nc, nan), {{"alpha"}}));
}

TYPED_TEST(AttentionErrors, BackwardArguments) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  sparcon::RidgeCache1D<T> cache(sparcon::GaussianBasis1D<T>::paper(8), T(0.01));
  const Batch<T> good(T(0));
  struct Sizes {
    std::size_t dcontext, dvalues, dmu, dsigma2;
  };
  const Sizes ok{good.context_size(), good.values.size(), 3, 3};
  auto call = [&](const Batch<T>& x, Sizes s) {
    return [&cache, x, s] {
      std::vector<T> dc(s.dcontext, T(1)), dv(s.dvalues), dm(s.dmu), ds(s.dsigma2);
      sparcon::continuous_attention_1d_backward<T>(T(2), cache, std::span<const T>(x.values), x.shape,
                                                   std::span<const std::int64_t>(x.lengths), std::span<const T>(x.mu),
                                                   std::span<const T>(x.sigma2), std::span<const T>(dc), std::span<T>(dv),
                                                   std::span<T>(dm), std::span<T>(ds));
    };
  };
  EXPECT_NO_THROW(call(good, ok)());
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext - 1, ok.dvalues, 3, 3}), {{"dcontext"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues + 1, 3, 3}), {{"dvalues"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues, 2, 3}), {{"dmu"}}));
  EXPECT_TRUE(throws_naming(call(good, {ok.dcontext, ok.dvalues, 3, 4}), {{"dsigma2"}}));
  Batch<T> x = good;
  x.lengths = {3, 7};
  EXPECT_TRUE(throws_naming(call(x, ok), {{"lengths"}}));
  x.lengths = {3, 0, 10};
  EXPECT_TRUE(throws_naming(call(x, ok), {{"lengths"}}));
  x.lengths = {3, 7, 12};
  EXPECT_TRUE(throws_naming(call(x, ok), {{"lengths"}, {"12"}}));
  x = good;
  x.values.pop_back();
  EXPECT_TRUE(throws_naming(call(x, ok), {{"values"}}));
  x = good;
  x.mu = {T(0.1), T(0.2)};
  EXPECT_TRUE(throws_naming(call(x, ok), {{"mu"}}));
  x = good;
  x.mu[0] = nan;
  EXPECT_TRUE(throws_naming(call(x, ok), {{"mu"}}));
  x = good;
  x.sigma2[1] = T(-1);
  EXPECT_TRUE(throws_naming(call(x, ok), {{"sigma2"}}));
}

}  // namespace
}  // namespace sparcon_test
