// The tokenizer (tokenizer.h).
#include "tokenizer.h"

namespace spam {

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&] {
    if (!current.empty() && current.size() <= kMaxTokenLength) tokens.push_back(current);
    current.clear();
  };
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 'A' && u <= 'Z') current.push_back(static_cast<char>(u - 'A' + 'a'));
    else if ((u >= 'a' && u <= 'z') || (u >= '0' && u <= '9')) current.push_back(c);
    else flush();
  }
  flush();
  return tokens;
}

}  // namespace spam
