// detail::round_down (src/discrete/threshold.h), the branch-free rounding of the thresholds that
// drop entries, against the definition: the largest T that is <= v, found here by nextafter
// from the nearest T. Signed zeros, subnormals, the overflow to infinity and NaN included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "discrete/threshold.h"

namespace sparcon_test {
namespace {

// The largest T <= v: the nearest T, stepped down while it is above v.
template <class T>
T largest_at_or_below(double v) {
  T t = static_cast<T>(v);
  while (static_cast<double>(t) > v) t = std::nextafter(t, -std::numeric_limits<T>::infinity());
  return t;
}

template <class T>
void expect_same_bits(double v) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const T got = sparcon::detail::round_down<T>(v), want = largest_at_or_below<T>(v);
  ASSERT_EQ(std::bit_cast<Bits>(got), std::bit_cast<Bits>(want)) << std::hexfloat << "v = " << v;
}

template <class T>
void expect_matches_definition() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double f_max = std::numeric_limits<float>::max(), f_min = std::numeric_limits<float>::denorm_min();
  std::vector<double> v = {0.0, -0.0, kInf, -kInf, 1.0, -1.0, 0.5, -0.5, f_max, -f_max,
                           // above float's largest: rounds to +inf (down to f_max) or f_max
                           f_max * (1 + 0x1p-30), -f_max * (1 + 0x1p-30), 0x1p128, -0x1p128,
                           // around float's subnormals and the smallest of double
                           f_min, -f_min, f_min / 3, -f_min / 3, f_min * 1.5, -f_min * 1.5,
                           std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min(),
                           // one double ulp around powers of two, where a T's ulp changes
                           std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), std::nextafter(-1.0, -2.0),
                           std::nextafter(-1.0, 0.0), std::nextafter(0x1p-126, 0.0), std::nextafter(-0x1p-126, 0.0)};
  std::mt19937_64 random(20261204);
  for (int i = 0; i < 200000; ++i) {
    // mantissas in [1, 2), exponents over float's range and past it, both signs
    const double mantissa = std::bit_cast<double>((random() >> 12) | 0x3ff0000000000000ULL);
    const int exponent = static_cast<int>(random() % 320) - 170;
    v.push_back((random() & 1 ? -1 : 1) * std::ldexp(mantissa, exponent));
  }
  for (double value : v) expect_same_bits<T>(value);
  EXPECT_TRUE(std::isnan(sparcon::detail::round_down<T>(std::numeric_limits<double>::quiet_NaN())));
}

TEST(RoundDown, FloatIsTheLargestFloatAtOrBelow) { expect_matches_definition<float>(); }
TEST(RoundDown, DoubleIsTheValueItself) { expect_matches_definition<double>(); }

}  // namespace
}  // namespace sparcon_test
