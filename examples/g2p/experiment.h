// The experiment driver of the grapheme-to-phoneme experiment: every variant x seed trained (or
// resumed) in its own run directory under `out`, the results over seeds (results.json,
// results.md) and the HTML report of a few test words per variant (report.html).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report.h"
#include "trainer.h"

namespace g2p {

struct ExperimentOptions {
  std::vector<std::string> variants = variant_names();
  std::vector<std::uint64_t> seeds{1};
  TrainOptions train;                 ///< variant, seed and out are set per run
  std::filesystem::path out;          ///< out/<variant>/seed<k>/ per run, results and report in out
  std::string command;                ///< recorded in the results
  std::size_t report_words = 8;       ///< test words shown per variant
  std::size_t jobs = 1;               ///< recorded in the results: runs trained side by side (main.cc)
};

/// The quick command's sizes (README): 12,000 training words, 500 dev and 2,000 test words, a
/// 64-unit encoder, 4 epochs, one seed.
void apply_quick(DataOptions& data, ExperimentOptions& experiment);
/// The full protocol's sizes: all training and test words, 1,000 dev words, a 64-unit encoder,
/// 3 epochs, seeds 1, 2, 3 (about 5 minutes per run on a 2-core machine: 21 runs, under 2 hours).
void apply_full(DataOptions& data, ExperimentOptions& experiment);

/// The measurements of one variant, one entry per seed.
struct VariantResult {
  std::string name;
  std::vector<double> per, wer, beam_per, beam_wer;  ///< test, fractions
  std::vector<double> greedy_words_per_second, beam_words_per_second;
  std::vector<double> letters_per_phoneme, fraction_read, monotonicity;
  std::vector<double> train_seconds, epoch_seconds;
};

/// {"run": run_info, "variants": [{"name", "seeds", "per", "wer", "beam_per", "beam_wer",
/// "greedy_words_per_second", "beam_words_per_second", "letters_per_phoneme", "fraction_read",
/// "monotonicity", "train_seconds", "epoch_seconds"} (each kit::series_json)]}.
nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info);

/// | variant | PER (%) | WER (%) | beam PER | beam WER | seeds | letters/phoneme | read (%) |
/// monotonic (%) | words/s greedy | words/s beam | s/epoch |: rates "mean ± sd", the rest means.
std::string results_table_markdown(const std::vector<VariantResult>& results, std::size_t beam);

/// The view of test word `index` by a model (greedy output, alignment, densities) for the report.
WordView word_view(Seq2Seq& model, const Dataset& data, std::size_t index);

/// Trains every variant x seed (resuming what is on disk), writes out/results.json,
/// out/results.md and out/report.html, and returns the results.
std::vector<VariantResult> run_experiment(const Dataset& data, const ExperimentOptions& options);

}  // namespace g2p
