// The letter and phoneme vocabularies of the grapheme-to-phoneme experiment: ids 0..specials-1
// are the special symbols, then the symbols of the dictionary in sorted (byte) order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dictionary.h"

namespace g2p {

class Vocabulary {
 public:
  /// specials first (ids 0, 1, ...), then symbols sorted and deduplicated. Throws
  /// std::invalid_argument for an empty symbol or a symbol that is also a special.
  Vocabulary(std::vector<std::string> specials, std::vector<std::string> symbols);

  [[nodiscard]] std::size_t size() const { return symbols_.size(); }
  [[nodiscard]] std::size_t special_count() const { return specials_; }
  [[nodiscard]] bool contains(std::string_view symbol) const;
  /// The id of symbol; throws std::invalid_argument naming it when it is not in the vocabulary.
  [[nodiscard]] int id(std::string_view symbol) const;
  /// The symbol of id; throws std::out_of_range unless 0 <= id < size().
  [[nodiscard]] const std::string& symbol(int id) const;
  /// All symbols by id.
  [[nodiscard]] const std::vector<std::string>& symbols() const { return symbols_; }
  /// kit::Fnv1a over the symbols by id, each followed by '\n', for a run directory's data
  /// fingerprint.
  [[nodiscard]] std::uint64_t fingerprint() const;

 private:
  std::vector<std::string> symbols_;
  std::size_t specials_ = 0;
  std::unordered_map<std::string, int> ids_;
};

/// Letters: kLetterPad = 0, kLetterUnknown = 1, then every character of the entries' words.
inline constexpr int kLetterPad = 0;
inline constexpr int kLetterUnknown = 1;
Vocabulary letter_vocabulary(const std::vector<Entry>& entries);

/// Phonemes: kPhonemePad = 0, kPhonemeStart = 1 ("<s>", the decoder's first input),
/// kPhonemeEnd = 2 ("</s>", the decoder's last output), then every phoneme of the entries
/// (39 for CMUdict without stress, 69 with it).
inline constexpr int kPhonemePad = 0;
inline constexpr int kPhonemeStart = 1;
inline constexpr int kPhonemeEnd = 2;
Vocabulary phoneme_vocabulary(const std::vector<Entry>& entries);

/// The ids of word's letters (length word.size()); a letter not in letters maps to
/// kLetterUnknown (a word to predict may hold letters the training words lack).
std::vector<int> encode_word(const Vocabulary& letters, std::string_view word);

/// The ids of the phonemes (length phonemes.size()); throws std::invalid_argument naming an
/// unknown phoneme.
std::vector<int> encode_phonemes(const Vocabulary& phonemes, const Phonemes& pronunciation);

/// The phonemes of ids, stopping before the first kPhonemeEnd and skipping kPhonemePad and
/// kPhonemeStart (a decoder's output as it comes). Throws std::out_of_range for an id outside
/// the vocabulary.
Phonemes decode_phonemes(const Vocabulary& phonemes, const std::vector<int>& ids);

}  // namespace g2p
