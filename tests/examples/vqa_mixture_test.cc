// The weighted EM of the multimodal attention (vqa/mixture.h) on maps made here: two and three
// Gaussian blobs discretised on the 14 x 14 grid are found (means, weights), the weighted
// log-likelihood never decreases over the steps, and bad maps are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mixture.h"

namespace {

struct Blob {
  double weight, t0, t1, sd;
};

/// The blobs' isotropic Gaussian densities at the cell centres of a rows x cols grid, each cell's
/// weight the mixture's value there (normalised by fit_mixture).
kit::Matrix blobs(const std::vector<Blob>& bs, std::size_t rows = 14, std::size_t cols = 14) {
  kit::Matrix m{rows, cols, std::vector<double>(rows * cols)};
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double t0 = (r + 0.5) / rows, t1 = (c + 0.5) / cols;
      for (const auto& b : bs)
        m.values[r * cols + c] +=
            b.weight * std::exp(-((t0 - b.t0) * (t0 - b.t0) + (t1 - b.t1) * (t1 - b.t1)) / (2 * b.sd * b.sd)) / (b.sd * b.sd);
    }
  return m;
}

TEST(VqaMixture, TwoBlobsAreFound) {
  const auto map = blobs({{0.6, 0.25, 0.3, 0.06}, {0.4, 0.7, 0.75, 0.05}});
  const auto fit = vqa::fit_mixture(map, {2, 30, 1e-4});
  ASSERT_EQ(fit.size(), 2u);
  EXPECT_NEAR(fit[0].weight, 0.6, 0.03);
  EXPECT_NEAR(fit[1].weight, 0.4, 0.03);
  EXPECT_NEAR(fit[0].mean[0], 0.25, 0.01);
  EXPECT_NEAR(fit[0].mean[1], 0.3, 0.01);
  EXPECT_NEAR(fit[1].mean[0], 0.7, 0.01);
  EXPECT_NEAR(fit[1].mean[1], 0.75, 0.01);
  // The variance of a blob sampled at cell centres: sd^2 plus about the cell's 1/(12 * 14^2).
  EXPECT_NEAR(fit[0].covariance[0], 0.06 * 0.06, 0.0015);
  EXPECT_NEAR(fit[0].covariance[1], 0.0, 3e-4);
  EXPECT_DOUBLE_EQ(fit[0].covariance[1], fit[0].covariance[2]);
}

TEST(VqaMixture, ThreeBlobs) {
  const auto map = blobs({{0.4, 0.2, 0.2, 0.05}, {0.35, 0.2, 0.8, 0.05}, {0.25, 0.8, 0.5, 0.05}});
  const auto fit = vqa::fit_mixture(map, {3, 40, 1e-4});
  ASSERT_EQ(fit.size(), 3u);
  const std::vector<std::array<double, 3>> expected = {{0.4, 0.2, 0.2}, {0.35, 0.2, 0.8}, {0.25, 0.8, 0.5}};
  for (std::size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_NEAR(fit[k].weight, expected[k][0], 0.03);
    EXPECT_NEAR(fit[k].mean[0], expected[k][1], 0.01);
    EXPECT_NEAR(fit[k].mean[1], expected[k][2], 0.01);
  }
}

TEST(VqaMixture, LikelihoodNeverDecreases) {
  const auto map = blobs({{0.5, 0.3, 0.3, 0.1}, {0.5, 0.6, 0.55, 0.08}});
  double previous = -INFINITY;
  for (int steps = 0; steps <= 15; ++steps) {
    const double ll = vqa::weighted_log_likelihood(map, vqa::fit_mixture(map, {2, steps, 1e-4}));
    // The ridge makes the M step a penalised one; the increase holds to rounding here.
    EXPECT_GE(ll, previous - 1e-9) << steps << " steps";
    previous = ll;
  }
}

TEST(VqaMixture, OneHotCellsAndBadMaps) {
  kit::Matrix two{14, 14, std::vector<double>(196)};
  two.values[3 * 14 + 4] = 0.7;
  two.values[10 * 14 + 12] = 0.3;
  const auto fit = vqa::fit_mixture(two, {2, 10, 1e-4});
  EXPECT_NEAR(fit[0].weight, 0.7, 1e-9);
  EXPECT_NEAR(fit[0].mean[0], 3.5 / 14, 1e-9);
  EXPECT_NEAR(fit[0].mean[1], 4.5 / 14, 1e-9);
  EXPECT_NEAR(fit[0].covariance[0], 1e-4, 1e-9);  // a point mass: the ridge alone
  EXPECT_NEAR(fit[1].mean[1], 12.5 / 14, 1e-9);
  EXPECT_THROW(vqa::fit_mixture(two, {3, 10, 1e-4}), std::invalid_argument);  // 3 components, 2 cells
  EXPECT_THROW(vqa::fit_mixture(kit::Matrix{14, 14, std::vector<double>(196)}, {}), std::invalid_argument);
  two.values[0] = -1;
  EXPECT_THROW(vqa::fit_mixture(two, {}), std::invalid_argument);
  two.values[0] = 0;
  EXPECT_THROW(vqa::fit_mixture(two, {2, 10, 0.0}), std::invalid_argument);
}

}  // namespace
