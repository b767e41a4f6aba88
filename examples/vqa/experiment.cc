// The experiment driver (experiment.h).
#include "experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "kit/format.h"
#include "kit/markdown.h"
#include "kit/results_files.h"
#include "kit/run_info.h"
#include "kit/seed_series.h"
#include "vocabulary.h"

namespace vqa {

void apply_quick(DataOptions& data, ExperimentOptions& experiment) {
  data.train_scenes = 3000;
  data.test_scenes = 500;
  experiment.dev_scenes = 300;
  experiment.train.epochs = 5;
  experiment.seeds = {1};
}

void apply_full(DataOptions& data, ExperimentOptions& experiment) {
  data.train_scenes = 10000;
  data.test_scenes = 2000;
  experiment.dev_scenes = 1000;
  experiment.train.epochs = 7;
  experiment.seeds = {1, 2, 3};
}

nlohmann::json results_json(const std::vector<VariantResult>& results, const nlohmann::json& run_info) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json v{{"name", r.name},
                     {"seeds", r.accuracy.size()},
                     {"accuracy", kit::series_json(r.accuracy)},
                     {"mass", kit::series_json(r.mass)},
                     {"iou", kit::series_json(r.iou)},
                     {"inside", kit::series_json(r.inside)},
                     {"area", kit::series_json(r.area)},
                     {"dev_accuracy", kit::series_json(r.dev_accuracy)},
                     {"train_seconds", kit::series_json(r.train_seconds)},
                     {"epoch_seconds", kit::series_json(r.epoch_seconds)}};
    for (int t = 0; t < kQuestionTypeCount; ++t)
      v[std::string("accuracy_") + question_type_name(static_cast<QuestionType>(t))] =
          kit::series_json(r.type_accuracy[static_cast<std::size_t>(t)]);
    variants.push_back(std::move(v));
  }
  return {{"run", run_info}, {"variants", variants}};
}

std::string results_table_markdown(const std::vector<VariantResult>& results) {
  std::string out = "| variant | accuracy (%) | region | count | exist | relation | seeds | s per epoch |\n"
                    "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : results) {
    out += "| " + kit::markdown_cell(r.name) + " | " + kit::mean_sd_text(r.accuracy, 100, 1);
    for (const auto& t : r.type_accuracy) out += " | " + kit::mean_sd_text(t, 100, 1);
    out += " | " + std::to_string(r.accuracy.size()) + " | " + kit::fixed(kit::summarize(r.epoch_seconds).mean, 1) + " |\n";
  }
  out += "\n| variant | mass in the evidence (%) | support IoU | support inside (%) | support area (%) |\n"
         "|---|---:|---:|---:|---:|\n";
  auto figure = [](const std::vector<double>& v, double scale, int decimals) {
    return v.empty() || !std::isfinite(v.front()) ? std::string("-") : kit::fixed(scale * kit::summarize(v).mean, decimals);
  };
  for (const auto& r : results)
    out += "| " + kit::markdown_cell(r.name) + " | " + kit::mean_sd_text(r.mass, 100, 1) + " | " + figure(r.iou, 1, 3) +
           " | " + figure(r.inside, 100, 1) + " | " + figure(r.area, 100, 1) + " |\n";
  return out;
}

QuestionView question_view(VqaModel& model, const SplitData& data, std::size_t index) {
  torch::NoGradGuard no_grad;
  model->eval();
  const Example& example = data.examples.at(index);
  const Batch batch = make_batch(data, {index});
  AttentionView view;
  const at::Tensor p = torch::softmax(model(batch, &view), 1)[0];
  const std::int64_t best = p.argmax().item<std::int64_t>();
  QuestionView q;
  const Scene& scene = data.scenes[example.scene];
  q.image = scene.image;
  q.type = question_type_name(example.question.type);
  q.question = example.question.text;
  q.answer = answer_vocabulary().symbol(static_cast<int>(best));
  q.probability = p[best].item<double>();
  q.truth = example.question.answer;
  q.evidence = evidence_rects(example.question.evidence, static_cast<int>(scene.image.height));
  const Variant& variant = model->options.variant;
  draw_attention(view, 0, variant, q);
  q.mass = q.evidence.empty() ? std::nan("") : localise(view, 0, variant, q.evidence).mass;
  return q;
}

std::vector<VariantResult> run_experiment(const Datasets& data, const ExperimentOptions& options) {
  // The questions shown: the first report_per_type test questions of each type that have
  // evidence, the same for every variant.
  std::vector<std::size_t> shown;
  for (int t = 0; t < kQuestionTypeCount; ++t) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < data.test.examples.size() && count < options.report_per_type; ++i) {
      const Question& q = data.test.examples[i].question;
      if (static_cast<int>(q.type) == t && !q.evidence.empty()) shown.push_back(i), ++count;
    }
  }
  std::vector<VariantQuestions> views;
  std::vector<VariantResult> results(options.variants.size());
  for (std::size_t v = 0; v < options.variants.size(); ++v) results[v].name = options.variants[v];
  // Seed by seed, every variant: an interrupted full run leaves whole seeds behind it.
  for (const auto seed : options.seeds) {
    for (std::size_t v = 0; v < options.variants.size(); ++v) {
      const std::string& name = options.variants[v];
      VariantResult& result = results[v];
      TrainOptions train = options.train;
      train.variant = name;
      train.seed = seed;
      train.out = options.out / name / ("seed" + std::to_string(seed));
      train.resume = true;  // a finished run on disk is reused, an interrupted one continued
      const TrainResult r = vqa::train(data, train);
      const Evaluation& e = r.test;
      result.accuracy.push_back(e.accuracy());
      for (int t = 0; t < kQuestionTypeCount; ++t)
        result.type_accuracy[static_cast<std::size_t>(t)].push_back(e.type_accuracy(static_cast<QuestionType>(t)));
      result.mass.push_back(e.localisation.mass());
      result.iou.push_back(e.localisation.iou());
      result.inside.push_back(e.localisation.inside());
      result.area.push_back(e.localisation.area());
      result.dev_accuracy.push_back(r.dev_accuracy);
      result.train_seconds.push_back(r.train_seconds);
      result.epoch_seconds.push_back(r.train_seconds / static_cast<double>(std::max<std::size_t>(r.epochs, 1)));
      std::fprintf(stderr, "%s seed %llu: test accuracy %.2f%% (best epoch %zu), mass in the evidence %.1f%%\n",
                   name.c_str(), static_cast<unsigned long long>(seed), 100 * e.accuracy(), r.best_epoch,
                   100 * e.localisation.mass());
      if (seed == options.seeds.front()) {
        VqaModel model = load_best(train.out);
        VariantQuestions q{name, {}};
        for (const auto i : shown) q.questions.push_back(question_view(model, data.test, i));
        views.push_back(std::move(q));
      }
    }
  }
  const auto counts = type_counts(data.test);
  nlohmann::json info{{"date", kit::utc_now()},
                      {"command", options.command},
                      {"hardware_threads", std::thread::hardware_concurrency()},
                      {"jobs", options.jobs},
                      {"train_scenes", data.train.scenes.size()},
                      {"train_questions", data.train.examples.size()},
                      {"dev_scenes", data.dev.scenes.size()},
                      {"test_scenes", data.test.scenes.size()},
                      {"test_questions", data.test.examples.size()},
                      {"epochs", options.train.epochs},
                      {"features", options.train.features},
                      {"batch_scenes", options.train.batch_scenes}};
  for (int t = 0; t < kQuestionTypeCount; ++t)
    info[std::string("test_") + question_type_name(static_cast<QuestionType>(t))] = counts[static_cast<std::size_t>(t)];
  const std::string table = results_table_markdown(results);
  kit::write_results(options.out, "VQA results", results_json(results, info), info, table);
  write_report(options.out / "report.html", "sparcon: where VQA attention looks",
               "# Results\n\n" + kit::markdown_list(info) + table, views);
  return results;
}

}  // namespace vqa
