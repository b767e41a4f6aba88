// The HTML report (report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "kit/atomic_file.h"
#include "kit/format.h"
#include "kit/html.h"
#include "kit/markdown.h"

namespace spam {
namespace {

using kit::fixed;
using kit::html_escape;

constexpr double kPlotWidth = 1000.0;  // SVG user units; the plot is stretched to the page width
constexpr double kPlotHeight = 100.0;

std::string label_name(int label) {
  if (label == 1) return "spam";
  if (label == 0) return "ham";
  return std::to_string(label);
}

// s without leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// The density over the document as an SVG polyline, the support interval shaded.
std::string density_svg(const DocumentView& doc, const std::string& variant) {
  const std::size_t m = doc.density.size();
  double peak = 0.0;
  for (float d : doc.density)
    if (std::isfinite(d)) peak = std::max(peak, static_cast<double>(d));
  std::string svg = "<svg class=\"density\" viewBox=\"0 0 " + fixed(kPlotWidth, 0) + " " + fixed(kPlotHeight, 0) +
                    "\" preserveAspectRatio=\"none\" role=\"img\">";
  svg += "<title>" + html_escape("continuous density of " + variant + " over the document (peak " +
                                 fixed(peak, 4) + ")") + "</title>";
  if (std::isfinite(doc.support_begin) && std::isfinite(doc.support_end) && doc.support_end >= doc.support_begin) {
    const double a = std::clamp(doc.support_begin, 0.0, 1.0) * kPlotWidth;
    const double b = std::clamp(doc.support_end, 0.0, 1.0) * kPlotWidth;
    svg += "<rect class=\"support\" x=\"" + fixed(a, 2) + "\" y=\"0\" width=\"" + fixed(std::max(b - a, 1.0), 2) +
           "\" height=\"" + fixed(kPlotHeight, 0) + "\"></rect>";
  }
  svg += "<line class=\"axis\" x1=\"0\" y1=\"" + fixed(kPlotHeight - 1, 0) + "\" x2=\"" + fixed(kPlotWidth, 0) +
         "\" y2=\"" + fixed(kPlotHeight - 1, 0) + "\" vector-effect=\"non-scaling-stroke\"></line>";
  std::string points;
  for (std::size_t l = 0; l < m; ++l) {
    const double x = (static_cast<double>(l) + 0.5) / static_cast<double>(m) * kPlotWidth;
    const double d = std::isfinite(doc.density[l]) ? std::max(0.0, static_cast<double>(doc.density[l])) : 0.0;
    const double y = (kPlotHeight - 2.0) - (peak > 0.0 ? d / peak : 0.0) * (kPlotHeight - 8.0);
    if (!points.empty()) points += ' ';
    points += fixed(x, 2) + "," + fixed(y, 2);
  }
  svg += "<polyline class=\"curve\" points=\"" + points + "\" vector-effect=\"non-scaling-stroke\"></polyline>";
  svg += "</svg>";
  return svg;
}

std::string document_html(const DocumentView& doc, const std::string& variant) {
  const std::size_t length = doc.tokens.size();
  if (!doc.discrete_weights.empty() && doc.discrete_weights.size() != length)
    throw std::invalid_argument("report: document " + doc.id + " of " + variant + " has " +
                                std::to_string(doc.discrete_weights.size()) + " discrete weights for " +
                                std::to_string(length) + " tokens");
  const bool correct = doc.label == doc.predicted;
  std::string html = "<article class=\"doc\">\n";
  html += "<p class=\"head\"><span class=\"id\">" + html_escape(doc.id) + "</span> &middot; true: <b>" +
          html_escape(label_name(doc.label)) + "</b> &middot; predicted: <b>" + html_escape(label_name(doc.predicted)) +
          "</b> &middot; P(spam) = " + fixed(doc.spam_probability, 3) + " &middot; " + std::to_string(length) +
          " tokens <span class=\"" + (correct ? "ok\">&#10003; correct" : "err\">&#10007; wrong") + "</span></p>\n";

  const bool continuous = !doc.density.empty();
  const bool bounded = std::isfinite(doc.support_begin) && std::isfinite(doc.support_end);
  auto [first, last] = attended_token_range(doc.support_begin, doc.support_end, length);
  if (continuous) {
    html += density_svg(doc, variant) + "\n";
    html += "<p class=\"interval\">";
    if (!bounded) {
      html += "continuous density with unbounded support: the whole document";
    } else {
      html += "support [" + fixed(doc.support_begin, 3) + ", " + fixed(doc.support_end, 3) + "] (" +
              fixed(100.0 * (std::clamp(doc.support_end, 0.0, 1.0) - std::clamp(doc.support_begin, 0.0, 1.0)), 1) +
              "% of the document); attended interval: ";
      if (first <= last)
        html += "tokens " + std::to_string(first) + "&ndash;" + std::to_string(last) + " of 0&ndash;" +
                std::to_string(length == 0 ? 0 : length - 1) + " (underlined)";
      else
        html += "no token position inside the support";
    }
    html += "</p>\n";
  }

  float max_weight = 0.0F;
  for (float w : doc.discrete_weights)
    if (std::isfinite(w)) max_weight = std::max(max_weight, w);
  const std::size_t shown = std::min(length, kMaxTokensShown);
  html += "<p class=\"tokens\">";
  for (std::size_t l = 0; l < shown; ++l) {
    if (l > 0) html += ' ';
    const bool in_support = continuous && bounded && static_cast<std::ptrdiff_t>(l) >= first &&
                            static_cast<std::ptrdiff_t>(l) <= last;
    const float w = doc.discrete_weights.empty() ? 0.0F : doc.discrete_weights[l];
    const bool shaded = std::isfinite(w) && w > 0.0F && max_weight > 0.0F;
    if (!shaded && !in_support) {
      html += html_escape(doc.tokens[l]);
      continue;
    }
    html += "<span";
    if (in_support) html += " class=\"sup\"";
    if (shaded)
      html += " style=\"background:rgba(214,39,40," + fixed(std::max(0.001, static_cast<double>(w / max_weight)), 3) +
              ")\" title=\"token " + std::to_string(l) + ", weight " + fixed(w, 5) + "\"";
    html += '>';
    html += html_escape(doc.tokens[l]);
    html += "</span>";
  }
  html += "</p>\n";
  if (shown < length)
    html += "<p class=\"note\">&hellip; " + std::to_string(length - shown) + " more tokens not shown (first " +
            std::to_string(shown) + " of " + std::to_string(length) +
            "; the density plot covers the whole document)</p>\n";
  html += "</article>\n";
  return html;
}

constexpr const char* kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table.results { border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }
table.results th, table.results td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; }
table.results th { background: #f3f3f3; }
ul.run { color: #555; font-size: 0.9rem; }
.legend { color: #555; font-size: 0.9rem; }
article.doc { border: 1px solid #e3e3e3; border-radius: 6px; padding: 0.6rem 0.9rem; margin: 1rem 0; }
p.head { margin: 0 0 0.4rem 0; font-size: 0.95rem; }
span.id { font-family: ui-monospace, monospace; }
.ok { color: #1a7f37; } .err { color: #c62828; }
svg.density { display: block; width: 100%; height: 90px; background: #fafafa; border: 1px solid #eee; }
svg.density .support { fill: rgba(31, 119, 180, 0.18); }
svg.density .curve { fill: none; stroke: #1f77b4; stroke-width: 2; }
svg.density .axis { stroke: #999; stroke-width: 1; }
p.interval { font-size: 0.85rem; color: #555; margin: 0.2rem 0 0.4rem 0; }
p.tokens { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85rem; word-wrap: break-word; }
p.tokens span { border-radius: 2px; }
p.tokens span.sup { border-bottom: 2px solid #1f77b4; }
p.note { font-size: 0.85rem; color: #777; }
)css";

}  // namespace

std::pair<std::ptrdiff_t, std::ptrdiff_t> attended_token_range(double begin, double end, std::size_t length) {
  if (!std::isfinite(begin) || !std::isfinite(end) || length == 0 || end < begin) return {1, 0};
  const double n = static_cast<double>(length);
  // t_l = (l + 1/2) / n in [begin, end]  <=>  begin * n - 1/2 <= l <= end * n - 1/2.
  const double lo = std::max(0.0, std::ceil(begin * n - 0.5));
  const double hi = std::min(n - 1.0, std::floor(end * n - 0.5));
  if (lo > hi) return {1, 0};
  return {static_cast<std::ptrdiff_t>(lo), static_cast<std::ptrdiff_t>(hi)};
}

std::string render_html_report(const std::string& title, const std::vector<VariantDocuments>& variants,
                               const std::string& results_table) {
  std::string body = "<h1>" + html_escape(title) + "</h1>\n";
  body += "<section class=\"table\">\n";
  const std::string_view table = trim(results_table);
  body += !table.empty() && table.front() == '<' ? std::string(table) + "\n" : kit::markdown_to_html(results_table);
  body += "</section>\n";
  body += "<p class=\"legend\">Tokens are shaded by their discrete attention weight (opacity proportional to "
          "weight / largest weight in the document; tokens with zero weight are not shaded). For continuous "
          "attention the curve is the density over the document (left = first token, right = last token), the "
          "shaded band its support, and the tokens inside the support are underlined. At most " +
          std::to_string(kMaxTokensShown) + " tokens are shown per document.</p>\n";
  for (const auto& v : variants) {
    body += "<section class=\"variant\">\n<h2>" + html_escape(v.variant) + "</h2>\n";
    if (v.documents.empty()) body += "<p class=\"note\">no documents</p>\n";
    for (const auto& doc : v.documents) body += document_html(doc, v.variant);
    body += "</section>\n";
  }
  return kit::html_document(title, kStyle, body);
}

void write_html_report(const std::filesystem::path& file, const std::string& title,
                       const std::vector<VariantDocuments>& variants,
                       const std::string& results_markdown_or_html_table) {
  kit::write_file(file, render_html_report(title, variants, results_markdown_or_html_table));
}

}  // namespace spam
