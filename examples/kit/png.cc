// PNG encoding with libpng (kit/png.h).
#include "kit/png.h"

#include <png.h>

#include <csetjmp>

#include <stdexcept>
#include <string>

#include "kit/base64.h"
#include "kit/html.h"

namespace kit {
namespace {

// libpng reports an error by longjmp to the png_jmpbuf set in encode_png (the only frames it
// skips are libpng's own, C, frames); the message is kept for the exception thrown there.
void on_error(png_structp png, png_const_charp message) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

void on_write(png_structp png, png_bytep data, png_size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), length);
}
void on_flush(png_structp) {}

struct Writer {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~Writer() { png_destroy_write_struct(&png, &info); }
};

}  // namespace

std::string encode_png(const Image& image) {
  check_image(image, "encode_png");
  std::string bytes, error;
  Writer writer;
  writer.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, on_error, on_warning);
  if (writer.png == nullptr) throw std::runtime_error("encode_png: libpng cannot create a writer");
  writer.info = png_create_info_struct(writer.png);
  if (writer.info == nullptr) throw std::runtime_error("encode_png: libpng cannot create an info struct");
  if (setjmp(png_jmpbuf(writer.png))) throw std::runtime_error("encode_png: libpng: " + error);
  png_set_write_fn(writer.png, &bytes, on_write, on_flush);
  const int colour_type = image.channels == 1   ? PNG_COLOR_TYPE_GRAY
                          : image.channels == 3 ? PNG_COLOR_TYPE_RGB
                                                : PNG_COLOR_TYPE_RGB_ALPHA;
  png_set_IHDR(writer.png, writer.info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height),
               8, colour_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(writer.png, writer.info);
  const std::size_t stride = image.width * image.channels;
  for (std::size_t y = 0; y < image.height; ++y)
    png_write_row(writer.png, const_cast<png_bytep>(image.pixels.data() + y * stride));
  png_write_end(writer.png, nullptr);
  return bytes;
}

Image decode_png(std::string_view bytes, std::size_t channels) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("decode_png: channels = " + std::to_string(channels) + ", expected 1 or 3");
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()) == 0)
    throw std::runtime_error(std::string("decode_png: not a readable PNG (libpng: ") + png.message + ")");
  png.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  Image image{png.width, png.height, channels, std::vector<std::uint8_t>(PNG_IMAGE_SIZE(png))};
  const png_color black{0, 0, 0};
  if (png_image_finish_read(&png, &black, image.pixels.data(), 0, nullptr) == 0) {
    const std::string message = png.message;
    png_image_free(&png);
    throw std::runtime_error("decode_png: not a readable PNG (libpng: " + message + ")");
  }
  return image;
}

std::string png_data_uri(const Image& image) { return "data:image/png;base64," + base64_encode(encode_png(image)); }

std::string image_svg(const Image& image, const Frame& frame) {
  return "<image href=\"" + png_data_uri(image) + "\" x=\"" + svg_number(frame.left) + "\" y=\"" +
         svg_number(frame.top) + "\" width=\"" + svg_number(frame.width) + "\" height=\"" + svg_number(frame.height) +
         "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\"></image>";
}

std::string image_html(const Image& image, std::string_view alt, double display_width, double display_height) {
  return "<img src=\"" + png_data_uri(image) + "\" alt=\"" + html_escape(alt) + "\" width=\"" +
         svg_number(display_width) + "\" height=\"" + svg_number(display_height) +
         "\" style=\"image-rendering:pixelated\">";
}

}  // namespace kit
