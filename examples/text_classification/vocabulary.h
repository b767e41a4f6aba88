// The vocabulary of the text-classification experiment, built from the training split.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace spam {

/// Token ids: 0 is padding, 1 unknown, then the kept tokens by decreasing count (ties by
/// token), those seen at least min_count times in the training documents, at most max_size ids
/// in all.
class Vocabulary {
 public:
  static constexpr std::int64_t kPad = 0;
  static constexpr std::int64_t kUnknown = 1;

  Vocabulary() = default;
  Vocabulary(const std::vector<std::vector<std::string>>& documents, std::size_t min_count,
             std::size_t max_size);
  /// From the token list written by tokens() (index = id), as saved in a checkpoint.
  explicit Vocabulary(std::vector<std::string> tokens);

  /// Ids of the first max_length tokens (unknown tokens -> kUnknown).
  [[nodiscard]] std::vector<std::int64_t> encode(const std::vector<std::string>& tokens,
                                                 std::size_t max_length) const;
  [[nodiscard]] std::size_t size() const { return tokens_.size(); }
  [[nodiscard]] const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace spam
