// The experiment driver of the VQA experiment: every variant x seed trained (or resumed) in its
// own run directory under `out`, the results over seeds (results.json, results.md) and the HTML
// report of the same test questions for every variant (report.html).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report.h"
#include "trainer.h"

namespace vqa {

struct ExperimentOptions {
  std::vector<std::string> variants = variant_names();
  std::vector<std::uint64_t> seeds{1};
  TrainOptions train;                 ///< variant, seed and out are set per run
  std::size_t dev_scenes = 500;
  std::filesystem::path out;          ///< out/<variant>/seed<k>/ per run, results and report in out
  std::string command;                ///< recorded in the results
  std::size_t report_per_type = 3;    ///< test questions shown per question type
  std::size_t jobs = 1;               ///< recorded in the results: runs trained side by side (main.cc)
};

/// The quick command's sizes (README): 3,000 training scenes (12,000 questions), 300 dev and
/// 500 test scenes, 5 epochs, one seed.
void apply_quick(DataOptions& data, ExperimentOptions& experiment);
/// The full protocol's sizes: 10,000 training scenes (40,000 questions), 1,000 dev and 2,000
/// test scenes, 7 epochs, seeds 1, 2, 3.
void apply_full(DataOptions& data, ExperimentOptions& experiment);

/// The measurements of one variant, one entry per seed (fractions).
struct VariantResult {
  std::string name;
  std::vector<double> accuracy;
  std::array<std::vector<double>, kQuestionTypeCount> type_accuracy;
  std::vector<double> mass, iou, inside, area;  ///< localisation; support figures NaN where none
  std::vector<double> train_seconds, epoch_seconds, dev_accuracy;
};

/// {"run": run_info, "variants": [{"name", "seeds", "accuracy", "accuracy_<type>" per type,
/// "mass", "iou", "inside", "area", "dev_accuracy", "train_seconds", "epoch_seconds"} (each
/// kit::series_json)]}.
nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info);

/// Two tables: | variant | accuracy | region | count | exist | relation | seeds | s per epoch |
/// and | variant | mass in evidence | support IoU | support inside | support area |: accuracies
/// and mass "mean ± sd" in %, the support figures means ("-" where the variant has none).
std::string results_table_markdown(const std::vector<VariantResult>& results);

/// The view of test example `index` by a model, for the report.
QuestionView question_view(VqaModel& model, const SplitData& data, std::size_t index);

/// Trains every variant x seed (resuming what is on disk), writes out/results.json,
/// out/results.md and out/report.html, and returns the results.
std::vector<VariantResult> run_experiment(const Datasets& data, const ExperimentOptions& options);

}  // namespace vqa
