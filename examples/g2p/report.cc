// The HTML report (report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kit/atomic_file.h"
#include "kit/format.h"
#include "kit/heatmap.h"
#include "kit/html.h"
#include "kit/markdown.h"
#include "kit/svg.h"

namespace g2p {
namespace {

using kit::fixed;
using kit::html_escape;
using kit::svg_number;

constexpr double kCell = 22;       // one letter's width in the strips, SVG units
constexpr double kStrip = 26;      // one phoneme's strip height
constexpr double kLabel = 44;      // room for the phoneme labels

std::string word_html(const WordView& view) {
  std::string html = "<article class=\"word\">\n<p class=\"head\"><b>" + html_escape(view.word) + "</b> &rarr; <b>";
  std::string output;
  for (const auto& p : view.output) output += (output.empty() ? "" : " ") + p;
  html += html_escape(output.empty() ? "(nothing)" : output) + "</b> <span class=\"" +
          (view.correct ? "ok\">&#10003; right" : "err\">&#10007; wrong") + "</span></p>\n<p class=\"refs\">reference";
  html += view.references.size() == 1 ? ": " : "s: ";
  for (std::size_t k = 0; k < view.references.size(); ++k)
    html += (k ? " &middot; " : "") + html_escape(view.references[k]);
  html += "</p>\n";
  if (view.output.empty()) return html + "<p class=\"note\">no phoneme was output</p>\n</article>\n";
  if (view.alignment.rows != view.output.size() || view.alignment.cols != view.word.size())
    throw std::invalid_argument("report: the alignment of " + view.word + " is " + std::to_string(view.alignment.rows) +
                                " x " + std::to_string(view.alignment.cols) + ", expected " +
                                std::to_string(view.output.size()) + " x " + std::to_string(view.word.size()));
  kit::HeatmapOptions options;
  for (const char c : view.word) options.column_labels.emplace_back(1, c);
  options.row_labels = view.output;
  options.vmin = 0;
  options.vmax = 1;
  options.title = "attention of each output phoneme over the letters of " + view.word;
  html += "<div class=\"plots\">" + kit::heatmap_svg(view.alignment, options);
  if (!view.curves.empty()) html += density_strips_svg(view);
  return html + "</div>\n</article>\n";
}

}  // namespace

std::string density_strips_svg(const WordView& view) {
  const std::size_t steps = view.output.size(), letters = view.word.size();
  if (view.curves.size() != steps || view.steps.size() != steps || steps == 0)
    throw std::invalid_argument("density_strips_svg: " + std::to_string(view.curves.size()) + " curves and " +
                                std::to_string(view.steps.size()) + " steps for " + std::to_string(steps) +
                                " phonemes of " + view.word);
  const double width = kLabel + kCell * static_cast<double>(letters) + 4;
  const double height = kStrip * static_cast<double>(steps) + 20;
  const double span = kCell * static_cast<double>(letters);
  std::string svg;
  for (std::size_t t = 0; t < steps; ++t) {
    const auto& curve = view.curves[t];
    if (curve.empty() || !std::all_of(curve.begin(), curve.end(), [](double v) { return std::isfinite(v); }))
      throw std::invalid_argument("density_strips_svg: the curve of phoneme " + std::to_string(t) + " of " + view.word +
                                  " is empty or not finite");
    const double top = kStrip * static_cast<double>(t), base = top + kStrip - 3;
    const double peak = std::max(*std::max_element(curve.begin(), curve.end()), 1e-300);
    svg += "<text class=\"label\" x=\"2\" y=\"" + svg_number(base - 6) + "\">" + html_escape(view.output[t]) + "</text>";
    const StepAttention& s = view.steps[t];
    if (std::isfinite(s.support_begin) && std::isfinite(s.support_end)) {
      const double a = kLabel + std::clamp(s.support_begin, 0.0, 1.0) * span;
      const double b = kLabel + std::clamp(s.support_end, 0.0, 1.0) * span;
      svg += "<rect class=\"support\" x=\"" + svg_number(a) + "\" y=\"" + svg_number(top + 2) + "\" width=\"" +
             svg_number(std::max(b - a, 0.5)) + "\" height=\"" + svg_number(kStrip - 5) + "\"></rect>";
    }
    std::string points;
    for (std::size_t j = 0; j < curve.size(); ++j) {
      const double x = kLabel + (static_cast<double>(j) + 0.5) / static_cast<double>(curve.size()) * span;
      const double y = base - std::max(curve[j], 0.0) / peak * (kStrip - 7);
      if (!points.empty()) points += ' ';
      points += svg_number(x);
      points += ',';
      points += svg_number(y);
    }
    svg += "<line class=\"axis\" x1=\"" + svg_number(kLabel) + "\" y1=\"" + svg_number(base) + "\" x2=\"" +
           svg_number(kLabel + span) + "\" y2=\"" + svg_number(base) + "\"></line>";
    svg += "<polyline class=\"curve\" points=\"" + points + "\"></polyline>";
  }
  for (std::size_t l = 0; l <= letters; ++l) {
    const double x = kLabel + kCell * static_cast<double>(l);
    svg += "<line class=\"tick\" x1=\"" + svg_number(x) + "\" y1=\"0\" x2=\"" + svg_number(x) + "\" y2=\"" +
           svg_number(height - 18) + "\"></line>";
    if (l < letters)
      svg += "<text class=\"letter\" x=\"" + svg_number(x + kCell / 2) + "\" y=\"" + svg_number(height - 4) +
             "\">" + html_escape(std::string(1, view.word[l])) + "</text>";
  }
  return kit::svg_element(width, height, "strips", "density of each output phoneme over the letters of " + view.word, svg);
}

std::string render_report(const std::string& title, const std::string& results_markdown,
                          const std::vector<VariantWords>& variants) {
  std::string body = "<h1>" + html_escape(title) + "</h1>\n" + kit::markdown_to_html(results_markdown);
  body += "<p class=\"about\">Each test word: the greedy output (&#10003; when it equals one of the references), the "
          "alignment heat map (rows: output phonemes, columns: input letters; discrete weights, or the continuous "
          "density's mass over each letter's cell), and for continuous attention the density of every step over the "
          "letters, its support shaded (continuous sparsemax).</p>\n";
  for (const auto& v : variants) {
    body += "<section class=\"variant\">\n<h2>" + html_escape(v.variant) + "</h2>\n";
    for (const auto& w : v.words) body += word_html(w);
    body += "</section>\n";
  }
  const char* style =
      "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}"
      "table.results{border-collapse:collapse;margin:1em 0}table.results td,table.results th{border:1px solid #ccc;"
      "padding:3px 8px}section.variant{border-top:2px solid #888;margin-top:1.5em}"
      "article.word{display:inline-block;vertical-align:top;margin:0.5em 1.5em 0.5em 0}"
      ".head{margin:0.2em 0}.refs{margin:0.1em 0;color:#555;font-size:90%}.ok{color:#1a7f37}.err{color:#c62828}"
      ".plots svg{vertical-align:top;margin-right:0.8em}svg.heatmap text{font-size:11px}"
      "svg.strips .support{fill:#ffd8a8}svg.strips .curve{fill:none;stroke:#1f4e9e;stroke-width:1.5}"
      "svg.strips .axis{stroke:#999}svg.strips .tick{stroke:#eee}svg.strips text{font-size:11px}"
      "svg.strips .letter{text-anchor:middle}";
  return kit::html_document(title, style, body);
}

void write_report(const std::filesystem::path& file, const std::string& title, const std::string& results_markdown,
                  const std::vector<VariantWords>& variants) {
  kit::write_file(file, render_report(title, results_markdown, variants));
}

}  // namespace g2p
