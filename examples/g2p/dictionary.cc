#include "dictionary.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace g2p {
namespace {

bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool is_phoneme(std::string_view p) {
  std::size_t letters = 0;
  while (letters < p.size() && is_upper(p[letters])) ++letters;
  if (letters == 0) return false;
  if (letters == p.size()) return true;
  return letters + 1 == p.size() && p[letters] >= '0' && p[letters] <= '2';
}

}  // namespace

bool is_word(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return is_letter(c) || c == '\''; }) &&
         std::any_of(word.begin(), word.end(), is_letter);
}

std::string strip_stress(std::string_view phoneme) {
  if (!phoneme.empty() && is_digit(phoneme.back())) phoneme.remove_suffix(1);
  return std::string(phoneme);
}

Dictionary parse_dictionary(std::istream& in, const std::string& source, const ParseOptions& options) {
  Dictionary dict;
  Counts& counts = dict.counts;
  std::unordered_map<std::string, std::size_t> entry_of;  // word -> index into dict.entries
  std::unordered_set<std::string> dropped, alternated;
  std::string line;
  while (std::getline(in, line)) {
    ++counts.lines;
    std::string_view text(line);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    const auto fail = [&](const std::string& what) {
      throw std::invalid_argument(source + ":" + std::to_string(counts.lines) + ": " + what + ": `" +
                                  std::string(text) + "`");
    };
    if (text.substr(0, 3) == ";;;") {
      ++counts.comment_lines;
      continue;
    }
    const auto fields = split_fields(text);
    if (fields.empty()) {
      ++counts.blank_lines;
      continue;
    }
    ++counts.pronunciation_lines;
    std::string_view head = fields[0];
    bool alternate = false;
    if (const auto open = head.find('('); open != std::string_view::npos) {
      const std::string_view suffix = head.substr(open);  // "(n)"
      if (suffix.size() < 3 || suffix.back() != ')' ||
          !std::all_of(suffix.begin() + 1, suffix.end() - 1, is_digit))
        fail("malformed alternate suffix `" + std::string(suffix) + "` (expected WORD(n))");
      head = head.substr(0, open);
      alternate = true;
    }
    if (head.empty()) fail("empty word");
    if (fields.size() < 2) fail("word `" + std::string(head) + "` has no phonemes");
    Phonemes pronunciation;
    for (std::size_t i = 1; i < fields.size(); ++i) {
      if (!is_phoneme(fields[i]))
        fail("malformed phoneme `" + std::string(fields[i]) +
             "` (expected upper-case letters and an optional stress digit 0-2)");
      pronunciation.push_back(options.keep_stress ? std::string(fields[i]) : strip_stress(fields[i]));
    }
    const std::string word(head);
    if (alternate) {
      ++counts.alternate_lines;
      alternated.insert(word);
    }
    if (!is_word(word)) {
      ++counts.dropped_lines;
      dropped.insert(word);
      continue;
    }
    auto [it, inserted] = entry_of.try_emplace(word, dict.entries.size());
    if (inserted) dict.entries.push_back(Entry{word, {}});
    auto& prons = dict.entries[it->second].pronunciations;
    if (std::find(prons.begin(), prons.end(), pronunciation) != prons.end()) {
      ++counts.merged_pronunciations;
      continue;
    }
    prons.push_back(std::move(pronunciation));
    ++counts.kept_pronunciations;
  }
  if (in.bad()) throw std::runtime_error(source + ": read error after line " + std::to_string(counts.lines));
  counts.kept_words = dict.entries.size();
  counts.dropped_words = dropped.size();
  counts.words_with_alternates = alternated.size();
  return dict;
}

Dictionary load_dictionary(const std::filesystem::path& file, const ParseOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open the pronouncing dictionary " + file.string() + ": run `" + kFetchCommand +
                             "` from the repository root");
  return parse_dictionary(in, file.string(), options);
}

std::filesystem::path dictionary_file(const std::filesystem::path& cache) {
  const auto file = cache / "package" / "data" / "dict.txt";
  if (!std::filesystem::exists(cache / "COMPLETE") || !std::filesystem::is_regular_file(file))
    throw std::runtime_error("the CMU Pronouncing Dictionary is missing or incomplete in " + cache.string() +
                             " (no COMPLETE marker or no package/data/dict.txt): run `" + kFetchCommand +
                             "` from the repository root");
  return file;
}

}  // namespace g2p
