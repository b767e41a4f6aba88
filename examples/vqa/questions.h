// Questions about a scene from four templates, each with its answer (answers.h's vocabulary) and
// its evidence: the items the answer depends on, whose boxes the localisation metrics use.
//
//   region    "what is in the <top-left|top-right|bottom-left|bottom-right|centre> ?"  -> class
//   count     "how many <plural> are there ?"  (a class or a group, classes.h)         -> 0..4
//   exist     "is there <a|an> <class> ?"                                              -> yes|no
//   relation  "what is <left of|right of|above|below> the <class> ?"                   -> class
//
// Definitions (pixel units, C = canvas side; an item's place is its box, its centre the box's
// centre, box.h):
//  - Regions. The canvas is cut into thirds, bands [0, C/3), [C/3, 2C/3), [2C/3, C) of rows and of
//    columns; top-left is rows band 0 x columns band 0, top-right 0 x 2, bottom-left 2 x 0,
//    bottom-right 2 x 2, centre 1 x 1 (region_cell). An item is "in" a region when its centre
//    lies in the region's cell shrunk by `margin` on every side. A region question is asked only
//    when exactly one item is in the region and every other item's centre lies outside the cell
//    grown by `margin` (so no item is near the border of the region): the answer is that item's
//    class, the evidence its box.
//  - Relations, from a reference item X that is the only item of its class in the scene:
//      Y is left of X  when Y.right <= X.left   (Y's columns all before X's; rows do not matter)
//      Y is right of X when Y.left >= X.right;  above: Y.bottom <= X.top;  below: Y.top >= X.bottom.
//    A relation question is asked only when exactly one other item reaches past X on that side
//    (left: Z.left < X.left; right: Z.right > X.right; above: Z.top < X.top; below:
//    Z.bottom > X.bottom) and that item is wholly on that side (left of X, ...): no item is
//    partly beside X. The answer is Y's class; the evidence Y's box then X's.
//  - Counting: the items whose class is in the target set (clutter never counts); the evidence
//    their boxes (none for 0). Always unambiguous.
//  - Existence: "yes" when an item has the class; the evidence the boxes of those items (none
//    for "no").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "box.h"
#include "classes.h"
#include "scene.h"

namespace vqa {

enum class QuestionType { kRegion = 0, kCount = 1, kExist = 2, kRelation = 3 };
inline constexpr int kQuestionTypeCount = 4;
/// "region", "count", "exist", "relation".
const char* question_type_name(QuestionType type);

enum class Region { kTopLeft = 0, kTopRight = 1, kBottomLeft = 2, kBottomRight = 3, kCentre = 4 };
inline constexpr int kRegionCount = 5;
/// "top-left", "top-right", "bottom-left", "bottom-right", "centre".
const char* region_words(Region region);

enum class Relation { kLeftOf = 0, kRightOf = 1, kAbove = 2, kBelow = 3 };
inline constexpr int kRelationCount = 4;
/// "left of", "right of", "above", "below".
const char* relation_words(Relation relation);

struct Question {
  QuestionType type = QuestionType::kRegion;
  std::string text;                        ///< words separated by single spaces, ending " ?"
  std::string answer;                      ///< an entry of answer_vocabulary()
  std::vector<std::size_t> evidence_items; ///< indices into the scene's items
  std::vector<Box> evidence;               ///< their boxes, in the same order
};

struct QuestionOptions {
  int per_scene = 4;                        ///< questions per scene (fewer when a scene has no more)
  /// Relative weights of the types region, count, exist, relation (integers >= 0, not all 0).
  /// Count and exist questions can be asked about every scene, region and relation questions
  /// only about some (about half of the default scenes have no unambiguous region question), so
  /// the default favours the latter: on 10,000 training scenes of Fashion-MNIST with the default
  /// options the 40,000 questions are 17% region, 31% count, 30% exist, 22% relation (1:1:1:1
  /// gives 13%, 37%, 36%, 14%).
  std::array<int, kQuestionTypeCount> mix = {3, 1, 1, 3};
  int margin = 3;                           ///< pixels, for the region questions (see above)
  /// Percent of count and exist questions whose target is drawn among the classes (or groups)
  /// present in the scene; the others among all targets not asked yet. 50: "yes" about as often
  /// as "no".
  int present_percent = 50;
};

/// Throws std::invalid_argument naming the option unless per_scene >= 0, every weight >= 0 and
/// one > 0, margin >= 0, 0 <= present_percent <= 100.
void check_question_options(const QuestionOptions& options);

/// The cell of a region on a canvas of side `canvas`: {top, left, bottom, right} in pixel units
/// (top-left = {0, 0, C/3, C/3}, centre = {C/3, C/3, 2C/3, 2C/3}, ...).
std::array<double, 4> region_cell(Region region, int canvas);

/// The item a region question about `region` answers with, or nothing when the question would be
/// ambiguous or has no answer (see above).
std::optional<std::size_t> region_item(const Scene& scene, Region region, int margin);

/// The item Y of a relation question about the reference item `reference`, or nothing when the
/// question is not asked (the reference's class is not unique, or the definition above does not
/// single out one item).
std::optional<std::size_t> relation_item(const Scene& scene, std::size_t reference, Relation relation);

/// Whether y is wholly on that side of x (the definitions above).
bool is_related(const Box& y, const Box& x, Relation relation);

/// The items whose label is in labels, ascending.
std::vector<std::size_t> items_of(const Scene& scene, const std::vector<int>& labels);

/// The questions of each template, built from their parameters (the answer and evidence from the
/// scene). region_question and relation_question return nothing when the question is not asked.
std::optional<Question> region_question(const Scene& scene, Region region, int margin);
Question count_question(const Scene& scene, const ClassSet& target);
Question exist_question(const Scene& scene, int label);
std::optional<Question> relation_question(const Scene& scene, std::size_t reference, Relation relation);

/// Every question the templates allow on the scene, by type (count: the 14 targets of
/// count_targets(); exist: the 10 classes; region and relation: those asked).
std::array<std::vector<Question>, kQuestionTypeCount> candidate_questions(const Scene& scene, int margin);

/// options.per_scene distinct questions, drawn with scene_rng(scene.seed, scene.split,
/// scene.index, 1) by kit::uniform_below: each time a type with candidates left, with probability
/// proportional to its weight among those; within it a candidate uniformly (count, exist: with
/// probability present_percent / 100 among those whose answer is not 0 / "no", when there are
/// some); a question asked is not asked again.
std::vector<Question> generate_questions(const Scene& scene, const QuestionOptions& options);

}  // namespace vqa
