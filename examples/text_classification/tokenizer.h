// The tokenizer of the text-classification experiment: plain and documented, no library.
#pragma once

#include <string>
#include <vector>

namespace spam {

/// Tokens of a text: maximal runs of ASCII letters and digits, lowercased; runs longer than
/// kMaxTokenLength characters (base64 attachments, long hashes) are dropped; every other byte
/// (punctuation, whitespace, non-ASCII) separates tokens. "Free $$$ at http://x.com/A1!" ->
/// free, at, http, x, com, a1.
std::vector<std::string> tokenize(const std::string& text);

inline constexpr std::size_t kMaxTokenLength = 20;

}  // namespace spam
