// The metrics of the grapheme-to-phoneme experiment: a word is right when the output equals any
// of its reference pronunciations; its phoneme errors are the edit distance to the closest one.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "dictionary.h"

namespace g2p {

/// Levenshtein distance: the fewest insertions, deletions and substitutions (each cost 1) that
/// turn a into b. d(a, b) = d(b, a); d(a, {}) = |a|; O(|a| |b|) time, O(|b|) memory.
std::size_t edit_distance(const Phonemes& a, const Phonemes& b);
std::size_t edit_distance(const std::vector<int>& a, const std::vector<int>& b);

struct WordScore {
  std::size_t errors = 0;            ///< min over references r of edit_distance(output, r)
  std::size_t reference_length = 0;  ///< |r| of the closest reference (the first at the minimum)
  std::size_t closest = 0;           ///< its index among the references
  bool correct = false;              ///< errors == 0: output equals one of the references
};

/// The score of one word's output against its references (one or more, each non-empty). Throws
/// std::invalid_argument for no references or an empty reference.
WordScore score_word(const Phonemes& output, const std::vector<Phonemes>& references);

/// Sums over words: PER = sum of errors / sum of reference lengths (of the closest references),
/// WER = wrong words / words.
struct ErrorRates {
  std::size_t words = 0;
  std::size_t wrong_words = 0;
  std::size_t phoneme_errors = 0;
  std::size_t reference_phonemes = 0;

  void add(const WordScore& score);
  /// phoneme_errors / reference_phonemes; NaN for no words.
  [[nodiscard]] double per() const;
  /// wrong_words / words; NaN for no words.
  [[nodiscard]] double wer() const;
};

/// ErrorRates over outputs[i] scored against references[i] (score_word). Throws
/// std::invalid_argument when the sizes differ (naming both) or score_word does (naming i).
ErrorRates error_rates(const std::vector<Phonemes>& outputs, const std::vector<std::vector<Phonemes>>& references);

}  // namespace g2p
