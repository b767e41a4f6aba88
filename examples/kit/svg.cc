// SVG building blocks (kit/svg.h).
#include "kit/svg.h"

#include <cmath>

#include "kit/format.h"
#include "kit/html.h"

namespace kit {

std::string svg_number(double value) { return fixed(std::isfinite(value) ? value : 0.0, 3); }

std::string svg_element(double width, double height, std::string_view css_class, std::string_view title,
                        std::string_view content) {
  std::string svg = "<svg class=\"" + html_escape(css_class) + "\" viewBox=\"0 0 " + svg_number(width) + " " +
                    svg_number(height) + "\" width=\"" + svg_number(width) + "\" height=\"" + svg_number(height) +
                    "\" role=\"img\"><title>" + html_escape(title) + "</title>";
  svg += content;
  svg += "</svg>";
  return svg;
}

}  // namespace kit
