// Images (kit/image.h).
#include "kit/image.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kit {

void check_image(const Image& image, const char* function) {
  const std::string name = std::string(function) + ": image";
  if (image.width == 0 || image.height == 0)
    throw std::invalid_argument(name + " is empty (" + std::to_string(image.width) + " x " +
                                std::to_string(image.height) + ")");
  if (image.channels != 1 && image.channels != 3 && image.channels != 4)
    throw std::invalid_argument(name + " has channels = " + std::to_string(image.channels) + " (1, 3 or 4)");
  if (image.pixels.size() != image.width * image.height * image.channels)
    throw std::invalid_argument(name + " has " + std::to_string(image.pixels.size()) + " bytes for " +
                                std::to_string(image.width) + " x " + std::to_string(image.height) + " x " +
                                std::to_string(image.channels));
}

Image grey_image(const Matrix& values, double vmin, double vmax) {
  check_matrix(values, "grey_image", "values");
  if (!std::isfinite(vmin) || !std::isfinite(vmax) || !(vmin < vmax))
    throw std::invalid_argument("grey_image: vmin = " + std::to_string(vmin) + " and vmax = " + std::to_string(vmax) +
                                " must be finite with vmin < vmax");
  Image image{values.cols, values.rows, 1, {}};
  image.pixels.reserve(values.values.size());
  for (double v : values.values)
    image.pixels.push_back(static_cast<std::uint8_t>(std::lround(255.0 * std::clamp((v - vmin) / (vmax - vmin), 0.0, 1.0))));
  return image;
}

Image colour_image(const Matrix& values, const ColourScale& scale) {
  check_matrix(values, "colour_image", "values");
  Image image{values.cols, values.rows, 3, {}};
  image.pixels.reserve(3 * values.values.size());
  for (double v : values.values) {
    const Rgb c = scale(v);
    image.pixels.insert(image.pixels.end(), {c.r, c.g, c.b});
  }
  return image;
}

}  // namespace kit
