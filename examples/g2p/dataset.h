// The data of the grapheme-to-phoneme experiment: the dictionary split by word, encoded with the
// letter and phoneme vocabularies, the training pairs (one per pronunciation of a training
// word), optional seeded subsets, and the fingerprint a run directory records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dictionary.h"
#include "vocabulary.h"
#include "word_split.h"

namespace g2p {

struct DataOptions {
  SplitOptions split;            ///< dev 0.05, test 0.05, seed 1: the same for every variant and seed
  std::size_t train_subset = 0;  ///< training words used (0: all), a seeded sample of the split
  std::size_t dev_subset = 0;    ///< dev words used for model selection (0: all)
  std::size_t test_subset = 0;   ///< test words scored (0: all)
  std::uint64_t subset_seed = 7; ///< the seed of the three samples
};

/// One word as the model sees it.
struct EncodedWord {
  std::vector<int> letters;                  ///< encode_word of the word, at least one id
  std::vector<std::vector<int>> references;  ///< encode_phonemes of each pronunciation
};

struct Dataset {
  std::vector<Entry> entries;  ///< the dictionary's kept words
  Vocabulary letters, phonemes;
  WordSplit split;             ///< after the subsets: indices into entries, ascending
  std::vector<EncodedWord> encoded;  ///< one per entry
  /// (entry, pronunciation) of every pronunciation of the training words: the training examples.
  std::vector<std::pair<std::size_t, std::size_t>> train_pairs;
};

/// The first n of indices after a Fisher-Yates shuffle by std::mt19937_64(seed) (kit's
/// uniform_below, the same with every standard library), sorted ascending; indices itself
/// when n = 0 or n >= its size.
std::vector<std::size_t> sample_indices(const std::vector<std::size_t>& indices, std::size_t n, std::uint64_t seed);

/// Vocabularies over all entries (the letters and phonemes are closed sets), the split by word,
/// the subsets (seeds subset_seed, subset_seed + 1, + 2 for train, dev, test), the encodings.
Dataset prepare_data(Dictionary dictionary, const DataOptions& options);

/// The vocabulary whose symbols by id are `symbols`, the first `specials` of them special (as
/// data_fingerprint records it). Throws std::invalid_argument when symbols is not such a list.
Vocabulary vocabulary_from_symbols(const std::vector<std::string>& symbols, std::size_t specials);

/// What a run was trained on, for its state.json (a resumed run must see the same data; predict
/// rebuilds the vocabularies from it): {"words", "train_words", "dev_words", "test_words",
/// "train_pairs", "split_fnv1a" (split_fingerprint), "letters" and "phonemes" (the symbols by id)}.
nlohmann::json data_fingerprint(const Dataset& data);

}  // namespace g2p
