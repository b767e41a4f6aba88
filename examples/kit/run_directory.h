// The run directory of one training run (one model, one seed): state.json, the record of what
// was trained on what and which checkpoint files belong together, and the checks that make
// --resume exact. Torch-free: the checkpoint files themselves are written by
// kit/training_run.h.
//
// state.json:
//   {"options": {...},            the options that define the run (compared on resume)
//    "data": {...},               the data fingerprint (compared on resume)
//    "history": [{"epoch", "train_loss", "<score>", "seconds"}, ...],
//    "best_epoch": k, "best_<score>": s,
//    "checkpoint": {"model": "model-E.pt", "optimizer": "optimizer-E.pt", "best": "best-K.pt"}}
// with <score> the dev score's name (e.g. "dev_accuracy"; higher is better). Each epoch's
// checkpoint files get new names and state.json, written last and atomically, names the set
// that belongs together: an interruption at any point leaves the previous epoch's complete set.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace kit {

/// A file of a run directory that is damaged (truncated, overwritten, not what its name says) or
/// missing though state.json names it. Its message is one line that names the file and says
/// what to do: "<file> is damaged (<why>): delete the run directory <dir> and train again".
class DamagedFile : public std::runtime_error {
 public:
  /// `why`: what is wrong, e.g. "truncated or not a checkpoint"; only its first line is kept.
  DamagedFile(const std::filesystem::path& file, const std::string& why);
  [[nodiscard]] const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

/// One finished epoch.
struct EpochRecord {
  std::size_t epoch = 0;  ///< 1-based
  double train_loss = 0, dev_score = 0, seconds = 0;
};

/// The content of state.json.
struct RunState {
  nlohmann::json options = nlohmann::json::object();
  nlohmann::json data = nlohmann::json::object();
  std::vector<EpochRecord> history;
  std::size_t best_epoch = 0;  ///< 0: no epoch yet
  double best_score = -1;
  nlohmann::json checkpoint = nlohmann::json::object();  ///< key -> file name in the directory
};

class RunDirectory {
 public:
  /// The run directory dir (not created here: TrainingRun creates it, readers need not);
  /// score_name names the dev score in state.json. Throws std::invalid_argument for an empty dir.
  explicit RunDirectory(std::filesystem::path dir, std::string score_name = "dev_accuracy");

  [[nodiscard]] const std::filesystem::path& path() const { return dir_; }
  [[nodiscard]] std::filesystem::path state_file() const { return dir_ / "state.json"; }
  /// Whether state.json exists (a run was saved here).
  [[nodiscard]] bool has_state() const;

  /// state.json parsed. Throws std::runtime_error naming the file when it cannot be read, and
  /// DamagedFile when it is not JSON (truncated, overwritten), lacks an entry, or holds one of
  /// the wrong type (the checkpoint entry: an object of plain file names).
  [[nodiscard]] RunState read() const;
  /// state written atomically as state.json, then every checkpoint file (model-*.pt,
  /// optimizer-*.pt, best-*.pt) that it does not name, and every temporary file (*.tmp.*) that
  /// an interrupted write left, removed.
  void write(const RunState& state) const;

  /// The file named by state.checkpoint[key]; throws std::runtime_error naming state.json and
  /// the key when there is none.
  [[nodiscard]] std::filesystem::path checkpoint_file(const RunState& state, const std::string& key) const;

  /// Throws std::runtime_error unless stored[key] == requested[key] for every key of requested
  /// except those in `may_differ`, naming the first key that differs and both values:
  /// "resume: <dir> was trained with <what> <key> = <stored>, this run has <key> = <value>".
  void check_same(const std::string& what, const nlohmann::json& stored, const nlohmann::json& requested,
                  const std::vector<std::string>& may_differ = {}) const;

 private:
  std::filesystem::path dir_;
  std::string score_name_;
};

}  // namespace kit
