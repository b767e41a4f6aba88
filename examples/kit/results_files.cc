// The results files (kit/results_files.h).
#include "kit/results_files.h"

#include <stdexcept>
#include <system_error>

#include "kit/atomic_file.h"
#include "kit/markdown.h"

namespace kit {

void write_results(const std::filesystem::path& dir, const std::string& title, const nlohmann::json& results,
                   const nlohmann::json& run_info, const std::string& table_markdown) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the results directory " + dir.string() + ": " + ec.message());
  write_atomically(dir / "results.json", results.dump(2) + "\n");
  write_atomically(dir / "results.md", "# " + title + "\n\n" + markdown_list(run_info) + table_markdown);
}

}  // namespace kit
