// Training, evaluation, checkpoints and prediction of the text-classification experiment.
// train() is four named steps (trainer.cc) on the kit's run directory (kit/training_run.h):
// start or resume, train one epoch, evaluate on dev, save the epoch; then the best epoch's
// model is tested.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dataset.h"
#include "model.h"

namespace spam {

struct TrainOptions {
  std::string variant = "softmax";
  std::uint64_t seed = 1;
  std::size_t epochs = 5, patience = 2, batch_size = 32;
  std::int64_t embedding = 64, hidden = 64;
  double learning_rate = 2e-3, weight_decay = 1e-2;
  double initial_scale = 0.05;      ///< continuous "cont" variants: the starting sigma^2
  std::filesystem::path out;        ///< run directory: checkpoints and state
  bool resume = false;              ///< continue the run saved in `out` where it stopped
  bool progress = true;             ///< a progress bar on stderr
  std::size_t max_length = 400;     ///< the data's max_length, recorded for predict
};

struct EpochRecord {
  std::size_t epoch;
  double train_loss, dev_accuracy, seconds;
};

struct TrainResult {
  std::string variant;
  std::uint64_t seed = 0;
  std::vector<EpochRecord> history;
  std::size_t best_epoch = 0;
  double dev_accuracy = 0, test_accuracy = 0, train_seconds = 0;
  double sparsity = 0;  ///< on the test split: see attention_sparsity
};

/// Trains (or resumes) one variant with AdamW and early stopping on dev accuracy, writing a
/// checkpoint after every epoch (atomically: model, optimiser and state.json in `out`), and
/// evaluates the best epoch's model on the test split.
TrainResult train(const Dataset& data, const TrainOptions& options);

/// Accuracy of a model on some documents; `sparsity`, if given, receives the mean over them of
/// the fraction of tokens with non-zero discrete weight, or of the document inside the
/// continuous sparsemax support (1 for continuous softmax).
double evaluate(Classifier& model, const Dataset& data, const std::vector<std::size_t>& indices,
                std::size_t batch_size, double* sparsity = nullptr);

/// A trained model loaded from a run directory (its best epoch).
struct LoadedModel {
  Classifier model{nullptr};
  Vocabulary vocabulary;
  std::size_t max_length = 0;
};
LoadedModel load_best(const std::filesystem::path& out);

/// The label, spam probability and attended interval (first and last token index) of a text.
struct Prediction {
  int label;
  double spam_probability;
  std::size_t begin, end;  ///< attended tokens [begin, end]
  std::vector<std::string> tokens;
};
Prediction predict(LoadedModel& loaded, const std::string& text);

}  // namespace spam
