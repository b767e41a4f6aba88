// Fenchel-Young losses (losses.h) against the reference formulas, their gradient against finite
// differences of the reference loss, masking (ignore_index, -inf scores), reductions and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "finite_differences.h"
#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/losses.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using sparcon::Map;

/// The maps that have a Fenchel-Young loss, with the parameter under test.
std::vector<MapCase> loss_cases() {
  return {make_case(Map::softmax, 1), make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5),
          make_case(Map::entmax, 1.25), make_case(Map::normmax, 2)};
}

/// The reference loss of one row, written from the formulas of losses.h.
LD reference_loss(const MapCase& c, LD parameter, std::span<const LD> x, std::size_t y) {
  switch (c.map) {
    case Map::softmax: return ref::cross_entropy(x, y);
    case Map::normmax: return ref::normmax_loss(x, y, parameter);
    case Map::entmax15: return ref::entmax_loss(x, y, 1.5L);
    case Map::sparsemax: return ref::entmax_loss(x, y, 2);
    default: return ref::entmax_loss(x, y, parameter);
  }
}

template <class T>
struct LossOutput {
  std::vector<T> loss, grad;
};

template <class T>
LossOutput<T> run_loss(const MapCase& c, const std::vector<T>& x, const std::vector<std::int64_t>& target,
                       sparcon::Rows rows, std::int64_t ignore_index = -100) {
  LossOutput<T> out{std::vector<T>(rows.count), std::vector<T>(rows.size())};
  sparcon::fenchel_young_loss<T>(family_of<T>(c), x, target, std::span<T>(out.loss), std::span<T>(out.grad), rows,
                                 ignore_index);
  return out;
}

template <class T>
class Losses : public ::testing::Test {};
TYPED_TEST_SUITE(Losses, FloatTypes);

TYPED_TEST(Losses, LossAndGradientMatchTheReference) {
  using T = TypeParam;
  for (const MapCase& c : loss_cases()) {
    for (double scale : random_scales()) {
      const sparcon::Rows rows{6, 23};
      const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, scale, 900));
      std::vector<std::int64_t> target;
      for (std::size_t r = 0; r < rows.count; ++r) target.push_back(static_cast<std::int64_t>((7 * r + 3) % rows.length));
      const LossOutput<T> out = run_loss(c, x, target, rows);
      const LD parameter = static_cast<LD>(static_cast<T>(c.parameter));
      for (std::size_t r = 0; r < rows.count; ++r) {
        const std::vector<LD> xr = promote(row_of(x, rows, r));
        LD largest = 0;
        for (LD v : xr) largest = std::max(largest, std::fabs(v));
        const LD want = reference_loss(c, parameter, xr, static_cast<std::size_t>(target[r]));
        EXPECT_NEAR(out.loss[r], static_cast<double>(want), static_cast<double>(4 * map_tolerance<T>() * (1 + largest)))
            << c.name << ", scale " << scale << ", row " << r;
        EXPECT_GE(out.loss[r], T(0)) << c.name;
        const ref::Result p = reference_row(c.map, parameter, xr);
        for (std::size_t i = 0; i < rows.length; ++i) {
          const LD g = p.p[i] - (i == static_cast<std::size_t>(target[r]) ? 1 : 0);
          EXPECT_NEAR(out.grad[r * rows.length + i], static_cast<double>(g),
                      static_cast<double>(entry_tolerance<T>(p, i)))
              << c.name << ", scale " << scale << ", row " << r << ", entry " << i;
        }
      }
    }
  }
}

/// The gradient is the derivative of the loss: central differences of the reference loss.
TEST(LossGradient, MatchesFiniteDifferencesOfTheLoss) {
  std::mt19937_64 rng(31);
  for (const MapCase& c : loss_cases()) {
    for (std::size_t n : {2, 5, 17}) {
      const std::vector<double> x = row_away_from_kinks(c, n, 1.5, rng);
      const std::size_t y = n / 2;
      const LossOutput<double> out = run_loss(c, x, {static_cast<std::int64_t>(y)}, sparcon::Rows{1, n});
      const std::vector<LD> xl(x.begin(), x.end());
      std::vector<LD> fd(n);
      const LD h = 1e-7L;
      for (std::size_t j = 0; j < n; ++j) {
        std::vector<LD> up = xl, down = xl;
        up[j] += h;
        down[j] -= h;
        fd[j] = (reference_loss(c, c.parameter, up, y) - reference_loss(c, c.parameter, down, y)) / (2 * h);
      }
      EXPECT_TRUE(gradients_agree(out.grad, fd)) << c.name << ", length " << n;
    }
  }
}

/// A row that strongly favours its target: the sparse maps give p = e_y exactly, so loss 0 and
/// gradient 0 exactly; softmax gives the tiny positive cross-entropy.
TYPED_TEST(Losses, ZeroWhenTheTargetWinsClearly) {
  using T = TypeParam;
  const sparcon::Rows rows{2, 5};
  const std::vector<T> x = {0, 0, 10, 0, 0, -1, 3, 1, 2, 0.5};
  const std::vector<T> x2 = {0, 0, 10, 0, 0, 20, 3, 1, 2, 0.5};
  for (const MapCase& c : loss_cases()) {
    const LossOutput<T> out = run_loss(c, c.map == Map::softmax ? x : x2, {2, 0}, rows);
    if (c.map == Map::softmax) {
      const std::vector<LD> xr = promote(row_of(x, rows, 0));
      EXPECT_NEAR(out.loss[0], static_cast<double>(ref::cross_entropy(xr, 2)),
                  static_cast<double>(4 * map_tolerance<T>() * 11));
      EXPECT_GT(out.loss[0], T(0));
      continue;
    }
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(out.loss[r], T(0)) << c.name << ", row " << r;
      for (std::size_t i = 0; i < rows.length; ++i) {
        EXPECT_EQ(out.grad[r * rows.length + i], T(0)) << c.name << ", row " << r << ", entry " << i;
      }
    }
  }
}

TYPED_TEST(Losses, IgnoredRowsGiveZeroLossAndGradient) {
  using T = TypeParam;
  const sparcon::Rows rows{4, 6};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 2.0, 61));
  for (const MapCase& c : loss_cases()) {
    for (const std::int64_t ignore : {std::int64_t{-100}, std::int64_t{-1}, std::int64_t{3}}) {
      const std::vector<std::int64_t> target = {ignore, 1, ignore, ignore == 3 ? 0 : 5};
      LossOutput<T> out{std::vector<T>(rows.count, T(7)), std::vector<T>(rows.size(), T(7))};
      sparcon::fenchel_young_loss<T>(family_of<T>(c), x, target, std::span<T>(out.loss), std::span<T>(out.grad), rows,
                                     ignore);
      for (std::size_t r : {0, 2}) {
        EXPECT_EQ(out.loss[r], T(0)) << c.name << ", ignore_index " << ignore;
        for (std::size_t i = 0; i < rows.length; ++i) EXPECT_EQ(out.grad[r * rows.length + i], T(0)) << c.name;
      }
      EXPECT_GT(out.loss[1], T(0)) << c.name;
    }
  }
}

TYPED_TEST(Losses, GradientMayBeOmitted) {
  using T = TypeParam;
  const sparcon::Rows rows{3, 8};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.0, 62));
  const std::vector<std::int64_t> target = {0, 7, 4};
  for (const MapCase& c : loss_cases()) {
    const LossOutput<T> with = run_loss(c, x, target, rows);
    std::vector<T> loss(rows.count);
    sparcon::fenchel_young_loss<T>(family_of<T>(c), x, target, std::span<T>(loss), std::span<T>(), rows);
    for (std::size_t r = 0; r < rows.count; ++r) EXPECT_EQ(loss[r], with.loss[r]) << c.name;
  }
}

TYPED_TEST(Losses, MinusInfinityScoresContributeNothing) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const sparcon::Rows rows{1, 5};
  const std::vector<T> x = {-inf, T(1), T(0.5), -inf, T(-0.25)};
  const std::vector<LD> finite = {1, 0.5, -0.25};
  for (const MapCase& c : loss_cases()) {
    const LossOutput<T> out = run_loss(c, x, {1}, rows);
    const LD parameter = static_cast<LD>(static_cast<T>(c.parameter));
    EXPECT_NEAR(out.loss[0], static_cast<double>(reference_loss(c, parameter, finite, 0)),
                static_cast<double>(4 * map_tolerance<T>()))
        << c.name;
    for (T g : out.grad) EXPECT_FALSE(std::isnan(g)) << c.name;
    EXPECT_EQ(out.grad[0], T(0)) << c.name;
    EXPECT_EQ(out.grad[3], T(0)) << c.name;
  }
}

TYPED_TEST(Losses, TargetScoredMinusInfinityGivesInfiniteLoss) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const sparcon::Rows rows{1, 4};
  const std::vector<T> x = {T(1), -inf, T(0.5), T(-0.25)};
  for (const MapCase& c : loss_cases()) {
    const LossOutput<T> out = run_loss(c, x, {1}, rows);
    EXPECT_EQ(out.loss[0], inf) << c.name;
    const ref::Result p = reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(std::span<const T>(x)));
    for (std::size_t i = 0; i < rows.length; ++i) {
      const LD g = p.p[i] - (i == 1 ? 1 : 0);
      EXPECT_NEAR(out.grad[i], static_cast<double>(g), static_cast<double>(map_tolerance<T>())) << c.name << ", entry " << i;
    }
  }
}

TYPED_TEST(Losses, TargetOutOfRangeThrows) {
  using T = TypeParam;
  const sparcon::Rows rows{2, 4};
  const std::vector<T> x(rows.size(), T(0));
  for (const std::int64_t bad : {std::int64_t{4}, std::int64_t{-1}, std::int64_t{1000}}) {
    std::vector<T> loss(2);
    const std::vector<std::int64_t> target = {0, bad};
    try {
      sparcon::fenchel_young_loss<T>(sparcon::Family<T>::sparsemax(), x, target, std::span<T>(loss), std::span<T>(),
                                     rows);
      ADD_FAILURE() << "target " << bad << " did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("target"));
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr(std::to_string(bad)));
    }
  }
}

TYPED_TEST(Losses, BudgetHasNoLoss) {
  using T = TypeParam;
  const std::vector<T> x(4, T(0));
  std::vector<T> loss(1);
  const std::vector<std::int64_t> target = {0};
  EXPECT_THROW(sparcon::fenchel_young_loss<T>(sparcon::Family<T>::budget(T(2)), x, target, std::span<T>(loss),
                                              std::span<T>(), sparcon::Rows{1, 4}),
               std::invalid_argument);
}

TYPED_TEST(Losses, Reductions) {
  using T = TypeParam;
  const std::vector<T> loss = {T(1), T(2), T(4), T(8)};
  const std::vector<std::int64_t> target = {0, -100, 3, 1};
  EXPECT_EQ(sparcon::reduce_loss<T>(loss, target, sparcon::Reduction::sum), T(13));
  EXPECT_EQ(sparcon::reduce_loss<T>(loss, target, sparcon::Reduction::mean), T(13) / T(3));
  EXPECT_EQ(sparcon::reduce_loss<T>(loss, target, sparcon::Reduction::mean, 3), T(11) / T(3));
  EXPECT_EQ(sparcon::reduction_scale<T>(target, sparcon::Reduction::none), T(1));
  EXPECT_EQ(sparcon::reduction_scale<T>(target, sparcon::Reduction::sum), T(1));
  EXPECT_EQ(sparcon::reduction_scale<T>(target, sparcon::Reduction::mean), T(1) / T(3));
  const std::vector<std::int64_t> all_ignored = {-100, -100, -100, -100};
  const std::vector<T> zeros(4, T(0));
  EXPECT_EQ(sparcon::reduce_loss<T>(zeros, all_ignored, sparcon::Reduction::mean), T(0));
  EXPECT_EQ(sparcon::reduce_loss<T>(zeros, all_ignored, sparcon::Reduction::sum), T(0));
  EXPECT_EQ(sparcon::reduction_scale<T>(all_ignored, sparcon::Reduction::mean), T(0));
  const std::vector<T> none;
  const std::vector<std::int64_t> no_target;
  EXPECT_EQ(sparcon::reduce_loss<T>(none, no_target, sparcon::Reduction::mean), T(0));
}

/// mean reduction: scale * per-row gradient is the gradient of the mean loss (differences).
TEST(LossReduction, ScaleTimesRowGradientIsTheGradientOfTheMean) {
  const sparcon::Rows rows{3, 5};
  const MapCase c = make_case(Map::entmax15, 1.5);
  std::mt19937_64 rng(8);
  std::vector<double> x;
  for (std::size_t r = 0; r < rows.count; ++r) {
    const std::vector<double> row = row_away_from_kinks(c, rows.length, 1.0, rng);
    x.insert(x.end(), row.begin(), row.end());
  }
  const std::vector<std::int64_t> target = {1, -100, 4};
  const LossOutput<double> out = run_loss(c, x, target, rows);
  const double scale = sparcon::reduction_scale<double>(target, sparcon::Reduction::mean);
  auto mean_loss = [&](const std::vector<double>& xs) {
    const LossOutput<double> o = run_loss(c, xs, target, rows);
    return sparcon::reduce_loss<double>(o.loss, target, sparcon::Reduction::mean);
  };
  const double h = 1e-6;
  for (std::size_t j = 0; j < x.size(); ++j) {
    std::vector<double> up = x, down = x;
    up[j] += h;
    down[j] -= h;
    EXPECT_NEAR(scale * out.grad[j], (mean_loss(up) - mean_loss(down)) / (2 * h), 1e-7) << "entry " << j;
  }
}

}  // namespace
}  // namespace sparcon_test
