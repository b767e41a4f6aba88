#include "dataset.h"

#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kit/fingerprint.h"

namespace vqa {

SplitData make_split(const FashionMnist& items, const DataOptions& options) {
  SplitData out;
  out.split = items.split;
  const std::size_t count = items.split == Split::kTrain ? options.train_scenes : options.test_scenes;
  out.scenes = generate_scenes(items, options.scene, options.seed, count);
  for (std::size_t s = 0; s < out.scenes.size(); ++s)
    for (auto& q : generate_questions(out.scenes[s], options.questions)) out.examples.push_back({s, std::move(q)});
  return out;
}

SplitData split_off(SplitData& data, std::size_t first) {
  if (first > data.scenes.size())
    throw std::invalid_argument("split_off: first scene " + std::to_string(first) + " of " +
                                std::to_string(data.scenes.size()) + " scenes");
  SplitData out;
  out.split = data.split;
  out.scenes.assign(std::make_move_iterator(data.scenes.begin() + static_cast<std::ptrdiff_t>(first)),
                    std::make_move_iterator(data.scenes.end()));
  data.scenes.resize(first);
  std::vector<Example> kept;
  for (auto& e : data.examples) {
    if (e.scene < first) {
      kept.push_back(std::move(e));
    } else {
      e.scene -= first;
      out.examples.push_back(std::move(e));
    }
  }
  data.examples = std::move(kept);
  return out;
}

std::array<std::size_t, kQuestionTypeCount> type_counts(const SplitData& data) {
  std::array<std::size_t, kQuestionTypeCount> out{};
  for (const auto& e : data.examples) ++out[static_cast<std::size_t>(e.question.type)];
  return out;
}

std::uint64_t data_fingerprint(const SplitData& data) {
  kit::Fnv1a hash;
  hash.add(split_name(data.split)).add("\n");
  for (const auto& scene : data.scenes) {
    hash.add(std::string_view(reinterpret_cast<const char*>(scene.image.pixels.data()), scene.image.pixels.size()));
    for (const auto& item : scene.items) {
      for (const long v : {static_cast<long>(item.label), static_cast<long>(item.source), static_cast<long>(item.box.top),
                           static_cast<long>(item.box.left), static_cast<long>(item.box.bottom),
                           static_cast<long>(item.box.right)})
        hash.add(std::to_string(v)).add(" ");
      hash.add("\n");
    }
  }
  for (const auto& e : data.examples) {
    hash.add(std::to_string(e.scene)).add(" ").add(e.question.text).add(" -> ").add(e.question.answer);
    for (const auto i : e.question.evidence_items) hash.add(" ").add(std::to_string(i));
    hash.add("\n");
  }
  return hash.value();
}

}  // namespace vqa
