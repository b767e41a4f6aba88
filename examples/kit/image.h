// An 8-bit raster image (a Fashion-MNIST scene, a rendered density) and its conversion from a
// matrix of values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kit/colour.h"
#include "kit/matrix.h"

namespace kit {

/// Row-major with interleaved channels: channel ch of pixel (x, y) is
/// pixels[(y * width + x) * channels + ch]. channels: 1 grey, 3 RGB, 4 RGBA.
struct Image {
  std::size_t width = 0, height = 0, channels = 1;
  std::vector<std::uint8_t> pixels;
};

/// Throws std::invalid_argument naming `function` unless width, height > 0, channels is 1, 3
/// or 4 and pixels holds width * height * channels bytes.
void check_image(const Image& image, const char* function);

/// A grey image of values (rows = height, cols = width): pixel = round(255 * t) with
/// t = clamp((v - vmin) / (vmax - vmin), 0, 1). Throws std::invalid_argument for an empty or
/// non-finite matrix or unless vmin < vmax, both finite.
Image grey_image(const Matrix& values, double vmin, double vmax);

/// An RGB image of values through a colour scale: pixel (c, r) = scale(values(r, c)).
Image colour_image(const Matrix& values, const ColourScale& scale);

}  // namespace kit
