// What the tests of the value side share (value_model_test.cc, simd_targets_test.cc): random
// values, the tolerance of the value model and the error measure it is checked with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <type_traits>
#include <vector>

namespace sparcon_test {

/// count draws of N(0, 1) from std::mt19937(seed), rounded to T.
template <class T>
std::vector<T> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<T> v(count);
  for (auto& x : v) x = static_cast<T>(normal(rng));
  return v;
}

/// The value model's accuracy relative to its largest entry.
template <class T>
long double tolerance() {
  return std::is_same_v<T, float> ? 2e-6L : 1e-13L;
}

/// max |got - want| / max |want| (the plain maximum error where want is all zero).
template <class T, class U>
long double relative_error(const std::vector<T>& got, const std::vector<U>& want) {
  long double err = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<long double>(got[i]) - static_cast<long double>(want[i])));
    scale = std::max(scale, std::fabs(static_cast<long double>(want[i])));
  }
  return scale > 0 ? err / scale : err;
}

}  // namespace sparcon_test
