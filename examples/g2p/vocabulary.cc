#include "vocabulary.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "kit/fingerprint.h"

namespace g2p {

Vocabulary::Vocabulary(std::vector<std::string> specials, std::vector<std::string> symbols)
    : symbols_(std::move(specials)), specials_(symbols_.size()) {
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  for (std::size_t i = 0; i < symbols_.size(); ++i)
    if (!ids_.emplace(symbols_[i], static_cast<int>(i)).second)
      throw std::invalid_argument("vocabulary: special symbol `" + symbols_[i] + "` given twice");
  for (auto& s : symbols) {
    if (s.empty()) throw std::invalid_argument("vocabulary: empty symbol");
    if (!ids_.emplace(s, static_cast<int>(symbols_.size())).second)
      throw std::invalid_argument("vocabulary: symbol `" + s + "` is also a special symbol");
    symbols_.push_back(std::move(s));
  }
}

bool Vocabulary::contains(std::string_view symbol) const { return ids_.count(std::string(symbol)) != 0; }

int Vocabulary::id(std::string_view symbol) const {
  const auto it = ids_.find(std::string(symbol));
  if (it == ids_.end()) throw std::invalid_argument("vocabulary: unknown symbol `" + std::string(symbol) + "`");
  return it->second;
}

const std::string& Vocabulary::symbol(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= symbols_.size())
    throw std::out_of_range("vocabulary: id " + std::to_string(id) + " outside [0, " +
                            std::to_string(symbols_.size()) + ")");
  return symbols_[static_cast<std::size_t>(id)];
}

std::uint64_t Vocabulary::fingerprint() const {
  kit::Fnv1a hash;
  for (const auto& s : symbols_) hash.add(s).add("\n");
  return hash.value();
}

Vocabulary letter_vocabulary(const std::vector<Entry>& entries) {
  std::set<std::string> letters;
  for (const auto& e : entries)
    for (const char c : e.word) letters.insert(std::string(1, c));
  return Vocabulary({"<pad>", "<unk>"}, {letters.begin(), letters.end()});
}

Vocabulary phoneme_vocabulary(const std::vector<Entry>& entries) {
  std::set<std::string> phonemes;
  for (const auto& e : entries)
    for (const auto& p : e.pronunciations) phonemes.insert(p.begin(), p.end());
  return Vocabulary({"<pad>", "<s>", "</s>"}, {phonemes.begin(), phonemes.end()});
}

std::vector<int> encode_word(const Vocabulary& letters, std::string_view word) {
  std::vector<int> ids;
  ids.reserve(word.size());
  for (const char c : word) {
    const std::string_view letter(&c, 1);
    ids.push_back(letters.contains(letter) ? letters.id(letter) : kLetterUnknown);
  }
  return ids;
}

std::vector<int> encode_phonemes(const Vocabulary& phonemes, const Phonemes& pronunciation) {
  std::vector<int> ids;
  ids.reserve(pronunciation.size());
  for (const auto& p : pronunciation) ids.push_back(phonemes.id(p));
  return ids;
}

Phonemes decode_phonemes(const Vocabulary& phonemes, const std::vector<int>& ids) {
  Phonemes out;
  for (const int id : ids) {
    const auto& s = phonemes.symbol(id);
    if (id == kPhonemeEnd) break;
    if (id == kPhonemePad || id == kPhonemeStart) continue;
    out.push_back(s);
  }
  return out;
}

}  // namespace g2p
