// entmax_alpha_backward(): d <g, entmax_alpha(x)> / d alpha against central differences in alpha
// of the long-double reference, in double, for alpha in {0.5, 1.25, 1.5, 2, 3}, at alpha = 1 (the
// limit formula of discrete.h), and with a different alpha on every row.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "finite_differences.h"
#include "map_cases.h"
#include "sparcon/discrete.h"

namespace sparcon_test {
namespace {

constexpr LD kAlphaStep = 1e-5L;

/// d/dalpha <g, entmax_alpha(x)> by central differences of the reference.
LD alpha_derivative(const std::vector<LD>& x, const std::vector<LD>& g, LD alpha) {
  auto f = [&](LD a) {
    const ref::Result r = ref::entmax(x, a);
    LD s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s += g[i] * r.p[i];
    return s;
  };
  return (f(alpha + kAlphaStep) - f(alpha - kAlphaStep)) / (2 * kAlphaStep);
}

/// Rows away from the support boundary at alpha (and so at alpha +- step), with their
/// reference p (at alpha) and upstream gradient g.
struct AlphaProblem {
  sparcon::Rows rows;
  std::vector<double> alphas;  // one per row
  std::vector<double> p, g;
  std::vector<LD> expected;    // one per row
};

AlphaProblem make_problem(const std::vector<double>& alphas, std::size_t length, std::uint64_t seed) {
  AlphaProblem problem{{alphas.size(), length}, alphas, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t r = 0; r < alphas.size(); ++r) {
    const std::vector<double> row =
        row_away_from_kinks(make_case(sparcon::Map::entmax, alphas[r]), length, r % 2 == 0 ? 1.0 : 2.0, rng, 0.05L);
    const std::vector<LD> xl(row.begin(), row.end());
    const ref::Result ref = ref::entmax(xl, alphas[r]);
    std::vector<LD> gl;
    for (std::size_t i = 0; i < length; ++i) {
      problem.g.push_back(normal(rng));
      gl.push_back(problem.g.back());
      problem.p.push_back(static_cast<double>(ref.p[i]));
    }
    problem.expected.push_back(alpha_derivative(xl, gl, alphas[r]));
  }
  return problem;
}

void expect_alpha_gradient(const AlphaProblem& problem, const std::vector<double>& dalpha) {
  for (std::size_t r = 0; r < problem.rows.count; ++r) {
    const LD want = problem.expected[r];
    EXPECT_NEAR(dalpha[r], static_cast<double>(want), static_cast<double>(1e-6L * std::fabs(want) + 1e-9L))
        << "alpha " << problem.alphas[r] << ", length " << problem.rows.length << ", row " << r;
  }
}

TEST(AlphaGradient, SharedAlpha) {
  for (double alpha : {0.5, 1.25, 1.5, 2.0, 3.0}) {
    for (std::size_t n : {1, 3, 10, 50}) {
      const AlphaProblem problem = make_problem(std::vector<double>(4, alpha), n, 100 + n);
      std::vector<double> dalpha(problem.rows.count);
      sparcon::entmax_alpha_backward<double>(problem.p, problem.g, std::span<double>(dalpha), problem.rows, alpha);
      expect_alpha_gradient(problem, dalpha);
    }
  }
}

/// At alpha = 1 exactly the library returns the limit
/// (1/2) sum_i g_i p_i (sum_j p_j l_j^2 - l_i^2), l = log p; differences straddle alpha = 1.
TEST(AlphaGradient, AtOneIsTheLimit) {
  for (std::size_t n : {2, 10, 50}) {
    const AlphaProblem problem = make_problem(std::vector<double>(4, 1.0), n, 300 + n);
    std::vector<double> dalpha(problem.rows.count);
    sparcon::entmax_alpha_backward<double>(problem.p, problem.g, std::span<double>(dalpha), problem.rows, 1.0);
    expect_alpha_gradient(problem, dalpha);
  }
}

/// Near alpha = 1 the direct form cancels like eps / (alpha - 1)^2; the library switches to an
/// exact rearrangement for |alpha - 1| < 1/4. Both sides of 1 and of the switch, against the
/// long-double reference derivative.
TEST(AlphaGradient, NearOneKeepsFullPrecision) {
  for (double offset : {-0.2, -1e-4, -1e-9, 1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.2499, 0.2501}) {
    for (std::size_t n : {2, 10, 50}) {
      const AlphaProblem problem = make_problem(std::vector<double>(4, 1 + offset), n, 700 + n);
      std::vector<double> dalpha(problem.rows.count);
      sparcon::entmax_alpha_backward<double>(problem.p, problem.g, std::span<double>(dalpha), problem.rows, 1 + offset);
      expect_alpha_gradient(problem, dalpha);
    }
  }
}

TEST(AlphaGradient, PerRowAlpha) {
  const std::vector<double> alphas = {3.0, 0.5, 1.0, 1.25, 2.0, 1.5, 0.75};
  const AlphaProblem problem = make_problem(alphas, 20, 555);
  std::vector<double> dalpha(problem.rows.count);
  sparcon::entmax_alpha_backward<double>(problem.p, problem.g, std::span<double>(dalpha), problem.rows,
                                         std::span<const double>(alphas));
  expect_alpha_gradient(problem, dalpha);
}

/// A row of length 1 does not depend on alpha: the gradient is 0.
TEST(AlphaGradient, SingleEntryRowHasZeroGradient) {
  const std::vector<double> p = {1.0, 1.0}, g = {0.7, -2.0};
  std::vector<double> dalpha(2, 99.0);
  sparcon::entmax_alpha_backward<double>(p, g, std::span<double>(dalpha), sparcon::Rows{2, 1}, 1.5);
  EXPECT_EQ(dalpha[0], 0.0);
  EXPECT_EQ(dalpha[1], 0.0);
}

}  // namespace
}  // namespace sparcon_test
