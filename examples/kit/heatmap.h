// Heat maps: a matrix as a grid of coloured cells. Two uses: an alignment matrix (rows x
// columns with row and column labels, e.g. output phonemes x input graphemes), and attention
// over the regions of an image (drawn over the image as a translucent layer).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "kit/colour.h"
#include "kit/matrix.h"
#include "kit/svg.h"

namespace kit {

struct HeatmapOptions {
  std::vector<std::string> row_labels;     ///< empty, or one per row (drawn left of the rows)
  std::vector<std::string> column_labels;  ///< empty, or one per column (drawn above, slanted)
  double cell = 18;                        ///< side of a cell in SVG user units, > 0
  /// The colour range; NaN takes it from the values: vmin = min(0, smallest), vmax = largest
  /// (vmin + 1 when that is not above vmin).
  double vmin = std::numeric_limits<double>::quiet_NaN();
  double vmax = std::numeric_limits<double>::quiet_NaN();
  Rgb low{255, 255, 255}, high{214, 39, 40};
  std::string title = "heat map";          ///< the <title> of the SVG
};

/// The colour scale heatmap_svg uses for values under options (see HeatmapOptions::vmin).
ColourScale heatmap_scale(const Matrix& values, const HeatmapOptions& options);

/// A standalone <svg class="heatmap">: cell (r, c) is a rect at x = margin_left + c * cell,
/// y = margin_top + r * cell, cell x cell, filled with css_colour(scale(value)) and holding a
/// <title> "<row label> / <column label>: value" (labels default to the indices); margins
/// leave room for the labels (8.5 units per character at font size 11). Every label is escaped.
/// Throws std::invalid_argument for an empty or non-finite matrix, label counts that are
/// neither 0 nor the matrix's, or cell <= 0.
std::string heatmap_svg(const Matrix& values, const HeatmapOptions& options = {});

/// The cells of values spread over frame (cell (r, c) covers t0 in [r, r + 1] / rows and t1 in
/// [c, c + 1] / cols, i.e. the pixels of that region of an image under it), as a
/// <g class="heatmap-layer" opacity="opacity"> of rects for inclusion in an <svg>. Throws
/// std::invalid_argument as heatmap_svg, and for opacity outside [0, 1].
std::string heatmap_layer(const Matrix& values, const Frame& frame, const ColourScale& scale, double opacity);

}  // namespace kit
