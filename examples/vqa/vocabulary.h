// The question words and the answers of the VQA experiment: both vocabularies are fixed by the
// templates (questions.h), not read from data, so a model's ids mean the same in every run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vqa {

/// The words of a question: split at spaces (runs of spaces and tabs), lower-cased (ASCII), a
/// final '?' (attached or not) its own token. "What is in the centre?" -> {what, is, in, the,
/// centre, ?}.
std::vector<std::string> tokenize(std::string_view text);

/// A closed list of symbols with ids 0..size-1.
class Vocabulary {
 public:
  /// Symbols in that order; throws std::invalid_argument for an empty or repeated symbol.
  explicit Vocabulary(std::vector<std::string> symbols);

  [[nodiscard]] std::size_t size() const { return symbols_.size(); }
  [[nodiscard]] bool contains(std::string_view symbol) const { return ids_.count(std::string(symbol)) != 0; }
  /// The id; throws std::invalid_argument naming the symbol when it is not in the vocabulary.
  [[nodiscard]] int id(std::string_view symbol) const;
  /// The symbol; throws std::out_of_range unless 0 <= id < size().
  [[nodiscard]] const std::string& symbol(int id) const;
  [[nodiscard]] const std::vector<std::string>& symbols() const { return symbols_; }
  /// kit::Fnv1a over the symbols by id, each followed by '\n' (for a run's data fingerprint).
  [[nodiscard]] std::uint64_t fingerprint() const;

 private:
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, int> ids_;
};

/// Question words: kWordPad = 0 ("<pad>"), kWordUnknown = 1 ("<unk>"), then every token of every
/// question the templates can produce, sorted (byte order): 48 symbols (45 words and "?").
inline constexpr int kWordPad = 0;
inline constexpr int kWordUnknown = 1;
const Vocabulary& word_vocabulary();

/// Answers: the ten class names in label order (kClassNames: "T-shirt/top" .. "Ankle boot",
/// ids 0..9 = the labels), then "0", "1", "2", "3", "4" (ids 10..14), "yes" (15), "no" (16).
const Vocabulary& answer_vocabulary();

/// The ids of tokenize(text); a word not in word_vocabulary() maps to kWordUnknown (a question
/// typed for predict may hold other words).
std::vector<int> encode_question(std::string_view text);

}  // namespace vqa
