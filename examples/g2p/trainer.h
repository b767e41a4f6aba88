// Training, evaluation, checkpoints and prediction of the grapheme-to-phoneme experiment.
// train() is four named steps (trainer.cc) on the kit's run directory (kit/training_run.h):
// start or resume, train one epoch (teacher forcing), evaluate on dev (greedy word accuracy),
// save the epoch; then the best epoch's model is tested (greedy and beam search).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "alignment.h"
#include "dataset.h"
#include "decode.h"
#include "model.h"

namespace g2p {

struct TrainOptions {
  std::string variant = "softmax";
  std::uint64_t seed = 1;
  std::size_t epochs = 10, patience = 2, batch_size = 64;
  std::int64_t embedding = 64, hidden = 128, basis = 32;
  double learning_rate = 2e-3;
  std::size_t beam = 5;          ///< beam width of the test's beam search
  std::filesystem::path out;     ///< run directory: checkpoints and state
  bool resume = false;           ///< continue the run saved in `out` where it stopped
  bool progress = true;          ///< a progress bar on stderr
};

/// Scores of one decoding of the test words.
struct DecodeScore {
  double per = 0, wer = 0;
  double words_per_second = 0;
};

struct TrainResult {
  std::string variant;
  std::uint64_t seed = 0;
  std::size_t best_epoch = 0, epochs = 0;
  double dev_word_accuracy = 0, train_seconds = 0;
  DecodeScore greedy, beam;       ///< on the test words
  AlignmentStats alignment;       ///< of the greedy outputs on the test words
};

/// Trains (or resumes) one variant with Adam (gradient norm clipped at 5) on cross-entropy
/// with teacher forcing, early stopping on dev word accuracy (greedy), a checkpoint set after
/// every epoch, then scores the best epoch's model on the test words.
TrainResult train(const Dataset& data, const TrainOptions& options);

/// Greedy decoding of the words at indices, scored against their references; alignment, if
/// given, receives the attention statistics.
DecodeScore evaluate_greedy(Seq2Seq& model, const Dataset& data, const std::vector<std::size_t>& indices,
                            AlignmentStats* alignment = nullptr);
/// Beam search of the words at indices, scored against their references.
DecodeScore evaluate_beam(Seq2Seq& model, const Dataset& data, const std::vector<std::size_t>& indices,
                          std::size_t beam);

/// The teacher-forcing loss of some (entry, pronunciation) pairs: mean cross-entropy over the
/// output phonemes and </s>.
at::Tensor pair_loss(Seq2Seq& model, const Dataset& data,
                     const std::vector<std::pair<std::size_t, std::size_t>>& pairs);

/// The model of a run's options (vocabulary sizes from data), parameters drawn from torch's
/// generator seeded by the seed.
Seq2Seq seeded_model(std::int64_t letters, std::int64_t phonemes, const TrainOptions& options);

/// A trained model loaded from a run directory (its best epoch) with the vocabularies it was
/// trained with (from state.json).
struct LoadedModel {
  Seq2Seq model{nullptr};
  Vocabulary letters, phonemes;
};
LoadedModel load_best(const std::filesystem::path& out);

/// A word's phonemes and, for each, the attention over its letters (greedy decoding).
struct Prediction {
  std::string word;
  Phonemes phonemes;
  std::vector<StepAttention> attention;  ///< one per phoneme
};
/// Throws std::invalid_argument naming the word when it is empty or holds characters other
/// than letters and apostrophes (case is ignored: the dictionary is upper case).
Prediction predict(LoadedModel& loaded, const std::string& word, std::size_t beam = 1);

}  // namespace g2p
