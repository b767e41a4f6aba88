// The experiment driver (experiment.h).
#include "experiment.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "kit/run_info.h"
#include "sparcon/continuous.h"

namespace spam {

DocumentView document_view(Classifier& model, const Dataset& data, std::size_t index) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const auto& ids = data.ids[index];
  const auto length = static_cast<std::int64_t>(ids.size());
  AttentionView view;
  const at::Tensor logits =
      model(torch::tensor(ids, torch::kLong).unsqueeze(0), torch::full({1}, length, torch::kLong), &view);
  model->train(was_training);
  DocumentView d;
  d.id = data.messages[index].group + "/" + data.messages[index].id;
  d.label = data.labels[index];
  d.spam_probability = torch::softmax(logits, 1)[0][1].item<double>();
  d.predicted = d.spam_probability > 0.5 ? 1 : 0;
  d.tokens = data.tokens[index];
  if (d.tokens.empty()) d.tokens.push_back("<empty>");
  const auto& variant = model->options.variant;
  if (!variant.continuous) {
    const at::Tensor w = view.weights[0].contiguous();
    d.discrete_weights.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
  } else {
    const double mu = view.mu[0].item<double>(), s2 = view.sigma2[0].item<double>();
    const sparcon::Density1D<double> density(variant.alpha(), mu, s2);
    for (std::int64_t l = 0; l < length; ++l)
      d.density.push_back(static_cast<float>(density.pdf((static_cast<double>(l) + 0.5) / static_cast<double>(length))));
    if (std::isfinite(density.half_width())) {
      d.support_begin = mu - density.half_width();
      d.support_end = mu + density.half_width();
    }
  }
  return d;
}

std::vector<VariantResult> run_experiment(const Dataset& data, const ExperimentOptions& options) {
  std::vector<VariantResult> results;
  std::vector<VariantDocuments> documents;
  // The documents shown: the first ceil(report_documents / 2) spam and as many ham messages of
  // the test split.
  std::vector<std::size_t> shown;
  for (int label : {1, 0}) {
    std::size_t taken = 0;
    for (auto i : data.split.test)
      if (data.labels[i] == label && taken < (options.report_documents + 1) / 2) {
        shown.push_back(i);
        ++taken;
      }
  }
  for (const auto& name : options.variants) {
    const Variant variant = parse_variant(name);
    VariantResult result{name, variant.continuous ? "continuous" : "discrete", {}, {}, {}};
    for (const auto seed : options.seeds) {
      TrainOptions train = options.train;
      train.variant = name;
      train.seed = seed;
      train.out = options.out / name / ("seed" + std::to_string(seed));
      train.resume = true;  // a finished run on disk is reused, an interrupted one continued
      const TrainResult r = spam::train(data, train);
      result.accuracies.push_back(r.test_accuracy);
      result.train_seconds.push_back(r.train_seconds);
      result.sparsity.push_back(r.sparsity);
      std::fprintf(stderr, "%s seed %llu: test accuracy %.2f%% (best epoch %zu), sparsity %.1f%%\n", name.c_str(),
                   static_cast<unsigned long long>(seed), 100 * r.test_accuracy, r.best_epoch, 100 * r.sparsity);
      if (seed == options.seeds.front()) {
        LoadedModel loaded = load_best(train.out);
        VariantDocuments shown_documents{name, {}};
        for (auto i : shown) shown_documents.documents.push_back(document_view(loaded.model, data, i));
        documents.push_back(std::move(shown_documents));
      }
    }
    results.push_back(std::move(result));
  }
  const nlohmann::json info{{"date", kit::utc_now()},
                            {"command", options.command},
                            {"hardware_threads", std::thread::hardware_concurrency()},
                            {"jobs", options.jobs},
                            {"duplicates_dropped", data.duplicates},
                            {"train_documents", data.split.train.size()},
                            {"dev_documents", data.split.dev.size()},
                            {"test_documents", data.split.test.size()},
                            {"vocabulary", data.vocabulary.size()},
                            {"epochs", options.train.epochs},
                            {"hidden", options.train.hidden},
                            {"embedding", options.train.embedding},
                            {"max_length", options.train.max_length}};
  write_results(options.out, results, info);
  write_html_report(options.out / "report.html", "sparcon: attention on the SpamAssassin corpus", documents,
                    results_table_markdown(results));
  return results;
}

}  // namespace spam
