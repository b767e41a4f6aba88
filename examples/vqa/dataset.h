// A split of the VQA data: its scenes and their questions, with the options that made them and
// a fingerprint for a run directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fashion_mnist.h"
#include "questions.h"
#include "scene.h"

namespace vqa {

struct DataOptions {
  SceneOptions scene;
  QuestionOptions questions;
  std::size_t train_scenes = 10000;  ///< x questions.per_scene = 40,000 training questions
  std::size_t test_scenes = 2000;    ///< 8,000 test questions
  std::uint64_t seed = 1;
};

/// A question and the scene it is about.
struct Example {
  std::size_t scene = 0;  ///< index into the split's scenes
  Question question;
};

struct SplitData {
  Split split = Split::kTrain;
  std::vector<Scene> scenes;
  std::vector<Example> examples;  ///< scene by scene, each scene's questions in generation order
};

/// Scenes 0..count-1 of items' split (generate_scene with options.seed) and their questions
/// (generate_questions), count = train_scenes or test_scenes by items.split.
SplitData make_split(const FashionMnist& items, const DataOptions& options);

/// Moves scenes first.. of data and their questions into a split of their own (their scene
/// indices renumbered from 0; Scene::index, which made them, kept): the dev scenes are the
/// training split's scenes train_scenes..train_scenes + dev - 1, generated from training items
/// after the training scenes. Throws std::invalid_argument when first > the number of scenes.
SplitData split_off(SplitData& data, std::size_t first);

/// Per question type (QuestionType order), the number of examples.
std::array<std::size_t, kQuestionTypeCount> type_counts(const SplitData& data);

/// kit::Fnv1a over each scene's pixels and item (label, source, box) and each question's text,
/// answer and evidence items: equal fingerprints, equal data (for a run's state.json).
std::uint64_t data_fingerprint(const SplitData& data);

}  // namespace vqa
