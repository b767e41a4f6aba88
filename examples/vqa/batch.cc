// Batches of the VQA model (batch.h).
#include "batch.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "vocabulary.h"

namespace vqa {
namespace {

// Copies a grey canvas into images[s] as floats in [0, 1].
void put_image(const kit::Image& image, at::Tensor& images, std::int64_t s) {
  const at::Tensor bytes = torch::from_blob(const_cast<std::uint8_t*>(image.pixels.data()),
                                            {static_cast<std::int64_t>(image.height), static_cast<std::int64_t>(image.width)},
                                            torch::kUInt8);
  images[s][0].copy_(bytes.to(torch::kFloat) / 255.0);
}

Batch words_batch(const std::vector<std::vector<int>>& encoded) {
  std::size_t longest = 1;
  for (const auto& w : encoded) longest = std::max(longest, w.size());
  const auto q = static_cast<std::int64_t>(encoded.size());
  Batch b;
  b.words = torch::full({q, static_cast<std::int64_t>(longest)}, kWordPad, torch::kLong);
  b.lengths = torch::empty({q}, torch::kLong);
  auto words = b.words.accessor<std::int64_t, 2>();
  auto lengths = b.lengths.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < q; ++i) {
    const auto& w = encoded[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < w.size(); ++j) words[i][static_cast<std::int64_t>(j)] = w[j];
    lengths[i] = static_cast<std::int64_t>(std::max<std::size_t>(w.size(), 1));
  }
  return b;
}

}  // namespace

Batch make_batch(const SplitData& data, const std::vector<std::size_t>& indices) {
  std::vector<std::vector<int>> encoded;
  std::vector<std::size_t> scenes;
  std::unordered_map<std::size_t, std::int64_t> slot;
  std::vector<std::int64_t> scene_of, answers;
  for (const auto i : indices) {
    const Example& e = data.examples.at(i);
    encoded.push_back(encode_question(e.question.text));
    answers.push_back(answer_vocabulary().id(e.question.answer));
    const auto [it, inserted] = slot.emplace(e.scene, static_cast<std::int64_t>(scenes.size()));
    if (inserted) scenes.push_back(e.scene);
    scene_of.push_back(it->second);
  }
  Batch b = words_batch(encoded);
  const auto side = static_cast<std::int64_t>(data.scenes.empty() ? 84 : data.scenes.front().image.height);
  b.images = torch::empty({static_cast<std::int64_t>(scenes.size()), 1, side, side});
  for (std::size_t s = 0; s < scenes.size(); ++s) put_image(data.scenes[scenes[s]].image, b.images, static_cast<std::int64_t>(s));
  b.scene = torch::tensor(scene_of, torch::kLong);
  b.answers = torch::tensor(answers, torch::kLong);
  return b;
}

Batch question_batch(const kit::Image& image, const std::string& question) {
  if (image.width != 84 || image.height != 84 || image.channels != 1 || image.pixels.size() != 84 * 84)
    throw std::invalid_argument("question_batch: the image must be 84 x 84 grey, got " + std::to_string(image.width) +
                                " x " + std::to_string(image.height) + " with " + std::to_string(image.channels) +
                                " channels");
  const std::vector<int> encoded = encode_question(question);
  if (encoded.empty()) throw std::invalid_argument("question_batch: the question is empty");
  Batch b = words_batch({encoded});
  b.images = torch::empty({1, 1, 84, 84});
  put_image(image, b.images, 0);
  b.scene = torch::zeros({1}, torch::kLong);
  b.answers = torch::full({1}, -1, torch::kLong);
  return b;
}

}  // namespace vqa
