// Training, evaluation, checkpoints and prediction (trainer.h).
#include "trainer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <utility>
#include <stdexcept>

#include "kit/progress.h"
#include "kit/split.h"
#include "kit/training_run.h"
#include "metrics.h"

namespace g2p {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

nlohmann::json to_json(const TrainOptions& o) {
  return {{"variant", o.variant},     {"seed", o.seed},     {"epochs", o.epochs},
          {"patience", o.patience},   {"batch_size", o.batch_size}, {"embedding", o.embedding},
          {"hidden", o.hidden},       {"basis", o.basis},   {"learning_rate", o.learning_rate}};
}

std::string run_label(const TrainOptions& options) { return options.variant + " seed " + std::to_string(options.seed); }

// The model, its optimiser and its run directory: what the steps of train() share.
struct Run {
  Run(const Dataset& data, const TrainOptions& options)
      : model(seeded_model(static_cast<std::int64_t>(data.letters.size()),
                           static_cast<std::int64_t>(data.phonemes.size()), options)),
        optimiser(model->parameters(), torch::optim::AdamOptions(options.learning_rate)),
        directory({options.out, to_json(options), data_fingerprint(data), {"epochs", "beam"}, options.resume,
                   run_label(options), "dev_word_accuracy"},
                  *model, optimiser) {}
  Seq2Seq model;
  torch::optim::Adam optimiser;
  kit::TrainingRun directory;
};

std::vector<const std::vector<int>*> letters_of(const Dataset& data, const std::vector<std::size_t>& indices) {
  std::vector<const std::vector<int>*> words;
  words.reserve(indices.size());
  for (const auto i : indices) words.push_back(&data.encoded[i].letters);
  return words;
}

DecodeScore score(const Dataset& data, const std::vector<std::size_t>& indices,
                  const std::vector<std::vector<int>>& outputs, double seconds) {
  ErrorRates rates;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const Entry& entry = data.entries[indices[k]];
    rates.add(score_word(decode_phonemes(data.phonemes, outputs[k]), entry.pronunciations));
  }
  return {rates.per(), rates.wer(), seconds > 0 ? static_cast<double>(indices.size()) / seconds : 0.0};
}

// Step 2, train one epoch: Adam on the teacher-forcing loss over the training pairs in batches,
// the gradient norm clipped at 5. The order depends on (seed, epoch) only, so that a resumed run
// is the same as an uninterrupted one (the model has no dropout). Returns the mean batch loss.
double train_epoch(Run& run, const Dataset& data, const TrainOptions& options, std::size_t epoch) {
  std::vector<std::pair<std::size_t, std::size_t>> order = data.train_pairs;
  std::mt19937_64 rng(options.seed * 1000003 + epoch);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[kit::uniform_below(rng, i)]);
  const std::size_t batches = (order.size() + options.batch_size - 1) / options.batch_size;
  kit::Progress progress(options.progress, options.variant + " epoch " + std::to_string(epoch), batches, "words");
  double loss_sum = 0;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::size_t begin = k * options.batch_size, end = std::min(order.size(), begin + options.batch_size);
    run.optimiser.zero_grad();
    const at::Tensor loss = pair_loss(run.model, data, {order.begin() + static_cast<std::ptrdiff_t>(begin),
                                                        order.begin() + static_cast<std::ptrdiff_t>(end)});
    loss.backward();
    torch::nn::utils::clip_grad_norm_(run.model->parameters(), 5.0);
    run.optimiser.step();
    loss_sum += loss.item<double>();
    progress.update(k + 1, end, loss_sum / static_cast<double>(k + 1));
  }
  return loss_sum / static_cast<double>(std::max<std::size_t>(batches, 1));
}

}  // namespace

Seq2Seq seeded_model(std::int64_t letters, std::int64_t phonemes, const TrainOptions& options) {
  torch::manual_seed(options.seed);
  ModelOptions o;
  o.letters = letters;
  o.phonemes = phonemes;
  o.embedding = options.embedding;
  o.hidden = options.hidden;
  o.basis = options.basis;
  o.variant = parse_variant(options.variant);
  return Seq2Seq(o);
}

at::Tensor pair_loss(Seq2Seq& model, const Dataset& data, const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  std::vector<const std::vector<int>*> words;
  std::size_t longest = 0;
  for (const auto& [entry, k] : pairs) {
    words.push_back(&data.encoded[entry].letters);
    longest = std::max(longest, data.encoded[entry].references[k].size() + 1);
  }
  const LetterBatch batch = letter_batch(words);
  const auto b = static_cast<std::int64_t>(pairs.size()), t = static_cast<std::int64_t>(longest);
  at::Tensor inputs = torch::full({b, t}, kPhonemePad, torch::kLong), targets = torch::full({b, t}, kPhonemePad, torch::kLong);
  auto in = inputs.accessor<std::int64_t, 2>();
  auto out = targets.accessor<std::int64_t, 2>();
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& reference = data.encoded[pairs[static_cast<std::size_t>(i)].first].references[pairs[static_cast<std::size_t>(i)].second];
    const auto n = static_cast<std::int64_t>(reference.size());
    in[i][0] = kPhonemeStart;
    for (std::int64_t j = 0; j < n; ++j) {  // n < t: t is the longest reference + 1
      in[i][j + 1] = reference[static_cast<std::size_t>(j)];
      out[i][j] = reference[static_cast<std::size_t>(j)];
    }
    out[i][n] = kPhonemeEnd;
  }
  const at::Tensor logits = model(batch.letters, batch.lengths, inputs);
  return torch::nn::functional::cross_entropy(logits.reshape({b * t, -1}), targets.reshape({b * t}),
                                              torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kPhonemePad));
}

DecodeScore evaluate_greedy(Seq2Seq& model, const Dataset& data, const std::vector<std::size_t>& indices,
                            AlignmentStats* alignment) {
  const auto words = letters_of(data, indices);
  std::vector<std::vector<StepAttention>> attention;
  const auto start = Clock::now();
  const auto outputs = greedy_decode(model, words, 256, alignment != nullptr ? &attention : nullptr);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (alignment != nullptr)
    for (std::size_t k = 0; k < words.size(); ++k) alignment->add_word(attention[k], words[k]->size());
  return score(data, indices, outputs, seconds);
}

DecodeScore evaluate_beam(Seq2Seq& model, const Dataset& data, const std::vector<std::size_t>& indices,
                          std::size_t beam) {
  const auto words = letters_of(data, indices);
  const auto start = Clock::now();
  const auto outputs = beam_decode(model, words, beam);
  return score(data, indices, outputs, std::chrono::duration<double>(Clock::now() - start).count());
}

TrainResult train(const Dataset& data, const TrainOptions& options) {
  if (options.out.empty()) throw std::invalid_argument("train: an output directory is required");
  if (data.train_pairs.empty() || data.split.dev.empty() || data.split.test.empty())
    throw std::invalid_argument("train: the training, dev and test words must not be empty");
  Run run(data, options);  // 1. start or resume
  for (std::size_t epoch = run.directory.next_epoch(); epoch <= options.epochs; ++epoch) {
    if (run.directory.patience_exhausted(epoch, options.patience)) break;  // early stop
    const auto start = Clock::now();
    const double train_loss = train_epoch(run, data, options, epoch);                 // 2. train one epoch
    const double dev = 1.0 - evaluate_greedy(run.model, data, data.split.dev).wer;    // 3. evaluate
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.directory.save_epoch({epoch, train_loss, dev, seconds}, *run.model, run.optimiser);  // 4. save
    std::fprintf(stderr, "  %s epoch %zu: train loss %.4f, dev word accuracy %.2f%%, %.1f s\n",
                 run_label(options).c_str(), epoch, train_loss, 100 * dev, seconds);
  }
  // The best epoch on the test words.
  const kit::RunState& state = run.directory.state();
  if (state.history.empty()) throw std::invalid_argument("train: epochs = 0; at least one epoch is needed");
  TrainResult result;
  result.variant = options.variant;
  result.seed = options.seed;
  result.best_epoch = state.best_epoch;
  result.epochs = state.history.size();
  result.dev_word_accuracy = state.best_score;
  for (const auto& e : state.history) result.train_seconds += e.seconds;
  run.directory.load_best(*run.model);
  result.greedy = evaluate_greedy(run.model, data, data.split.test, &result.alignment);
  result.beam = evaluate_beam(run.model, data, data.split.test, options.beam);
  return result;
}

LoadedModel load_best(const fs::path& out) {
  const kit::RunDirectory directory(out, "dev_word_accuracy");
  if (!directory.has_state())
    throw std::runtime_error("no trained model in " + out.string() + " (no state.json): train one first");
  const kit::RunState state = directory.read();  // kit::DamagedFile when state.json is damaged
  const fs::path best = directory.checkpoint_file(state, "best");
  std::optional<LoadedModel> loaded;
  try {
    Vocabulary letters = vocabulary_from_symbols(state.data.at("letters").get<std::vector<std::string>>(), 2);
    Vocabulary phonemes = vocabulary_from_symbols(state.data.at("phonemes").get<std::vector<std::string>>(), 3);
    TrainOptions o;
    o.variant = state.options.at("variant");
    o.embedding = state.options.at("embedding");
    o.hidden = state.options.at("hidden");
    o.basis = state.options.at("basis");
    Seq2Seq model = seeded_model(static_cast<std::int64_t>(letters.size()), static_cast<std::int64_t>(phonemes.size()), o);
    loaded.emplace(LoadedModel{model, std::move(letters), std::move(phonemes)});
  } catch (const nlohmann::json::exception& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a missing or malformed entry: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a malformed entry: ") + e.what());
  }
  kit::load_checkpoint(*loaded->model, best);  // kit::DamagedFile when the checkpoint is damaged
  loaded->model->eval();
  return std::move(*loaded);
}

Prediction predict(LoadedModel& loaded, const std::string& word, std::size_t beam) {
  std::string upper = word;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!is_word(upper))
    throw std::invalid_argument("predict: '" + word + "' is not a word of letters and apostrophes");
  const std::vector<int> letters = encode_word(loaded.letters, upper);
  if (beam <= 1) {  // greedy decoding records the attention as it goes
    std::vector<std::vector<StepAttention>> attention;
    const std::vector<int> output = greedy_decode(loaded.model, {&letters}, 1, &attention)[0];
    return {upper, decode_phonemes(loaded.phonemes, output), std::move(attention[0])};
  }
  const std::vector<int> output = beam_decode(loaded.model, {&letters}, beam)[0];
  return {upper, decode_phonemes(loaded.phonemes, output), attend_outputs(loaded.model, letters, output)};
}

}  // namespace g2p
