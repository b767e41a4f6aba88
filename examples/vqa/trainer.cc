// Training, evaluation, checkpoints and prediction (trainer.h).
#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>

#include "kit/progress.h"
#include "kit/split.h"
#include "kit/training_run.h"
#include "vocabulary.h"

namespace vqa {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kScore = "dev_accuracy";

nlohmann::json to_json(const TrainOptions& o) {
  return {{"variant", o.variant},           {"seed", o.seed},         {"epochs", o.epochs},
          {"patience", o.patience},         {"batch_scenes", o.batch_scenes}, {"features", o.features},
          {"learning_rate", o.learning_rate}};
}

std::string run_label(const TrainOptions& options) { return options.variant + " seed " + std::to_string(options.seed); }

struct Run {
  Run(const Datasets& data, const TrainOptions& options)
      : model(seeded_model(options)),
        optimiser(model->parameters(), torch::optim::AdamOptions(options.learning_rate)),
        directory({options.out, to_json(options), datasets_fingerprint(data), {"epochs"}, options.resume,
                   run_label(options), kScore},
                  *model, optimiser) {}
  VqaModel model;
  torch::optim::Adam optimiser;
  kit::TrainingRun directory;
};

// Each scene's examples (examples are stored scene by scene).
std::vector<std::vector<std::size_t>> examples_by_scene(const SplitData& data) {
  std::vector<std::vector<std::size_t>> out(data.scenes.size());
  for (std::size_t i = 0; i < data.examples.size(); ++i) out[data.examples[i].scene].push_back(i);
  return out;
}

// The examples of scenes [begin, end) of an order of scenes.
std::vector<std::size_t> batch_examples(const std::vector<std::vector<std::size_t>>& by_scene,
                                        const std::vector<std::size_t>& order, std::size_t begin, std::size_t end) {
  std::vector<std::size_t> out;
  for (std::size_t k = begin; k < end; ++k) out.insert(out.end(), by_scene[order[k]].begin(), by_scene[order[k]].end());
  return out;
}

// Step 2, train one epoch: Adam over batches of scenes in an order that depends on (seed, epoch)
// only, so that a resumed run equals an uninterrupted one (the model has no dropout). Returns
// the mean batch loss.
double train_epoch(Run& run, const SplitData& data, const TrainOptions& options, std::size_t epoch) {
  const auto by_scene = examples_by_scene(data);
  std::vector<std::size_t> order(data.scenes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(options.seed * 1000003 + epoch);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[kit::uniform_below(rng, i)]);
  const std::size_t batches = (order.size() + options.batch_scenes - 1) / options.batch_scenes;
  kit::Progress progress(options.progress, options.variant + " epoch " + std::to_string(epoch), batches, "questions");
  run.model->train();
  double loss_sum = 0;
  std::size_t questions = 0;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::size_t begin = k * options.batch_scenes, end = std::min(order.size(), begin + options.batch_scenes);
    const auto examples = batch_examples(by_scene, order, begin, end);
    if (examples.empty()) continue;
    run.optimiser.zero_grad();
    const at::Tensor loss = batch_loss(run.model, data, examples);
    loss.backward();
    torch::nn::utils::clip_grad_norm_(run.model->parameters(), 5.0);
    run.optimiser.step();
    loss_sum += loss.item<double>();
    questions += examples.size();
    progress.update(k + 1, questions, loss_sum / static_cast<double>(k + 1));
  }
  return loss_sum / static_cast<double>(std::max<std::size_t>(batches, 1));
}

}  // namespace

Datasets make_datasets(const FashionMnist& train_items, const FashionMnist& test_items, const DataOptions& options,
                       std::size_t dev_scenes) {
  DataOptions o = options;
  o.train_scenes += dev_scenes;
  Datasets d;
  d.train = make_split(train_items, o);
  d.dev = split_off(d.train, options.train_scenes);
  d.test = make_split(test_items, o);
  return d;
}

nlohmann::json datasets_fingerprint(const Datasets& data) {
  return {{"train", data_fingerprint(data.train)},           {"dev", data_fingerprint(data.dev)},
          {"test", data_fingerprint(data.test)},             {"train_questions", data.train.examples.size()},
          {"words", word_vocabulary().fingerprint()},        {"answers", answer_vocabulary().fingerprint()}};
}

double Evaluation::accuracy() const {
  return questions > 0 ? static_cast<double>(correct) / static_cast<double>(questions)
                       : std::numeric_limits<double>::quiet_NaN();
}

double Evaluation::type_accuracy(QuestionType type) const {
  const auto t = static_cast<std::size_t>(type);
  return type_questions[t] > 0 ? static_cast<double>(type_correct[t]) / static_cast<double>(type_questions[t])
                               : std::numeric_limits<double>::quiet_NaN();
}

VqaModel seeded_model(const TrainOptions& options) {
  torch::manual_seed(options.seed);
  ModelOptions o;
  o.variant = parse_variant(options.variant);
  o.features = options.features;
  o.words = static_cast<std::int64_t>(word_vocabulary().size());
  o.answers = static_cast<std::int64_t>(answer_vocabulary().size());
  return VqaModel(o);
}

at::Tensor batch_loss(VqaModel& model, const SplitData& data, const std::vector<std::size_t>& indices) {
  const Batch batch = make_batch(data, indices);
  return torch::nn::functional::cross_entropy(model(batch), batch.answers);
}

kit::Matrix view_map(const AttentionView& view, std::int64_t i) {
  const at::Tensor w = view.weights[i].to(torch::kDouble).contiguous();
  kit::Matrix m{static_cast<std::size_t>(w.size(0)), static_cast<std::size_t>(w.size(1)), {}};
  m.values.assign(w.data_ptr<double>(), w.data_ptr<double>() + w.numel());
  return m;
}

void draw_attention(const AttentionView& view, std::int64_t i, const Variant& variant, QuestionView& out) {
  out.weights = view_map(view, i);
  out.densities.clear();
  out.mixture_weights.clear();
  if (!variant.continuous()) return;
  for (std::int64_t k = 0; k < view.mean.size(1); ++k) {
    out.densities.push_back(view_density(view, i, k, variant));
    out.mixture_weights.push_back(view.weight[i][k].item<double>());
  }
}

Density view_density(const AttentionView& view, std::int64_t i, std::int64_t k, const Variant& variant) {
  const at::Tensor mu = view.mean[i][k].to(torch::kDouble), s = view.sigma[i][k].to(torch::kDouble).contiguous();
  const double* sp = s.data_ptr<double>();
  const double off = 0.5 * (sp[1] + sp[2]);  // float rounding may leave the two apart
  return Density(variant.kind == "mixture" ? 1.0 : variant.alpha, {mu[0].item<double>(), mu[1].item<double>()},
                 {sp[0], off, off, sp[3]});
}

QuestionLocalisation localise(const AttentionView& view, std::int64_t i, const Variant& variant,
                              const std::vector<Rect>& evidence) {
  QuestionLocalisation out;
  if (!variant.continuous()) {
    const kit::Matrix map = view_map(view, i);
    out.mass = grid_mass(map, evidence);
    if (variant.alpha > 1) out.support = grid_support_overlap(map, evidence);
    return out;
  }
  for (std::int64_t k = 0; k < view.mean.size(1); ++k) {
    const Density density = view_density(view, i, k, variant);
    out.mass += view.weight[i][k].item<double>() * density_mass_in(density, evidence);
    if (density.alpha() > 1) out.support = ellipse_support_overlap(density, evidence);  // K = 1 only
  }
  return out;
}

Evaluation evaluate(VqaModel& model, const SplitData& data, bool localisation) {
  torch::NoGradGuard no_grad;
  model->eval();
  const Variant& variant = model->options.variant;
  const auto by_scene = examples_by_scene(data);
  std::vector<std::size_t> order(data.scenes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  Evaluation e;
  const auto start = Clock::now();
  const int canvas = data.scenes.empty() ? 84 : static_cast<int>(data.scenes.front().image.height);
  for (std::size_t begin = 0; begin < order.size(); begin += 64) {
    const auto examples = batch_examples(by_scene, order, begin, std::min(order.size(), begin + 64));
    if (examples.empty()) continue;
    const Batch batch = make_batch(data, examples);
    AttentionView view;
    const at::Tensor predicted = model(batch, localisation ? &view : nullptr).argmax(1);
    for (std::size_t k = 0; k < examples.size(); ++k) {
      const Question& q = data.examples[examples[k]].question;
      const auto t = static_cast<std::size_t>(q.type);
      const bool right = predicted[static_cast<std::int64_t>(k)].item<std::int64_t>() ==
                         batch.answers[static_cast<std::int64_t>(k)].item<std::int64_t>();
      ++e.questions, ++e.type_questions[t];
      e.correct += right, e.type_correct[t] += right;
      if (localisation && !q.evidence.empty()) {
        const QuestionLocalisation l = localise(view, static_cast<std::int64_t>(k), variant, evidence_rects(q.evidence, canvas));
        e.localisation.add(l.mass, l.support);
      }
    }
  }
  e.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return e;
}

TrainResult train(const Datasets& data, const TrainOptions& options) {
  if (options.out.empty()) throw std::invalid_argument("train: an output directory is required");
  if (data.train.examples.empty() || data.dev.examples.empty() || data.test.examples.empty())
    throw std::invalid_argument("train: the training, dev and test questions must not be empty");
  if (options.batch_scenes == 0) throw std::invalid_argument("train: batch_scenes must be > 0");
  Run run(data, options);  // 1. start or resume
  for (std::size_t epoch = run.directory.next_epoch(); epoch <= options.epochs; ++epoch) {
    if (run.directory.patience_exhausted(epoch, options.patience)) break;  // early stop
    const auto start = Clock::now();
    const double train_loss = train_epoch(run, data.train, options, epoch);  // 2. train one epoch
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double dev = evaluate(run.model, data.dev, false).accuracy();      // 3. evaluate
    run.directory.save_epoch({epoch, train_loss, dev, seconds}, *run.model, run.optimiser);  // 4. save
    std::fprintf(stderr, "  %s epoch %zu: train loss %.4f, dev accuracy %.2f%%, %.1f s\n", run_label(options).c_str(),
                 epoch, train_loss, 100 * dev, seconds);
  }
  const kit::RunState& state = run.directory.state();
  if (state.history.empty()) throw std::invalid_argument("train: epochs = 0; at least one epoch is needed");
  TrainResult result;
  result.variant = options.variant;
  result.seed = options.seed;
  result.best_epoch = state.best_epoch;
  result.epochs = state.history.size();
  result.dev_accuracy = state.best_score;
  for (const auto& e : state.history) result.train_seconds += e.seconds;
  run.directory.load_best(*run.model);
  result.test = evaluate(run.model, data.test, true);
  return result;
}

VqaModel load_best(const fs::path& out) {
  const kit::RunDirectory directory(out, kScore);
  if (!directory.has_state())
    throw std::runtime_error("no trained model in " + out.string() + " (no state.json): train one first");
  const kit::RunState state = directory.read();  // kit::DamagedFile when state.json is damaged
  const fs::path best = directory.checkpoint_file(state, "best");
  std::optional<VqaModel> model;
  try {
    TrainOptions o;
    o.variant = state.options.at("variant");
    o.features = state.options.at("features");
    if (state.data.at("words").get<std::uint64_t>() != word_vocabulary().fingerprint() ||
        state.data.at("answers").get<std::uint64_t>() != answer_vocabulary().fingerprint())
      throw std::invalid_argument("the vocabularies differ from this program's");
    model.emplace(seeded_model(o));
  } catch (const nlohmann::json::exception& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a missing or malformed entry: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw kit::DamagedFile(directory.state_file(), std::string("a malformed entry: ") + e.what());
  }
  kit::load_checkpoint(**model, best);  // kit::DamagedFile when the checkpoint is damaged
  (*model)->eval();
  return *model;
}

Answer predict(VqaModel& model, const kit::Image& image, const std::string& question) {
  torch::NoGradGuard no_grad;
  model->eval();
  const Batch batch = question_batch(image, question);
  Answer a;
  const at::Tensor p = torch::softmax(model(batch, &a.attention), 1)[0];
  const std::int64_t best = p.argmax().item<std::int64_t>();
  a.answer = answer_vocabulary().symbol(static_cast<int>(best));
  a.probability = p[best].item<double>();
  return a;
}

}  // namespace vqa
