// kit/colour.h and kit/heatmap.h: cell colours for known values computed by hand, escaped
// hostile labels, well-formed SVG, and the errors for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "html_checker.h"
#include "kit/colour.h"
#include "kit/heatmap.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The fill of every <rect>, in document order.
std::vector<std::string> fills(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex fill("<rect [^>]*fill=\"(#[0-9a-f]{6})\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fill); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no std::invalid_argument";
}

TEST(Colour, MixRoundsPerChannelAndClamps) {
  // white -> (214, 39, 40) at 0.5: (255 - 20.5, 255 - 108, 255 - 107.5) -> (235, 147, 148).
  EXPECT_EQ(kit::css_colour(kit::mix({255, 255, 255}, {214, 39, 40}, 0.5)), "#eb9394");
  EXPECT_EQ(kit::mix({0, 0, 0}, {200, 100, 50}, 2.0), (kit::Rgb{200, 100, 50}));
  EXPECT_EQ(kit::mix({0, 0, 0}, {200, 100, 50}, -1.0), (kit::Rgb{0, 0, 0}));
  EXPECT_EQ(kit::mix({10, 10, 10}, {200, 100, 50}, std::nan("")), (kit::Rgb{10, 10, 10}));
  EXPECT_THAT(message_of([] { (void)kit::ColourScale{1, 1}(0.5); }), HasSubstr("vmin"));
}

TEST(Heatmap, CellColoursForKnownValues) {
  // Default range: vmin = min(0, 0) = 0, vmax = 1. 0.25 -> (255 - 10.25, 255 - 54, 255 - 53.75)
  // = (245, 201, 201).
  const kit::Matrix m{2, 2, {0.0, 0.5, 1.0, 0.25}};
  EXPECT_THAT(fills(kit::heatmap_svg(m)), ElementsAre("#ffffff", "#eb9394", "#d62728", "#f5c9c9"));
  // An explicit range: 0.5 in [0.5, 1] is the low colour, 1 the high one, values clamp.
  kit::HeatmapOptions o;
  o.vmin = 0.5;
  o.vmax = 1.0;
  o.low = {0, 0, 0};
  o.high = {0, 0, 255};
  EXPECT_THAT(fills(kit::heatmap_svg(m, o)), ElementsAre("#000000", "#000000", "#0000ff", "#000000"));
  // The layer over an image spreads the cells over the frame: 2 x 2 cells on 100 x 50.
  const std::string layer = kit::heatmap_layer(m, {10, 20, 100, 50}, kit::ColourScale{}, 0.4);
  EXPECT_THAT(fills(layer), ElementsAre("#ffffff", "#eb9394", "#d62728", "#f5c9c9"));
  EXPECT_THAT(layer, HasSubstr("opacity=\"0.400\""));
  EXPECT_THAT(layer, HasSubstr("<rect x=\"60.000\" y=\"45.000\" width=\"50.000\" height=\"25.000\""));
}

TEST(Heatmap, AlignmentMatrixLabelsAreEscapedAndCellsPlaced) {
  kit::HeatmapOptions o;
  o.row_labels = {"<script>alert(1)</script>", "AH0"};
  o.column_labels = {"a\"b", "&c", "'"};
  o.cell = 10;
  o.title = "alignment <x>";
  const kit::Matrix m{2, 3, {0.1, 0.7, 0.2, 0.0, 0.1, 0.9}};
  const std::string svg = kit::heatmap_svg(m, o);
  EXPECT_EQ(sparcon_test::check_html(svg), "");
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(svg, HasSubstr(">a&quot;b</text>"));
  EXPECT_THAT(svg, HasSubstr(">&amp;c</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>alignment &lt;x&gt;</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>AH0 / &amp;c: 0.1000</title>"));
  EXPECT_EQ(fills(svg).size(), 6u);
  // The last cell (1, 2) sits 2 cells right and 1 down of the first.
  const std::regex rect("<rect x=\"([0-9.]+)\" y=\"([0-9.]+)\"");
  std::vector<std::pair<double, double>> at;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it)
    at.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  ASSERT_EQ(at.size(), 6u);
  EXPECT_DOUBLE_EQ(at[5].first - at[0].first, 20.0);
  EXPECT_DOUBLE_EQ(at[5].second - at[0].second, 10.0);
  EXPECT_GT(at[0].first, 0.0);  // room for the row labels
}

TEST(Heatmap, BadInputNamesTheArgumentAndTheValue) {
  EXPECT_THAT(message_of([] { kit::heatmap_svg({0, 3, {}}); }), HasSubstr("values is empty (0 x 3)"));
  EXPECT_THAT(message_of([] { kit::heatmap_svg({2, 2, {1, 2, 3}}); }), HasSubstr("values has 3 values for 2 x 2"));
  EXPECT_THAT(message_of([] { kit::heatmap_svg({2, 1, {1, std::nan("")}}); }),
              HasSubstr("values[1, 0] = nan is not finite"));
  EXPECT_THAT(message_of([] { kit::heatmap_svg({1, 1, {INFINITY}}); }), HasSubstr("values[0, 0] = inf"));
  kit::HeatmapOptions o;
  o.row_labels = {"a", "b", "c"};
  EXPECT_THAT(message_of([&] { kit::heatmap_svg({2, 2, {1, 2, 3, 4}}, o); }),
              HasSubstr("row_labels has 3 labels for 2 rows"));
  o.row_labels.clear();
  o.column_labels = {"x"};
  EXPECT_THAT(message_of([&] { kit::heatmap_svg({2, 2, {1, 2, 3, 4}}, o); }),
              HasSubstr("column_labels has 1 labels for 2 columns"));
  o.column_labels.clear();
  o.cell = 0;
  EXPECT_THAT(message_of([&] { kit::heatmap_svg({1, 1, {1}}, o); }), HasSubstr("cell = 0"));
  EXPECT_THAT(message_of([] { kit::heatmap_layer({1, 1, {1}}, {}, {}, 1.5); }), HasSubstr("opacity = 1.5"));
}

}  // namespace
