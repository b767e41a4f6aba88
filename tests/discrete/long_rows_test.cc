// Rows of 1,000,000 entries (sparsemax, entmax-1.5, entmax 1.25 and 3) against the reference, in
// float and double: the candidate buffers and the single-pass scans must hold at this length.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sparcon_test
