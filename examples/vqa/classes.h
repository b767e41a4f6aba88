// The ten classes of Fashion-MNIST and the groups the counting questions ask about.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace vqa {

/// Fashion-MNIST's labels 0..9, in label order (the dataset's README).
inline constexpr int kClassCount = 10;
inline constexpr std::array<const char*, kClassCount> kClassNames = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

/// The class as the questions name it, singular ("t-shirt", "trouser", ..., "ankle boot"; one or two
/// words) and plural ("t-shirts", "trousers", ..., "ankle boots").
const std::string& class_word(int label);
const std::string& class_plural(int label);
/// "a" or "an": the article before class_word ("an ankle boot").
const char* class_article(int label);

/// A set of classes a counting question can name: a class alone, or a group.
struct ClassSet {
  std::string plural;        ///< the question's words: "sneakers", "shoes"
  std::vector<int> labels;   ///< ascending
};

/// The groups (beyond the single classes):
///   "tops"    = T-shirt/top, Pullover, Coat, Shirt (garments of the upper body; Dress is not one)
///   "shoes"   = Sandal, Sneaker, Ankle boot
///   "clothes" = T-shirt/top, Trouser, Pullover, Dress, Coat, Shirt (all but the shoes and the bag)
///   "things"  = all ten classes (how many items the scene holds)
const std::vector<ClassSet>& class_groups();

/// The targets of the counting questions: the ten classes (by label, plural words) then the groups,
/// 14 in all.
const std::vector<ClassSet>& count_targets();

/// Throws std::out_of_range naming the label unless 0 <= label < kClassCount.
void check_label(int label);

}  // namespace vqa
