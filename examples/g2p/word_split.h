// The seeded train/dev/test split of the grapheme-to-phoneme experiment, by word: an entry holds
// all pronunciations of its word, so all of them fall in the same part.
#pragma once

#include <cstdint>
#include <vector>

#include "dictionary.h"

namespace g2p {

struct SplitOptions {
  double dev_fraction = 0.05;
  double test_fraction = 0.05;  ///< the rest, 0.90 by default, is train
  std::uint64_t seed = 1;
};

struct WordSplit {
  std::vector<std::size_t> train, dev, test;  ///< indices into the entries, ascending, disjoint
};

/// kit::stratified_split over the entries with one label: a Fisher-Yates shuffle of 0..n-1 by
/// std::mt19937_64(seed) with rejection sampling (the same with every standard library); the
/// first round(test_fraction * n) go to test, the next round(dev_fraction * n) to dev, the
/// rest to train. Depends only on the number of entries and the seed (so the same with and
/// without stress marks). Throws std::invalid_argument unless 0 <= dev, test and dev + test < 1.
WordSplit split_words(const std::vector<Entry>& entries, const SplitOptions& options = {});

/// The entries at indices, in that order. Throws std::out_of_range for an index >= entries.size().
std::vector<Entry> select(const std::vector<Entry>& entries, const std::vector<std::size_t>& indices);

/// kit::Fnv1a over the words of each part (train, dev, test; each word followed by '\n', each
/// part by "\n\n"), for a run directory's data fingerprint.
std::uint64_t split_fingerprint(const std::vector<Entry>& entries, const WordSplit& split);

}  // namespace g2p
