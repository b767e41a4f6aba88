// The results table (results.h).
#include "results.h"

#include "kit/format.h"
#include "kit/markdown.h"
#include "kit/results_files.h"
#include "kit/seed_series.h"

namespace spam {

nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : results) {
    variants.push_back({{"name", r.name},
                        {"family", r.family},
                        {"seeds", r.accuracies.size()},
                        {"accuracy", kit::series_json(r.accuracies)},
                        {"train_seconds", kit::series_json(r.train_seconds)},
                        {"sparsity", kit::series_json(r.sparsity)}});
  }
  return {{"run", run_info}, {"variants", variants}};
}

std::string results_table_markdown(const std::vector<VariantResult>& results) {
  std::string out =
      "| variant | accuracy (%, mean ± sd) | seeds | train time (s, mean) | sparsity (%, mean) |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const auto& r : results)
    out += "| " + kit::markdown_cell(r.name) + " | " + kit::mean_sd_text(r.accuracies, 100.0, 2) + " | " +
           std::to_string(r.accuracies.size()) + " | " + kit::fixed(kit::summarize(r.train_seconds).mean, 1) + " | " +
           kit::fixed(100.0 * kit::summarize(r.sparsity).mean, 1) + " |\n";
  return out;
}

void write_results(const std::filesystem::path& dir, const std::vector<VariantResult>& results,
                   const nlohmann::json& run_info) {
  kit::write_results(dir, "Text classification results", results_json(results, run_info), run_info,
                     results_table_markdown(results));
}

}  // namespace spam
