#include "vocabulary.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "classes.h"
#include "kit/fingerprint.h"
#include "questions.h"

namespace vqa {

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) out.push_back(word);
    word.clear();
  };
  for (const char ch : text) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      flush();
    } else if (ch == '?') {
      flush();
      out.emplace_back("?");
    } else {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    }
  }
  flush();
  return out;
}

Vocabulary::Vocabulary(std::vector<std::string> symbols) : symbols_(std::move(symbols)) {
  for (std::size_t i = 0; i < symbols_.size(); ++i) {
    if (symbols_[i].empty()) throw std::invalid_argument("vqa::Vocabulary: empty symbol at " + std::to_string(i));
    if (!ids_.emplace(symbols_[i], static_cast<int>(i)).second)
      throw std::invalid_argument("vqa::Vocabulary: symbol `" + symbols_[i] + "` repeated");
  }
}

int Vocabulary::id(std::string_view symbol) const {
  const auto it = ids_.find(std::string(symbol));
  if (it == ids_.end()) throw std::invalid_argument("vqa::Vocabulary: `" + std::string(symbol) + "` is not in the vocabulary");
  return it->second;
}

const std::string& Vocabulary::symbol(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= symbols_.size())
    throw std::out_of_range("vqa::Vocabulary: id " + std::to_string(id) + " is outside 0.." + std::to_string(symbols_.size() - 1));
  return symbols_[static_cast<std::size_t>(id)];
}

std::uint64_t Vocabulary::fingerprint() const {
  kit::Fnv1a hash;
  for (const auto& s : symbols_) hash.add(s).add("\n");
  return hash.value();
}

const Vocabulary& word_vocabulary() {
  static const Vocabulary vocabulary = [] {
    // Every question text the templates produce, from their parameters alone.
    std::vector<std::string> texts;
    for (int r = 0; r < kRegionCount; ++r) texts.push_back(std::string("what is in the ") + region_words(static_cast<Region>(r)) + " ?");
    for (const auto& target : count_targets()) texts.push_back("how many " + target.plural + " are there ?");
    for (int label = 0; label < kClassCount; ++label) {
      texts.push_back(std::string("is there ") + class_article(label) + " " + class_word(label) + " ?");
      for (int r = 0; r < kRelationCount; ++r)
        texts.push_back(std::string("what is ") + relation_words(static_cast<Relation>(r)) + " the " + class_word(label) + " ?");
    }
    std::set<std::string> words;
    for (const auto& t : texts)
      for (auto& w : tokenize(t)) words.insert(std::move(w));
    std::vector<std::string> symbols = {"<pad>", "<unk>"};
    symbols.insert(symbols.end(), words.begin(), words.end());
    return Vocabulary(std::move(symbols));
  }();
  return vocabulary;
}

const Vocabulary& answer_vocabulary() {
  static const Vocabulary vocabulary = [] {
    std::vector<std::string> symbols(kClassNames.begin(), kClassNames.end());
    for (const char* s : {"0", "1", "2", "3", "4", "yes", "no"}) symbols.emplace_back(s);
    return Vocabulary(std::move(symbols));
  }();
  return vocabulary;
}

std::vector<int> encode_question(std::string_view text) {
  const Vocabulary& words = word_vocabulary();
  std::vector<int> ids;
  for (const auto& w : tokenize(text)) ids.push_back(words.contains(w) ? words.id(w) : kWordUnknown);
  return ids;
}

}  // namespace vqa
