// The experiment driver (experiment.h).
#include "experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <utility>

#include "kit/format.h"
#include "kit/markdown.h"
#include "kit/results_files.h"
#include "kit/run_info.h"
#include "kit/seed_series.h"
#include "metrics.h"
#include "sparcon/continuous.h"

namespace g2p {

void apply_quick(DataOptions& data, ExperimentOptions& experiment) {
  data.train_subset = 12000;
  data.dev_subset = 500;
  data.test_subset = 2000;
  experiment.train.hidden = 64;
  experiment.train.embedding = 64;
  experiment.train.epochs = 4;
  experiment.seeds = {1};
}

void apply_full(DataOptions& data, ExperimentOptions& experiment) {
  data.train_subset = 0;
  data.dev_subset = 1000;
  data.test_subset = 0;
  experiment.train.hidden = 64;
  experiment.train.embedding = 64;
  experiment.train.epochs = 3;
  experiment.seeds = {1, 2, 3};
}

nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : results)
    variants.push_back({{"name", r.name},
                        {"seeds", r.per.size()},
                        {"per", kit::series_json(r.per)},
                        {"wer", kit::series_json(r.wer)},
                        {"beam_per", kit::series_json(r.beam_per)},
                        {"beam_wer", kit::series_json(r.beam_wer)},
                        {"greedy_words_per_second", kit::series_json(r.greedy_words_per_second)},
                        {"beam_words_per_second", kit::series_json(r.beam_words_per_second)},
                        {"letters_per_phoneme", kit::series_json(r.letters_per_phoneme)},
                        {"fraction_read", kit::series_json(r.fraction_read)},
                        {"monotonicity", kit::series_json(r.monotonicity)},
                        {"train_seconds", kit::series_json(r.train_seconds)},
                        {"epoch_seconds", kit::series_json(r.epoch_seconds)}});
  return {{"run", run_info}, {"variants", variants}};
}

std::string results_table_markdown(const std::vector<VariantResult>& results, std::size_t beam) {
  const std::string b = std::to_string(beam);
  std::string out = "| variant | PER (%) | WER (%) | PER beam " + b + " (%) | WER beam " + b +
                    " (%) | seeds | letters per phoneme | word read (%) | monotonic (%) | words/s greedy | "
                    "words/s beam " + b + " | s per epoch |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  auto mean = [](const std::vector<double>& v, double scale, int decimals) {
    return kit::fixed(scale * kit::summarize(v).mean, decimals);
  };
  for (const auto& r : results)
    out += "| " + kit::markdown_cell(r.name) + " | " + kit::mean_sd_text(r.per, 100, 2) + " | " +
           kit::mean_sd_text(r.wer, 100, 2) + " | " + kit::mean_sd_text(r.beam_per, 100, 2) + " | " +
           kit::mean_sd_text(r.beam_wer, 100, 2) + " | " + std::to_string(r.per.size()) + " | " +
           mean(r.letters_per_phoneme, 1, 2) + " | " + mean(r.fraction_read, 100, 1) + " | " +
           mean(r.monotonicity, 100, 1) + " | " + mean(r.greedy_words_per_second, 1, 0) + " | " +
           mean(r.beam_words_per_second, 1, 0) + " | " + mean(r.epoch_seconds, 1, 1) + " |\n";
  return out;
}

WordView word_view(Seq2Seq& model, const Dataset& data, std::size_t index) {
  const auto& letters = data.encoded[index].letters;
  const Entry& entry = data.entries[index];
  std::vector<std::vector<StepAttention>> attention;
  const std::vector<int> output = greedy_decode(model, {&letters}, 1, &attention)[0];
  WordView view;
  view.word = entry.word;
  view.output = decode_phonemes(data.phonemes, output);
  for (const auto& p : entry.pronunciations) {
    std::string joined;
    for (const auto& ph : p) joined += (joined.empty() ? "" : " ") + ph;
    view.references.push_back(joined);
  }
  view.correct = score_word(view.output, entry.pronunciations).correct;
  view.steps = std::move(attention[0]);
  const std::size_t n = letters.size();
  view.alignment = {view.steps.size(), n, {}};
  const Variant& variant = model->options.variant;
  constexpr std::size_t kSamples = 80, kPerCell = 64;
  for (const auto& s : view.steps) {
    if (!s.continuous()) {
      view.alignment.values.insert(view.alignment.values.end(), s.weights.begin(), s.weights.end());
      continue;
    }
    // The density's mass over each letter's cell [l, l + 1) / n by the midpoint rule.
    const sparcon::Density1D<double> density(variant.alpha, s.mu, s.sigma2);
    for (std::size_t l = 0; l < n; ++l) {
      double mass = 0;
      for (std::size_t j = 0; j < kPerCell; ++j)
        mass += density.pdf((static_cast<double>(l) + (static_cast<double>(j) + 0.5) / kPerCell) / static_cast<double>(n));
      view.alignment.values.push_back(mass / static_cast<double>(kPerCell * n));
    }
    std::vector<double> curve(kSamples);
    for (std::size_t j = 0; j < kSamples; ++j) curve[j] = density.pdf((static_cast<double>(j) + 0.5) / kSamples);
    view.curves.push_back(std::move(curve));
  }
  return view;
}

std::vector<VariantResult> run_experiment(const Dataset& data, const ExperimentOptions& options) {
  std::vector<VariantWords> shown;
  // The words shown: the first report_words of the test split (in dictionary order after the
  // seeded split, so a mix of lengths and letters), the same for every variant.
  std::vector<std::size_t> words;
  for (std::size_t k = 0; k < data.split.test.size() && words.size() < options.report_words;
       k += std::max<std::size_t>(1, data.split.test.size() / std::max<std::size_t>(1, options.report_words)))
    words.push_back(data.split.test[k]);
  // Seed by seed, every variant: an interrupted full run leaves whole seeds behind it.
  std::vector<VariantResult> results(options.variants.size());
  for (std::size_t v = 0; v < options.variants.size(); ++v) results[v].name = options.variants[v];
  for (const auto seed : options.seeds) {
    for (std::size_t v = 0; v < options.variants.size(); ++v) {
      const std::string& name = options.variants[v];
      VariantResult& result = results[v];
      TrainOptions train = options.train;
      train.variant = name;
      train.seed = seed;
      train.out = options.out / name / ("seed" + std::to_string(seed));
      train.resume = true;  // a finished run on disk is reused, an interrupted one continued
      const TrainResult r = g2p::train(data, train);
      result.per.push_back(r.greedy.per);
      result.wer.push_back(r.greedy.wer);
      result.beam_per.push_back(r.beam.per);
      result.beam_wer.push_back(r.beam.wer);
      result.greedy_words_per_second.push_back(r.greedy.words_per_second);
      result.beam_words_per_second.push_back(r.beam.words_per_second);
      result.letters_per_phoneme.push_back(r.alignment.letters_per_phoneme());
      result.fraction_read.push_back(r.alignment.fraction_read());
      result.monotonicity.push_back(r.alignment.monotonicity());
      result.train_seconds.push_back(r.train_seconds);
      result.epoch_seconds.push_back(r.train_seconds / static_cast<double>(std::max<std::size_t>(r.epochs, 1)));
      std::fprintf(stderr, "%s seed %llu: test PER %.2f%%, WER %.2f%%; beam %zu PER %.2f%%, WER %.2f%%\n", name.c_str(),
                   static_cast<unsigned long long>(seed), 100 * r.greedy.per, 100 * r.greedy.wer, train.beam,
                   100 * r.beam.per, 100 * r.beam.wer);
      if (seed == options.seeds.front()) {
        LoadedModel loaded = load_best(train.out);
        VariantWords shown_words{name, {}};
        for (const auto i : words) shown_words.words.push_back(word_view(loaded.model, data, i));
        shown.push_back(std::move(shown_words));
      }
    }
  }
  const nlohmann::json info{{"date", kit::utc_now()},
                            {"command", options.command},
                            {"hardware_threads", std::thread::hardware_concurrency()},
                            {"jobs", options.jobs},
                            {"words", data.entries.size()},
                            {"train_words", data.split.train.size()},
                            {"train_pronunciations", data.train_pairs.size()},
                            {"dev_words", data.split.dev.size()},
                            {"test_words", data.split.test.size()},
                            {"phonemes", data.phonemes.size() - 3},
                            {"epochs", options.train.epochs},
                            {"hidden", options.train.hidden},
                            {"embedding", options.train.embedding},
                            {"basis", options.train.basis},
                            {"beam", options.train.beam}};
  const std::string table = results_table_markdown(results, options.train.beam);
  kit::write_results(options.out, "Grapheme-to-phoneme results", results_json(results, info), info, table);
  write_report(options.out / "report.html", "sparcon: attention in a grapheme-to-phoneme decoder",
               "# Results\n\n" + kit::markdown_list(info) + table, shown);
  return results;
}

}  // namespace g2p
