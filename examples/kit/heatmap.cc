// Heat maps (kit/heatmap.h).
#include "kit/heatmap.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kit/format.h"
#include "kit/html.h"

namespace kit {
namespace {

constexpr double kCharacterWidth = 8.5;  // SVG units per character at font size 11 (upper case: "OW" is 18 wide)
constexpr double kFontSize = 11.0;

// Characters of UTF-8 text (continuation bytes not counted), for the label margins.
std::size_t characters(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void check_labels(const std::vector<std::string>& labels, std::size_t count, const char* argument) {
  if (!labels.empty() && labels.size() != count)
    throw std::invalid_argument(std::string("heatmap_svg: ") + argument + " has " + std::to_string(labels.size()) +
                                " labels for " + std::to_string(count) + (argument[0] == 'r' ? " rows" : " columns"));
}

std::string rect(double x, double y, double width, double height, Rgb fill, const std::string& title) {
  return "<rect x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" width=\"" + svg_number(width) +
         "\" height=\"" + svg_number(height) + "\" fill=\"" + css_colour(fill) + "\"><title>" + html_escape(title) +
         "</title></rect>";
}

}  // namespace

ColourScale heatmap_scale(const Matrix& values, const HeatmapOptions& options) {
  check_matrix(values, "heatmap_scale", "values");
  const auto [lo, hi] = std::minmax_element(values.values.begin(), values.values.end());
  ColourScale scale{options.vmin, options.vmax, options.low, options.high};
  if (std::isnan(scale.vmin)) scale.vmin = std::min(0.0, *lo);
  if (std::isnan(scale.vmax)) scale.vmax = *hi > scale.vmin ? *hi : scale.vmin + 1.0;
  if (!std::isfinite(scale.vmin) || !std::isfinite(scale.vmax) || !(scale.vmin < scale.vmax))
    throw std::invalid_argument("heatmap_svg: vmin = " + std::to_string(scale.vmin) + " and vmax = " +
                                std::to_string(scale.vmax) + " must be finite with vmin < vmax");
  return scale;
}

std::string heatmap_svg(const Matrix& values, const HeatmapOptions& options) {
  check_matrix(values, "heatmap_svg", "values");
  check_labels(options.row_labels, values.rows, "row_labels");
  check_labels(options.column_labels, values.cols, "column_labels");
  if (!(options.cell > 0) || !std::isfinite(options.cell))
    throw std::invalid_argument("heatmap_svg: cell = " + std::to_string(options.cell) + " must be > 0");
  const ColourScale scale = heatmap_scale(values, options);

  std::size_t longest_row = 0, longest_column = 0;
  for (const auto& label : options.row_labels) longest_row = std::max(longest_row, characters(label));
  for (const auto& label : options.column_labels) longest_column = std::max(longest_column, characters(label));
  const double cell = options.cell;
  const double left = longest_row > 0 ? kCharacterWidth * static_cast<double>(longest_row) + 6 : 0;
  // Column labels are slanted by 60 degrees: they rise sin(60) of their length.
  const double top = longest_column > 0 ? 0.87 * kCharacterWidth * static_cast<double>(longest_column) + 8 : 0;
  const double width = left + cell * static_cast<double>(values.cols) + (longest_column > 0 ? cell : 0);
  const double height = top + cell * static_cast<double>(values.rows);

  std::string content;
  for (std::size_t r = 0; r < values.rows; ++r)
    if (!options.row_labels.empty())
      content += "<text x=\"" + svg_number(left - 4) + "\" y=\"" +
                 svg_number(top + (static_cast<double>(r) + 0.5) * cell) + "\" font-size=\"" + svg_number(kFontSize) +
                 "\" text-anchor=\"end\" dominant-baseline=\"middle\">" + html_escape(options.row_labels[r]) +
                 "</text>";
  for (std::size_t c = 0; c < values.cols; ++c)
    if (!options.column_labels.empty())
      content += "<text transform=\"translate(" + svg_number(left + (static_cast<double>(c) + 0.5) * cell) + "," +
                 svg_number(top - 4) + ") rotate(-60)\" font-size=\"" + svg_number(kFontSize) + "\">" +
                 html_escape(options.column_labels[c]) + "</text>";
  for (std::size_t r = 0; r < values.rows; ++r)
    for (std::size_t c = 0; c < values.cols; ++c) {
      const std::string row = options.row_labels.empty() ? std::to_string(r) : options.row_labels[r];
      const std::string column = options.column_labels.empty() ? std::to_string(c) : options.column_labels[c];
      content += rect(left + static_cast<double>(c) * cell, top + static_cast<double>(r) * cell, cell, cell,
                      scale(values(r, c)), row + " / " + column + ": " + fixed(values(r, c), 4));
    }
  return svg_element(width, height, "heatmap", options.title, content);
}

std::string heatmap_layer(const Matrix& values, const Frame& frame, const ColourScale& scale, double opacity) {
  check_matrix(values, "heatmap_layer", "values");
  if (!(opacity >= 0 && opacity <= 1))
    throw std::invalid_argument("heatmap_layer: opacity = " + std::to_string(opacity) + " must be in [0, 1]");
  const double w = frame.width / static_cast<double>(values.cols), h = frame.height / static_cast<double>(values.rows);
  std::string g = "<g class=\"heatmap-layer\" opacity=\"" + svg_number(opacity) + "\">";
  for (std::size_t r = 0; r < values.rows; ++r)
    for (std::size_t c = 0; c < values.cols; ++c)
      g += rect(frame.left + static_cast<double>(c) * w, frame.top + static_cast<double>(r) * h, w, h,
                scale(values(r, c)), "(" + std::to_string(r) + ", " + std::to_string(c) + "): " + fixed(values(r, c), 4));
  return g + "</g>";
}

}  // namespace kit
