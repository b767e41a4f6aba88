// Reading the SpamAssassin corpus (corpus.h).
#include "corpus.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace spam {

std::string strip_headers(const std::string& raw) {
  std::size_t line = 0;
  while (line < raw.size()) {
    std::size_t end = raw.find('\n', line);
    if (end == std::string::npos) end = raw.size();
    const bool empty = end == line || (end == line + 1 && raw[line] == '\r');
    if (empty) return end < raw.size() ? raw.substr(end + 1) : std::string();
    line = end + 1;
  }
  return {};
}

int label_of_group(const std::string& group) { return group.rfind("spam", 0) == 0 ? 1 : 0; }

std::filesystem::path corpus_directory(const std::filesystem::path& cache) {
  const auto marker = cache / "COMPLETE";
  const auto data = cache / "package" / "data";
  if (!std::filesystem::exists(marker) || !std::filesystem::is_directory(data))
    throw std::runtime_error("the SpamAssassin corpus is missing or incomplete in " + cache.string() +
                             ": run `" + kFetchCommand + "` from the repository root");
  return data;
}

std::vector<Message> load_corpus(const std::filesystem::path& data_dir) {
  if (!std::filesystem::is_directory(data_dir))
    throw std::runtime_error("no corpus directory " + data_dir.string() + ": run `" + kFetchCommand + "`");
  std::vector<std::filesystem::path> files;
  for (const auto& group : std::filesystem::directory_iterator(data_dir)) {
    if (!group.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(group.path()))
      if (file.path().extension() == ".json") files.push_back(file.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Message> messages;
  messages.reserve(files.size());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    const auto json = nlohmann::json::parse(content.str(), nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object() || !json.contains("text") || !json["text"].is_string() ||
        !json.contains("group") || !json["group"].is_string())
      throw std::runtime_error("corrupt corpus file " + path.string() +
                               " (not a JSON object with string fields text and group): run `" +
                               kFetchCommand + "` to fetch the corpus again");
    Message m;
    m.group = json["group"].get<std::string>();
    m.id = path.stem().string();
    m.label = label_of_group(m.group);
    m.body = strip_headers(json["text"].get<std::string>());
    messages.push_back(std::move(m));
  }
  if (messages.empty())
    throw std::runtime_error("no messages under " + data_dir.string() + ": run `" + kFetchCommand + "`");
  return messages;
}

}  // namespace spam
