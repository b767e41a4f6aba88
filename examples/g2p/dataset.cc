// The data of the grapheme-to-phoneme experiment (dataset.h).
#include "dataset.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "kit/split.h"

namespace g2p {

std::vector<std::size_t> sample_indices(const std::vector<std::size_t>& indices, std::size_t n, std::uint64_t seed) {
  if (n == 0 || n >= indices.size()) return indices;
  std::vector<std::size_t> shuffled = indices;
  std::mt19937_64 rng(seed);
  for (std::size_t i = shuffled.size() - 1; i > 0; --i)
    std::swap(shuffled[i], shuffled[kit::uniform_below(rng, i + 1)]);
  shuffled.resize(n);
  std::sort(shuffled.begin(), shuffled.end());
  return shuffled;
}

Dataset prepare_data(Dictionary dictionary, const DataOptions& options) {
  Vocabulary letters = letter_vocabulary(dictionary.entries), phonemes = phoneme_vocabulary(dictionary.entries);
  Dataset data{std::move(dictionary.entries), std::move(letters), std::move(phonemes), {}, {}, {}};
  const WordSplit split = split_words(data.entries, options.split);
  data.split.train = sample_indices(split.train, options.train_subset, options.subset_seed);
  data.split.dev = sample_indices(split.dev, options.dev_subset, options.subset_seed + 1);
  data.split.test = sample_indices(split.test, options.test_subset, options.subset_seed + 2);
  data.encoded.reserve(data.entries.size());
  for (const auto& entry : data.entries) {
    EncodedWord word{encode_word(data.letters, entry.word), {}};
    for (const auto& pronunciation : entry.pronunciations)
      word.references.push_back(encode_phonemes(data.phonemes, pronunciation));
    data.encoded.push_back(std::move(word));
  }
  for (const auto i : data.split.train)
    for (std::size_t k = 0; k < data.entries[i].pronunciations.size(); ++k) data.train_pairs.emplace_back(i, k);
  return data;
}

Vocabulary vocabulary_from_symbols(const std::vector<std::string>& symbols, std::size_t specials) {
  if (specials > symbols.size())
    throw std::invalid_argument("vocabulary_from_symbols: " + std::to_string(specials) + " specials but " +
                                std::to_string(symbols.size()) + " symbols");
  Vocabulary vocabulary({symbols.begin(), symbols.begin() + static_cast<std::ptrdiff_t>(specials)},
                        {symbols.begin() + static_cast<std::ptrdiff_t>(specials), symbols.end()});
  if (vocabulary.symbols() != symbols)
    throw std::invalid_argument("vocabulary_from_symbols: the symbols are not specials then sorted distinct symbols");
  return vocabulary;
}

nlohmann::json data_fingerprint(const Dataset& data) {
  return {{"words", data.entries.size()},
          {"train_words", data.split.train.size()},
          {"dev_words", data.split.dev.size()},
          {"test_words", data.split.test.size()},
          {"train_pairs", data.train_pairs.size()},
          {"split_fnv1a", split_fingerprint(data.entries, data.split)},
          {"letters", data.letters.symbols()},
          {"phonemes", data.phonemes.symbols()}};
}

}  // namespace g2p
