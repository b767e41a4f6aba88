// The data of the text-classification experiment: the corpus tokenized, freed of duplicates,
// split and encoded, and its fingerprint for the run directories.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "corpus.h"
#include "kit/split.h"
#include "vocabulary.h"

namespace spam {

using kit::Split;

struct DataOptions {
  std::uint64_t split_seed = 2020;  ///< the same split for every variant and model seed
  double dev_fraction = 0.1, test_fraction = 0.1;
  std::size_t max_length = 400;     ///< tokens kept per document (the first ones)
  std::size_t min_count = 2, max_vocabulary = 30000;
  std::size_t train_subset = 0;     ///< use only this many training documents (0: all), stratified
};

/// The corpus tokenized, freed of duplicates, split and encoded with the vocabulary of its
/// training split.
struct Dataset {
  std::vector<Message> messages;                 ///< the distinct messages, in corpus order
  std::vector<std::vector<std::string>> tokens;  ///< first max_length tokens of each body
  std::vector<std::vector<std::int64_t>> ids;    ///< tokens encoded; never empty (an empty body is one <unk>)
  std::vector<int> labels;
  Split split;
  Vocabulary vocabulary;
  std::size_t duplicates = 0;  ///< messages dropped as copies of an earlier one
};

/// Tokenizes the bodies and keeps the first max_length tokens; drops every message whose kept
/// tokens equal those of an earlier message (the corpus holds copies of some e-mails, mostly
/// spam: split apart, a copy in the test split would be a training document), then splits the
/// rest (stratified, seeded) and builds the vocabulary from the training split.
Dataset prepare_data(std::vector<Message> messages, const DataOptions& options);

/// FNV-1a of a vocabulary, one token per line (the bytes of a run's vocabulary.txt), from the
/// offset basis 1469598103934665603 of the first version (see dataset.cc).
std::uint64_t vocabulary_fnv1a(const std::vector<std::string>& tokens);

/// What a run was trained on, stored in its state.json: a resumed run must see the same data.
/// {"max_length", "documents", "train_documents", "dev_documents", "test_documents",
/// "vocabulary" (size), "vocabulary_fnv1a" (vocabulary_fnv1a of the tokens)}.
nlohmann::json data_fingerprint(const Dataset& data, std::size_t max_length);

}  // namespace spam
