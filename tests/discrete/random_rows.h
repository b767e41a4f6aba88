// Test inputs: batches of random rows at several scales and of adversarial rows.
// Values are generated in double and rounded to T by the caller (to_type), so the reference is
// always computed on exactly the values the library sees.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "sparcon/rows.h"

namespace sparcon_test {

/// A batch of rows, stored row-major, with a name for each row (for failure messages).
struct Batch {
  std::string name;
  sparcon::Rows rows;
  std::vector<double> x;
  std::vector<std::string> row_names;
};

/// The scales of the random rows: x = scale * N(0, 1).
inline const std::vector<double>& random_scales() {
  static const std::vector<double> scales = {0.1, 1.0, 4.0, 30.0};
  return scales;
}

/// count x length entries scale * N(0, 1), deterministic in `seed`.
inline std::vector<double> normal_values(std::size_t count, std::size_t length, double scale,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(count * length);
  for (double& v : x) v = scale * normal(rng);
  return x;
}

inline Batch normal_batch(std::size_t count, std::size_t length, double scale, std::uint64_t seed) {
  Batch b{"normal*" + std::to_string(scale), {count, length},
          normal_values(count, length, scale, seed), {}};
  for (std::size_t r = 0; r < count; ++r) b.row_names.push_back(b.name + " row " + std::to_string(r));
  return b;
}

/// Rows that break naive algorithms: ties, many equal maxima, geometric sequences, huge spread.
inline Batch adversarial_batch(std::size_t length, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t n = length;
  Batch b{"adversarial", {0, n}, {}, {}};
  auto add = [&](const std::string& name, auto value) {
    for (std::size_t i = 0; i < n; ++i) b.x.push_back(value(i));
    b.row_names.push_back(name);
    ++b.rows.count;
  };
  add("all equal", [](std::size_t) { return 0.7; });
  add("ties in {0, 0.5, 1}", [&](std::size_t) { return 0.5 * std::floor(3 * uniform(rng)); });
  add("many equal maxima", [&](std::size_t i) { return i % 2 == 0 ? 2.0 : -3 + 5 * uniform(rng); });
  add("two far maxima", [&](std::size_t i) { return i == 0 || i == n - 1 ? 5.0 : -5.0; });
  add("one dominant", [&](std::size_t i) { return i == n / 2 ? 100.0 : 0.1 * normal(rng); });
  add("geometric 3*0.8^i", [](std::size_t i) { return 3 * std::pow(0.8, static_cast<double>(i)); });
  add("geometric -1.002^i", [](std::size_t i) { return -std::pow(1.002, static_cast<double>(i)); });
  add("increasing 1e-3*i", [](std::size_t i) { return 1e-3 * static_cast<double>(i); });
  add("alternating +-1", [](std::size_t i) { return i % 2 == 0 ? 1.0 : -1.0; });
  add("huge spread +-10^[-20,20]", [&](std::size_t) {
    const double sign = uniform(rng) < 0.5 ? -1.0 : 1.0;
    return sign * std::pow(10.0, -20 + 40 * uniform(rng));
  });
  add("near ties 1 + 1e-9 k", [&](std::size_t i) { return 1 + 1e-9 * static_cast<double>(i % 5); });
  return b;
}

/// The standard inputs for a row length: random rows at every scale, then adversarial rows.
inline std::vector<Batch> standard_batches(std::size_t length, std::uint64_t seed = 12345) {
  std::vector<Batch> batches;
  const std::size_t count = length >= 4096 ? 2 : length >= 500 ? 3 : 6;
  for (double scale : random_scales()) {
    batches.push_back(normal_batch(count, length, scale, seed++));
  }
  batches.push_back(adversarial_batch(length, seed));
  return batches;
}

/// Rounds double values to T.
template <class T>
std::vector<T> to_type(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

/// A random permutation of 0..n-1.
inline std::vector<std::size_t> random_permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  return perm;
}

}  // namespace sparcon_test
