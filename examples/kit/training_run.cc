// A training run with checkpoints and exact resume (kit/training_run.h).
#include "kit/training_run.h"

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kit/atomic_file.h"

namespace kit {
namespace fs = std::filesystem;

namespace {

template <class Saveable>
void save_to_file(const Saveable& object, const fs::path& file) {
  torch::serialize::OutputArchive archive;
  object.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_atomically(file, bytes.str());
}

// A file that is missing, truncated, overwritten or of another model throws DamagedFile naming
// it, never torch's own error (whose message carries a stack trace).
template <class Loadable>
void load_from_file(Loadable& object, const fs::path& file, const char* what) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) throw DamagedFile(file, std::string("missing: no ") + what + " checkpoint");
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(file.string());
    object.load(archive);
  } catch (const c10::Error& e) {
    throw DamagedFile(file, std::string("truncated, corrupted or not this run's ") + what + " checkpoint: " +
                                e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw DamagedFile(file, std::string("truncated, corrupted or not this run's ") + what + " checkpoint: " + e.what());
  }
}

}  // namespace

void save_checkpoint(const torch::nn::Module& module, const fs::path& file) { save_to_file(module, file); }
void save_checkpoint(const torch::optim::Optimizer& optimizer, const fs::path& file) { save_to_file(optimizer, file); }
void load_checkpoint(torch::nn::Module& module, const fs::path& file) {
  // torch resizes a parameter to whatever the archive holds: a checkpoint of a model of other
  // sizes would load without a word. Every parameter and buffer must keep its shape.
  auto shapes = [&] {
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
    for (const auto& item : module.named_parameters()) out.emplace_back(item.key(), item.value().sizes().vec());
    for (const auto& item : module.named_buffers()) out.emplace_back(item.key(), item.value().sizes().vec());
    return out;
  };
  const auto before = shapes();
  load_from_file(module, file, "model");
  const auto after = shapes();
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    if (before[i] != after[i])
      throw DamagedFile(file, "a checkpoint of another model: " + after[i].first + " has shape " +
                                  c10::str(c10::IntArrayRef(after[i].second)) + ", this model's is " +
                                  c10::str(c10::IntArrayRef(before[i].second)));
  }
}
void load_checkpoint(torch::optim::Optimizer& optimizer, const fs::path& file) {
  load_from_file(optimizer, file, "optimizer");
}

TrainingRun::TrainingRun(RunOptions options, torch::nn::Module& model, torch::optim::Optimizer& optimizer)
    : options_(std::move(options)), directory_(options_.dir, options_.score_name) {
  fs::create_directories(options_.dir);
  const bool saved = directory_.has_state();
  if (saved && !options_.resume)
    throw std::runtime_error("train: " + options_.dir.string() +
                             " already holds a run (state.json): pass --resume to continue it, or choose another --out");
  if (!saved) {
    if (options_.resume)
      std::fprintf(stderr, "  no run in %s yet: starting %s\n", options_.dir.c_str(), options_.label.c_str());
    state_.options = options_.options;
    state_.data = options_.data;
    return;
  }
  RunState stored = directory_.read();
  directory_.check_same("option", stored.options, options_.options, options_.may_change);
  directory_.check_same("data", stored.data, options_.data);
  load_checkpoint(model, directory_.checkpoint_file(stored, "model"));
  load_checkpoint(optimizer, directory_.checkpoint_file(stored, "optimizer"));
  state_ = std::move(stored);
  state_.options = options_.options;  // the run goes on with the options given now (more epochs)
  resumed_ = true;
  std::fprintf(stderr, "  resuming %s after epoch %zu\n", options_.label.c_str(), state_.history.size());
}

bool TrainingRun::patience_exhausted(std::size_t epoch, std::size_t patience) const {
  return state_.best_epoch > 0 && epoch > state_.best_epoch + patience;
}

bool TrainingRun::save_epoch(const EpochRecord& record, const torch::nn::Module& model,
                             const torch::optim::Optimizer& optimizer) {
  state_.history.push_back(record);
  const std::string tag = std::to_string(record.epoch) + ".pt";
  const bool best = record.dev_score > state_.best_score;
  if (best) {
    state_.best_score = record.dev_score;
    state_.best_epoch = record.epoch;
    save_checkpoint(model, options_.dir / ("best-" + tag));
    state_.checkpoint["best"] = "best-" + tag;
  }
  save_checkpoint(model, options_.dir / ("model-" + tag));
  save_checkpoint(optimizer, options_.dir / ("optimizer-" + tag));
  state_.checkpoint["model"] = "model-" + tag;
  state_.checkpoint["optimizer"] = "optimizer-" + tag;
  directory_.write(state_);
  return best;
}

void TrainingRun::load_best(torch::nn::Module& model) const {
  load_checkpoint(model, directory_.checkpoint_file(state_, "best"));
}

}  // namespace kit
