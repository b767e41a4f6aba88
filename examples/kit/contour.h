// Iso-contours of a density sampled on a grid (marching squares), drawn over an image.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kit/matrix.h"
#include "kit/svg.h"

namespace kit {

/// A position t = (t0, t1) in the unit square (kit/svg.h: t0 down the rows, t1 across).
struct Point {
  double t0 = 0, t1 = 0;
};

struct Segment {
  Point a, b;
};

/// The level set {t : f(t) = level} of the piecewise-linear interpolant of samples of f taken
/// at the cell centres t = ((i + 1/2) / rows, (k + 1/2) / cols) of a rows x cols grid, by
/// marching squares: in every square of four neighbouring samples, each edge whose ends lie on
/// either side of level (a sample >= level counts as above) is cut where
/// v_p + s (v_q - v_p) = level, s in [0, 1], and the cuts are joined in pairs; a saddle (the
/// two diagonals on opposite sides) is resolved by the mean of the four samples. Segments come
/// in no particular order; none when level lies outside the samples' range. Throws
/// std::invalid_argument for a non-finite level, an empty or non-finite matrix, or fewer than
/// 2 x 2 samples.
std::vector<Segment> iso_contour(const Matrix& samples, double level);

/// The segments as one <path class="css_class" d="M x y L x y ..."> on frame (fill none).
std::string contour_svg(const std::vector<Segment>& segments, const Frame& frame, std::string_view css_class);

}  // namespace kit
