// Drawing over an image, as the VQA report will: a Fashion-MNIST-sized scene as a PNG <image>,
// then a heat map of region weights, a covariance ellipse and the iso-contours of a density
// sampled on the pixel grid, all in one <svg> on the same Frame.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "html_checker.h"
#include "kit/contour.h"
#include "kit/ellipse.h"
#include "kit/heatmap.h"
#include "kit/png.h"

namespace {

using ::testing::HasSubstr;

TEST(Overlay, ImageHeatMapEllipseAndContoursShareOneFrame) {
  const std::size_t side = 28;
  kit::Matrix scene{side, side, {}}, density{side, side, {}};
  const double mu0 = 0.4, mu1 = 0.6, s00 = 0.01, s01 = 0.004, s11 = 0.02, det = s00 * s11 - s01 * s01;
  for (std::size_t i = 0; i < side; ++i)
    for (std::size_t k = 0; k < side; ++k) {
      scene.values.push_back(static_cast<double>((i * 7 + k * 3) % 11) / 10.0);
      const double d0 = (i + 0.5) / side - mu0, d1 = (k + 0.5) / side - mu1;  // pixel centres
      density.values.push_back(std::exp(-0.5 * (s11 * d0 * d0 - 2 * s01 * d0 * d1 + s00 * d1 * d1) / det));
    }
  const kit::Frame frame{0, 0, 280, 280};
  const kit::Ellipse e = kit::covariance_ellipse({mu0, mu1}, {s00, s01, s01, s11}, 1.0, frame);
  // exp(-r^2 / 2) = level on the ellipse of radius r: the contour at exp(-1/2) follows it.
  const auto contour = kit::iso_contour(density, std::exp(-0.5));
  for (const auto& s : contour) {
    const double d0 = s.a.t0 - mu0, d1 = s.a.t1 - mu1;
    EXPECT_NEAR((s11 * d0 * d0 - 2 * s01 * d0 * d1 + s00 * d1 * d1) / det, 1.0, 0.05);
  }
  const std::string svg = kit::svg_element(
      frame.width, frame.height, "scene", "attention over the scene",
      kit::image_svg(kit::grey_image(scene, 0, 1), frame) +
          kit::heatmap_layer({2, 2, {0.1, 0.2, 0.3, 0.4}}, frame, kit::ColourScale{}, 0.3) +
          kit::ellipse_svg(e, "support") + kit::contour_svg(contour, frame, "level"));
  EXPECT_EQ(sparcon_test::check_html(svg), "");
  EXPECT_THAT(svg, HasSubstr("viewBox=\"0 0 280.000 280.000\""));
  // The image comes first, so that every layer is drawn over it.
  EXPECT_LT(svg.find("<image"), svg.find("<g class=\"heatmap-layer\""));
  EXPECT_LT(svg.find("<g class=\"heatmap-layer\""), svg.find("<ellipse"));
  EXPECT_LT(svg.find("<ellipse"), svg.find("<path"));
}

}  // namespace
