#include "classes.h"

#include <stdexcept>

namespace vqa {
namespace {

const std::array<std::string, kClassCount> kWords = {"t-shirt", "trouser", "pullover", "dress", "coat",
                                                    "sandal",  "shirt",   "sneaker",  "bag",   "ankle boot"};
const std::array<std::string, kClassCount> kPlurals = {"t-shirts", "trousers", "pullovers", "dresses", "coats",
                                                      "sandals",  "shirts",   "sneakers",  "bags",    "ankle boots"};

}  // namespace

void check_label(int label) {
  if (label < 0 || label >= kClassCount)
    throw std::out_of_range("vqa: class label " + std::to_string(label) + " is outside 0..9");
}

const std::string& class_word(int label) {
  check_label(label);
  return kWords[static_cast<std::size_t>(label)];
}

const std::string& class_plural(int label) {
  check_label(label);
  return kPlurals[static_cast<std::size_t>(label)];
}

const char* class_article(int label) { return class_word(label).front() == 'a' ? "an" : "a"; }

const std::vector<ClassSet>& class_groups() {
  static const std::vector<ClassSet> groups = {
      {"tops", {0, 2, 4, 6}},
      {"shoes", {5, 7, 9}},
      {"clothes", {0, 1, 2, 3, 4, 6}},
      {"things", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
  };
  return groups;
}

const std::vector<ClassSet>& count_targets() {
  static const std::vector<ClassSet> targets = [] {
    std::vector<ClassSet> out;
    for (int label = 0; label < kClassCount; ++label) out.push_back({class_plural(label), {label}});
    for (const auto& g : class_groups()) out.push_back(g);
    return out;
  }();
  return targets;
}

}  // namespace vqa
