// SVG building blocks shared by the plots: where positions in the unit square go, numbers as
// coordinates, and the <svg> element around a drawing.
//
// Positions follow sparcon's convention for images: t = (t0, t1) in [0, 1]^2, t0 down the rows
// and t1 across the columns, the pixel (i, k) of an H x W image centred at
// ((i + 1/2) / H, (k + 1/2) / W). A Frame places that square in SVG user units, whose y axis
// points down: x = left + t1 * width, y = top + t0 * height.
#pragma once

#include <string>
#include <string_view>

namespace kit {

struct Frame {
  double left = 0, top = 0, width = 1, height = 1;

  [[nodiscard]] double x(double t1) const { return left + t1 * width; }
  [[nodiscard]] double y(double t0) const { return top + t0 * height; }
};

/// A coordinate or length as SVG text: 3 digits after the point ("12.500"); "0.000" for a
/// non-finite value (callers check their input; this only keeps the markup valid).
std::string svg_number(double value);

/// <svg class="css_class" viewBox="0 0 width height" width="width" height="height" role="img">
/// with <title>title</title> (escaped) first, then content (already SVG), then </svg>.
std::string svg_element(double width, double height, std::string_view css_class, std::string_view title,
                        std::string_view content);

}  // namespace kit
