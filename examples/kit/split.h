// A fixed, seeded, stratified train/dev/test split of a labelled data set.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace kit {

/// A uniform integer in [0, n), the same with every standard library: draws of rng below the
/// largest multiple of n (rejection sampling), reduced mod n. Throws std::invalid_argument for
/// n = 0.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n);

struct Split {
  std::vector<std::size_t> train, dev, test;  ///< indices into a labelled data set, ascending
};

/// Within each label, the indices are shuffled by a Fisher-Yates shuffle driven by
/// std::mt19937_64(seed) (with rejection sampling, so the split is the same with any standard
/// library), and the first round(fraction * count) go to test, the next to dev, the rest to
/// train. Throws std::invalid_argument unless 0 <= dev, test and dev + test < 1.
Split stratified_split(const std::vector<int>& labels, double dev_fraction, double test_fraction,
                       std::uint64_t seed);

}  // namespace kit
