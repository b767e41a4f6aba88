// The run directory (kit/run_directory.h).
#include "kit/run_directory.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "kit/atomic_file.h"

namespace kit {
namespace fs = std::filesystem;

namespace {

// The first line of text, at most 200 characters (library messages may carry a stack trace).
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find_first_of("\r\n"));
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  return line;
}

std::string damaged_message(const fs::path& file, const std::string& why) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  return file.string() + " is damaged (" + first_line(why) + "): delete the run directory " + dir.string() +
         " and train again";
}

}  // namespace

DamagedFile::DamagedFile(const fs::path& file, const std::string& why)
    : std::runtime_error(damaged_message(file, why)), file_(file) {}

RunDirectory::RunDirectory(fs::path dir, std::string score_name)
    : dir_(std::move(dir)), score_name_(std::move(score_name)) {
  if (dir_.empty()) throw std::invalid_argument("RunDirectory: dir is empty; an output directory is required");
}

bool RunDirectory::has_state() const { return fs::exists(state_file()); }

RunState RunDirectory::read() const {
  const fs::path file = state_file();
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DamagedFile(file, std::string("truncated or not JSON: ") + e.what());
  }
  RunState state;
  try {
    state.options = json.at("options");
    state.data = json.at("data");
    for (const auto& e : json.at("history"))
      state.history.push_back({e.at("epoch"), e.at("train_loss"), e.at(score_name_), e.at("seconds")});
    state.best_epoch = json.at("best_epoch");
    state.best_score = json.at("best_" + score_name_);
    state.checkpoint = json.at("checkpoint");
  } catch (const nlohmann::json::exception& e) {
    throw DamagedFile(file, std::string("a missing or malformed entry: ") + e.what());
  }
  if (!state.options.is_object() || !state.data.is_object())
    throw DamagedFile(file, "'options' and 'data' must be objects");
  if (!state.checkpoint.is_object()) throw DamagedFile(file, "'checkpoint' must be an object");
  for (const auto& [key, name] : state.checkpoint.items()) {
    // A plain file name inside the directory: nothing else was ever written there.
    if (!name.is_string() || name.get<std::string>().empty() ||
        name.get<std::string>().find_first_of("/\\") != std::string::npos || name.get<std::string>()[0] == '.')
      throw DamagedFile(file, "checkpoint '" + key + "' is not a file name of the run directory");
  }
  if (state.best_epoch > state.history.size())
    throw DamagedFile(file, "best_epoch " + std::to_string(state.best_epoch) + " after the last epoch " +
                                std::to_string(state.history.size()));
  return state;
}

void RunDirectory::write(const RunState& state) const {
  nlohmann::json history = nlohmann::json::array();
  for (const auto& e : state.history)
    history.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {score_name_, e.dev_score},
                       {"seconds", e.seconds}});
  const nlohmann::json json{{"options", state.options},       {"data", state.data},
                            {"history", history},             {"best_epoch", state.best_epoch},
                            {"best_" + score_name_, state.best_score}, {"checkpoint", state.checkpoint}};
  write_atomically(state_file(), json.dump(2));

  std::vector<std::string> named;
  for (const auto& [key, file] : state.checkpoint.items()) named.push_back(file.get<std::string>());
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    const bool checkpoint = entry.path().extension() == ".pt" &&
                            (name.rfind("model-", 0) == 0 || name.rfind("optimizer-", 0) == 0 || name.rfind("best-", 0) == 0);
    const bool temporary = name.find(".tmp.") != std::string::npos;
    if ((checkpoint && std::find(named.begin(), named.end(), name) == named.end()) || temporary) {
      std::error_code ignored;
      fs::remove(entry.path(), ignored);
    }
  }
}

fs::path RunDirectory::checkpoint_file(const RunState& state, const std::string& key) const {
  const auto found = state.checkpoint.find(key);
  if (found == state.checkpoint.end() || !found->is_string())
    throw std::runtime_error(state_file().string() + " names no '" + key +
                             "' checkpoint (a run of an older version of this program?)");
  return dir_ / found->get<std::string>();
}

void RunDirectory::check_same(const std::string& what, const nlohmann::json& stored, const nlohmann::json& requested,
                              const std::vector<std::string>& may_differ) const {
  for (const auto& [key, value] : requested.items()) {
    if (std::find(may_differ.begin(), may_differ.end(), key) != may_differ.end()) continue;
    const auto found = stored.find(key);
    if (found == stored.end() || *found != value)
      throw std::runtime_error("resume: " + dir_.string() + " was trained with " + what + " " + key + " = " +
                               (found == stored.end() ? std::string("(none)") : found->dump()) + ", this run has " +
                               key + " = " + value.dump() + ": use the same options, or another --out");
  }
}

}  // namespace kit
