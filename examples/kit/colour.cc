// Colours (kit/colour.h).
#include "kit/colour.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kit {

Rgb mix(Rgb a, Rgb b, double t) {
  t = std::isnan(t) ? 0.0 : std::clamp(t, 0.0, 1.0);
  auto channel = [t](std::uint8_t from, std::uint8_t to) {
    return static_cast<std::uint8_t>(std::lround(from + t * (static_cast<double>(to) - from)));
  };
  return {channel(a.r, b.r), channel(a.g, b.g), channel(a.b, b.b)};
}

std::string css_colour(Rgb colour) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", colour.r, colour.g, colour.b);
  return text;
}

Rgb ColourScale::operator()(double value) const {
  if (!std::isfinite(vmin) || !std::isfinite(vmax) || !(vmin < vmax))
    throw std::invalid_argument("ColourScale: vmin = " + std::to_string(vmin) + " and vmax = " +
                                std::to_string(vmax) + " must be finite with vmin < vmax");
  return mix(low, high, (value - vmin) / (vmax - vmin));
}

}  // namespace kit
