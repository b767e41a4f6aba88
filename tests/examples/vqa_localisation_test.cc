// The localisation metrics of the VQA experiment (issue 13) against references computed here:
// the discrete mass and support figures on hand-made 14 x 14 maps (exact fractions, and a
// sub-pixel sum), and the continuous ones (a Gaussian centred in a box, a sparsemax ellipse half
// inside a box, rotated densities cut by boxes) against fine-grid midpoint sums of the core's
// Density2D::pdf.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "box.h"
#include "density_integral.h"
#include "localisation.h"

namespace {

using vqa::Density;
using vqa::Rect;

kit::Matrix grid(std::size_t rows, std::size_t cols, double value = 0) {
  return {rows, cols, std::vector<double>(rows * cols, value)};
}

void set(kit::Matrix& m, std::size_t r, std::size_t c, double v) { m.values[r * m.cols + c] = v; }

/// The mass of a grid over boxes by sub-cell sampling: each cell cut into s x s sub-cells, each
/// holding w / s^2, counted when its centre is inside a box.
double reference_grid_mass(const kit::Matrix& w, const std::vector<Rect>& boxes, int s) {
  double mass = 0;
  for (std::size_t r = 0; r < w.rows; ++r)
    for (std::size_t c = 0; c < w.cols; ++c)
      for (int i = 0; i < s; ++i)
        for (int k = 0; k < s; ++k) {
          const double t0 = (static_cast<double>(r) + (i + 0.5) / s) / static_cast<double>(w.rows);
          const double t1 = (static_cast<double>(c) + (k + 0.5) / s) / static_cast<double>(w.cols);
          for (const auto& b : boxes)
            if (t0 >= b.t0_begin && t0 < b.t0_end && t1 >= b.t1_begin && t1 < b.t1_end) mass += w(r, c) / (s * s);
        }
  return mass;
}

/// The midpoint rule on an n x n grid over r: of the pdf, and of the support's indicator.
struct FineGrid {
  double mass = 0, support = 0;
};
FineGrid fine_grid(const Density& p, const Rect& r, int n) {
  FineGrid out;
  const double h0 = (r.t0_end - r.t0_begin) / n, h1 = (r.t1_end - r.t1_begin) / n;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double v = p.pdf({r.t0_begin + (i + 0.5) * h0, r.t1_begin + (k + 0.5) * h1});
      out.mass += v * h0 * h1;
      out.support += (v > 0) * h0 * h1;
    }
  return out;
}

TEST(VqaLocalisation, GridMassOnHandMadeMaps) {
  // Uniform attention, a box over the left half of the image: half the mass.
  const auto uniform = grid(14, 14, 1.0 / 196);
  EXPECT_NEAR(vqa::grid_mass(uniform, {{0, 1, 0, 0.5}}), 0.5, 1e-12);
  // One-hot on cell (1, 1) = pixels [6, 12)^2 of an 84 canvas; the box of pixels [0, 9)^2 covers a
  // quarter of it.
  auto one = grid(14, 14);
  set(one, 1, 1, 1.0);
  const auto box = vqa::evidence_rects({{0, 0, 9, 9}}, 84);
  EXPECT_NEAR(vqa::grid_mass(one, box), 0.25, 1e-12);
  // Two boxes, weights on several cells: against sub-pixel sampling (6 x 6 per cell = one per pixel).
  auto w = grid(14, 14);
  set(w, 0, 0, 0.2); set(w, 3, 4, 0.3); set(w, 7, 7, 0.1); set(w, 13, 13, 0.4);
  const auto boxes = vqa::evidence_rects({{2, 3, 23, 29}, {40, 38, 84, 81}}, 84);
  EXPECT_NEAR(vqa::grid_mass(w, boxes), reference_grid_mass(w, boxes, 6), 1e-12);
  EXPECT_NEAR(vqa::grid_mass(w, {}), 0.0, 0);
  // Overlapping boxes, negative weights and non-finite weights are refused.
  EXPECT_THROW(vqa::grid_mass(w, {{0, 0.5, 0, 0.5}, {0.25, 0.75, 0.25, 0.75}}), std::invalid_argument);
  set(w, 2, 2, -0.1);
  EXPECT_THROW(vqa::grid_mass(w, boxes), std::invalid_argument);
  set(w, 2, 2, NAN);
  EXPECT_THROW(vqa::grid_mass(w, boxes), std::invalid_argument);
}

TEST(VqaLocalisation, GridSupportOverlap) {
  auto w = grid(14, 14);
  set(w, 0, 0, 0.6);
  set(w, 0, 1, 0.4);
  // The box is exactly cell (0, 0): |S| = 2/196, |S n E| = 1/196, |S u E| = 2/196.
  const auto o = vqa::grid_support_overlap(w, vqa::evidence_rects({{0, 0, 6, 6}}, 84));
  EXPECT_NEAR(o.iou, 0.5, 1e-12);
  EXPECT_NEAR(o.inside, 0.5, 1e-12);
  EXPECT_NEAR(o.area, 2.0 / 196, 1e-15);
  // A box of 3 x 3 cells holding the support: iou = 2/9, inside = 1.
  const auto big = vqa::grid_support_overlap(w, vqa::evidence_rects({{0, 0, 18, 18}}, 84));
  EXPECT_NEAR(big.iou, 2.0 / 9, 1e-12);
  EXPECT_NEAR(big.inside, 1.0, 1e-12);
  // An empty support: inside is NaN, iou 0.
  const auto none = vqa::grid_support_overlap(grid(14, 14), vqa::evidence_rects({{0, 0, 6, 6}}, 84));
  EXPECT_TRUE(std::isnan(none.inside));
  EXPECT_EQ(none.iou, 0.0);
  EXPECT_EQ(none.area, 0.0);
}

TEST(VqaLocalisation, GaussianCentredInABox) {
  const Rect box{0.3, 0.6, 0.4, 0.8};
  // Axis-aligned: the mass factorises, (2 Phi(a / s) - 1) per axis.
  const Density p(1.0, {0.45, 0.6}, {0.01, 0, 0, 0.02});
  const double expected = std::erf(0.15 / 0.1 / std::sqrt(2.0)) * std::erf(0.2 / std::sqrt(0.02) / std::sqrt(2.0));
  EXPECT_NEAR(vqa::density_mass(p, box), expected, 1e-12);
  EXPECT_NEAR(vqa::density_mass(p, box), fine_grid(p, box, 1000).mass, 1e-6);
  // Correlated, off-centre, cut by the box: the fine-grid sum.
  const Density q(1.0, {0.5, 0.45}, {0.02, 0.012, 0.012, 0.015});
  EXPECT_NEAR(vqa::density_mass(q, box), fine_grid(q, box, 1000).mass, 1e-6);
  // The whole plane (a box far larger than the density): 1.
  EXPECT_NEAR(vqa::density_mass(q, {-5, 5, -5, 5}), 1.0, 1e-12);
  EXPECT_EQ(vqa::density_mass(q, {0.5, 0.5, 0, 1}), 0.0);
  EXPECT_THROW(vqa::support_area(q, box), std::invalid_argument);
}

TEST(VqaLocalisation, SparsemaxEllipseHalfInsideABox) {
  // alpha = 2, mu on the box's left edge, the box beyond the support on the other sides: half the
  // mass and half the support (the density is symmetric about mu).
  const Density p(2.0, {0.5, 0.4}, {0.004, 0.0015, 0.0015, 0.003});
  const double area = p.support_area();
  const Rect half{0.0, 1.0, 0.4, 1.0};
  EXPECT_NEAR(vqa::density_mass(p, half), 0.5, 1e-10);
  EXPECT_NEAR(vqa::support_area(p, half), area / 2, 1e-10 * area);
  EXPECT_NEAR(vqa::support_area(p, {-1, 2, -1, 2}), area, 1e-10 * area);
  // The support figures of the image (the ellipse inside it) with that box as evidence.
  const auto o = vqa::ellipse_support_overlap(p, {{0.0, 1.0, 0.4, 1.0}});
  EXPECT_NEAR(o.inside, 0.5, 1e-9);
  EXPECT_NEAR(o.area, area, 1e-10);
  EXPECT_NEAR(o.iou, (area / 2) / (0.6 + area / 2), 1e-9);
  // A small box cutting the rotated ellipse anywhere: the fine-grid sums.
  for (const Rect& box : {Rect{0.42, 0.55, 0.35, 0.47}, Rect{0.3, 0.5, 0.2, 0.45}, Rect{0.48, 0.9, 0.41, 0.43}}) {
    const auto ref = fine_grid(p, box, 1500);
    EXPECT_NEAR(vqa::density_mass(p, box), ref.mass, 2e-5);
    EXPECT_NEAR(vqa::support_area(p, box), ref.support, 5e-3 * box.area() + 1e-5);
  }
}

TEST(VqaLocalisation, OtherAlphasAgainstTheFineGrid) {
  for (const double alpha : {1.05, 1.5, 3.0}) {
    SCOPED_TRACE(alpha);
    const Density p(alpha, {0.55, 0.5}, {0.01, -0.004, -0.004, 0.008});
    EXPECT_NEAR(vqa::density_mass(p, {-1, 2, -1, 2}), 1.0, 1e-8);
    const Rect box{0.5, 0.8, 0.3, 0.55};
    EXPECT_NEAR(vqa::density_mass(p, box), fine_grid(p, box, 1500).mass, 5e-5);
  }
}

TEST(VqaLocalisation, CellMassesAndDensityEvidence) {
  const Density p(2.0, {0.5, 0.5}, {0.01, 0.003, 0.003, 0.008});
  const auto cells = vqa::cell_masses(p, 14, 14);
  double total = 0;
  for (const double v : cells.values) total += v;
  EXPECT_NEAR(total, 1.0, 1e-9);  // the support lies inside the image
  // The grid mass of the cell masses over a box aligned to the cells = the density's mass there.
  const std::vector<Rect> boxes = {{0.0, 7.0 / 14, 0.0, 6.0 / 14}, {9.0 / 14, 1.0, 3.0 / 14, 11.0 / 14}};
  EXPECT_NEAR(vqa::grid_mass(cells, boxes), vqa::density_mass_in(p, boxes), 1e-9);
  EXPECT_NEAR(vqa::density_mass_in(p, boxes), fine_grid(p, boxes[0], 1000).mass + fine_grid(p, boxes[1], 1000).mass, 5e-5);
  EXPECT_THROW(vqa::cell_masses(p, 0, 14), std::invalid_argument);
}

TEST(VqaLocalisation, StatsAverageWhatIsDefined) {
  vqa::LocalisationStats stats;
  stats.add(0.5, {0.2, 0.5, 0.1});
  stats.add(0.3, {0.0, NAN, 0.0});  // an empty support
  stats.add(0.1);                   // continuous softmax: no support
  EXPECT_EQ(stats.questions, 3u);
  EXPECT_NEAR(stats.mass(), 0.3, 1e-12);
  EXPECT_NEAR(stats.iou(), 0.1, 1e-12);
  EXPECT_NEAR(stats.inside(), 0.5, 1e-12);
  EXPECT_NEAR(stats.area(), 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(vqa::LocalisationStats{}.mass()));
}

}  // namespace
