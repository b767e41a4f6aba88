// The value model of query-conditioned attention, B_b = G_b^T H_b (value_model_1d/2d) and its
// vector-Jacobian product, against long-double references built from the definition (the ridge
// matrix by Gaussian elimination, attention_reference*.h); and GaussianBasis1D::grid(n, sds).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "attention_reference.h"
#include "attention_reference_2d.h"
#include "continuous_cases.h"
#include "test_support.h"
#include "value_cases.h"
#include "sparcon/attention.h"
#include "sparcon/basis.h"

namespace sparcon_test {
namespace {

template <class T>
class ValueModel : public ::testing::Test {};
TYPED_TEST_SUITE(ValueModel, FloatTypes);

TYPED_TEST(ValueModel, GridBasisIsCorrectlyRoundedFromDouble) {
  using T = TypeParam;
  const std::vector<double> sds = {0.05, 0.1, 0.3};
  const auto basis = sparcon::GaussianBasis1D<T>::grid(12, sds);
  ASSERT_EQ(basis.size(), 12u);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t s = 0; s < 3; ++s) {
      const std::size_t j = i * 3 + s;
      EXPECT_EQ(basis.centers[j], static_cast<T>(static_cast<double>(i) / 3.0)) << j;
      EXPECT_EQ(basis.widths[j], static_cast<T>(sds[s] * sds[s])) << j;
    }
  // one centre: at 0
  const auto one = sparcon::GaussianBasis1D<T>::grid(2, {0.1, 0.5});
  EXPECT_EQ(one.centers, (std::vector<T>{0, 0}));
  // the paper's basis is grid(n, {0.1, 0.5})
  const auto paper = sparcon::GaussianBasis1D<T>::paper(8), same = sparcon::GaussianBasis1D<T>::grid(8, {0.1, 0.5});
  EXPECT_EQ(paper.centers, same.centers);
  EXPECT_EQ(paper.widths, same.widths);
  EXPECT_TRUE(throws_naming([] { sparcon::GaussianBasis1D<T>::grid(7, {0.1, 0.5}); }, {{"n = 7"}, {"(2)"}}));
  EXPECT_TRUE(throws_naming([] { sparcon::GaussianBasis1D<T>::grid(4, {}); }, {{"n = 4"}, {"(0)"}}));
  EXPECT_TRUE(throws_naming([] { sparcon::GaussianBasis1D<T>::grid(4, {0.1, -1}); }, {{"sds[1] = -1"}}));
  EXPECT_TRUE(throws_naming([] { sparcon::GaussianBasis1D<T>::grid(4, {NAN, 0.1}); }, {{"sds[0]"}}));
}

// B_b[j, f] = sum_{l < L_b} G_{L_b}[l, j] H_b[l, f] in long double; padding rows hold NaN, so a
// kernel that read them would fail.
TYPED_TEST(ValueModel, SequencesMatchTheDefinitionAndIgnorePadding) {
  using T = TypeParam;
  const auto basis = custom_basis<T>();
  const std::size_t n = basis.size(), length = 9, e = 5;
  const std::vector<std::int64_t> lengths = {9, 4, 1};
  const sparcon::SequenceShape shape{lengths.size(), length, e};
  std::vector<T> values = random_values<T>(shape.batch * length * e, 7);
  for (std::size_t b = 0; b < shape.batch; ++b)
    for (std::size_t l = static_cast<std::size_t>(lengths[b]); l < length; ++l)
      for (std::size_t f = 0; f < e; ++f) values[(b * length + l) * e + f] = std::numeric_limits<T>::quiet_NaN();
  const T lambda = T(0.05);
  sparcon::RidgeCache1D<T> ridge(basis, lambda);
  std::vector<T> model(shape.batch * n * e);
  sparcon::value_model_1d<T>(ridge, values, shape, lengths, model, sparcon::Threads{2});

  const auto bld = aref::to_ld(basis);
  std::vector<LD> want(model.size(), 0);
  for (std::size_t b = 0; b < shape.batch; ++b) {
    const auto len = static_cast<std::size_t>(lengths[b]);
    const std::vector<LD> g = aref::ridge(bld, len, lambda);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t l = 0; l < len; ++l)
          want[(b * n + j) * e + f] += g[l * n + j] * static_cast<LD>(values[(b * length + l) * e + f]);
  }
  EXPECT_LE(relative_error(model, want), tolerance<T>());

  // The backward: dvalues[b, l] = sum_j G[l, j] dmodel[b, j] for l < L_b, exactly 0 for padding.
  const std::vector<T> dmodel = random_values<T>(model.size(), 8);
  std::vector<T> dvalues(values.size(), T(123));
  sparcon::value_model_1d_backward<T>(ridge, shape, lengths, dmodel, dvalues, sparcon::Threads{2});
  std::vector<LD> dwant(values.size(), 0);
  for (std::size_t b = 0; b < shape.batch; ++b) {
    const auto len = static_cast<std::size_t>(lengths[b]);
    const std::vector<LD> g = aref::ridge(bld, len, lambda);
    for (std::size_t l = 0; l < len; ++l)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t j = 0; j < n; ++j)
          dwant[(b * length + l) * e + f] += g[l * n + j] * static_cast<LD>(dmodel[(b * n + j) * e + f]);
    for (std::size_t l = len; l < length; ++l)
      for (std::size_t f = 0; f < e; ++f) EXPECT_EQ(dvalues[(b * length + l) * e + f], T(0)) << b << " " << l;
  }
  EXPECT_LE(relative_error(dvalues, dwant), tolerance<T>());

  // The same with one thread: identical bits.
  std::vector<T> model1(model.size()), dvalues1(values.size());
  sparcon::value_model_1d<T>(ridge, values, shape, lengths, model1, sparcon::Threads{1});
  sparcon::value_model_1d_backward<T>(ridge, shape, lengths, dmodel, dvalues1, sparcon::Threads{1});
  EXPECT_EQ(model1, model);
  EXPECT_EQ(dvalues1, dvalues);
}

// The context of a density through the value model, B^T r, is the context of
// continuous_attention_1d (which never forms B): the two factorisations of H^T G r.
TYPED_TEST(ValueModel, ContextThroughTheModelIsTheAttentionContext) {
  using T = TypeParam;
  const auto basis = sparcon::GaussianBasis1D<T>::paper(16);
  const std::size_t n = basis.size(), length = 11, e = 3;
  const std::vector<std::int64_t> lengths = {11, 6};
  const sparcon::SequenceShape shape{2, length, e};
  const std::vector<T> values = random_values<T>(2 * length * e, 9);
  const std::vector<T> mu = {T(0.3), T(0.7)}, sigma2 = {T(0.02), T(0.1)};
  sparcon::RidgeCache1D<T> ridge(basis, T(0.01));
  std::vector<T> model(2 * n * e), r(2 * n), context(2 * e);
  sparcon::value_model_1d<T>(ridge, values, shape, lengths, model);
  sparcon::expectation_1d<T>(T(2), mu, sigma2, basis, r);
  sparcon::continuous_attention_1d<T>(T(2), ridge, values, shape, lengths, mu, sigma2, context);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t f = 0; f < e; ++f) {
      LD c = 0;
      for (std::size_t j = 0; j < n; ++j) c += static_cast<LD>(model[(b * n + j) * e + f]) * r[b * n + j];
      EXPECT_NEAR(static_cast<double>(c), static_cast<double>(context[b * e + f]), 50 * static_cast<double>(tolerance<T>()))
          << b << " " << f;
    }
}

TYPED_TEST(ValueModel, ImagesMatchTheDefinition) {
  using T = TypeParam;
  const auto basis = sparcon::GaussianBasis2D<T>::grid(4, T(0.01));
  const std::size_t n = basis.size(), e = 4;
  const sparcon::ImageShape shape{2, 5, 6, e};
  const std::size_t pixels = 30;
  const std::vector<T> values = random_values<T>(shape.batch * pixels * e, 11);
  const T lambda = T(0.02);
  sparcon::RidgeCache2D<T> ridge(basis, lambda);
  std::vector<T> model(shape.batch * n * e);
  sparcon::value_model_2d<T>(ridge, values, shape, model, sparcon::Threads{2});
  const std::vector<LD> g = aref2d::ridge(aref2d::to_ld(basis), {5, 6}, lambda);
  std::vector<LD> want(model.size(), 0);
  for (std::size_t b = 0; b < shape.batch; ++b)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t l = 0; l < pixels; ++l)
          want[(b * n + j) * e + f] += g[l * n + j] * static_cast<LD>(values[(b * pixels + l) * e + f]);
  EXPECT_LE(relative_error(model, want), tolerance<T>());

  const std::vector<T> dmodel = random_values<T>(model.size(), 12);
  std::vector<T> dvalues(values.size());
  sparcon::value_model_2d_backward<T>(ridge, shape, dmodel, dvalues, sparcon::Threads{2});
  std::vector<LD> dwant(values.size(), 0);
  for (std::size_t b = 0; b < shape.batch; ++b)
    for (std::size_t l = 0; l < pixels; ++l)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t j = 0; j < n; ++j)
          dwant[(b * pixels + l) * e + f] += g[l * n + j] * static_cast<LD>(dmodel[(b * n + j) * e + f]);
  EXPECT_LE(relative_error(dvalues, dwant), tolerance<T>());
}

TEST(ValueModelErrors, NameTheArgument) {
  const auto basis = sparcon::GaussianBasis1D<double>::paper(4);
  sparcon::RidgeCache1D<double> ridge(basis, 0.01);
  const std::vector<double> values(2 * 3 * 2, 0.5);
  std::vector<double> model(2 * 4 * 2), short_model(5), dvalues(values.size());
  const std::vector<std::int64_t> lengths = {3, 2}, bad = {3, 4};
  const sparcon::SequenceShape shape{2, 3, 2};
  EXPECT_TRUE(throws_naming([&] { sparcon::value_model_1d<double>(ridge, values, shape, lengths, short_model); },
                                  {{"model"}, {"5"}}));
  EXPECT_TRUE(throws_naming([&] { sparcon::value_model_1d<double>(ridge, values, shape, bad, model); },
                                  {{"lengths[1] = 4"}}));
  EXPECT_TRUE(throws_naming(
      [&] { sparcon::value_model_1d_backward<double>(ridge, shape, lengths, short_model, dvalues); }, {{"dmodel"}}));
  sparcon::RidgeCache2D<double> ridge2(sparcon::GaussianBasis2D<double>::grid(2, 0.01), 0.01);
  EXPECT_TRUE(throws_naming(
      [&] { sparcon::value_model_2d<double>(ridge2, values, {2, 0, 3, 2}, model); }, {{"height > 0"}}));
}

}  // namespace
}  // namespace sparcon_test
