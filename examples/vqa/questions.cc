#include "questions.h"

#include <algorithm>
#include <stdexcept>

#include "kit/split.h"

namespace vqa {
namespace {

Question make(const Scene& scene, QuestionType type, std::string text, std::string answer,
              std::vector<std::size_t> items) {
  Question q;
  q.type = type;
  q.text = std::move(text);
  q.answer = std::move(answer);
  for (const auto i : items) q.evidence.push_back(scene.items.at(i).box);
  q.evidence_items = std::move(items);
  return q;
}

bool inside(const std::array<double, 2>& point, const std::array<double, 4>& cell, double grow) {
  return point[0] >= cell[0] - grow && point[0] < cell[2] + grow && point[1] >= cell[1] - grow &&
         point[1] < cell[3] + grow;
}

/// Whether z reaches past x on the relation's side.
bool reaches_past(const Box& z, const Box& x, Relation relation) {
  switch (relation) {
    case Relation::kLeftOf: return z.left < x.left;
    case Relation::kRightOf: return z.right > x.right;
    case Relation::kAbove: return z.top < x.top;
    case Relation::kBelow: return z.bottom > x.bottom;
  }
  return false;
}

}  // namespace

const char* question_type_name(QuestionType type) {
  static constexpr const char* names[] = {"region", "count", "exist", "relation"};
  return names[static_cast<int>(type)];
}

const char* region_words(Region region) {
  static constexpr const char* names[] = {"top-left", "top-right", "bottom-left", "bottom-right", "centre"};
  return names[static_cast<int>(region)];
}

const char* relation_words(Relation relation) {
  static constexpr const char* names[] = {"left of", "right of", "above", "below"};
  return names[static_cast<int>(relation)];
}

void check_question_options(const QuestionOptions& o) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("vqa::QuestionOptions: " + what); };
  if (o.per_scene < 0) fail("per_scene " + std::to_string(o.per_scene) + " < 0");
  int total = 0;
  for (const int w : o.mix) {
    if (w < 0) fail("a mix weight is negative (" + std::to_string(w) + ")");
    total += w;
  }
  if (total == 0) fail("the mix weights are all 0");
  if (o.margin < 0) fail("margin " + std::to_string(o.margin) + " < 0");
  if (o.present_percent < 0 || o.present_percent > 100)
    fail("present_percent " + std::to_string(o.present_percent) + " is outside 0..100");
}

std::array<double, 4> region_cell(Region region, int canvas) {
  static constexpr int bands[kRegionCount][2] = {{0, 0}, {0, 2}, {2, 0}, {2, 2}, {1, 1}};
  const auto [row, col] = bands[static_cast<int>(region)];
  const double third = canvas / 3.0;
  return {row * third, col * third, (row + 1) * third, (col + 1) * third};
}

std::optional<std::size_t> region_item(const Scene& scene, Region region, int margin) {
  const auto cell = region_cell(region, static_cast<int>(scene.image.height));
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < scene.items.size(); ++i) {
    const auto c = scene.items[i].box.centre();
    if (inside(c, cell, -margin)) {
      if (found) return std::nullopt;
      found = i;
    }
  }
  if (!found) return std::nullopt;
  for (std::size_t i = 0; i < scene.items.size(); ++i)
    if (i != *found && inside(scene.items[i].box.centre(), cell, margin)) return std::nullopt;
  return found;
}

bool is_related(const Box& y, const Box& x, Relation relation) {
  switch (relation) {
    case Relation::kLeftOf: return y.right <= x.left;
    case Relation::kRightOf: return y.left >= x.right;
    case Relation::kAbove: return y.bottom <= x.top;
    case Relation::kBelow: return y.top >= x.bottom;
  }
  return false;
}

std::optional<std::size_t> relation_item(const Scene& scene, std::size_t reference, Relation relation) {
  const SceneItem& x = scene.items.at(reference);
  if (items_of(scene, {x.label}).size() != 1) return std::nullopt;
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < scene.items.size(); ++i) {
    if (i == reference || !reaches_past(scene.items[i].box, x.box, relation)) continue;
    if (found) return std::nullopt;
    found = i;
  }
  if (found && !is_related(scene.items[*found].box, x.box, relation)) return std::nullopt;
  return found;
}

std::vector<std::size_t> items_of(const Scene& scene, const std::vector<int>& labels) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < scene.items.size(); ++i)
    if (std::find(labels.begin(), labels.end(), scene.items[i].label) != labels.end()) out.push_back(i);
  return out;
}

std::optional<Question> region_question(const Scene& scene, Region region, int margin) {
  const auto item = region_item(scene, region, margin);
  if (!item) return std::nullopt;
  return make(scene, QuestionType::kRegion, std::string("what is in the ") + region_words(region) + " ?",
              kClassNames[static_cast<std::size_t>(scene.items[*item].label)], {*item});
}

Question count_question(const Scene& scene, const ClassSet& target) {
  auto items = items_of(scene, target.labels);
  const std::string answer = std::to_string(items.size());
  return make(scene, QuestionType::kCount, "how many " + target.plural + " are there ?", answer, std::move(items));
}

Question exist_question(const Scene& scene, int label) {
  auto items = items_of(scene, {label});
  const std::string answer = items.empty() ? "no" : "yes";
  return make(scene, QuestionType::kExist, std::string("is there ") + class_article(label) + " " + class_word(label) + " ?",
              answer, std::move(items));
}

std::optional<Question> relation_question(const Scene& scene, std::size_t reference, Relation relation) {
  const auto item = relation_item(scene, reference, relation);
  if (!item) return std::nullopt;
  return make(scene, QuestionType::kRelation,
              std::string("what is ") + relation_words(relation) + " the " + class_word(scene.items[reference].label) + " ?",
              kClassNames[static_cast<std::size_t>(scene.items[*item].label)], {*item, reference});
}

std::array<std::vector<Question>, kQuestionTypeCount> candidate_questions(const Scene& scene, int margin) {
  std::array<std::vector<Question>, kQuestionTypeCount> out;
  for (int r = 0; r < kRegionCount; ++r)
    if (auto q = region_question(scene, static_cast<Region>(r), margin)) out[0].push_back(std::move(*q));
  for (const auto& target : count_targets()) out[1].push_back(count_question(scene, target));
  for (int label = 0; label < kClassCount; ++label) out[2].push_back(exist_question(scene, label));
  for (std::size_t x = 0; x < scene.items.size(); ++x)
    for (int r = 0; r < kRelationCount; ++r)
      if (auto q = relation_question(scene, x, static_cast<Relation>(r))) out[3].push_back(std::move(*q));
  return out;
}

std::vector<Question> generate_questions(const Scene& scene, const QuestionOptions& options) {
  check_question_options(options);
  auto candidates = candidate_questions(scene, options.margin);
  std::mt19937_64 rng = scene_rng(scene.seed, scene.split, scene.index, 1);
  std::vector<Question> out;
  while (static_cast<int>(out.size()) < options.per_scene) {
    std::uint64_t total = 0;
    for (int t = 0; t < kQuestionTypeCount; ++t)
      if (!candidates[static_cast<std::size_t>(t)].empty()) total += static_cast<std::uint64_t>(options.mix[static_cast<std::size_t>(t)]);
    if (total == 0) break;
    std::uint64_t draw = kit::uniform_below(rng, total);
    int type = 0;
    for (; type < kQuestionTypeCount; ++type) {
      auto& c = candidates[static_cast<std::size_t>(type)];
      const auto w = c.empty() ? 0 : static_cast<std::uint64_t>(options.mix[static_cast<std::size_t>(type)]);
      if (draw < w) break;
      draw -= w;
    }
    auto& pool = candidates[static_cast<std::size_t>(type)];
    std::vector<std::size_t> eligible(pool.size());
    for (std::size_t i = 0; i < pool.size(); ++i) eligible[i] = i;
    const auto t = static_cast<QuestionType>(type);
    if (t == QuestionType::kCount || t == QuestionType::kExist) {
      std::vector<std::size_t> present;
      for (std::size_t i = 0; i < pool.size(); ++i)
        if (!pool[i].evidence_items.empty()) present.push_back(i);
      if (static_cast<int>(kit::uniform_below(rng, 100)) < options.present_percent && !present.empty()) eligible = present;
    }
    const std::size_t chosen = eligible[kit::uniform_below(rng, eligible.size())];
    out.push_back(std::move(pool[chosen]));
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(chosen));
  }
  return out;
}

}  // namespace vqa
