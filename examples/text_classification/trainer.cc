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

#include "kit/atomic_file.h"
#include "kit/progress.h"
#include "kit/training_run.h"
#include "sparcon/continuous.h"
#include "tokenizer.h"

namespace spam {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

nlohmann::json to_json(const TrainOptions& o) {
  return {{"variant", o.variant}, {"seed", o.seed}, {"epochs", o.epochs}, {"patience", o.patience},
          {"batch_size", o.batch_size}, {"embedding", o.embedding}, {"hidden", o.hidden},
          {"learning_rate", o.learning_rate}, {"weight_decay", o.weight_decay},
          {"initial_scale", o.initial_scale}};
}

// The model, its optimiser and its run directory: what the steps of train() share.
struct Run {
  Run(const Dataset& data, const TrainOptions& options);
  Classifier model;
  torch::optim::AdamW optimiser;
  kit::TrainingRun directory;
};

// The classifier of the options, its parameters drawn from torch's generator seeded by the
// run's seed.
Classifier seeded_model(const Dataset& data, const TrainOptions& options) {
  torch::manual_seed(options.seed);
  return Classifier(ClassifierOptions{static_cast<std::int64_t>(data.vocabulary.size()), options.embedding,
                                      options.hidden, parse_variant(options.variant), options.initial_scale});
}

std::string run_label(const TrainOptions& options) {
  return options.variant + " seed " + std::to_string(options.seed);
}

// Step 1, start or resume: a fresh run writes the vocabulary beside its checkpoints (predict
// reads it); a resumed one has its model, optimiser and history loaded from the last epoch.
Run::Run(const Dataset& data, const TrainOptions& options)
    : model(seeded_model(data, options)),
      optimiser(model->parameters(),
                torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay)),
      directory({options.out, to_json(options), data_fingerprint(data, options.max_length), {"epochs"},
                 options.resume, run_label(options)},
                *model, optimiser) {
  if (directory.resumed()) return;
  std::ostringstream vocabulary;
  for (const auto& token : data.vocabulary.tokens()) vocabulary << token << '\n';
  kit::write_atomically(options.out / "vocabulary.txt", vocabulary.str());
}

// Step 2, train one epoch: AdamW on cross-entropy over the training split in batches, the
// gradient norm clipped at 5. The order depends on (seed, epoch) only, so that a resumed run
// is the same as an uninterrupted one. Returns the mean batch loss.
double train_epoch(Run& run, const Dataset& data, const TrainOptions& options, std::size_t epoch) {
  std::vector<std::size_t> order = data.split.train;
  std::mt19937_64 rng(options.seed * 1000003 + epoch);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t batches = (order.size() + options.batch_size - 1) / options.batch_size;
  kit::Progress progress(options.progress, options.variant + " epoch " + std::to_string(epoch), batches, "docs");
  double loss_sum = 0;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::size_t begin = k * options.batch_size, end = std::min(order.size(), begin + options.batch_size);
    const Batch batch = make_batch(data, order, begin, end);
    run.optimiser.zero_grad();
    const at::Tensor loss = torch::nn::functional::cross_entropy(run.model(batch.tokens, batch.lengths), batch.labels);
    loss.backward();
    torch::nn::utils::clip_grad_norm_(run.model->parameters(), 5.0);
    run.optimiser.step();
    loss_sum += loss.item<double>();
    progress.update(k + 1, end, loss_sum / static_cast<double>(k + 1));
  }
  return loss_sum / static_cast<double>(std::max<std::size_t>(batches, 1));
}

// Step 4, save the epoch: its checkpoint set and state.json (kit::TrainingRun::save_epoch).
void save_epoch(Run& run, const TrainOptions& options, const kit::EpochRecord& record) {
  run.directory.save_epoch(record, *run.model, run.optimiser);
  std::fprintf(stderr, "  %s epoch %zu: train loss %.4f, dev accuracy %.2f%%, %.1f s\n", run_label(options).c_str(),
               record.epoch, record.train_loss, 100 * record.dev_score, record.seconds);
}

// The best epoch's model on the test split, with the history of the run.
TrainResult test_best(Run& run, const Dataset& data, const TrainOptions& options) {
  TrainResult result;
  result.variant = options.variant;
  result.seed = options.seed;
  const kit::RunState& state = run.directory.state();
  for (const auto& e : state.history) {
    result.history.push_back({e.epoch, e.train_loss, e.dev_score, e.seconds});
    result.train_seconds += e.seconds;
  }
  if (result.history.empty()) throw std::invalid_argument("train: epochs = 0; at least one epoch is needed");
  result.best_epoch = state.best_epoch;
  result.dev_accuracy = state.best_score;
  run.directory.load_best(*run.model);
  result.test_accuracy = evaluate(run.model, data, data.split.test, options.batch_size, &result.sparsity);
  return result;
}

}  // namespace

double evaluate(Classifier& model, const Dataset& data, const std::vector<std::size_t>& indices,
                std::size_t batch_size, double* sparsity) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
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
  model->train(was_training);
  if (sparsity != nullptr) *sparsity = indices.empty() ? 0 : sparse / static_cast<double>(indices.size());
  return indices.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(indices.size());
}

TrainResult train(const Dataset& data, const TrainOptions& options) {
  if (options.out.empty()) throw std::invalid_argument("train: an output directory is required");
  Run run(data, options);  // 1. start or resume
  for (std::size_t epoch = run.directory.next_epoch(); epoch <= options.epochs; ++epoch) {
    if (run.directory.patience_exhausted(epoch, options.patience)) break;  // early stop
    const auto start = Clock::now();
    const double train_loss = train_epoch(run, data, options, epoch);                   // 2. train one epoch
    const double dev = evaluate(run.model, data, data.split.dev, options.batch_size);  // 3. evaluate
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    save_epoch(run, options, {epoch, train_loss, dev, seconds});                       // 4. save the epoch
  }
  return test_best(run, data, options);  // the best epoch on the test split
}

LoadedModel load_best(const fs::path& out) {
  const kit::RunDirectory directory(out);
  if (!directory.has_state())
    throw std::runtime_error("no trained model in " + out.string() + " (no state.json): train one first");
  const kit::RunState state = directory.read();  // kit::DamagedFile when state.json is damaged
  const fs::path best = directory.checkpoint_file(state, "best");
  // vocabulary.txt must be the vocabulary the run was trained on (its size and hash are in
  // state.json): a truncated one would give a model of another size, or wrong token ids.
  const fs::path vocabulary_file = out / "vocabulary.txt";
  if (!fs::is_regular_file(vocabulary_file)) throw kit::DamagedFile(vocabulary_file, "missing: the run's vocabulary");
  std::vector<std::string> tokens;
  std::ifstream vocabulary(vocabulary_file);
  if (!vocabulary) throw std::runtime_error("cannot read " + vocabulary_file.string());
  for (std::string line; std::getline(vocabulary, line);) tokens.push_back(line);
  const auto recorded_size = state.data.find("vocabulary");
  const auto recorded_hash = state.data.find("vocabulary_fnv1a");
  if (tokens.empty() ||
      (recorded_size != state.data.end() && *recorded_size != tokens.size()) ||
      (recorded_hash != state.data.end() && *recorded_hash != vocabulary_fnv1a(tokens)))
    throw kit::DamagedFile(vocabulary_file, std::to_string(tokens.size()) + " tokens, not the vocabulary of " +
                                                directory.state_file().string() +
                                                (recorded_size == state.data.end() ? std::string()
                                                                                   : " (" + recorded_size->dump() + " tokens)"));
  LoadedModel loaded;
  loaded.vocabulary = Vocabulary(std::move(tokens));
  try {
    loaded.max_length = state.data.at("max_length");  // what the run was trained on
    const auto& o = state.options;
    const std::int64_t embedding = o.at("embedding"), hidden = o.at("hidden");
    if (loaded.max_length == 0 || embedding <= 0 || hidden <= 0) throw std::invalid_argument("sizes must be positive");
    loaded.model = Classifier(ClassifierOptions{static_cast<std::int64_t>(loaded.vocabulary.size()), embedding, hidden,
                                                parse_variant(o.at("variant"))});
  } catch (const nlohmann::json::exception& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a missing or malformed entry: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a malformed option: ") + e.what());
  }
  kit::load_checkpoint(*loaded.model, best);  // kit::DamagedFile when the checkpoint is damaged
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
