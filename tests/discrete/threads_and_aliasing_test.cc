// Invariances of the calling convention: the thread count does not change a single bit, and an
// output that aliases its input exactly (p == x, dx == g) gives what a separate output gives.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

template <class T>
class ThreadsAndAliasing : public ::testing::Test {};
TYPED_TEST_SUITE(ThreadsAndAliasing, FloatTypes);

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TYPED_TEST(ThreadsAndAliasing, ForwardIsBitIdenticalForAnyThreadCount) {
  using T = TypeParam;
  // (Calls of fewer than 2 x 16384 entries run on one thread: the first two shapes split.)
  for (const sparcon::Rows rows : {sparcon::Rows{333, 100}, sparcon::Rows{9, 4096}, sparcon::Rows{3, 7}}) {
    const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 3.0, 5 + rows.count));
    for (const MapCase& c : all_cases()) {
      const Forward<T> one = run_forward(family_of<T>(c), x, rows, 1);
      for (unsigned threads : {2u, 3u, 8u}) {
        const Forward<T> many = run_forward(family_of<T>(c), x, rows, threads);
        EXPECT_TRUE(bitwise_equal(one.p, many.p)) << c.name << ", threads " << threads << ", rows " << rows.count;
        EXPECT_TRUE(bitwise_equal(one.tau, many.tau)) << c.name << ", threads " << threads;
      }
    }
  }
}

/// A row's p and tau do not depend on the rows beside it: each row of a batch alone (a batch of
/// one row) gives the bits it gets in the batch. The kernels take rows in groups of lanes (tiny
/// rows, groups of candidates, general powers, Newton's passes) and the rows they leave one at a
/// time; a batch's last rows and a row alone used to take other formulas than a full group's, one
/// or two ulps apart in double (entmax-1.5: 9-27 of 64 rows of 3-256 entries; found by an audit,
/// 2026-12-07), so a row's bits depended on its place and on the thread count.
TYPED_TEST(ThreadsAndAliasing, RowsAloneAndInABatchGiveTheSameBits) {
  using T = TypeParam;
  for (const std::size_t n : {3, 8, 13, 16, 24, 32, 48, 64, 100, 128, 256, 257, 600}) {
    const sparcon::Rows rows{19, n};
    const std::vector<T> x = to_type<T>(normal_values(rows.count, n, 1.0, 900 + n));
    for (const MapCase& c : all_cases()) {
      if (!applies(c, n)) continue;
      const Forward<T> batch = run_forward(family_of<T>(c), x, rows);
      for (std::size_t r = 0; r < rows.count; ++r) {
        const std::vector<T> row(x.begin() + static_cast<std::ptrdiff_t>(r * n),
                                 x.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
        const Forward<T> alone = run_forward(family_of<T>(c), row, sparcon::Rows{1, n});
        const std::vector<T> in_batch(batch.p.begin() + static_cast<std::ptrdiff_t>(r * n),
                                      batch.p.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
        EXPECT_TRUE(bitwise_equal(alone.p, in_batch) && bitwise_equal(alone.tau, {batch.tau[r]}))
            << c.name << ", rows of " << n << ", row " << r;
      }
    }
  }
}

TYPED_TEST(ThreadsAndAliasing, BackwardIsBitIdenticalForAnyThreadCount) {
  using T = TypeParam;
  const sparcon::Rows rows{37, 100};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 3.0, 17));
  const std::vector<T> g = to_type<T>(normal_values(rows.count, rows.length, 1.0, 18));
  for (const MapCase& c : all_cases()) {
    const Forward<T> out = run_forward(family_of<T>(c), x, rows);
    std::vector<T> one(x.size()), two(x.size());
    sparcon::backward<T>(family_of<T>(c), out.p, g, std::span<T>(one), rows, sparcon::Threads{1});
    sparcon::backward<T>(family_of<T>(c), out.p, g, std::span<T>(two), rows, sparcon::Threads{2});
    EXPECT_TRUE(bitwise_equal(one, two)) << c.name;
  }
  const Forward<T> out = run_forward(sparcon::Family<T>::entmax(T(1.5)), x, rows);
  std::vector<T> one(rows.count), two(rows.count);
  sparcon::entmax_alpha_backward<T>(out.p, g, std::span<T>(one), rows, T(1.5), sparcon::Threads{1});
  sparcon::entmax_alpha_backward<T>(out.p, g, std::span<T>(two), rows, T(1.5), sparcon::Threads{2});
  EXPECT_TRUE(bitwise_equal(one, two));
}

TYPED_TEST(ThreadsAndAliasing, ForwardInPlaceEqualsOutOfPlace) {
  using T = TypeParam;
  for (const sparcon::Rows rows : {sparcon::Rows{6, 100}, sparcon::Rows{2, 4096}}) {
    const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 2.0, 23));
    for (const MapCase& c : all_cases()) {
      const Forward<T> separate = run_forward(family_of<T>(c), x, rows);
      std::vector<T> buffer = x;
      std::vector<T> tau(rows.count);
      sparcon::forward<T>(family_of<T>(c), std::span<const T>(buffer), std::span<T>(buffer), rows,
                          sparcon::Threads{2}, std::span<T>(tau));
      EXPECT_TRUE(bitwise_equal(separate.p, buffer)) << c.name;
      EXPECT_TRUE(bitwise_equal(separate.tau, tau)) << c.name;
    }
  }
}

// dx == g and dx == p, on rows whose backward runs without a branch per vector (100) and on rows
// whose backward skips the all-zero vectors of p (700).
TYPED_TEST(ThreadsAndAliasing, BackwardInPlaceEqualsOutOfPlace) {
  using T = TypeParam;
  for (const sparcon::Rows rows : {sparcon::Rows{6, 100}, sparcon::Rows{5, 700}}) {
    const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 2.0, 29));
    const std::vector<T> g = to_type<T>(normal_values(rows.count, rows.length, 1.0, 30));
    for (const MapCase& c : all_cases()) {
      const Forward<T> out = run_forward(family_of<T>(c), x, rows);
      std::vector<T> separate(x.size());
      sparcon::backward<T>(family_of<T>(c), out.p, g, std::span<T>(separate), rows);
      std::vector<T> buffer = g;
      sparcon::backward<T>(family_of<T>(c), out.p, std::span<const T>(buffer), std::span<T>(buffer), rows);
      EXPECT_TRUE(bitwise_equal(separate, buffer)) << c.name << ", dx == g, length " << rows.length;
      buffer = out.p;
      sparcon::backward<T>(family_of<T>(c), std::span<const T>(buffer), g, std::span<T>(buffer), rows);
      EXPECT_TRUE(bitwise_equal(separate, buffer)) << c.name << ", dx == p, length " << rows.length;
    }
  }
}

/// discrete.h: "1, 1.5 and 2 take the exact paths above": entmax at those alphas is the
/// dedicated map, bit for bit.
TYPED_TEST(ThreadsAndAliasing, EntmaxAtOneOneAndAHalfAndTwoIsTheDedicatedMap) {
  using T = TypeParam;
  const sparcon::Rows rows{9, 77};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 2.0, 31));
  using F = sparcon::Family<T>;
  EXPECT_TRUE(bitwise_equal(run_forward(F::entmax(T(1)), x, rows).p, run_forward(F::softmax(), x, rows).p));
  EXPECT_TRUE(bitwise_equal(run_forward(F::entmax(T(1.5)), x, rows).p, run_forward(F::entmax15(), x, rows).p));
  EXPECT_TRUE(bitwise_equal(run_forward(F::entmax(T(2)), x, rows).p, run_forward(F::sparsemax(), x, rows).p));
}

}  // namespace
}  // namespace sparcon_test
