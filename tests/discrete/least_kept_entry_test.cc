// least_kept_entry (src/discrete/least_kept_entry.h) against a scan of the values of T from
// above the threshold upwards, where there are few enough of them, and else against its
// definition at the result and the value just below it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include "discrete/least_kept_entry.h"

namespace {

using sparcon::detail::least_kept_entry;

template <class T>
bool passes(T x, T threshold, T max, double lowest) {
  return x > threshold && static_cast<double>(x) - static_cast<double>(max) >= lowest;
}

// The least passing x, by scanning up from threshold; nullopt after `limit` values.
template <class T>
std::optional<T> scanned(T threshold, T max, double lowest, std::int64_t limit) {
  T x = threshold;
  for (std::int64_t i = 0; i < limit && x <= max; ++i) {
    x = std::nextafter(x, std::numeric_limits<T>::infinity());
    if (passes(x, threshold, max, lowest)) return x;
  }
  return std::nullopt;
}

template <class T>
void expect_least(T threshold, T max, double lowest) {
  SCOPED_TRACE(testing::Message() << "threshold = " << threshold << ", max = " << max << ", lowest = " << lowest);
  const T bound = least_kept_entry(threshold, max, lowest);
  EXPECT_TRUE(passes(bound, threshold, max, lowest)) << "bound = " << bound;
  const T below = std::nextafter(bound, -std::numeric_limits<T>::infinity());
  EXPECT_FALSE(passes(below, threshold, max, lowest)) << "bound = " << bound;
  if (const auto scan = scanned(threshold, max, lowest, 4096)) {
    EXPECT_EQ(*scan, bound);
  }
}

template <class T>
void run_cases() {
  // The subtraction rounds: every x near 0 has y = -8 (beside max = 8).
  expect_least<T>(0, 8, -8);
  expect_least<T>(T(1e-30), 8, -8);
  expect_least<T>(-1, 8, -8);  // the least is the most negative x with x - 8 rounding to -8
  expect_least<T>(-1, 8, -8 - std::ldexp(1.0, -50));
  expect_least<T>(T(-1e-20), 8, -8);
  // The subtraction is exact: x >= max + lowest.
  expect_least<T>(T(0.5), T(8.5), -3.25);
  expect_least<T>(T(-100), T(-99), -0.75);
  expect_least<T>(T(0.5), T(8.5), 0);  // only max
  expect_least<T>(-std::numeric_limits<T>::infinity(), 1, -1e300);
  expect_least<T>(-std::numeric_limits<T>::max(), std::numeric_limits<T>::max(), -1e300);
  expect_least<T>(T(-0.0), T(1e-40), -1e-40);
  expect_least<T>(T(-0.0), 1, -1);  // 0 is no candidate: x > -0 is x > +0
  expect_least<T>(T(-1e-45), 1, -1);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0, 4);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 20000; ++i) {
    const T max = static_cast<T>(normal(rng));
    const T threshold = static_cast<T>(max - std::ldexp(unit(rng), static_cast<int>(unit(rng) * 40) - 30));
    if (!(threshold < max)) continue;
    // lowest: the y of some x in (threshold, max], sometimes nudged between two such y.
    const T x = static_cast<T>(threshold + unit(rng) * (max - threshold));
    double lowest = std::min(0.0, static_cast<double>(x) - static_cast<double>(max));
    if (i % 3 == 0 && lowest < 0) lowest = std::nextafter(lowest, 1.0);
    if (i % 5 == 0) lowest *= unit(rng);
    expect_least<T>(threshold, max, lowest);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(LeastKeptEntry, FloatAgainstScanAndDefinition) { run_cases<float>(); }
TEST(LeastKeptEntry, DoubleAgainstScanAndDefinition) { run_cases<double>(); }

}  // namespace
