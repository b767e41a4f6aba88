// kit/contour.h: marching squares. Every cut lies on a grid edge where the interpolated samples
// equal the level; the contour of a sampled Gaussian bump is closed and lies on the analytic
// circle to the grid's accuracy; saddles follow the centre value; bad input is named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "html_checker.h"
#include "kit/contour.h"

namespace {

using ::testing::HasSubstr;

// f(t) = exp(-|t - c|^2 / (2 s^2)) at the cell centres of an n x n grid.
kit::Matrix bump(std::size_t n, double c0, double c1, double s) {
  kit::Matrix m{n, n, {}};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      const double t0 = (static_cast<double>(i) + 0.5) / n - c0, t1 = (static_cast<double>(k) + 0.5) / n - c1;
      m.values.push_back(std::exp(-(t0 * t0 + t1 * t1) / (2 * s * s)));
    }
  return m;
}

// The samples interpolated linearly along the grid edge that p lies on (one of its grid
// coordinates i = t0 * rows - 1/2, k = t1 * cols - 1/2 is an integer).
double on_edge(const kit::Matrix& m, const kit::Point& p) {
  const double i = p.t0 * static_cast<double>(m.rows) - 0.5, k = p.t1 * static_cast<double>(m.cols) - 0.5;
  if (std::abs(i - std::round(i)) < 1e-9) {
    const auto r = static_cast<std::size_t>(std::round(i));
    const auto c = static_cast<std::size_t>(std::floor(k));
    const double s = k - static_cast<double>(c);
    return m(r, c) + s * (m(r, c + 1) - m(r, c));
  }
  EXPECT_NEAR(k, std::round(k), 1e-9) << "a cut off the grid lines";
  const auto c = static_cast<std::size_t>(std::round(k));
  const auto r = static_cast<std::size_t>(std::floor(i));
  const double s = i - static_cast<double>(r);
  return m(r, c) + s * (m(r + 1, c) - m(r, c));
}

TEST(Contour, CutsLieOnTheLevelAndTheContourIsAClosedCircle) {
  const double s = 0.12, level = 0.5;
  const kit::Matrix m = bump(48, 0.45, 0.55, s);
  const auto segments = kit::iso_contour(m, level);
  ASSERT_GT(segments.size(), 40u);
  const double radius = s * std::sqrt(2 * std::log(1 / level));  // f = level on this circle
  std::map<std::pair<double, double>, int> ends;
  for (const auto& seg : segments)
    for (const kit::Point& p : {seg.a, seg.b}) {
      EXPECT_NEAR(on_edge(m, p), level, 1e-12);
      EXPECT_NEAR(std::hypot(p.t0 - 0.45, p.t1 - 0.55), radius, 2e-3);  // grid spacing 1/48 ~ 0.02
      ++ends[{p.t0, p.t1}];
    }
  for (const auto& [point, count] : ends) EXPECT_EQ(count, 2) << point.first << ", " << point.second;  // closed
}

TEST(Contour, SaddlesFollowTheCentreValue) {
  // [[1, 0], [0, 1]]: the centre mean is 0.5. At level 0.5 the centre is above, the two high
  // corners are joined and the low ones cut off: top-right and bottom-left pieces.
  const kit::Matrix m{2, 2, {1, 0, 0, 1}};
  auto at = [](const kit::Segment& s) { return std::make_pair(s.a.t0 + s.b.t0, s.a.t1 + s.b.t1); };
  const auto joined = kit::iso_contour(m, 0.5);
  ASSERT_EQ(joined.size(), 2u);
  // Top cut (0.25, 0.5), right cut (0.5, 0.75); bottom (0.75, 0.5), left (0.5, 0.25).
  EXPECT_DOUBLE_EQ(joined[0].a.t0, 0.25);
  EXPECT_DOUBLE_EQ(joined[0].a.t1, 0.5);
  EXPECT_DOUBLE_EQ(joined[0].b.t0, 0.5);
  EXPECT_DOUBLE_EQ(joined[0].b.t1, 0.75);
  EXPECT_EQ(at(joined[1]), std::make_pair(1.25, 0.75));
  // At 0.6 the centre is below: the high corners are cut off (left-top and right-bottom).
  const auto split = kit::iso_contour(m, 0.6);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_NEAR(split[0].a.t1, 0.25, 1e-12);  // left edge, t1 = 1/4
  EXPECT_NEAR(split[0].b.t0, 0.25, 1e-12);  // top edge, t0 = 1/4
  EXPECT_NEAR(split[1].a.t1, 0.75, 1e-12);  // right edge
  EXPECT_NEAR(split[1].b.t0, 0.75, 1e-12);  // bottom edge
}

TEST(Contour, NothingOutsideTheRangeAndAWellFormedPath) {
  const kit::Matrix m = bump(8, 0.5, 0.5, 0.2);
  EXPECT_TRUE(kit::iso_contour(m, 2.0).empty());
  EXPECT_TRUE(kit::iso_contour(m, -1.0).empty());
  const std::string path = kit::contour_svg({{{0.25, 0.5}, {0.5, 0.75}}}, {10, 0, 100, 200}, "level");
  EXPECT_EQ(path, "<path class=\"level\" d=\"M60.000 50.000 L85.000 100.000\" fill=\"none\"></path>");
  EXPECT_EQ(sparcon_test::check_html("<svg>" + kit::contour_svg(kit::iso_contour(m, 0.5), {0, 0, 1, 1}, "c") + "</svg>"),
            "");
}

TEST(Contour, BadInputNamesTheArgumentAndTheValue) {
  auto message = [](const kit::Matrix& m, double level) {
    try {
      (void)kit::iso_contour(m, level);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no std::invalid_argument");
  };
  EXPECT_THAT(message({0, 0, {}}, 0.5), HasSubstr("iso_contour: samples is empty"));
  EXPECT_THAT(message({1, 3, {1, 2, 3}}, 0.5), HasSubstr("samples is 1 x 3"));
  EXPECT_THAT(message({2, 2, {1, 2, 3}}, 0.5), HasSubstr("samples has 3 values for 2 x 2"));
  EXPECT_THAT(message({2, 2, {1, 2, NAN, 4}}, 0.5), HasSubstr("samples[1, 0] = nan is not finite"));
  EXPECT_THAT(message({2, 2, {1, 2, 3, 4}}, INFINITY), HasSubstr("level = inf"));
}

}  // namespace
