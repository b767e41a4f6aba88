// The HTML report of the VQA experiment: the results tables, then for each attention variant the
// same test questions, each drawn as its scene (ink dark on white) with the evidence boxes (green), the discrete
// attention as a translucent heat map over the 14 x 14 cells, and for the continuous variants
// the density's contours (at 1/4, 1/2 and 3/4 of its peak cell mass on a 42 x 42 grid), the
// support ellipse of continuous sparsemax (solid) and each mixture component's 2-sigma ellipse
// (dashed); beside it the question, the answer with its probability, the truth, right or wrong,
// and the attention mass inside the evidence. One self-contained file: inline CSS, SVG and PNG
// data URIs, no JavaScript, no external resources.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "box.h"
#include "density_integral.h"
#include "kit/image.h"
#include "kit/matrix.h"

namespace vqa {

/// One test question as a variant answers it.
struct QuestionView {
  kit::Image image;                ///< the scene, grey
  std::string type;                ///< question_type_name
  std::string question, answer, truth;
  double probability = 0;          ///< of the answer given
  std::vector<Rect> evidence;      ///< the evidence boxes as positions (may be empty)
  kit::Matrix weights;             ///< the discrete map (rows x cols cells over the image)
  /// Continuous variants: the density's components and their weights pi_k (empty: discrete).
  std::vector<Density> densities;
  std::vector<double> mixture_weights;
  double mass = 0;                 ///< attention mass inside the evidence (NaN without evidence)
  [[nodiscard]] bool correct() const { return answer == truth; }
};

struct VariantQuestions {
  std::string variant;
  std::vector<QuestionView> questions;
};

/// The scene of a view with its layers (see above), `size` x `size` SVG units. Throws
/// std::invalid_argument for an empty image or weights, or densities and mixture_weights of
/// different sizes.
std::string scene_svg(const QuestionView& view, double size = 252);

/// The report as one HTML5 string: title, results (Markdown as results.md holds it, via
/// kit::markdown_to_html), a legend, then per variant its questions.
std::string render_report(const std::string& title, const std::string& results_markdown,
                          const std::vector<VariantQuestions>& variants);

/// render_report written to file with write_atomically (parent directories are created).
void write_report(const std::filesystem::path& file, const std::string& title, const std::string& results_markdown,
                  const std::vector<VariantQuestions>& variants);

}  // namespace vqa
