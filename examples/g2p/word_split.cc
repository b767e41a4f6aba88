#include "word_split.h"

#include <stdexcept>

#include "kit/fingerprint.h"
#include "kit/split.h"

namespace g2p {

WordSplit split_words(const std::vector<Entry>& entries, const SplitOptions& options) {
  const auto s = kit::stratified_split(std::vector<int>(entries.size(), 0), options.dev_fraction,
                                       options.test_fraction, options.seed);
  return WordSplit{s.train, s.dev, s.test};
}

std::vector<Entry> select(const std::vector<Entry>& entries, const std::vector<std::size_t>& indices) {
  std::vector<Entry> out;
  out.reserve(indices.size());
  for (const auto i : indices) {
    if (i >= entries.size())
      throw std::out_of_range("select: index " + std::to_string(i) + " >= " + std::to_string(entries.size()) +
                              " entries");
    out.push_back(entries[i]);
  }
  return out;
}

std::uint64_t split_fingerprint(const std::vector<Entry>& entries, const WordSplit& split) {
  kit::Fnv1a hash;
  for (const auto* part : {&split.train, &split.dev, &split.test}) {
    for (const auto& e : select(entries, *part)) hash.add(e.word).add("\n");
    hash.add("\n\n");
  }
  return hash.value();
}

}  // namespace g2p
