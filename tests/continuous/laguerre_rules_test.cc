// The Gauss-Laguerre rules of profile_moments (continuous/profile_moments.h) by the width of the
// Gaussian in the rule's variable: each rule laguerre_rule(width) returns, at the smallest width
// it is chosen for and beyond, against an 80-node rule computed here in long double (Golub-Welsch
// with Eigen's long-double eigensolver), on the integrands the rule meets: e^-w times
// (1 - u^2/R^2)^k u^m exp(-(w / width)^2 / 2) with u = R - w s / width (the centre `width`
// standard deviations beyond the end R of the support, s = 1), k = 1, 2, m = 0..3,
// R / s = 1..100. Held to 5e-15 of the sum of the terms' magnitudes: the bands were chosen at
// 1e-15 with long-double nodes, and the library's nodes and weights, computed in double, add up
// to 2.3e-15 of their own; the 24-node rule below width 6, the most any band takes, to 1e-13 (it
// is 7e-14 off at width 4). A rule with fewer nodes than its band needs fails (16 nodes at width
// 6 are 1e-12 off).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "continuous/profile_moments.h"

namespace {

using LD = long double;

struct LongRule {
  std::vector<LD> x, w;
};

LongRule laguerre_long_double(int nodes) {
  using Matrix = Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic>;
  Matrix jacobi = Matrix::Zero(nodes, nodes);
  for (int i = 0; i < nodes; ++i) {
    jacobi(i, i) = 2 * i + 1;
    if (i + 1 < nodes) jacobi(i, i + 1) = jacobi(i + 1, i) = i + 1;
  }
  const Eigen::SelfAdjointEigenSolver<Matrix> solver(jacobi);
  LongRule rule;
  for (int i = 0; i < nodes; ++i) {
    rule.x.push_back(solver.eigenvalues()[i]);
    rule.w.push_back(solver.eigenvectors()(0, i) * solver.eigenvectors()(0, i));
  }
  return rule;
}

// The integrand at node x (without e^-w): the profile times u^m times the Gaussian's remainder.
LD integrand(LD x, int k, int m, LD radius, LD width) {
  const LD distance = x / width, u = radius - distance, base = 1 - (u / radius) * (u / radius);
  return (k == 1 ? base : base * base) * std::pow(u, static_cast<LD>(m)) * std::exp(-distance * distance / 2);
}

TEST(GaussLaguerreRulesByWidth, EachRuleWithin2e15AtItsWidths) {
  const LongRule reference = laguerre_long_double(80);
  for (const double width : {4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0, 64.0, 200.0}) {
    const sparcon::detail::LaguerreRule rule = sparcon::detail::laguerre_rule(width);
    for (const int k : {1, 2}) {
      for (int m = 0; m <= 3; ++m) {
        for (const LD radius : {1.0L, 2.0L, 4.0L, 8.0L, 20.0L, 50.0L, 100.0L}) {
          LD want = 0, magnitude = 0, got = 0;
          for (std::size_t i = 0; i < reference.x.size(); ++i) {
            const LD term = reference.w[i] * integrand(reference.x[i], k, m, radius, width);
            want += term;
            magnitude += std::fabs(term);
          }
          for (int i = 0; i < rule.nodes; ++i) got += rule.w[i] * integrand(rule.x[i], k, m, radius, width);
          // Below a width of 6 the 24-node rule, the most any band takes: 7e-14 at width 4.
          const LD tolerance = width < 6 ? 1e-13L : 5e-15L;
          EXPECT_LE(std::fabs(got - want), tolerance * magnitude)
              << rule.nodes << " nodes at width " << width << ", k = " << k << ", m = " << m << ", R = "
              << static_cast<double>(radius);
        }
      }
    }
  }
}

// The narrowest Gaussians take the most nodes, and a width that is not a number (no centre
// distance) takes them too.
TEST(GaussLaguerreRulesByWidth, NodesFallWithTheWidth) {
  int previous = sparcon::detail::laguerre_rule(4).nodes;
  EXPECT_EQ(previous, 24);
  for (const double width : {5.0, 6.0, 8.0, 10.0, 16.0, 24.0, 32.0, 1e6}) {
    const int nodes = sparcon::detail::laguerre_rule(width).nodes;
    EXPECT_LE(nodes, previous) << "width " << width;
    previous = nodes;
  }
  EXPECT_EQ(sparcon::detail::laguerre_rule(1e6).nodes, 8);
  EXPECT_EQ(sparcon::detail::laguerre_rule(std::nan("")).nodes, 24);
}

}  // namespace
