// Colours of the heat maps: 8-bit RGB and a linear scale from a low to a high colour.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace kit {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  auto operator<=>(const Rgb&) const = default;
};

/// Per channel round(a + t (b - a)) with t clamped to [0, 1] (NaN counts as 0).
Rgb mix(Rgb a, Rgb b, double t);

/// "#rrggbb", lower-case hexadecimal.
std::string css_colour(Rgb colour);

/// value -> mix(low, high, (value - vmin) / (vmax - vmin)): vmin and below get low, vmax and
/// above get high. Throws std::invalid_argument unless vmin < vmax, both finite.
struct ColourScale {
  double vmin = 0, vmax = 1;
  Rgb low{255, 255, 255};  ///< white
  Rgb high{214, 39, 40};   ///< the report's red (as the token shading of text_classification)

  [[nodiscard]] Rgb operator()(double value) const;
};

}  // namespace kit
