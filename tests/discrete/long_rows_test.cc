// Rows of 1,000,000 entries (sparsemax, entmax-1.5, entmax 1.25 and 3) against the reference, in
// float and double: the candidate buffers and the single-pass scans must hold at this length.
// Rows just past the scan's length whose maximum comes last, after many entries near it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

template <class T>
class LongRows : public ::testing::Test {};
TYPED_TEST_SUITE(LongRows, FloatTypes);

TYPED_TEST(LongRows, MillionEntriesMatchTheReference) {
  using T = TypeParam;
  const sparcon::Rows rows{1, 1000000};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.0, 81));
  for (const MapCase& c : {make_case(sparcon::Map::sparsemax, 2), make_case(sparcon::Map::entmax15, 1.5),
                           make_case(sparcon::Map::entmax, 1.25), make_case(sparcon::Map::entmax, 3)}) {
    SCOPED_TRACE(c.name);
    expect_batch_matches<T>(c.map, {static_cast<T>(c.parameter)}, x, rows, run_forward(family_of<T>(c), x, rows, 2));
  }
}

/// Rows of more than 4096 entries are read once by a scan that solves its candidates so far
/// whenever its buffer fills, against its running maximum (seeded from the first 4096 entries),
/// which it may not have reached: ascending rows, and rows of tiny spread where every entry is a
/// candidate. Until 2026-12-07 the offset solver of alpha > 2 stopped where no base was positive
/// there, and these rows came out with sum(p) from 4 to 4000 (found by an audit against mpmath).
TYPED_TEST(LongRows, ScannedRowsWhoseMaximumComesLast) {
  using T = TypeParam;
  for (const std::size_t n : {4097, 5000}) {
    std::vector<double> ramp_16, ramp_30;
    for (std::size_t i = 0; i < n; ++i) {
      ramp_16.push_back(std::ldexp(static_cast<double>(i), -16));
      ramp_30.push_back(std::ldexp(static_cast<double>(i), -30));
    }
    std::vector<double> all = ramp_16;
    all.insert(all.end(), ramp_30.begin(), ramp_30.end());
    const std::vector<double> tiny = normal_values(1, n, 0.01, 83);
    all.insert(all.end(), tiny.begin(), tiny.end());
    const std::vector<T> x = to_type<T>(all);
    const sparcon::Rows rows{3, n};
    for (const double alpha : {1.25, 1.5, 1.75, 2.0, 2.25, 3.0, 5.0}) {
      const MapCase c = make_case(sparcon::Map::entmax, alpha);
      SCOPED_TRACE(c.name + ", n " + std::to_string(n));
      expect_batch_matches<T>(c.map, {static_cast<T>(alpha)}, x, rows, run_forward(family_of<T>(c), x, rows),
                              {"ramp 2^-16", "ramp 2^-30", "0.01 N(0, 1)"});
    }
  }
}

}  // namespace
}  // namespace sparcon_test
