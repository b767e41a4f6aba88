// backward() of every map against central finite differences of the long-double reference:
// dx = J^T g with J estimated by differencing the forward map, in double, on rows whose entries
// all sit away from the support boundary (and the budget's cap), where differences are valid.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "finite_differences.h"
#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"

namespace sparcon_test {
namespace {

constexpr LD kStep = 1e-7L;  // long double differences: truncation ~h^2, rounding ~1e-19/h

void check_backward(const MapCase& c) {
  std::mt19937_64 rng(2024);
  for (std::size_t n : {1, 2, 5, 12, 40}) {
    if (!applies(c, n)) continue;
    const sparcon::Rows rows{4, n};
    const auto [x, p, g, fd] = backward_rows(c, rows, rng, kStep);
    std::vector<double> dx(x.size());
    sparcon::backward<double>(family_of<double>(c), p, g, std::span<double>(dx), rows);
    for (std::size_t r = 0; r < rows.count; ++r) {
      EXPECT_TRUE(gradients_agree(row_of(dx, rows, r), fd[r])) << c.name << ", length " << n << ", row " << r;
    }
  }
}

TEST(Backward, Softmax) { check_backward(make_case(sparcon::Map::softmax, 1)); }
TEST(Backward, Sparsemax) { check_backward(make_case(sparcon::Map::sparsemax, 2)); }
TEST(Backward, Entmax15) { check_backward(make_case(sparcon::Map::entmax15, 1.5)); }
TEST(Backward, EntmaxEveryAlpha) {
  for (double alpha : entmax_alphas()) check_backward(make_case(sparcon::Map::entmax, alpha));
}
TEST(Backward, NormmaxEveryAlpha) {
  for (double alpha : normmax_alphas()) check_backward(make_case(sparcon::Map::normmax, alpha));
}
TEST(Backward, BudgetEveryB) {
  for (double b : budgets()) check_backward(make_case(sparcon::Map::budget, b));
}

/// A different alpha on every row, through PerRow.
TEST(Backward, PerRowAlpha) {
  const std::vector<double> alphas = {0.75, 1.25, 1.5, 2, 3};
  const sparcon::Rows rows{alphas.size(), 9};
  std::mt19937_64 rng(77);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x, p, g;
  std::vector<std::vector<LD>> fd;
  for (std::size_t r = 0; r < rows.count; ++r) {
    const MapCase c = make_case(sparcon::Map::entmax, alphas[r]);
    const std::vector<double> row = row_away_from_kinks(c, rows.length, 1.5, rng);
    const std::vector<LD> xl(row.begin(), row.end());
    const ref::Result ref = ref::entmax(xl, alphas[r]);
    std::vector<LD> gl;
    for (std::size_t i = 0; i < rows.length; ++i) {
      g.push_back(normal(rng));
      gl.push_back(g.back());
      p.push_back(static_cast<double>(ref.p[i]));
    }
    x.insert(x.end(), row.begin(), row.end());
    fd.push_back(gradient_by_differences([&](const std::vector<LD>& y) { return ref::entmax(y, alphas[r]).p; }, xl,
                                         gl, kStep));
  }
  std::vector<double> dx(x.size());
  sparcon::entmax_backward<double>(p, g, std::span<double>(dx), rows, std::span<const double>(alphas));
  for (std::size_t r = 0; r < rows.count; ++r) {
    EXPECT_TRUE(gradients_agree(row_of(dx, rows, r), fd[r])) << "alpha " << alphas[r];
  }
}

/// The named backward forms agree with the differences too (one row each).
TEST(Backward, NamedForms) {
  std::mt19937_64 rng(5);
  const std::size_t n = 8;
  const sparcon::Rows rows{1, n};
  const std::vector<double> g = normal_values(1, n, 1.0, 6);
  const std::vector<LD> gl(g.begin(), g.end());
  auto check = [&](const MapCase& c, auto call) {
    const std::vector<double> x = row_away_from_kinks(c, n, 1.0, rng);
    const std::vector<LD> xl(x.begin(), x.end());
    const ref::Result r = reference_row(c.map, static_cast<LD>(c.parameter), xl);
    const std::vector<double> p(r.p.begin(), r.p.end());
    std::vector<double> dx(n);
    call(std::span<const double>(p), std::span<const double>(g), std::span<double>(dx));
    const auto fd = gradient_by_differences(
        [&](const std::vector<LD>& y) { return reference_row(c.map, static_cast<LD>(c.parameter), y).p; }, xl, gl, kStep);
    EXPECT_TRUE(gradients_agree(dx, fd)) << c.name << " (named form)";
  };
  using sparcon::Map;
  check(make_case(Map::softmax, 1), [&](auto p, auto gg, auto dx) { sparcon::softmax_backward<double>(p, gg, dx, rows); });
  check(make_case(Map::sparsemax, 2), [&](auto p, auto gg, auto dx) { sparcon::sparsemax_backward<double>(p, gg, dx, rows); });
  check(make_case(Map::entmax15, 1.5), [&](auto p, auto gg, auto dx) { sparcon::entmax15_backward<double>(p, gg, dx, rows); });
  check(make_case(Map::entmax, 1.25), [&](auto p, auto gg, auto dx) { sparcon::entmax_backward<double>(p, gg, dx, rows, 1.25); });
  check(make_case(Map::normmax, 2), [&](auto p, auto gg, auto dx) { sparcon::normmax_backward<double>(p, gg, dx, rows, 2.0); });
  check(make_case(Map::budget, 2), [&](auto p, auto gg, auto dx) { sparcon::budget_backward<double>(p, gg, dx, rows); });
}

}  // namespace
}  // namespace sparcon_test
