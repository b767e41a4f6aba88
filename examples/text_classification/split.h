// A fixed, seeded, stratified train/dev/test split of the corpus.
#pragma once

#include <cstdint>
#include <vector>

namespace spam {

struct Split {
  std::vector<std::size_t> train, dev, test;  ///< indices into the corpus, ascending
};

/// Within each label, the indices are shuffled by a Fisher-Yates shuffle driven by
/// std::mt19937_64(seed) (with rejection sampling, so the split is the same with any standard
/// library), and the first round(fraction * count) go to test, the next to dev, the rest to
/// train. Throws std::invalid_argument unless 0 <= dev, test and dev + test < 1.
Split stratified_split(const std::vector<int>& labels, double dev_fraction, double test_fraction,
                       std::uint64_t seed);

}  // namespace spam
