// The data of the experiment (dataset.h).
#include "dataset.h"

#include <unordered_set>

#include "kit/fingerprint.h"
#include "tokenizer.h"

namespace spam {

Dataset prepare_data(std::vector<Message> messages, const DataOptions& options) {
  Dataset d;
  std::unordered_set<std::string> seen;  // the kept tokens of each message, space-separated
  for (auto& m : messages) {
    auto tokens = tokenize(m.body);
    if (tokens.size() > options.max_length) tokens.resize(options.max_length);
    std::string key;
    for (const auto& t : tokens) key.append(t).push_back(' ');  // tokens never hold a space
    if (!seen.insert(std::move(key)).second) {
      ++d.duplicates;
      continue;
    }
    d.labels.push_back(m.label);
    d.tokens.push_back(std::move(tokens));
    d.messages.push_back(std::move(m));
  }
  d.split = kit::stratified_split(d.labels, options.dev_fraction, options.test_fraction, options.split_seed);
  if (options.train_subset > 0 && options.train_subset < d.split.train.size()) {
    // A stratified subset of the training split: split the training labels again, keep one part.
    std::vector<int> train_labels;
    for (auto i : d.split.train) train_labels.push_back(d.labels[i]);
    const double drop = 1 - static_cast<double>(options.train_subset) / static_cast<double>(train_labels.size());
    const Split part = kit::stratified_split(train_labels, 0, drop, options.split_seed + 1);
    std::vector<std::size_t> kept;
    for (auto j : part.train) kept.push_back(d.split.train[j]);
    d.split.train = std::move(kept);
  }
  std::vector<std::vector<std::string>> train_tokens;
  for (auto i : d.split.train) train_tokens.push_back(d.tokens[i]);
  d.vocabulary = Vocabulary(train_tokens, options.min_count, options.max_vocabulary);
  for (const auto& tokens : d.tokens) {
    auto ids = d.vocabulary.encode(tokens, options.max_length);
    if (ids.empty()) ids.push_back(Vocabulary::kUnknown);
    d.ids.push_back(std::move(ids));
  }
  return d;
}

std::uint64_t vocabulary_fnv1a(const std::vector<std::string>& tokens) {
  // From the basis the first version of this program used (one digit short of the standard
  // 14695981039346656037): the runs on disk keep their fingerprint, so that --resume and the
  // reuse of finished runs keep working.
  kit::Fnv1a hash(1469598103934665603ull);
  for (const auto& token : tokens) hash.add(token).add("\n");
  return hash.value();
}

nlohmann::json data_fingerprint(const Dataset& data, std::size_t max_length) {
  return {{"max_length", max_length},
          {"documents", data.labels.size()},
          {"train_documents", data.split.train.size()},
          {"dev_documents", data.split.dev.size()},
          {"test_documents", data.split.test.size()},
          {"vocabulary", data.vocabulary.size()},
          {"vocabulary_fnv1a", vocabulary_fnv1a(data.vocabulary.tokens())}};
}

}  // namespace spam
