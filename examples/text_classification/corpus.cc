// Reading the SpamAssassin corpus (corpus.h).
#include "corpus.h"

#include <algorithm>
#include <cctype>
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

namespace {

// The message files data_dir/<group>/*.json, sorted (group, then file name).
std::vector<std::filesystem::path> message_files(const std::filesystem::path& data_dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& group : std::filesystem::directory_iterator(data_dir)) {
    if (!group.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(group.path()))
      if (file.path().extension() == ".json") files.push_back(file.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool has_header_block(const std::string& text) {
  // An empty line that ends the block ...
  if (text.find("\n\n") == std::string::npos && text.find("\n\r\n") == std::string::npos) return false;
  // ... after an mbox "From " line or "Name: value" (a field name of letters, digits, hyphens).
  if (text.rfind("From ", 0) == 0) return true;
  std::size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-')) ++i;
  return i > 0 && i + 1 < text.size() && text[i] == ':' && (text[i + 1] == ' ' || text[i + 1] == '\t');
}

int label_of_group(const std::string& group) { return group.rfind("spam", 0) == 0 ? 1 : 0; }

std::filesystem::path corpus_directory(const std::filesystem::path& cache) {
  const auto marker = cache / "COMPLETE";
  const auto data = cache / "package" / "data";
  if (!std::filesystem::exists(marker) || !std::filesystem::is_directory(data))
    throw std::runtime_error("the SpamAssassin corpus is missing or incomplete in " + cache.string() +
                             ": run `" + kFetchCommand + "` from the repository root");
  // The marker of fetch_data.sh is "<sha1> <messages>": a cache that lost files since is refused.
  std::ifstream in(marker);
  std::string sha1;
  std::size_t expected = 0;
  if (in >> sha1 >> expected) {
    const std::size_t found = message_files(data).size();
    if (found != expected)
      throw std::runtime_error("the SpamAssassin corpus in " + cache.string() + " holds " + std::to_string(found) +
                               " messages, its COMPLETE marker says " + std::to_string(expected) + ": run `" +
                               kFetchCommand + "` from the repository root");
  }
  return data;
}

std::vector<Message> load_corpus(const std::filesystem::path& data_dir) {
  if (!std::filesystem::is_directory(data_dir))
    throw std::runtime_error("no corpus directory " + data_dir.string() + ": run `" + kFetchCommand + "`");
  const std::vector<std::filesystem::path> files = message_files(data_dir);
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
