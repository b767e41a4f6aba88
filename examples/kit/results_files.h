// The results files of an experiment: results.json for programs, results.md for people.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kit {

/// Creates dir if needed and writes, each with write_atomically:
///   dir/results.json  results.dump(2) and a newline
///   dir/results.md    "# <title>\n\n", markdown_list(run_info), then table_markdown
/// Throws std::runtime_error naming the directory or the file on failure.
void write_results(const std::filesystem::path& dir, const std::string& title, const nlohmann::json& results,
                   const nlohmann::json& run_info, const std::string& table_markdown);

}  // namespace kit
