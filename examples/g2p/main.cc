// g2p: the paper's translation experiment re-staged as grapheme-to-phoneme conversion on the CMU
// Pronouncing Dictionary (examples/g2p/README.md). Subcommands:
//   quick     every attention variant on a subset of the words, a few epochs (< 10 minutes)
//   full      the full protocol: every variant x 3 seeds on all training words
//   train     one variant and seed (--resume continues an interrupted run)
//   predict   words in -> phonemes, and the letters each phoneme attends to, from a trained run
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "experiment.h"
#include "kit/child_processes.h"
#include "kit/run_info.h"

namespace {

g2p::Dataset load(const std::string& cache, bool keep_stress, const g2p::DataOptions& options) {
  std::fprintf(stderr, "loading the dictionary from %s\n", cache.c_str());
  g2p::Dataset data = g2p::prepare_data(g2p::load_dictionary(g2p::dictionary_file(cache), {keep_stress}), options);
  std::fprintf(stderr, "%zu words: train %zu (%zu pronunciations), dev %zu, test %zu; %zu letters, %zu phonemes\n",
               data.entries.size(), data.split.train.size(), data.train_pairs.size(), data.split.dev.size(),
               data.split.test.size(), data.letters.size() - 2, data.phonemes.size() - 3);
  return data;
}

// "letters attended" of one phoneme for predict: the letters with weight > 0 (or inside the
// support), or the centre letter and its weight for dense maps.
std::string attended_text(const g2p::StepAttention& s, const std::string& word) {
  std::string out;
  const std::size_t n = word.size();
  const std::size_t count = g2p::attended_letters(s, n);
  if (count == n && !s.weights.empty() && !s.continuous()) {
    const std::size_t c = g2p::centre_letter(s, n);
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "all (most on %c, %.2f)", word[c], s.weights[c]);
    return buffer;
  }
  for (std::size_t l = 0; l < n; ++l) {
    const double t = (static_cast<double>(l) + 0.5) / static_cast<double>(n);
    const bool inside = s.continuous() ? (!std::isfinite(s.support_begin) || (t >= s.support_begin && t <= s.support_end))
                                       : s.weights[l] > 0;
    out += inside ? word[l] : '.';
  }
  if (s.continuous()) {
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "  (mu %.3f, sigma %.3f)", s.mu, std::sqrt(s.sigma2));
    out += buffer;
  }
  return out;
}

// The `train` command of one run of an experiment, with every option that defines it, for
// running the runs side by side as child processes (kit::run_commands).
std::vector<std::string> train_command(const std::string& cache, bool keep_stress, const g2p::DataOptions& data,
                                       const g2p::ExperimentOptions& experiment, const std::string& variant,
                                       std::uint64_t seed) {
  const auto& t = experiment.train;
  std::vector<std::string> c{kit::self_executable(), "--cache", cache, "--threads", "1"};
  if (keep_stress) c.emplace_back("--keep-stress");
  c.insert(c.end(), {"train", "--variant", variant, "--seed", std::to_string(seed), "--epochs", std::to_string(t.epochs),
                     "--subset", std::to_string(data.train_subset), "--dev-subset", std::to_string(data.dev_subset),
                     "--test-subset", std::to_string(data.test_subset), "--hidden", std::to_string(t.hidden),
                     "--embedding", std::to_string(t.embedding), "--basis", std::to_string(t.basis), "--beam",
                     std::to_string(t.beam), "--out", (experiment.out / variant / ("seed" + std::to_string(seed))).string(),
                     "--resume", "--no-progress"});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The grapheme-to-phoneme experiment of sparcon (CMU Pronouncing Dictionary)"};
  app.require_subcommand(1);
  std::string cache = g2p::kCacheFolder, out;
  int threads = 0;
  bool keep_stress = false;
  app.add_option("--cache", cache, "dictionary cache filled by scripts/fetch_data.sh")->capture_default_str();
  app.add_option("--threads", threads, "torch threads (0: torch's default)");
  app.add_flag("--keep-stress", keep_stress, "keep the vowels' stress digits (69 phonemes instead of 39)");

  g2p::DataOptions data_options;
  g2p::TrainOptions train_options;
  g2p::ExperimentOptions experiment;

  auto* quick = app.add_subcommand("quick", "every variant on a subset of the words (the default sizes in README)");
  std::string quick_out = "runs/g2p-quick", full_out = "runs/g2p-full";
  quick->add_option("--out", quick_out, "output directory")->capture_default_str();
  auto* full = app.add_subcommand("full", "the full protocol: every variant x 3 seeds, all training words");
  full->add_option("--out", full_out, "output directory")->capture_default_str();
  std::size_t jobs = kit::default_jobs();
  for (auto* command : {quick, full})
    command->add_option("--jobs", jobs, "runs trained side by side, one process of 1 thread each (default: the cores)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  auto* train = app.add_subcommand("train", "train one variant and seed");
  const CLI::Validator known_variant(
      [](std::string& name) {
        try {
          g2p::parse_variant(name);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "VARIANT");
  train->add_option("--variant", train_options.variant, "softmax, sparsemax, entmax15, {cont,disc}-{softmax,sparsemax}")
      ->required()
      ->check(known_variant);
  train->add_option("--seed", train_options.seed)->capture_default_str();
  train->add_option("--epochs", train_options.epochs, "at most this many epochs (early stopping may end sooner)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--subset", data_options.train_subset, "training words used (0: all)")->capture_default_str();
  train->add_option("--dev-subset", data_options.dev_subset, "dev words scored each epoch (0: all)")->capture_default_str();
  train->add_option("--test-subset", data_options.test_subset, "test words scored (0: all)")->capture_default_str();
  train->add_option("--hidden", train_options.hidden, "encoder LSTM units per direction (the decoder has twice)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--embedding", train_options.embedding, "letter and phoneme embedding size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--basis", train_options.basis, "continuous variants: Gaussian basis functions (even)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--beam", train_options.beam, "beam width of the test decoding")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--out", out, "run directory")->required();
  train->add_flag("--resume", train_options.resume, "continue the run in --out where it stopped");
  bool no_progress = false;
  train->add_flag("--no-progress", no_progress, "no progress bar (the epoch lines only)");
  std::string run;
  std::vector<std::string> words;
  std::size_t predict_beam = 1;
  auto* predict = app.add_subcommand("predict", "the phonemes of words, from a trained run");
  predict->add_option("--run", run, "run directory written by train")->required();
  predict->add_option("--beam", predict_beam, "beam width (1: greedy)")->capture_default_str()->check(CLI::PositiveNumber);
  predict->add_option("words", words, "words of letters and apostrophes")->required();
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) torch::set_num_threads(threads);

  try {
    if (*predict) {
      g2p::LoadedModel loaded = g2p::load_best(run);
      for (const auto& word : words) {
        const g2p::Prediction p = g2p::predict(loaded, word, predict_beam);
        std::printf("%s ", p.word.c_str());
        for (const auto& ph : p.phonemes) std::printf(" %s", ph.c_str());
        std::printf("\n");
        for (std::size_t t = 0; t < p.phonemes.size(); ++t)
          std::printf("  %-3s %s\n", p.phonemes[t].c_str(), attended_text(p.attention[t], p.word).c_str());
      }
      return 0;
    }
    experiment.command = kit::command_line(argc, argv);
    if (*train) {
      train_options.out = out;
      train_options.progress = !no_progress;
      const g2p::Dataset data = load(cache, keep_stress, data_options);
      const g2p::TrainResult r = g2p::train(data, train_options);
      std::printf("%s seed %llu: test PER %.2f%%, WER %.2f%% (greedy); beam %zu: PER %.2f%%, WER %.2f%% (best epoch %zu)\n",
                  r.variant.c_str(), static_cast<unsigned long long>(r.seed), 100 * r.greedy.per, 100 * r.greedy.wer,
                  train_options.beam, 100 * r.beam.per, 100 * r.beam.wer, r.best_epoch);
      std::printf("attention: %.2f letters per phoneme (%.1f%% of the word), monotonicity %.1f%%\n",
                  r.alignment.letters_per_phoneme(), 100 * r.alignment.fraction_read(), 100 * r.alignment.monotonicity());
      return 0;
    }
    experiment.out = *quick ? quick_out : full_out;
    if (*quick) {
      g2p::apply_quick(data_options, experiment);
    } else {
      g2p::apply_full(data_options, experiment);
    }
    // With several jobs the runs are trained side by side as `train` processes; run_experiment
    // then finds each finished (resume), tests it and writes the results and the report.
    kit::train_side_by_side(
        experiment.seeds, experiment.variants,
        [&](const std::string& variant, std::uint64_t seed) {
          return train_command(cache, keep_stress, data_options, experiment, variant, seed);
        },
        jobs);
    experiment.jobs = jobs;
    const g2p::Dataset data = load(cache, keep_stress, data_options);
    const auto results = g2p::run_experiment(data, experiment);
    std::printf("\n%s\nresults: %s/results.md and results.json\nreport:  %s/report.html\n",
                g2p::results_table_markdown(results, experiment.train.beam).c_str(), experiment.out.string().c_str(),
                experiment.out.string().c_str());
  } catch (const c10::Error& e) {  // any other torch error: its message without the stack trace
    std::fprintf(stderr, "g2p: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {  // bad input, a missing cache, a damaged run directory
    std::fprintf(stderr, "g2p: %s\n", e.what());
    return 1;
  }
  return 0;
}
