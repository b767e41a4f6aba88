// vqa: the paper's VQA experiment re-staged on scenes of Fashion-MNIST items, with questions
// whose evidence lies in known boxes (examples/vqa/README.md). Subcommands:
//   quick     every attention variant on a reduced set, a few epochs (< 10 minutes on 2 cores)
//   full      the full protocol: every variant x 3 seeds
//   train     one variant and seed (--resume continues an interrupted run)
//   predict   a question about a PNG or a generated test scene -> the answer, its probability
//             and the attended region, from a trained run
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiment.h"
#include "kit/atomic_file.h"
#include "kit/child_processes.h"
#include "kit/png.h"
#include "kit/run_info.h"
#include "vocabulary.h"

namespace {

vqa::Datasets load(const std::string& folder, const vqa::DataOptions& options, std::size_t dev_scenes) {
  std::fprintf(stderr, "loading Fashion-MNIST from %s\n", folder.c_str());
  const vqa::FashionMnist train = vqa::load_fashion_mnist(folder, vqa::Split::kTrain);
  const vqa::FashionMnist test = vqa::load_fashion_mnist(folder, vqa::Split::kTest);
  vqa::Datasets data = vqa::make_datasets(train, test, options, dev_scenes);
  std::fprintf(stderr, "scenes: train %zu (%zu questions), dev %zu (%zu), test %zu (%zu)\n", data.train.scenes.size(),
               data.train.examples.size(), data.dev.scenes.size(), data.dev.examples.size(), data.test.scenes.size(),
               data.test.examples.size());
  return data;
}

// The `train` command of one run of an experiment, with every option that defines it, for
// running the runs side by side as child processes (kit::run_commands).
std::vector<std::string> train_command(const std::string& folder, const vqa::DataOptions& data,
                                       const vqa::ExperimentOptions& experiment, const std::string& variant,
                                       std::uint64_t seed) {
  const auto& t = experiment.train;
  return {kit::self_executable(), "--data", folder, "--threads", "1", "train", "--variant", variant, "--seed",
          std::to_string(seed), "--epochs", std::to_string(t.epochs), "--train-scenes", std::to_string(data.train_scenes),
          "--dev-scenes", std::to_string(experiment.dev_scenes), "--test-scenes", std::to_string(data.test_scenes),
          "--features", std::to_string(t.features), "--batch-scenes", std::to_string(t.batch_scenes), "--data-seed",
          std::to_string(data.seed), "--out", (experiment.out / variant / ("seed" + std::to_string(seed))).string(),
          "--resume", "--no-progress"};
}

std::string read_bytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Where the attention of a prediction looks, in pixels of the 84 x 84 image.
void print_region(const vqa::Answer& a, const vqa::Variant& variant) {
  const at::Tensor w = a.attention.weights[0];
  if (!variant.continuous()) {
    const at::Tensor cells = (w > 0).nonzero();
    const std::int64_t best = w.flatten().argmax().item<std::int64_t>();
    std::printf("attention: %lld of 196 cells (6 x 6 pixels each) with weight > 0; the heaviest, row %lld column %lld, "
                "holds %.2f\n",
                static_cast<long long>(cells.size(0)), static_cast<long long>(best / 14), static_cast<long long>(best % 14),
                w.flatten()[best].item<double>());
    if (cells.size(0) < 196)
      std::printf("support: rows %lld-%lld, columns %lld-%lld of the cells\n",
                  static_cast<long long>(cells.select(1, 0).min().item<std::int64_t>()),
                  static_cast<long long>(cells.select(1, 0).max().item<std::int64_t>()),
                  static_cast<long long>(cells.select(1, 1).min().item<std::int64_t>()),
                  static_cast<long long>(cells.select(1, 1).max().item<std::int64_t>()));
    return;
  }
  for (std::int64_t k = 0; k < a.attention.mean.size(1); ++k) {
    const vqa::Density d = vqa::view_density(a.attention, 0, k, variant);
    const auto c = d.covariance();
    std::printf("density %lld (weight %.2f): centre (row %.1f, column %.1f) px, sd %.1f x %.1f px, correlation %.2f",
                static_cast<long long>(k + 1), a.attention.weight[0][k].item<double>(), 84 * d.mu()[0], 84 * d.mu()[1],
                84 * std::sqrt(c[0]), 84 * std::sqrt(c[3]), c[1] / std::sqrt(c[0] * c[3]));
    if (d.alpha() > 1) std::printf(", support %.1f%% of the image", 100 * d.support_area());
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The VQA experiment of sparcon (questions about Fashion-MNIST scenes)"};
  app.require_subcommand(1);
  std::string folder = vqa::kFashionMnistFolder, out;
  int threads = 0;
  app.add_option("--data", folder, "the Fashion-MNIST folder (Debian's dataset-fashion-mnist)")->capture_default_str();
  app.add_option("--threads", threads, "torch threads (0: torch's default)");

  vqa::DataOptions data_options;
  vqa::TrainOptions train_options;
  vqa::ExperimentOptions experiment;

  auto* quick = app.add_subcommand("quick", "every variant on a reduced set (the sizes in README)");
  std::string quick_out = "runs/vqa-quick", full_out = "runs/vqa-full";
  quick->add_option("--out", quick_out, "output directory")->capture_default_str();
  auto* full = app.add_subcommand("full", "the full protocol: every variant x 3 seeds");
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
          vqa::parse_variant(name);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "VARIANT");
  train->add_option("--variant", train_options.variant,
                    "softmax, sparsemax, entmax15, {cont,disc}-{softmax,sparsemax}, mix2, mix3")
      ->required()
      ->check(known_variant);
  train->add_option("--seed", train_options.seed, "the model's seed")->capture_default_str();
  train->add_option("--epochs", train_options.epochs, "at most this many epochs (early stopping may end sooner)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--train-scenes", data_options.train_scenes)->capture_default_str()->check(CLI::PositiveNumber);
  train->add_option("--dev-scenes", experiment.dev_scenes)->capture_default_str()->check(CLI::PositiveNumber);
  train->add_option("--test-scenes", data_options.test_scenes)->capture_default_str()->check(CLI::PositiveNumber);
  train->add_option("--data-seed", data_options.seed, "the scenes' and questions' seed")->capture_default_str();
  train->add_option("--features", train_options.features, "E: grid features and question vector (a multiple of 4)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--batch-scenes", train_options.batch_scenes, "scenes per batch, with all their questions")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train->add_option("--out", out, "run directory")->required();
  train->add_flag("--resume", train_options.resume, "continue the run in --out where it stopped");
  bool no_progress = false;
  train->add_flag("--no-progress", no_progress, "no progress bar (the epoch lines only)");

  auto* predict = app.add_subcommand("predict", "answer a question about an image, from a trained run");
  std::string run, image_file, question, picture;
  std::size_t scene_index = 0;
  predict->add_option("--run", run, "run directory written by train")->required();
  auto* image_option = predict->add_option("--image", image_file, "an 84 x 84 PNG (grey or colour; ink bright on black)");
  predict->add_option("--scene", scene_index, "else test scene N generated with --data-seed")
      ->capture_default_str()
      ->excludes(image_option);
  predict->add_option("--data-seed", data_options.seed, "the seed of the generated test scenes")->capture_default_str();
  predict->add_option("--question", question, "e.g. \"how many shoes are there ?\"")->required();
  predict->add_option("--picture", picture, "write the scene with the attention drawn over it to this SVG file");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) torch::set_num_threads(threads);

  try {
    if (*predict) {
      vqa::VqaModel model = vqa::load_best(run);
      kit::Image image;
      if (!image_file.empty()) {
        image = kit::decode_png(read_bytes(image_file), 1);
      } else {
        const vqa::FashionMnist items = vqa::load_fashion_mnist(folder, vqa::Split::kTest);
        image = vqa::generate_scene(items, data_options.scene, data_options.seed, scene_index).image;
      }
      const vqa::Answer a = vqa::predict(model, image, question);
      std::printf("%s -> %s (%.1f%%)\n", question.c_str(), a.answer.c_str(), 100 * a.probability);
      print_region(a, model->options.variant);
      if (!picture.empty()) {
        vqa::QuestionView view;
        view.image = image;
        view.question = question;
        vqa::draw_attention(a.attention, 0, model->options.variant, view);
        kit::write_file(picture, vqa::scene_svg(view, 336));
        std::printf("picture: %s\n", picture.c_str());
      }
      return 0;
    }
    experiment.command = kit::command_line(argc, argv);
    if (*train) {
      train_options.out = out;
      train_options.progress = !no_progress;
      const vqa::Datasets data = load(folder, data_options, experiment.dev_scenes);
      const vqa::TrainResult r = vqa::train(data, train_options);
      std::printf("%s seed %llu: test accuracy %.2f%% (best epoch %zu of %zu);", r.variant.c_str(),
                  static_cast<unsigned long long>(r.seed), 100 * r.test.accuracy(), r.best_epoch, r.epochs);
      for (int t = 0; t < vqa::kQuestionTypeCount; ++t)
        std::printf(" %s %.1f%%", vqa::question_type_name(static_cast<vqa::QuestionType>(t)),
                    100 * r.test.type_accuracy(static_cast<vqa::QuestionType>(t)));
      std::printf("\nattention mass in the evidence %.1f%%\n", 100 * r.test.localisation.mass());
      return 0;
    }
    experiment.out = *quick ? quick_out : full_out;
    if (*quick) {
      vqa::apply_quick(data_options, experiment);
    } else {
      vqa::apply_full(data_options, experiment);
    }
    // With several jobs the runs are trained side by side as `train` processes; run_experiment
    // then finds each finished (resume), tests it and writes the results and the report.
    // The slowest runs first (measured quick epochs on 2 idle cores: mixtures 22-23 s,
    // continuous sparsemax 17 s, the others 15-16 s), so that the last runs to finish are short
    // ones and the cores stay busy to the end.
    auto cost = [](const std::string& name) {
      const vqa::Variant v = vqa::parse_variant(name);
      return v.kind == "mixture" ? 0 : v.continuous() && v.alpha > 1 ? 1 : 2;
    };
    std::vector<std::string> order = experiment.variants;
    std::stable_sort(order.begin(), order.end(),
                     [&](const std::string& a, const std::string& b) { return cost(a) < cost(b); });
    kit::train_side_by_side(
        experiment.seeds, order,
        [&](const std::string& variant, std::uint64_t seed) {
          return train_command(folder, data_options, experiment, variant, seed);
        },
        jobs);
    experiment.jobs = jobs;
    const vqa::Datasets data = load(folder, data_options, experiment.dev_scenes);
    const auto results = vqa::run_experiment(data, experiment);
    std::printf("\n%s\nresults: %s/results.md and results.json\nreport:  %s/report.html\n",
                vqa::results_table_markdown(results).c_str(), experiment.out.string().c_str(),
                experiment.out.string().c_str());
  } catch (const c10::Error& e) {  // any other torch error: its message without the stack trace
    std::fprintf(stderr, "vqa: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {  // bad input, missing data, a damaged run directory
    std::fprintf(stderr, "vqa: %s\n", e.what());
    return 1;
  }
  return 0;
}
