// Edge rows, for every map, float and double: one entry, extreme magnitudes (1e30, 1e-30),
// 1e6 + noise (no loss of accuracy), -inf entries (masking), all -inf rows, NaN and +inf entries
// (the whole row NaN, other rows unaffected), entries at the support boundary, and empty
// batches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

template <class T>
class EdgeRows : public ::testing::Test {};
TYPED_TEST_SUITE(EdgeRows, FloatTypes);

/// Every case that applies to the length, checked against the reference.
template <class T>
void expect_all_maps_match(const std::vector<T>& x, sparcon::Rows rows, const std::string& what) {
  for (const MapCase& c : all_cases()) {
    if (!applies(c, rows.length)) continue;
    SCOPED_TRACE(what);
    expect_batch_matches<T>(c.map, {static_cast<T>(c.parameter)}, x, rows, run_forward(family_of<T>(c), x, rows));
  }
}

TYPED_TEST(EdgeRows, OneEntryGivesOne) {
  using T = TypeParam;
  const std::vector<T> x = {T(-3.5), T(0), T(2), T(1e6), T(-1e30)};
  const sparcon::Rows rows{x.size(), 1};
  for (const MapCase& c : all_cases()) {
    if (!applies(c, 1)) continue;
    const Forward<T> out = run_forward(family_of<T>(c), x, rows);
    for (std::size_t r = 0; r < rows.count; ++r) EXPECT_EQ(out.p[r], T(1)) << c.name << ", x = " << x[r];
  }
  expect_all_maps_match<T>(x, rows, "length 1");
}

TYPED_TEST(EdgeRows, ExtremeMagnitudes) {
  using T = TypeParam;
  for (const double scale : {1e30, 1e-30}) {
    const sparcon::Rows rows{3, 20};
    const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, scale, 71));
    expect_all_maps_match<T>(x, rows, "scale " + std::to_string(scale));
  }
}

/// 1e6 + N(0,1) in double: sparcon must keep every digit the inputs have (it subtracts the max).
TEST(EdgeRowsDouble, LargeOffsetKeepsFullAccuracy) {
  const sparcon::Rows rows{4, 50};
  std::vector<double> x = normal_values(rows.count, rows.length, 1.0, 72);
  for (double& v : x) v += 1e6;
  expect_all_maps_match<double>(x, rows, "1e6 + N(0,1)");
}

TYPED_TEST(EdgeRows, MinusInfinityEntriesAreMaskedOut) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const sparcon::Rows rows{3, 9};
  std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.5, 73));
  for (std::size_t i : {0, 4, 5, 10, 17, 26}) x[i] = -inf;
  expect_all_maps_match<T>(x, rows, "some -inf");
  // The finite entries get exactly what the map gives the row without the masked entries.
  for (const MapCase& c : all_cases()) {
    if (!applies(c, 7)) continue;
    const Forward<T> masked = run_forward(family_of<T>(c), x, rows);
    std::vector<T> compact;
    for (T v : std::span<const T>(x).subspan(0, 9)) {
      if (v != -inf) compact.push_back(v);
    }
    const Forward<T> alone = run_forward(family_of<T>(c), compact, sparcon::Rows{1, compact.size()});
    std::size_t k = 0;
    for (std::size_t i = 0; i < 9; ++i) {
      if (x[i] == -inf) {
        EXPECT_EQ(masked.p[i], T(0)) << c.name;
      } else {
        EXPECT_NEAR(masked.p[i], alone.p[k++], static_cast<double>(2 * map_tolerance<T>())) << c.name << ", entry " << i;
      }
    }
  }
}

TYPED_TEST(EdgeRows, AllMinusInfinityRowIsZeroWithInfiniteTau) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const sparcon::Rows rows{3, 6};
  std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.0, 74));
  for (std::size_t i = 6; i < 12; ++i) x[i] = -inf;  // row 1
  const std::vector<T> g = to_type<T>(normal_values(rows.count, rows.length, 1.0, 75));
  for (const MapCase& c : all_cases()) {
    const Forward<T> out = run_forward(family_of<T>(c), x, rows);
    for (std::size_t i = 6; i < 12; ++i) EXPECT_EQ(out.p[i], T(0)) << c.name;
    EXPECT_EQ(out.tau[1], inf) << c.name;
    std::vector<T> dx(x.size(), T(7));
    sparcon::backward<T>(family_of<T>(c), out.p, g, std::span<T>(dx), rows);
    for (std::size_t i = 6; i < 12; ++i) EXPECT_EQ(dx[i], T(0)) << c.name << ", entry " << i;
    for (std::size_t i : {0, 12}) EXPECT_FALSE(std::isnan(dx[i])) << c.name;
    if (!applies(c, rows.length)) continue;
    for (std::size_t r : {0, 2}) {
      const ref::Result want = reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(row_of(x, rows, r)));
      EXPECT_TRUE(row_matches<T>(row_of(out.p, rows, r), out.tau[r], want, c.map != sparcon::Map::budget)) << c.name;
    }
  }
  std::vector<T> dalpha(rows.count, T(7));
  const Forward<T> out = run_forward(sparcon::Family<T>::entmax(T(1.5)), x, rows);
  sparcon::entmax_alpha_backward<T>(out.p, g, std::span<T>(dalpha), rows, T(1.5));
  EXPECT_EQ(dalpha[1], T(0));
}

TYPED_TEST(EdgeRows, NanOrPlusInfinityMakesTheRowNan) {
  using T = TypeParam;
  for (const T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    const sparcon::Rows rows{3, 7};
    std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.0, 76));
    x[7 + 3] = bad;  // row 1
    for (const MapCase& c : all_cases()) {
      const Forward<T> out = run_forward(family_of<T>(c), x, rows);
      for (std::size_t i = 7; i < 14; ++i) EXPECT_TRUE(std::isnan(out.p[i])) << c.name << ", entry " << i << ", bad " << bad;
      EXPECT_TRUE(std::isnan(out.tau[1])) << c.name;
      if (!applies(c, rows.length)) continue;
      for (std::size_t r : {0, 2}) {
        const ref::Result want = reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(row_of(x, rows, r)));
        EXPECT_TRUE(row_matches<T>(row_of(out.p, rows, r), out.tau[r], want, c.map != sparcon::Map::budget)) << c.name;
      }
    }
  }
}

/// Rows with an entry just inside the support boundary: at the threshold its base
/// [1 + a (y - lambda)] is a tiny t, so for alpha > 2 (p = base^k, k < 1) the derivative of the
/// threshold equation is huge near the root and a small Newton step does not prove a small
/// error: the offset solver must stop on its bracket (it fails when a step of 1e-7 relative
/// ends it), and t^k is far above rounding. For alpha < 2 the same rows check the stop at a
/// converged step. Each row: the maximum 0, the boundary entry, one entry well inside and one
/// outside; built in double, rounded to T.
TYPED_TEST(EdgeRows, EntryAtTheSupportBoundary) {
  using T = TypeParam;
  for (const double alpha : {1.25, 1.75, 2.5, 3.0, 4.0}) {
    const double a = alpha - 1, k = 1 / a;
    std::vector<T> x;
    std::vector<std::string> names;
    for (const double t : {1e-4, 1e-8, 1e-12, 1e-16}) {
      // Bases at the threshold: c for the maximum, b for the inside entry, t: c^k + b^k + t^k = 1
      // with b = c / 2.
      const double c = std::pow((1 - std::pow(t, k)) / (1 + std::pow(0.5, k)), 1 / k);
      for (const double y : {0.0, (t - c) / a, -c / (2 * a), -2 / a}) x.push_back(static_cast<T>(y));
      char name[32];
      std::snprintf(name, sizeof name, "t = %g", t);
      names.emplace_back(name);
    }
    const sparcon::Rows rows{names.size(), 4};
    const sparcon::Family<T> family = sparcon::Family<T>::entmax(static_cast<T>(alpha));
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    expect_batch_matches<T>(sparcon::Map::entmax, {static_cast<T>(alpha)}, x, rows, run_forward(family, x, rows),
                            names);
  }
}

TYPED_TEST(EdgeRows, EmptyBatchesDoNothing) {
  using T = TypeParam;
  std::vector<T> none;
  for (const sparcon::Rows rows : {sparcon::Rows{0, 5}, sparcon::Rows{0, 0}}) {
    for (const MapCase& c : all_cases()) {
      EXPECT_NO_THROW(sparcon::forward<T>(family_of<T>(c), std::span<const T>(none), std::span<T>(none), rows))
          << c.name;
      EXPECT_NO_THROW(sparcon::backward<T>(family_of<T>(c), std::span<const T>(none), std::span<const T>(none),
                                           std::span<T>(none), rows))
          << c.name;
    }
    EXPECT_NO_THROW(sparcon::entmax_alpha_backward<T>(std::span<const T>(none), std::span<const T>(none),
                                                      std::span<T>(none), rows, T(1.5)));
  }
}

}  // namespace
}  // namespace sparcon_test
