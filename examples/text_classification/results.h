// The results table of the text-classification experiment: per attention variant, test accuracy,
// training time and attention sparsity over seeds, as JSON and Markdown.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spam {

/// The measurements of one attention variant, one entry per seed in each vector.
struct VariantResult {
  std::string name;                  ///< e.g. "sparsemax", "cont-sparsemax-64"
  std::string family;                ///< "discrete" or "continuous"
  std::vector<double> accuracies;    ///< test accuracy per seed, in [0, 1]
  std::vector<double> train_seconds; ///< training time per seed
  /// Per seed: discrete maps, the mean fraction of tokens with non-zero weight; continuous
  /// sparsemax, the mean fraction of the document inside the support; continuous softmax, 1.
  std::vector<double> sparsity;
};

/// The results as JSON: {"run": run_info, "variants": [{"name", "family", "seeds",
/// "accuracy": {"per_seed": [...], "mean", "sd"}, "train_seconds": {...}, "sparsity": {...}}]}
/// (kit::series_json: a statistic of an empty series is null, and so is the sd of a single
/// value, a sample standard deviation needs two).
nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info);

/// The Markdown table printed to the console and written to results.md:
/// | variant | accuracy (%) | seeds | train time (s) | sparsity (%) |, with the accuracy as
/// "mean ± sd" in percent with 2 decimals ("mean ± n/a" for one seed), the mean training time
/// (1 decimal) and the mean sparsity in percent (1 decimal); "n/a" for a series without values.
/// Ends with a newline.
std::string results_table_markdown(const std::vector<VariantResult>& results);

/// kit::write_results of results_json and results_table_markdown under the heading "Text
/// classification results": dir/results.json and dir/results.md.
void write_results(const std::filesystem::path& dir, const std::vector<VariantResult>& results,
                   const nlohmann::json& run_info);

}  // namespace spam
