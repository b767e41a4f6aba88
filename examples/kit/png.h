// PNG through Debian's libpng, and the image embedded in a report as a data: URI (one
// self-contained HTML file, no external resources).
#pragma once

#include <string>
#include <string_view>

#include "kit/image.h"
#include "kit/svg.h"

namespace kit {

/// The PNG file of image: 8 bits per channel, colour type grey / RGB / RGBA for 1 / 3 / 4
/// channels, no interlacing. Throws std::invalid_argument for an inconsistent image
/// (check_image) and std::runtime_error when libpng reports an error.
std::string encode_png(const Image& image);

/// The image of a PNG file's bytes, converted by libpng's simplified API to 8-bit grey (1
/// channel, colours by libpng's luminance, alpha composited on black) or RGB (3). Throws
/// std::runtime_error with libpng's message for bytes that are not a readable PNG, and
/// std::invalid_argument for channels other than 1 or 3.
Image decode_png(std::string_view bytes, std::size_t channels = 1);

/// "data:image/png;base64," followed by the base64 of encode_png(image).
std::string png_data_uri(const Image& image);

/// An SVG <image> of the PNG covering frame (stretched, pixels kept sharp), to draw layers on.
std::string image_svg(const Image& image, const Frame& frame);

/// An HTML <img> of the PNG, display_width x display_height CSS pixels (pixels kept sharp),
/// with alt text (escaped).
std::string image_html(const Image& image, std::string_view alt, double display_width, double display_height);

}  // namespace kit
