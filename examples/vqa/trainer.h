// Training, evaluation, checkpoints and prediction of the VQA experiment. train() is four named
// steps (trainer.cc) on the kit's run directory (kit/training_run.h): start or resume, train one
// epoch, evaluate on the dev scenes (accuracy), save the epoch; then the best epoch's model is
// evaluated on the test scenes (accuracy per question type and where the attention looks).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "batch.h"
#include "dataset.h"
#include "localisation.h"
#include "model.h"
#include "report.h"

namespace vqa {

/// The three splits: training and dev scenes from training items, test scenes from test items.
struct Datasets {
  SplitData train, dev, test;
};
/// train = training-split scenes 0..train_scenes-1, dev = the next dev_scenes of the same split
/// (split_off), test = test-split scenes 0..test_scenes-1, all with options.seed.
Datasets make_datasets(const FashionMnist& train_items, const FashionMnist& test_items, const DataOptions& options,
                       std::size_t dev_scenes);
/// kit::Fnv1a-based fingerprints of the three splits and the vocabularies, for state.json.
nlohmann::json datasets_fingerprint(const Datasets& data);

struct TrainOptions {
  std::string variant = "softmax";
  std::uint64_t seed = 1;
  std::size_t epochs = 10, patience = 3;
  std::size_t batch_scenes = 16;  ///< scenes per batch, with all their questions (about 4 each)
  std::int64_t features = 64;
  double learning_rate = 1e-3;
  std::filesystem::path out;      ///< run directory: checkpoints and state
  bool resume = false;            ///< continue the run saved in `out` where it stopped
  bool progress = true;           ///< a progress bar on stderr
};

/// Accuracy overall and per question type, and where the attention looked.
struct Evaluation {
  std::size_t questions = 0, correct = 0;
  std::array<std::size_t, kQuestionTypeCount> type_questions{}, type_correct{};
  LocalisationStats localisation;  ///< over the questions with evidence
  double seconds = 0;
  [[nodiscard]] double accuracy() const;
  [[nodiscard]] double type_accuracy(QuestionType type) const;  ///< NaN for a type never asked
};

struct TrainResult {
  std::string variant;
  std::uint64_t seed = 0;
  std::size_t best_epoch = 0, epochs = 0;
  double dev_accuracy = 0, train_seconds = 0;
  Evaluation test;
};

/// Trains (or resumes) one variant with Adam (gradient norm clipped at 5) on the cross-entropy of
/// the answers, early stopping on dev accuracy, a checkpoint set after every epoch, then
/// evaluates the best epoch's model on the test scenes.
TrainResult train(const Datasets& data, const TrainOptions& options);

/// The answers and attention of every example of data (batches of 64 scenes, no gradient);
/// with localisation, the localisation figures of the questions with evidence.
Evaluation evaluate(VqaModel& model, const SplitData& data, bool localisation);

/// The mean cross-entropy of the answers of the examples at indices.
at::Tensor batch_loss(VqaModel& model, const SplitData& data, const std::vector<std::size_t>& indices);

/// The model of a run's options, parameters drawn from torch's generator seeded by the seed.
VqaModel seeded_model(const TrainOptions& options);

/// One question's localisation figures (localisation.h) from row i of a view: the discrete map
/// for the discrete variants (the support for sparsemax and entmax15), the density for the
/// continuous ones (its ellipse's support for continuous sparsemax; a mixture's mass is
/// sum_k pi_k of its components'). evidence: the question's boxes as positions.
struct QuestionLocalisation {
  double mass = 0;
  SupportOverlap support;  ///< all NaN where the variant has no bounded support
};
QuestionLocalisation localise(const AttentionView& view, std::int64_t i, const Variant& variant,
                              const std::vector<Rect>& evidence);
/// The density of component k of row i of a continuous view (Density2D of the variant's alpha).
Density view_density(const AttentionView& view, std::int64_t i, std::int64_t k, const Variant& variant);
/// Row i of a view's discrete map as a matrix (14 x 14).
kit::Matrix view_map(const AttentionView& view, std::int64_t i);
/// Row i of a view as the report draws it: out.weights = view_map, and for the continuous
/// variants out.densities and out.mixture_weights (pi_k), replacing what out held.
void draw_attention(const AttentionView& view, std::int64_t i, const Variant& variant, QuestionView& out);

/// A trained model loaded from a run directory (its best epoch).
VqaModel load_best(const std::filesystem::path& out);

/// A question about an image answered: the answer, its probability and the attention.
struct Answer {
  std::string answer;
  double probability = 0;
  AttentionView attention;  ///< one row
};
/// Throws std::invalid_argument for a bad image or an empty question (question_batch).
Answer predict(VqaModel& model, const kit::Image& image, const std::string& question);

}  // namespace vqa
