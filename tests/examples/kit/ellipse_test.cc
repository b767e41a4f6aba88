// kit/ellipse.h: the SVG parameters of covariance ellipses against eigen-decompositions done
// by hand, points of the drawn ellipse at the requested Mahalanobis radius, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

#include "html_checker.h"
#include "kit/ellipse.h"

namespace {

using ::testing::HasSubstr;

TEST(Ellipse, CorrelatedCovarianceOnASquareFrame) {
  // Sigma = [[0.02, 0.01], [0.01, 0.02]] on a 100 x 100 frame: C = [[200, 100], [100, 200]],
  // eigenvalues 300 (eigenvector (1, 1) / sqrt 2, 45 degrees) and 100.
  const kit::Ellipse e = kit::covariance_ellipse({0.25, 0.5}, {0.02, 0.01, 0.01, 0.02}, 2.0, {0, 0, 100, 100});
  EXPECT_NEAR(e.cx, 50.0, 1e-12);  // t1 = 0.5 across
  EXPECT_NEAR(e.cy, 25.0, 1e-12);  // t0 = 0.25 down
  EXPECT_NEAR(e.rx, 2.0 * std::sqrt(300.0), 1e-9);
  EXPECT_NEAR(e.ry, 2.0 * std::sqrt(100.0), 1e-9);
  EXPECT_NEAR(e.angle, 45.0, 1e-9);
  // Negative correlation tilts the other way.
  EXPECT_NEAR(kit::covariance_ellipse({0.5, 0.5}, {0.02, -0.01, -0.01, 0.02}, 1.0, {0, 0, 100, 100}).angle, -45.0, 1e-9);
}

TEST(Ellipse, RowsAreVerticalAndTheFrameScalesEachAxis) {
  // Variance 0.09 along t0 (down the rows) and 0.01 along t1, on a frame 200 wide and 100 high:
  // C = diag(200^2 * 0.01, 100^2 * 0.09) = diag(400, 900): the long axis is vertical,
  // rx = sqrt(900) = 30 at 90 degrees, ry = sqrt(400) = 20.
  const kit::Ellipse e = kit::covariance_ellipse({0.5, 0.5}, {0.09, 0.0, 0.0, 0.01}, 1.0, {10, 20, 200, 100});
  EXPECT_NEAR(e.cx, 110.0, 1e-12);
  EXPECT_NEAR(e.cy, 70.0, 1e-12);
  EXPECT_NEAR(e.rx, 30.0, 1e-9);
  EXPECT_NEAR(e.ry, 20.0, 1e-9);
  EXPECT_NEAR(e.angle, 90.0, 1e-9);
}

TEST(Ellipse, DrawnPointsLieAtTheMahalanobisRadius) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const kit::Frame frame{5, 7, 280, 140};
  for (int trial = 0; trial < 50; ++trial) {
    const double a = 0.001 + 0.05 * (u(rng) + 1), c = 0.001 + 0.05 * (u(rng) + 1);
    const double b = 0.9 * u(rng) * std::sqrt(a * c);
    const std::array<double, 2> mu{0.5 + 0.3 * u(rng), 0.5 + 0.3 * u(rng)};
    const double radius = 0.5 + (u(rng) + 1);
    const kit::Ellipse e = kit::covariance_ellipse(mu, {a, b, b, c}, radius, frame);
    const double phi = e.angle * std::numbers::pi / 180.0;
    for (double theta = 0; theta < 6.28; theta += 0.7) {
      // A point of the SVG ellipse, back to positions t, then (t - mu)^T Sigma^-1 (t - mu).
      const double x = e.cx + e.rx * std::cos(theta) * std::cos(phi) - e.ry * std::sin(theta) * std::sin(phi);
      const double y = e.cy + e.rx * std::cos(theta) * std::sin(phi) + e.ry * std::sin(theta) * std::cos(phi);
      const double d0 = (y - frame.top) / frame.height - mu[0], d1 = (x - frame.left) / frame.width - mu[1];
      const double det = a * c - b * b;
      const double q = (c * d0 * d0 - 2 * b * d0 * d1 + a * d1 * d1) / det;
      EXPECT_NEAR(std::sqrt(q), radius, 1e-9 * radius) << "trial " << trial;
    }
    EXPECT_GE(e.rx, e.ry);
  }
}

TEST(Ellipse, SvgElementIsWellFormed) {
  const std::string svg = kit::ellipse_svg({50, 25, 30, 20, 45}, "support \"x\"");
  EXPECT_EQ(svg, "<ellipse class=\"support &quot;x&quot;\" cx=\"50.000\" cy=\"25.000\" rx=\"30.000\" ry=\"20.000\" "
                 "transform=\"rotate(45.000 50.000 25.000)\"></ellipse>");
  EXPECT_EQ(sparcon_test::check_html("<svg>" + svg + "</svg>"), "");
}

TEST(Ellipse, BadInputNamesTheArgumentAndTheValue) {
  auto message = [](std::array<double, 2> mu, std::array<double, 4> s, double r, kit::Frame f = {0, 0, 1, 1}) {
    try {
      (void)kit::covariance_ellipse(mu, s, r, f);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no std::invalid_argument");
  };
  EXPECT_THAT(message({0.5, 0.5}, {1, 2, 2, 1}, 1), HasSubstr("covariance = [1, 2; 2, 1] is not positive definite (det = -3)"));
  EXPECT_THAT(message({0.5, 0.5}, {-1, 0, 0, -1}, 1), HasSubstr("not positive definite"));
  EXPECT_THAT(message({0.5, 0.5}, {1, 0, 0, 0}, 1), HasSubstr("not positive definite (det = 0)"));
  EXPECT_THAT(message({0.5, 0.5}, {1, 0.5, 0.2, 1}, 1), HasSubstr("is not symmetric"));
  EXPECT_THAT(message({0.5, 0.5}, {1, 0, 0, NAN}, 1), HasSubstr("is not finite"));
  EXPECT_THAT(message({NAN, 0.5}, {1, 0, 0, 1}, 1), HasSubstr("mean = (nan, 0.5)"));
  EXPECT_THAT(message({0.5, 0.5}, {1, 0, 0, 1}, 0), HasSubstr("radius = 0"));
  EXPECT_THAT(message({0.5, 0.5}, {1, 0, 0, 1}, 1, {0, 0, 0, 10}), HasSubstr("frame"));
}

}  // namespace
