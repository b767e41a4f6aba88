// The experiment driver: several variants and seeds on one dataset, the results table and the
// HTML report of a few test documents.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report.h"
#include "results.h"
#include "trainer.h"

namespace spam {

struct ExperimentOptions {
  std::vector<std::string> variants;
  std::vector<std::uint64_t> seeds{1};
  TrainOptions train;               ///< variant, seed and out are set per run
  std::filesystem::path out;        ///< runs go to out/<variant>/seed<k>/; results and report to out/
  std::size_t report_documents = 4; ///< test documents shown per variant
  std::string command;              ///< recorded in results.json
  std::size_t jobs = 1;             ///< recorded in results.json: runs trained side by side (main.cc)
};

/// Trains every (variant, seed) (resuming runs already on disk), writes out/results.json,
/// out/results.md and out/report.html, and returns the results.
std::vector<VariantResult> run_experiment(const Dataset& data, const ExperimentOptions& options);

/// What a trained model sees in one document, for the report.
DocumentView document_view(Classifier& model, const Dataset& data, std::size_t index);

}  // namespace spam
