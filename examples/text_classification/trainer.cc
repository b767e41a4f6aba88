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
#include <unordered_set>

#include "atomic_file.h"
#include "sparcon/continuous.h"
#include "tokenizer.h"

namespace spam {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Dataset prepare_data(std::vector<Message> messages, const DataOptions& options) {
  Dataset d;
  std::unordered_set<std::string> seen;  // the kept tokens of each message, space-separated
  for (auto& m : messages) {
    auto tokens = tokenize(m.body);
    if (tokens.size() > options.max_length) tokens.resize(options.max_length);
    std::string key;
    for (const auto& t : tokens) key.append(t).push_back(' ');  // tokens never hold a space
    if (!seen.insert(std::move(key)).second) {
      ++d.duplicates;
      continue;
    }
    d.labels.push_back(m.label);
    d.tokens.push_back(std::move(tokens));
    d.messages.push_back(std::move(m));
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

// Serialised in memory, then written by write_atomically (fsync, rename, fsync of the folder).
template <class Saveable>
void save_atomically(const Saveable& object, const fs::path& path) {
  std::ostringstream bytes;
  torch::save(object, bytes);
  write_atomically(path, bytes.str());
}

// state.json of a run directory, parsed; errors name the file.
nlohmann::json read_state(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file.string() + " is not valid JSON (" + e.what() + "): the run directory is damaged");
  }
}

// The checkpoint file of `state` named by `key` ("model", "optimizer" or "best").
fs::path checkpoint_file(const fs::path& out, const nlohmann::json& state, const char* key) {
  try {
    return out / state.at("checkpoint").at(key).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error((out / "state.json").string() + " names no '" + key +
                             "' checkpoint (a run of an older version of this program?)");
  }
}

// What a run was trained on, stored in state.json: a resumed run must see the same data.
nlohmann::json data_fingerprint(const Dataset& data, std::size_t max_length) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a of the vocabulary, one token per line
  for (const auto& token : data.vocabulary.tokens())
    for (const char c : token + '\n') hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return {{"max_length", max_length},
          {"documents", data.labels.size()},
          {"train_documents", data.split.train.size()},
          {"dev_documents", data.split.dev.size()},
          {"test_documents", data.split.test.size()},
          {"vocabulary", data.vocabulary.size()},
          {"vocabulary_fnv1a", hash}};
}

// Throws unless the stored and the requested values agree on every key of `requested` (but
// `except`), naming the first that differs.
void check_same(const fs::path& out, const char* what, const nlohmann::json& stored, const nlohmann::json& requested,
                const char* except = "") {
  for (const auto& [key, value] : requested.items()) {
    if (key == except) continue;
    const auto found = stored.find(key);
    if (found == stored.end() || *found != value)
      throw std::runtime_error("resume: " + out.string() + " was trained with " + what + " " + key + " = " +
                               (found == stored.end() ? std::string("(none)") : found->dump()) +
                               ", this run has " + key + " = " + value.dump() +
                               ": use the same options, or another --out");
  }
}

// Removes the checkpoint files of `out` that `state` does not name (earlier epochs), and
// temporary files that an interrupted write left.
void remove_stale_checkpoints(const fs::path& out, const nlohmann::json& state) {
  std::vector<std::string> named;
  for (const char* key : {"model", "optimizer", "best"}) named.push_back(checkpoint_file(out, state, key).filename());
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    const bool checkpoint = entry.path().extension() == ".pt" &&
                            (name.rfind("model-", 0) == 0 || name.rfind("optimizer-", 0) == 0 || name.rfind("best-", 0) == 0);
    const bool temporary = name.find(".tmp.") != std::string::npos;
    if ((checkpoint && std::find(named.begin(), named.end(), name) == named.end()) || temporary) {
      std::error_code ignored;
      fs::remove(entry.path(), ignored);
    }
  }
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
  const nlohmann::json fingerprint = data_fingerprint(data, options.max_length);
  nlohmann::json checkpoint;  // the files of the last saved epoch, as named in state.json
  if (fs::exists(state_file) && !options.resume)
    throw std::runtime_error("train: " + options.out.string() +
                             " already holds a run (state.json): pass --resume to continue it, or choose another --out");
  if (options.resume && fs::exists(state_file)) {
    const auto state = read_state(state_file);
    try {
      // Every option but the number of epochs must match (a run may be given more epochs).
      check_same(options.out, "option", state.at("options"), to_json(options), "epochs");
      check_same(options.out, "data", state.at("data"), fingerprint);
      torch::load(model, checkpoint_file(options.out, state, "model").string());
      torch::load(optimiser, checkpoint_file(options.out, state, "optimizer").string());
      for (const auto& e : state.at("history"))
        result.history.push_back({e.at("epoch"), e.at("train_loss"), e.at("dev_accuracy"), e.at("seconds")});
      result.best_epoch = state.at("best_epoch");
      best_dev = state.at("best_dev_accuracy");
      checkpoint = state.at("checkpoint");
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(state_file.string() + " lacks an entry (" + e.what() + "): the run directory is damaged");
    }
    start_epoch = result.history.size() + 1;
    std::fprintf(stderr, "  resuming %s seed %llu after epoch %zu\n", options.variant.c_str(),
                 static_cast<unsigned long long>(options.seed), result.history.size());
  } else {
    if (options.resume)
      std::fprintf(stderr, "  no run in %s yet: starting %s seed %llu\n", options.out.c_str(),
                   options.variant.c_str(), static_cast<unsigned long long>(options.seed));
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
    // The epoch's files get new names; state.json, written last, names the ones that belong
    // together, so an interruption at any point leaves the previous epoch's complete set.
    const std::string tag = std::to_string(epoch) + ".pt";
    if (dev > best_dev) {
      best_dev = dev;
      result.best_epoch = epoch;
      save_atomically(model, options.out / ("best-" + tag));
      checkpoint["best"] = "best-" + tag;
    }
    save_atomically(model, options.out / ("model-" + tag));
    save_atomically(optimiser, options.out / ("optimizer-" + tag));
    checkpoint["model"] = "model-" + tag;
    checkpoint["optimizer"] = "optimizer-" + tag;
    nlohmann::json history = nlohmann::json::array();
    for (const auto& e : result.history)
      history.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"dev_accuracy", e.dev_accuracy},
                         {"seconds", e.seconds}});
    const nlohmann::json state{{"options", to_json(options)}, {"data", fingerprint}, {"history", history},
                               {"best_epoch", result.best_epoch}, {"best_dev_accuracy", best_dev},
                               {"checkpoint", checkpoint}};
    write_atomically(state_file, state.dump(2));
    remove_stale_checkpoints(options.out, state);
    std::fprintf(stderr, "  %s seed %llu epoch %zu: train loss %.4f, dev accuracy %.2f%%, %.1f s\n",
                 options.variant.c_str(), static_cast<unsigned long long>(options.seed), epoch,
                 result.history.back().train_loss, 100 * dev, seconds);
  }
  for (const auto& e : result.history) result.train_seconds += e.seconds;
  if (result.history.empty()) throw std::invalid_argument("train: epochs = 0; at least one epoch is needed");
  torch::load(model, (options.out / checkpoint.at("best").get<std::string>()).string());
  result.dev_accuracy = best_dev;
  result.test_accuracy = evaluate(model, data, data.split.test, options.batch_size, &result.sparsity);
  return result;
}

LoadedModel load_best(const fs::path& out) {
  const fs::path state_file = out / "state.json";
  if (!fs::exists(state_file) || !fs::exists(out / "vocabulary.txt"))
    throw std::runtime_error("no trained model in " + out.string() + " (state.json and vocabulary.txt)");
  const auto state = read_state(state_file);
  const fs::path best = checkpoint_file(out, state, "best");
  std::vector<std::string> tokens;
  std::ifstream vocabulary(out / "vocabulary.txt");
  for (std::string line; std::getline(vocabulary, line);) tokens.push_back(line);
  LoadedModel loaded;
  loaded.vocabulary = Vocabulary(std::move(tokens));
  try {
    loaded.max_length = state.at("data").at("max_length");  // what the run was trained on
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(state_file.string() + " lacks an entry (" + e.what() + "): the run directory is damaged");
  }
  const auto& o = state.at("options");
  loaded.model = Classifier(ClassifierOptions{static_cast<std::int64_t>(loaded.vocabulary.size()), o.at("embedding"),
                                              o.at("hidden"), parse_variant(o.at("variant"))});
  torch::load(loaded.model, best.string());
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
