// Matching argument names in exception messages, for the error tests.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace sparcon_test {

inline bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// Whether `needle` occurs in `text`; a needle that is an identifier (an argument's name) must
/// occur as a whole word ("r" is not found in "sparcon", but is in "...: r has 7 entries").
inline bool contains(const std::string& text, const std::string& needle) {
  const bool identifier = !needle.empty() && std::isalpha(static_cast<unsigned char>(needle[0])) != 0 &&
                          std::all_of(needle.begin(), needle.end(), is_word_char);
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    if (!identifier) return true;
    const bool left = at == 0 || !is_word_char(text[at - 1]);
    const bool right = at + needle.size() == text.size() || !is_word_char(text[at + needle.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace sparcon_test
