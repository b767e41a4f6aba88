// GaussianBasis1D::paper(n): n/2 centres linspace(0, 1, n/2), each with the widths 0.01 and 0.25
// (standard deviations 0.1 and 0.5), as a multiset of (centre, width) pairs (the order is the
// library's choice).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "continuous_cases.h"
#include "sparcon/continuous.h"

namespace sparcon_test {
namespace {

template <class T>
class ContinuousPaperBasis : public ::testing::Test {};
TYPED_TEST_SUITE(ContinuousPaperBasis, FloatTypes);

TYPED_TEST(ContinuousPaperBasis, CentresAndWidths) {
  using T = TypeParam;
  const LD eps = std::numeric_limits<T>::epsilon();
  for (const std::size_t n : {std::size_t{2}, std::size_t{4}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
    const auto basis = sparcon::GaussianBasis1D<T>::paper(n);
    ASSERT_EQ(basis.size(), n);
    ASSERT_EQ(basis.centers.size(), n);
    ASSERT_EQ(basis.widths.size(), n);
    std::vector<std::pair<LD, LD>> got, want;
    for (std::size_t j = 0; j < n; ++j) got.emplace_back(basis.centers[j], basis.widths[j]);
    const std::size_t half = n / 2;
    for (std::size_t i = 0; i < half; ++i) {
      const LD c = half == 1 ? 0 : static_cast<LD>(i) / static_cast<LD>(half - 1);
      want.emplace_back(c, 0.01L);
      want.emplace_back(c, 0.25L);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    for (std::size_t j = 0; j < n; ++j) {
      // within 2 ulps of T (0.1f * 0.1f is one float ulp above 0.01f)
      EXPECT_LE(std::fabs(got[j].first - want[j].first), 2 * eps * want[j].first)
          << "n=" << n << " j=" << j << " centre " << static_cast<double>(got[j].first);
      EXPECT_LE(std::fabs(got[j].second - want[j].second), 2 * eps * want[j].second)
          << "n=" << n << " j=" << j << " width " << static_cast<double>(got[j].second);
    }
    // the end points are exact
    EXPECT_EQ(*std::min_element(basis.centers.begin(), basis.centers.end()), T(0)) << "n=" << n;
    if (half > 1) {
      EXPECT_EQ(*std::max_element(basis.centers.begin(), basis.centers.end()), T(1)) << "n=" << n;
    }
  }
}

}  // namespace
}  // namespace sparcon_test
