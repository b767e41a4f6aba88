// The stratified split (kit/split.h).
#include "kit/split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace kit {

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("uniform_below: n = 0; the range [0, n) must not be empty");
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x;
  do x = rng(); while (x >= limit);
  return x % n;
}

Split stratified_split(const std::vector<int>& labels, double dev_fraction, double test_fraction,
                       std::uint64_t seed) {
  if (!(dev_fraction >= 0) || !(test_fraction >= 0) || !(dev_fraction + test_fraction < 1))
    throw std::invalid_argument("stratified_split: dev_fraction = " + std::to_string(dev_fraction) +
                                " and test_fraction = " + std::to_string(test_fraction) +
                                " must be >= 0 with a sum < 1");
  std::map<int, std::vector<std::size_t>> by_label;
  for (std::size_t i = 0; i < labels.size(); ++i) by_label[labels[i]].push_back(i);
  std::mt19937_64 rng(seed);
  Split split;
  for (auto& [label, indices] : by_label) {
    for (std::size_t i = indices.size(); i > 1; --i) std::swap(indices[i - 1], indices[uniform_below(rng, i)]);
    const auto n = indices.size();
    const auto n_test = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(n)));
    const auto n_dev = static_cast<std::size_t>(std::llround(dev_fraction * static_cast<double>(n)));
    for (std::size_t i = 0; i < n; ++i)
      (i < n_test ? split.test : i < n_test + n_dev ? split.dev : split.train).push_back(indices[i]);
  }
  for (auto* part : {&split.train, &split.dev, &split.test}) std::sort(part->begin(), part->end());
  return split;
}

}  // namespace kit
