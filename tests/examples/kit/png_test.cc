// kit/png.h, kit/image.h and kit/base64.h: PNG files decoded again by libpng's own reader and
// compared pixel by pixel, base64 against RFC 4648's vectors and decoded here, the data: URI
// in an <img> and an SVG <image>.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "html_checker.h"
#include "kit/base64.h"
#include "kit/png.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// libpng's simplified reader: the pixels of a PNG file in the given format.
std::vector<std::uint8_t> decode(const std::string& file, std::uint32_t format, std::size_t& width,
                                 std::size_t& height) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, file.data(), file.size())) throw std::runtime_error(image.message);
  image.format = format;
  std::vector<std::uint8_t> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) throw std::runtime_error(image.message);
  width = image.width;
  height = image.height;
  return pixels;
}

// RFC 4648 base64 decoding, written independently of the encoder.
std::string base64_decode(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<std::uint32_t>(alphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  return out;
}

kit::Image pattern(std::size_t width, std::size_t height, std::size_t channels) {
  kit::Image image{width, height, channels, {}};
  for (std::size_t i = 0; i < width * height * channels; ++i) image.pixels.push_back(static_cast<std::uint8_t>(i * 37 + i / 5));
  return image;
}

TEST(Base64, RfcVectorsAndARoundTrip) {
  EXPECT_EQ(kit::base64_encode(""), "");
  EXPECT_EQ(kit::base64_encode("f"), "Zg==");
  EXPECT_EQ(kit::base64_encode("fo"), "Zm8=");
  EXPECT_EQ(kit::base64_encode("foo"), "Zm9v");
  EXPECT_EQ(kit::base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(kit::base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(kit::base64_encode("foobar"), "Zm9vYmFy");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(base64_decode(kit::base64_encode(bytes)), bytes);
}

TEST(Png, GreyRgbAndRgbaRoundTripPixelForPixel) {
  const std::pair<std::size_t, std::uint32_t> formats[] = {
      {1, PNG_FORMAT_GRAY}, {3, PNG_FORMAT_RGB}, {4, PNG_FORMAT_RGBA}};
  for (const auto& [channels, format] : formats) {
    SCOPED_TRACE(channels);
    const kit::Image image = pattern(7, 5, channels);  // odd sizes: no row padding assumed
    const std::string file = kit::encode_png(image);
    EXPECT_EQ(file.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    std::size_t width = 0, height = 0;
    EXPECT_EQ(decode(file, format, width, height), image.pixels);
    EXPECT_EQ(width, 7u);
    EXPECT_EQ(height, 5u);
  }
}

TEST(Png, DecodeReadsWhatEncodeWroteAndConvertsColourToGrey) {
  // encode_png is checked against libpng's reader above; decode_png must return the same pixels.
  for (const std::size_t channels : {1u, 3u}) {
    SCOPED_TRACE(channels);
    const kit::Image image = pattern(9, 4, channels);
    const kit::Image back = kit::decode_png(kit::encode_png(image), channels);
    EXPECT_EQ(back.width, 9u);
    EXPECT_EQ(back.height, 4u);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels);
  }
  // Grey written as RGB (r = g = b) reads back as the grey values, to libpng's rounding.
  const kit::Image grey = pattern(6, 3, 1);
  kit::Image rgb{6, 3, 3, {}};
  for (const auto v : grey.pixels) rgb.pixels.insert(rgb.pixels.end(), {v, v, v});
  const kit::Image converted = kit::decode_png(kit::encode_png(rgb), 1);
  ASSERT_EQ(converted.pixels.size(), grey.pixels.size());
  for (std::size_t i = 0; i < grey.pixels.size(); ++i) EXPECT_NEAR(converted.pixels[i], grey.pixels[i], 1) << i;
  // Not a PNG, a truncated one, and a channel count it does not produce.
  const std::string file = kit::encode_png(grey);
  for (const std::string& bad : {std::string("not a png at all"), file.substr(0, file.size() / 2)}) {
    try {
      (void)kit::decode_png(bad);
      ADD_FAILURE() << "no error for " << bad.size() << " bytes";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("not a readable PNG"));
    }
  }
  EXPECT_THROW((void)kit::decode_png(file, 2), std::invalid_argument);
}

TEST(Png, GreyImageOfAMatrixAndItsDataUri) {
  // rows = height: 2 x 3 values in [0, 2] -> round(255 * v / 2).
  const kit::Image image = kit::grey_image({2, 3, {0.0, 0.5, 1.0, 1.5, 2.0, 3.0}}, 0.0, 2.0);
  EXPECT_EQ(image.width, 3u);
  EXPECT_EQ(image.height, 2u);
  EXPECT_EQ(image.pixels, (std::vector<std::uint8_t>{0, 64, 128, 191, 255, 255}));
  const std::string uri = kit::png_data_uri(image);
  ASSERT_THAT(uri, StartsWith("data:image/png;base64,"));
  std::size_t width = 0, height = 0;
  EXPECT_EQ(decode(base64_decode(uri.substr(22)), PNG_FORMAT_GRAY, width, height), image.pixels);
  const std::string img = kit::image_html(image, "scene <1>", 84, 56);
  EXPECT_EQ(sparcon_test::check_html("<p>" + img + "</p>"), "");
  EXPECT_THAT(img, HasSubstr("src=\"" + uri + "\""));
  EXPECT_THAT(img, HasSubstr("alt=\"scene &lt;1&gt;\""));
  const std::string svg = kit::image_svg(image, {0, 0, 280, 280});
  EXPECT_EQ(sparcon_test::check_html("<svg>" + svg + "</svg>"), "");
  EXPECT_THAT(svg, HasSubstr("href=\"" + uri + "\""));
}

TEST(Png, ColourImageThroughAScale) {
  const kit::Image image = kit::colour_image({1, 2, {0.0, 1.0}}, kit::ColourScale{0, 1, {0, 0, 0}, {255, 128, 0}});
  EXPECT_EQ(image.channels, 3u);
  EXPECT_EQ(image.pixels, (std::vector<std::uint8_t>{0, 0, 0, 255, 128, 0}));
}

TEST(Png, BadImagesAreRejectedNamingTheProblem) {
  auto message = [](const kit::Image& image) {
    try {
      (void)kit::encode_png(image);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no std::invalid_argument");
  };
  EXPECT_THAT(message({0, 3, 1, {}}), HasSubstr("image is empty (0 x 3)"));
  EXPECT_THAT(message({2, 2, 2, std::vector<std::uint8_t>(8)}), HasSubstr("channels = 2"));
  EXPECT_THAT(message({2, 2, 3, std::vector<std::uint8_t>(11)}), HasSubstr("11 bytes for 2 x 2 x 3"));
  EXPECT_THROW(kit::grey_image({1, 1, {0.5}}, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(kit::grey_image({1, 1, {std::nan("")}}, 0.0, 1.0), std::invalid_argument);
}

}  // namespace
