// The HTML report (report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kit/atomic_file.h"
#include "kit/contour.h"
#include "kit/ellipse.h"
#include "kit/format.h"
#include "kit/heatmap.h"
#include "kit/html.h"
#include "kit/markdown.h"
#include "kit/png.h"
#include "kit/svg.h"

namespace vqa {
namespace {

using kit::html_escape;
using kit::svg_number;

constexpr std::size_t kContourGrid = 42;

std::string evidence_svg(const std::vector<Rect>& evidence, const kit::Frame& frame) {
  std::string svg;
  for (const auto& r : evidence)
    svg += "<rect class=\"evidence\" x=\"" + svg_number(frame.x(r.t1_begin)) + "\" y=\"" + svg_number(frame.y(r.t0_begin)) +
           "\" width=\"" + svg_number(frame.width * (r.t1_end - r.t1_begin)) + "\" height=\"" +
           svg_number(frame.height * (r.t0_end - r.t0_begin)) + "\"></rect>";
  return svg;
}

// The contours of the mixture's mass per cell of a 42 x 42 grid.
std::string contours_svg(const QuestionView& view, const kit::Frame& frame) {
  kit::Matrix mass{kContourGrid, kContourGrid, std::vector<double>(kContourGrid * kContourGrid, 0.0)};
  for (std::size_t k = 0; k < view.densities.size(); ++k) {
    const kit::Matrix m = cell_masses(view.densities[k], kContourGrid, kContourGrid);
    for (std::size_t i = 0; i < m.values.size(); ++i) mass.values[i] += view.mixture_weights[k] * m.values[i];
  }
  const double peak = *std::max_element(mass.values.begin(), mass.values.end());
  std::string svg;
  if (!(peak > 0)) return svg;
  for (const double level : {0.25, 0.5, 0.75})
    svg += kit::contour_svg(kit::iso_contour(mass, level * peak), frame, "contour");
  return svg;
}

std::string ellipses_svg(const QuestionView& view, const kit::Frame& frame) {
  std::string svg;
  for (const auto& d : view.densities) {
    const auto mu = d.mu();
    if (d.alpha() > 1) {  // the support: (t - mu)^T Sigma^-1 (t - mu) <= r2, Sigma the scale
      svg += kit::ellipse_svg(kit::covariance_ellipse(mu, d.sigma(), std::sqrt(d.support_radius2()), frame), "support");
    } else if (view.densities.size() > 1) {
      svg += kit::ellipse_svg(kit::covariance_ellipse(mu, d.covariance(), 2.0, frame), "component");
    }
  }
  return svg;
}

std::string question_html(const QuestionView& view) {
  std::string html = "<article class=\"question\">" + scene_svg(view) + "<p class=\"q\">" + html_escape(view.question) +
                     "</p>\n<p><b>" + html_escape(view.answer) + "</b> (" + kit::fixed(100 * view.probability, 0) +
                     "%) <span class=\"" + (view.correct() ? "ok\">&#10003; right" : "err\">&#10007; wrong, truth: " +
                     html_escape(view.truth)) + "</span></p>\n<p class=\"meta\">" + html_escape(view.type);
  if (std::isfinite(view.mass)) html += " &middot; mass in the evidence " + kit::fixed(100 * view.mass, 0) + "%";
  return html + "</p>\n</article>\n";
}

}  // namespace

std::string scene_svg(const QuestionView& view, double size) {
  kit::check_image(view.image, "vqa::scene_svg");
  kit::check_matrix(view.weights, "vqa::scene_svg", "weights");
  if (view.densities.size() != view.mixture_weights.size())
    throw std::invalid_argument("vqa::scene_svg: " + std::to_string(view.densities.size()) + " densities and " +
                                std::to_string(view.mixture_weights.size()) + " mixture weights");
  const kit::Frame frame{0, 0, size, size};
  const double peak = *std::max_element(view.weights.values.begin(), view.weights.values.end());
  kit::ColourScale scale;
  scale.vmin = 0;
  scale.vmax = peak > 0 ? peak : 1;
  kit::Image ink_on_white = view.image;  // drawn dark on white, so that the white of zero weight stays white
  for (auto& v : ink_on_white.pixels) v = static_cast<std::uint8_t>(255 - v);
  std::string svg = kit::image_svg(ink_on_white, frame) + kit::heatmap_layer(view.weights, frame, scale, 0.55) +
                    evidence_svg(view.evidence, frame);
  if (!view.densities.empty()) svg += contours_svg(view, frame) + ellipses_svg(view, frame);
  return kit::svg_element(size, size, "scene", view.question, svg);
}

std::string render_report(const std::string& title, const std::string& results_markdown,
                          const std::vector<VariantQuestions>& variants) {
  std::string body = "<h1>" + html_escape(title) + "</h1>\n" + kit::markdown_to_html(results_markdown);
  body += "<p class=\"about\">Each test question: its scene with the evidence boxes (green: the items the answer depends "
          "on), the discrete attention over the 14 &times; 14 cells as a red heat map (for the continuous variants, the "
          "softmax map their density is fitted to), the continuous density's contours at 1/4, 1/2 and 3/4 of its peak "
          "(blue), the support ellipse of continuous sparsemax (solid orange) and each mixture component's 2-sigma "
          "ellipse (dashed). Below: the question, the answer and its probability, right or wrong, and the attention "
          "mass inside the evidence (the density's for the continuous variants).</p>\n";
  for (const auto& v : variants) {
    body += "<section class=\"variant\">\n<h2>" + html_escape(v.variant) + "</h2>\n";
    for (const auto& q : v.questions) body += question_html(q);
    body += "</section>\n";
  }
  const char* style =
      "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}"
      "table.results{border-collapse:collapse;margin:1em 0}table.results td,table.results th{border:1px solid #ccc;"
      "padding:3px 8px}section.variant{border-top:2px solid #888;margin-top:1.5em}"
      "article.question{display:inline-block;vertical-align:top;width:260px;margin:0.5em 1em 0.5em 0}"
      "article.question p{margin:0.15em 0}.q{font-style:italic}.meta{color:#555;font-size:90%}"
      ".ok{color:#1a7f37}.err{color:#c62828}"
      "svg.scene .evidence{fill:none;stroke:#2ca02c;stroke-width:2}"
      "svg.scene .contour{fill:none;stroke:#1f4e9e;stroke-width:1.5}"
      "svg.scene .support{fill:none;stroke:#ff7f0e;stroke-width:2}"
      "svg.scene .component{fill:none;stroke:#ff7f0e;stroke-width:1.5;stroke-dasharray:4 3}";
  return kit::html_document(title, style, body);
}

void write_report(const std::filesystem::path& file, const std::string& title, const std::string& results_markdown,
                  const std::vector<VariantQuestions>& variants) {
  kit::write_file(file, render_report(title, results_markdown, variants));
}

}  // namespace vqa
