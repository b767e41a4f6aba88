// text_classification: the paper's text-classification experiment on the SpamAssassin corpus
// (README "The main job"). Subcommands:
//   quick     the main job: every kind of attention on a subset, a few epochs (< 10 minutes)
//   full      the full protocol: 15 variants x 3 seeds on the whole training split
//   train     one variant and seed (--resume continues an interrupted run)
//   predict   label and attended interval of a text file, from a trained run
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "experiment.h"
#include "kit/child_processes.h"
#include "kit/run_info.h"

namespace {

spam::Dataset load(const std::string& cache, const spam::DataOptions& options) {
  std::fprintf(stderr, "loading the corpus from %s\n", cache.c_str());
  spam::Dataset data = spam::prepare_data(spam::load_corpus(spam::corpus_directory(cache)), options);
  std::fprintf(stderr, "%zu distinct messages (%zu duplicates dropped): train %zu, dev %zu, test %zu; vocabulary %zu\n",
               data.messages.size(), data.duplicates, data.split.train.size(), data.split.dev.size(),
               data.split.test.size(), data.vocabulary.size());
  return data;
}

// The `train` command of one run of an experiment, with every option that defines it, for
// running the runs side by side as child processes (kit::run_commands).
std::vector<std::string> train_command(const std::string& cache, const spam::DataOptions& data,
                                       const spam::ExperimentOptions& experiment, const std::string& variant,
                                       std::uint64_t seed) {
  const auto& t = experiment.train;
  return {kit::self_executable(), "--cache", cache, "--threads", "1", "train", "--variant", variant, "--seed",
          std::to_string(seed), "--epochs", std::to_string(t.epochs), "--subset", std::to_string(data.train_subset),
          "--max-length", std::to_string(data.max_length), "--hidden", std::to_string(t.hidden), "--embedding",
          std::to_string(t.embedding), "--out", (experiment.out / variant / ("seed" + std::to_string(seed))).string(),
          "--resume", "--no-progress"};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The text-classification experiment of sparcon (SpamAssassin corpus, spam or ham)"};
  app.require_subcommand(1);
  std::string cache = ".cache/spam-assassin", out;
  int threads = 0;
  app.add_option("--cache", cache, "corpus cache filled by scripts/fetch_data.sh")->capture_default_str();
  app.add_option("--threads", threads, "torch threads (0: torch's default)");

  spam::DataOptions data_options;
  spam::TrainOptions train_options;
  spam::ExperimentOptions experiment;

  auto* quick = app.add_subcommand("quick", "the main job: 7 variants, 1500 training documents of <= 160 tokens, 3 epochs, 1 seed");
  std::string quick_out = "runs/quick", full_out = "runs/full";
  quick->add_option("--out", quick_out, "output directory")->capture_default_str();
  auto* full = app.add_subcommand("full", "the full protocol: 15 variants x 3 seeds, all training documents");
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
          spam::parse_variant(name);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "VARIANT");
  train->add_option("--variant", train_options.variant, "softmax, sparsemax, entmax15, {cont,disc}-{softmax,sparsemax}-N")
      ->required()
      ->check(known_variant);
  train->add_option("--seed", train_options.seed)->capture_default_str();
  train->add_option("--epochs", train_options.epochs, "at most this many epochs (early stopping may end sooner)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--subset", data_options.train_subset, "training documents used (0: all)")->capture_default_str();
  train->add_option("--max-length", data_options.max_length, "tokens kept per document")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--hidden", train_options.hidden, "LSTM units per direction")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--embedding", train_options.embedding, "embedding size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--initial-scale", train_options.initial_scale,
                    "cont-* variants: the head's starting sigma^2 (alpha = 2: support half-width (1.5 s)^(1/3))")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--out", out, "run directory")->required();
  train->add_flag("--resume", train_options.resume, "continue the run in --out where it stopped");
  bool no_progress = false;
  train->add_flag("--no-progress", no_progress, "no progress bar (the epoch lines only)");
  std::string run, text_file;
  auto* predict = app.add_subcommand("predict", "classify a text file with a trained run");
  predict->add_option("--run", run, "run directory written by train")->required();
  predict->add_option("file", text_file, "text file: an e-mail (its header block is removed) or a plain body")
      ->required()
      ->check(CLI::ExistingFile);
  bool body_only = false;
  predict->add_flag("--body", body_only, "the file is a message body: keep its first lines even if they look like headers");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) torch::set_num_threads(threads);

  try {
    if (*predict) {
      spam::LoadedModel loaded = spam::load_best(run);
      std::ifstream in(text_file, std::ios::binary);
      std::stringstream content;
      content << in.rdbuf();
      std::string text = content.str();
      if (!body_only && spam::has_header_block(text)) text = spam::strip_headers(text);
      const spam::Prediction p = spam::predict(loaded, text);
      if (p.tokens.empty())
        throw std::invalid_argument("predict: " + text_file + " has no tokens" +
                                    (body_only ? "" : " after its header block (pass --body if it has none)"));
      std::printf("%s (spam probability %.3f)\n", p.label ? "spam" : "ham", p.spam_probability);
      std::printf("attended tokens %zu..%zu of %zu:", p.begin, p.end, p.tokens.size());
      for (std::size_t i = p.begin; i <= p.end && i < p.tokens.size() && i < p.begin + 40; ++i)
        std::printf(" %s", p.tokens[i].c_str());
      std::printf("%s\n", p.end >= p.begin + 40 ? " ..." : "");
      return 0;
    }
    experiment.command = kit::command_line(argc, argv);
    if (*quick) out = quick_out;
    if (*full) out = full_out;
    experiment.out = out;
    if (*train) {
      train_options.out = out;
      train_options.max_length = data_options.max_length;
      train_options.progress = !no_progress;
      const spam::Dataset data = load(cache, data_options);
      const spam::TrainResult r = spam::train(data, train_options);
      std::printf("%s seed %llu: dev %.2f%%, test %.2f%% (best epoch %zu), sparsity %.1f%%\n", r.variant.c_str(),
                  static_cast<unsigned long long>(r.seed), 100 * r.dev_accuracy, 100 * r.test_accuracy,
                  r.best_epoch, 100 * r.sparsity);
      return 0;
    }
    if (*quick) {
      data_options.train_subset = 1500;
      data_options.max_length = 160;
      experiment.train.epochs = 3;
      experiment.train.hidden = 32;
      experiment.train.embedding = 32;
      experiment.variants = {"softmax", "sparsemax", "entmax15", "cont-softmax-32", "cont-sparsemax-32",
                             "disc-softmax-32", "disc-sparsemax-32"};
    } else {
      // Scaled for a 2-core CPU (about 80 minutes): the whole training split, documents cut at
      // 160 tokens, a 32-unit BiLSTM, at most 4 epochs with early stopping.
      data_options.max_length = 160;
      experiment.train.epochs = 4;
      experiment.train.hidden = 32;
      experiment.train.embedding = 32;
      experiment.seeds = {1, 2, 3};
      experiment.variants = {"softmax", "sparsemax", "entmax15"};
      for (const char* kind : {"cont", "disc"})
        for (const char* family : {"softmax", "sparsemax"})
          for (const char* n : {"32", "64", "128"})
            experiment.variants.push_back(std::string(kind) + "-" + family + "-" + n);
    }
    experiment.train.max_length = data_options.max_length;
    // With several jobs the runs are trained side by side as `train` processes; run_experiment
    // then finds each finished (resume), tests it and writes the results and the report.
    kit::train_side_by_side(
        experiment.seeds, experiment.variants,
        [&](const std::string& variant, std::uint64_t seed) {
          return train_command(cache, data_options, experiment, variant, seed);
        },
        jobs);
    experiment.jobs = jobs;
    const spam::Dataset data = load(cache, data_options);
    const auto results = spam::run_experiment(data, experiment);
    std::printf("\n%s\nresults: %s/results.md and results.json\nreport:  %s/report.html\n",
                spam::results_table_markdown(results).c_str(), out.c_str(), out.c_str());
  } catch (const c10::Error& e) {  // any other torch error: its message without the stack trace
    std::fprintf(stderr, "text_classification: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {  // a damaged run directory: kit::DamagedFile, one line
    std::fprintf(stderr, "text_classification: %s\n", e.what());
    return 1;
  }
  return 0;
}
