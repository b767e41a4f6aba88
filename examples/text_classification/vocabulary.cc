// The vocabulary (vocabulary.h).
#include "vocabulary.h"

#include <algorithm>
#include <stdexcept>

namespace spam {

Vocabulary::Vocabulary(const std::vector<std::vector<std::string>>& documents, std::size_t min_count,
                       std::size_t max_size) {
  if (max_size < 2) throw std::invalid_argument("Vocabulary: max_size = " + std::to_string(max_size) + " must be >= 2");
  std::unordered_map<std::string, std::size_t> counts;
  for (const auto& document : documents)
    for (const auto& token : document) ++counts[token];
  std::vector<std::pair<std::string, std::size_t>> kept;
  for (auto& [token, count] : counts)
    if (count >= min_count) kept.emplace_back(token, count);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> tokens{"<pad>", "<unk>"};
  for (std::size_t i = 0; i < kept.size() && tokens.size() < max_size; ++i) tokens.push_back(kept[i].first);
  *this = Vocabulary(std::move(tokens));
}

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  for (std::size_t i = 0; i < tokens_.size(); ++i) ids_.emplace(tokens_[i], static_cast<std::int64_t>(i));
}

std::vector<std::int64_t> Vocabulary::encode(const std::vector<std::string>& tokens, std::size_t max_length) const {
  std::vector<std::int64_t> out;
  out.reserve(std::min(tokens.size(), max_length));
  for (std::size_t i = 0; i < tokens.size() && i < max_length; ++i) {
    const auto found = ids_.find(tokens[i]);
    out.push_back(found == ids_.end() ? kUnknown : found->second);
  }
  return out;
}

}  // namespace spam
