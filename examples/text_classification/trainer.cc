// Training, evaluation, checkpoints and prediction (trainer.h).
#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"
#include "sparcon/continuous.h"
#include "tokenizer.h"

namespace spam {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Dataset prepare_data(std::vector<Message> messages, const DataOptions& options) {
  Dataset d;
  d.messages = std::move(messages);
  for (const auto& m : d.messages) {
    auto tokens = tokenize(m.body);
    if (tokens.size() > options.max_length) tokens.resize(options.max_length);
    d.tokens.push_back(std::move(tokens));
    d.labels.push_back(m.label);
  }
  d.split = stratified_split(d.labels, options.dev_fraction, options.test_fraction, options.split_seed);
  if (options.train_subset > 0 && options.train_subset < d.split.train.size()) {
    // A stratified subset of the training split: split the training labels again, keep one part.
    std::vector<int> train_labels;
    for (auto i : d.split.train) train_labels.push_back(d.labels[i]);
    const double drop = 1 - static_cast<double>(options.train_subset) / static_cast<double>(train_labels.size());
    const Split part = stratified_split(train_labels, 0, drop, options.split_seed + 1);
    std::vector<std::size_t> kept;
    for (auto j : part.train) kept.push_back(d.split.train[j]);
    d.split.train = std::move(kept);
  }
  std::vector<std::vector<std::string>> train_tokens;
  for (auto i : d.split.train) train_tokens.push_back(d.tokens[i]);
  d.vocabulary = Vocabulary(train_tokens, options.min_count, options.max_vocabulary);
  for (const auto& tokens : d.tokens) {
    auto ids = d.vocabulary.encode(tokens, options.max_length);
    if (ids.empty()) ids.push_back(Vocabulary::kUnknown);
    d.ids.push_back(std::move(ids));
  }
  return d;
}

namespace {

struct Batch {
  at::Tensor tokens, lengths, labels;
};

Batch make_batch(const Dataset& data, const std::vector<std::size_t>& indices, std::size_t begin, std::size_t end) {
  std::size_t longest = 1;
  for (std::size_t k = begin; k < end; ++k) longest = std::max(longest, data.ids[indices[k]].size());
  const auto b = static_cast<std::int64_t>(end - begin);
  Batch batch{torch::zeros({b, static_cast<std::int64_t>(longest)}, torch::kLong), torch::empty({b}, torch::kLong),
              torch::empty({b}, torch::kLong)};
  auto tokens = batch.tokens.accessor<std::int64_t, 2>();
  for (std::size_t k = begin; k < end; ++k) {
    const auto& ids = data.ids[indices[k]];
    const auto row = static_cast<std::int64_t>(k - begin);
    for (std::size_t l = 0; l < ids.size(); ++l) tokens[row][static_cast<std::int64_t>(l)] = ids[l];
    batch.lengths[row] = static_cast<std::int64_t>(ids.size());
    batch.labels[row] = data.labels[indices[k]];
  }
  return batch;
}

// Fraction of each document that the attention reads (see trainer.h), summed over the batch.
double sparsity_sum(const AttentionView& view, const at::Tensor& lengths, const Variant& variant) {
  const auto b = lengths.size(0);
  if (!variant.continuous)
    return (view.weights.gt(0).sum(1).to(torch::kDouble) / lengths.to(torch::kDouble)).sum().item<double>();
  if (variant.map == "softmax") return static_cast<double>(b);
  double total = 0;
  for (std::int64_t i = 0; i < b; ++i) {
    const double mu = view.mu[i].item<double>(), s2 = view.sigma2[i].item<double>();
    const double a = sparcon::Density1D<double>(variant.alpha(), mu, s2).half_width();
    const auto length = lengths[i].item<std::int64_t>();
    std::int64_t inside = 0;
    for (std::int64_t l = 0; l < length; ++l) {
      const double t = (static_cast<double>(l) + 0.5) / static_cast<double>(length);
      inside += std::abs(t - mu) < a ? 1 : 0;
    }
    total += static_cast<double>(inside) / static_cast<double>(length);
  }
  return total;
}

// A one-line progress bar on stderr: done/total, throughput and ETA.
class Progress {
 public:
  Progress(bool enabled, std::string label, std::size_t total)
      : enabled_(enabled), label_(std::move(label)), total_(total), start_(Clock::now()) {}
  void update(std::size_t done, std::size_t documents, double loss) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(documents) / elapsed : 0;
    const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
    const int width = 24, filled = static_cast<int>(width * done / std::max<std::size_t>(total_, 1));
    std::fprintf(stderr, "\r  %s [%s%s] %zu/%zu  %.0f docs/s  ETA %2d:%02d  loss %.4f ", label_.c_str(),
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(), done, total_, rate,
                 static_cast<int>(eta) / 60, static_cast<int>(eta) % 60, loss);
    if (done == total_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  std::string label_;
  std::size_t total_;
  Clock::time_point start_;
};

template <class Saveable>
void save_atomically(const Saveable& object, const fs::path& path) {
  const fs::path temporary = path.string() + ".tmp";
  torch::save(object, temporary.string());
  fs::rename(temporary, path);
}

nlohmann::json to_json(const TrainOptions& o) {
  return {{"variant", o.variant}, {"seed", o.seed}, {"epochs", o.epochs}, {"patience", o.patience},
          {"batch_size", o.batch_size}, {"embedding", o.embedding}, {"hidden", o.hidden},
          {"learning_rate", o.learning_rate}, {"weight_decay", o.weight_decay},
          {"initial_scale", o.initial_scale}};
}

}  // namespace

double evaluate(Classifier& model, const Dataset& data, const std::vector<std::size_t>& indices,
                std::size_t batch_size, double* sparsity) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::size_t correct = 0;
  double sparse = 0;
  for (std::size_t begin = 0; begin < indices.size(); begin += batch_size) {
    const std::size_t end = std::min(indices.size(), begin + batch_size);
    const Batch batch = make_batch(data, indices, begin, end);
    AttentionView view;
    const at::Tensor logits = model(batch.tokens, batch.lengths, &view);
    correct += static_cast<std::size_t>(logits.argmax(1).eq(batch.labels).sum().item<std::int64_t>());
    if (sparsity != nullptr) sparse += sparsity_sum(view, batch.lengths, model->options.variant);
  }
  model->train();
  if (sparsity != nullptr) *sparsity = indices.empty() ? 0 : sparse / static_cast<double>(indices.size());
  return indices.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(indices.size());
}

TrainResult train(const Dataset& data, const TrainOptions& options) {
  if (options.out.empty()) throw std::invalid_argument("train: an output directory is required");
  fs::create_directories(options.out);
  torch::manual_seed(options.seed);
  ClassifierOptions model_options{static_cast<std::int64_t>(data.vocabulary.size()), options.embedding,
                                  options.hidden, parse_variant(options.variant), options.initial_scale};
  Classifier model(model_options);
  torch::optim::AdamW optimiser(model->parameters(),
                                torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay));
  TrainResult result;
  result.variant = options.variant;
  result.seed = options.seed;
  double best_dev = -1;
  std::size_t start_epoch = 1;
  const fs::path state_file = options.out / "state.json";
  if (options.resume && fs::exists(state_file)) {
    std::ifstream in(state_file);
    const auto state = nlohmann::json::parse(in);
    if (state.at("options").at("variant") != options.variant || state.at("options").at("seed") != options.seed)
      throw std::runtime_error("resume: " + options.out.string() + " holds a run of " + state.at("options").dump() +
                               ", not of variant " + options.variant + " seed " + std::to_string(options.seed));
    torch::load(model, (options.out / "model.pt").string());
    torch::load(optimiser, (options.out / "optimizer.pt").string());
    for (const auto& e : state.at("history"))
      result.history.push_back({e.at("epoch"), e.at("train_loss"), e.at("dev_accuracy"), e.at("seconds")});
    result.best_epoch = state.at("best_epoch");
    best_dev = state.at("best_dev_accuracy");
    start_epoch = result.history.size() + 1;
    std::fprintf(stderr, "  resuming %s seed %llu after epoch %zu\n", options.variant.c_str(),
                 static_cast<unsigned long long>(options.seed), result.history.size());
  } else {
    std::ostringstream vocabulary;
    for (const auto& token : data.vocabulary.tokens()) vocabulary << token << '\n';
    write_atomically(options.out / "vocabulary.txt", vocabulary.str());
  }
  for (std::size_t epoch = start_epoch; epoch <= options.epochs; ++epoch) {
    if (result.best_epoch > 0 && epoch > result.best_epoch + options.patience) break;  // early stop
    const auto t0 = Clock::now();
    // The order of an epoch depends on (seed, epoch) only, so that a resumed run is the same.
    std::vector<std::size_t> order = data.split.train;
    std::mt19937_64 rng(options.seed * 1000003 + epoch);
    std::shuffle(order.begin(), order.end(), rng);
    const std::size_t batches = (order.size() + options.batch_size - 1) / options.batch_size;
    Progress progress(options.progress, options.variant + " epoch " + std::to_string(epoch), batches);
    double loss_sum = 0;
    for (std::size_t k = 0; k < batches; ++k) {
      const std::size_t begin = k * options.batch_size, end = std::min(order.size(), begin + options.batch_size);
      const Batch batch = make_batch(data, order, begin, end);
      optimiser.zero_grad();
      const at::Tensor loss = torch::nn::functional::cross_entropy(model(batch.tokens, batch.lengths), batch.labels);
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 5.0);
      optimiser.step();
      loss_sum += loss.item<double>();
      progress.update(k + 1, end, loss_sum / static_cast<double>(k + 1));
    }
    const double dev = evaluate(model, data, data.split.dev, options.batch_size);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    result.history.push_back({epoch, loss_sum / static_cast<double>(std::max<std::size_t>(batches, 1)), dev, seconds});
    if (dev > best_dev) {
      best_dev = dev;
      result.best_epoch = epoch;
      save_atomically(model, options.out / "best.pt");
    }
    save_atomically(model, options.out / "model.pt");
    save_atomically(optimiser, options.out / "optimizer.pt");
    nlohmann::json history = nlohmann::json::array();
    for (const auto& e : result.history)
      history.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"dev_accuracy", e.dev_accuracy},
                         {"seconds", e.seconds}});
    const nlohmann::json state{{"options", to_json(options)}, {"history", history}, {"best_epoch", result.best_epoch},
                               {"best_dev_accuracy", best_dev}, {"max_length", options.max_length}};
    write_atomically(state_file, state.dump(2));
    std::fprintf(stderr, "  %s seed %llu epoch %zu: train loss %.4f, dev accuracy %.2f%%, %.1f s\n",
                 options.variant.c_str(), static_cast<unsigned long long>(options.seed), epoch,
                 result.history.back().train_loss, 100 * dev, seconds);
  }
  for (const auto& e : result.history) result.train_seconds += e.seconds;
  torch::load(model, (options.out / "best.pt").string());
  result.dev_accuracy = best_dev;
  result.test_accuracy = evaluate(model, data, data.split.test, options.batch_size, &result.sparsity);
  return result;
}

LoadedModel load_best(const fs::path& out) {
  const fs::path state_file = out / "state.json";
  if (!fs::exists(state_file) || !fs::exists(out / "best.pt") || !fs::exists(out / "vocabulary.txt"))
    throw std::runtime_error("no trained model in " + out.string() + " (state.json, best.pt, vocabulary.txt)");
  std::ifstream in(state_file);
  const auto state = nlohmann::json::parse(in);
  std::vector<std::string> tokens;
  std::ifstream vocabulary(out / "vocabulary.txt");
  for (std::string line; std::getline(vocabulary, line);) tokens.push_back(line);
  LoadedModel loaded;
  loaded.vocabulary = Vocabulary(std::move(tokens));
  loaded.max_length = state.value("max_length", 400);
  const auto& o = state.at("options");
  loaded.model = Classifier(ClassifierOptions{static_cast<std::int64_t>(loaded.vocabulary.size()), o.at("embedding"),
                                              o.at("hidden"), parse_variant(o.at("variant"))});
  torch::load(loaded.model, (out / "best.pt").string());
  loaded.model->eval();
  return loaded;
}

Prediction predict(LoadedModel& loaded, const std::string& text) {
  torch::NoGradGuard no_grad;
  Prediction p{};
  p.tokens = tokenize(text);
  if (p.tokens.size() > loaded.max_length) p.tokens.resize(loaded.max_length);
  auto ids = loaded.vocabulary.encode(p.tokens, loaded.max_length);
  if (ids.empty()) ids.push_back(Vocabulary::kUnknown);
  const auto length = static_cast<std::int64_t>(ids.size());
  const at::Tensor tokens = torch::tensor(ids, torch::kLong).unsqueeze(0);
  const at::Tensor lengths = torch::full({1}, length, torch::kLong);
  AttentionView view;
  const at::Tensor probabilities = torch::softmax(loaded.model(tokens, lengths, &view), 1);
  p.spam_probability = probabilities[0][1].item<double>();
  p.label = p.spam_probability > 0.5 ? 1 : 0;
  const auto& variant = loaded.model->options.variant;
  std::int64_t first = 0, last = length - 1;
  if (!variant.continuous) {
    const at::Tensor nonzero = view.weights[0].gt(0).nonzero();
    if (variant.map != "softmax" && nonzero.size(0) > 0) {
      first = nonzero.min().item<std::int64_t>();
      last = nonzero.max().item<std::int64_t>();
    }
  } else if (variant.map == "sparsemax") {
    const double mu = view.mu[0].item<double>();
    const double a = sparcon::Density1D<double>(2.0, mu, view.sigma2[0].item<double>()).half_width();
    // tokens whose position (l + 1/2)/L lies in [mu - a, mu + a]
    first = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil((mu - a) * length - 0.5)), 0, length - 1);
    last = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((mu + a) * length - 0.5)), first, length - 1);
  }
  p.begin = static_cast<std::size_t>(first);
  p.end = static_cast<std::size_t>(last);
  return p;
}

}  // namespace spam
