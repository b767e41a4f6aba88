// One training run of a torch model in its run directory (kit/run_directory.h): started fresh
// or resumed exactly where it stopped, one checkpoint set (model, optimiser, best model) per
// epoch, the best epoch's model kept for the final test. An experiment's train() reads:
//
//   kit::TrainingRun run({out, options_json, data_fingerprint, {"epochs"}, resume, label}, model, optimiser);
//   for (auto epoch = run.next_epoch(); epoch <= epochs && !run.patience_exhausted(epoch, patience); ++epoch) {
//     const double loss = train_epoch(...);   // the experiment's own steps
//     const double dev = evaluate(...);
//     run.save_epoch({epoch, loss, dev, seconds}, model, optimiser);
//   }
//   run.load_best(model);
//
// Exactness of --resume is the experiment's part: whatever an epoch draws at random must depend
// on (seed, epoch) only (e.g. std::mt19937_64(seed * 1000003 + epoch) for the order).
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kit/run_directory.h"

namespace kit {

/// A module's or an optimiser's state in torch::save's format, serialised in memory and written
/// with write_atomically (so a crash never leaves a half-written checkpoint under its name).
void save_checkpoint(const torch::nn::Module& module, const std::filesystem::path& file);
void save_checkpoint(const torch::optim::Optimizer& optimizer, const std::filesystem::path& file);
/// Loads what save_checkpoint (or torch::save) wrote into an object of the same structure.
/// Throws DamagedFile (run_directory.h: one line naming the file) when the file is missing,
/// truncated, corrupted or of another structure.
void load_checkpoint(torch::nn::Module& module, const std::filesystem::path& file);
void load_checkpoint(torch::optim::Optimizer& optimizer, const std::filesystem::path& file);

struct RunOptions {
  std::filesystem::path dir;                      ///< the run directory (created if needed)
  nlohmann::json options = nlohmann::json::object();  ///< what defines the run, compared on resume
  nlohmann::json data = nlohmann::json::object();     ///< the data fingerprint, compared on resume
  std::vector<std::string> may_change{"epochs"};  ///< option keys a resumed run may change
  bool resume = false;                            ///< continue the run saved in dir
  std::string label;                              ///< names the run in messages, e.g. "sparsemax seed 1"
  std::string score_name = "dev_accuracy";        ///< the dev score in state.json; higher is better
};

class TrainingRun {
 public:
  /// Starts or resumes the run in options.dir. Without state.json: a fresh run (nothing is
  /// loaded; with resume a line on stderr says so). With state.json and resume: its options
  /// (but may_change) and data must equal the given ones (else std::runtime_error naming the
  /// key and both values), model and optimizer are loaded from the last epoch's checkpoint and
  /// the history restored. With state.json and no resume: std::runtime_error ("pass --resume"),
  /// an existing run is never overwritten.
  TrainingRun(RunOptions options, torch::nn::Module& model, torch::optim::Optimizer& optimizer);

  /// Whether the run continued a saved one.
  [[nodiscard]] bool resumed() const { return resumed_; }
  /// The first epoch to train: history size + 1.
  [[nodiscard]] std::size_t next_epoch() const { return state_.history.size() + 1; }
  /// Early stopping: true when a best epoch exists and epoch > best_epoch + patience.
  [[nodiscard]] bool patience_exhausted(std::size_t epoch, std::size_t patience) const;

  /// Appends record to the history and writes the epoch's checkpoint set: best-E.pt (the model)
  /// when record.dev_score beats the best so far, model-E.pt, optimizer-E.pt, then state.json,
  /// which names the set (older sets and temporary files are removed). Returns whether the
  /// epoch is the new best.
  bool save_epoch(const EpochRecord& record, const torch::nn::Module& model, const torch::optim::Optimizer& optimizer);

  /// Loads the best epoch's model. Throws std::runtime_error when no epoch was saved.
  void load_best(torch::nn::Module& model) const;

  [[nodiscard]] const RunState& state() const { return state_; }
  [[nodiscard]] const RunDirectory& directory() const { return directory_; }

 private:
  RunOptions options_;
  RunDirectory directory_;
  RunState state_;
  bool resumed_ = false;
};

}  // namespace kit
