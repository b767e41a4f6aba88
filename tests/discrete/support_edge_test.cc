// Entmax with alpha > 2 at the edge of its support (src/discrete/support_edge.h): rows with an
// entry on the edge (rounded there from the exact edge, and the next value up) against a
// reference in 113-bit arithmetic (_Float128, glibc's powf128), for every path a row can take
// (rows of up to 512 side by side in lanes, rows in L1 one at a time, long rows scanned).
//
// p = u^k with k = 1/(alpha - 1) < 1 is not Lipschitz at u = 0: an entry within a rounding of
// the edge has p of about (rounding)^k. The long-double reference of reference.h resolves u to
// 2^-64, so its own p there is off by up to 2^(-64 k) (1.5e-5 for alpha = 5); this one, in the
// row's shifted form u_i = a (x_i - max) + c with every a (x_i - max) exact in 113 bits, to
// 2^(-112 k) (5e-9 for alpha = 5, 1.4e-17 for alpha = 3), which the tolerance adds.
#include <gtest/gtest.h>
#include <math.h>  // powf128 (glibc)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using Quad = _Float128;

/// p_i = [a (x_i - max) + c]_+^(1/a) with sum p = 1, a = alpha - 1 > 1: bisection on c in
/// [0, 1] (sum p is 0 below the maximum's base, at c = 0, and at least 1 at c = 1) until the
/// bracket stops shrinking.
std::vector<Quad> quad_entmax(const std::vector<double>& x, double alpha, Quad* offset = nullptr) {
  const Quad a = static_cast<Quad>(alpha) - 1, k = 1 / a;
  const Quad max = static_cast<Quad>(*std::max_element(x.begin(), x.end()));
  std::vector<Quad> scaled;  // a (x - max): exact, 53 + 53 bits in 113
  for (double v : x) scaled.push_back(a * (static_cast<Quad>(v) - max));
  auto power = [&](Quad base) { return base > 0 ? powf128(base, k) : Quad(0); };
  auto sum = [&](Quad c) {
    Quad s = 0;
    for (Quad d : scaled)
      if (d > -1) s += power(d + c);
    return s;
  };
  Quad lo = 0, hi = 1;
  for (;;) {
    const Quad mid = (lo + hi) / 2;
    if (mid <= lo || mid >= hi) break;
    (sum(mid) > 1 ? hi : lo) = mid;
  }
  const Quad c = (lo + hi) / 2;
  if (offset) *offset = c;
  std::vector<Quad> p;
  for (Quad d : scaled) p.push_back(power(d + c));
  return p;
}

template <class T>
class SupportEdge : public ::testing::Test {};
TYPED_TEST_SUITE(SupportEdge, FloatTypes);

/// N(0, 1) rows with one entry moved onto the edge of the support (the exact edge rounded to
/// T) and another just inside it (the next value of T up), compared entry by entry with
/// quad_entmax: to 16 ulps of T absolute, plus the 2^-40 the rounding of c may cost entries
/// outside the window of the edge, plus the reference's own resolution, 2 (2^-110)^k.
/// Before 2026-12-07 the entry on the edge got p = (2^-52)^k in double where the exact p was 0
/// or far below it: 1.5e-8 for alpha = 3, 4.8e-6 for 4, 1.0e-4 for 5 (float rows likewise).
TYPED_TEST(SupportEdge, EntriesOnTheEdgeMatchA113BitReference) {
  using T = TypeParam;
  constexpr double kEps = std::numeric_limits<T>::epsilon();
  std::mt19937_64 rng(20261207);
  std::normal_distribution<double> normal;
  for (const double alpha : {2.5, 3.0, 4.0, 5.0}) {
    const double a = alpha - 1, k = 1 / a;
    // 2^-40: what the rounding of c may cost an entry outside the window of the edge
    // (support_edge_window); the reference's resolution at the edge.
    const double tolerance = 16 * kEps + 0x1p-40 + 2 * std::pow(0x1p-110, k);
    for (const std::size_t n : {6, 16, 64, 512, 600, 5000}) {
      constexpr std::size_t kRows = 9;  // more than a group of rows in lanes
      std::vector<T> x(kRows * n);
      for (std::size_t r = 0; r < kRows; ++r) {
        std::vector<double> row(n);
        for (double& v : row) v = static_cast<double>(static_cast<T>((r % 3 == 2 ? 1000 : 0) + normal(rng)));
        Quad c;
        quad_entmax(row, alpha, &c);
        const double max = *std::max_element(row.begin(), row.end());
        const Quad edge = static_cast<Quad>(max) - c / static_cast<Quad>(a);
        // Two entries other than the maximum.
        const std::size_t top = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
        const std::size_t on = (top + 1 + r) % n, inside = (top + 2 + 3 * r) % n;
        row[on] = static_cast<double>(static_cast<T>(static_cast<double>(edge)));
        if (inside != on && inside != top)
          row[inside] = static_cast<double>(
              std::nextafter(static_cast<T>(static_cast<double>(edge)), std::numeric_limits<T>::infinity()));
        for (std::size_t i = 0; i < n; ++i) x[r * n + i] = static_cast<T>(row[i]);
      }
      std::vector<T> p(x.size());
      sparcon::forward(sparcon::Family<T>::entmax(static_cast<T>(alpha)), std::span<const T>(x), std::span<T>(p),
                       sparcon::Rows{kRows, n});
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::vector<double> row(x.begin() + static_cast<std::ptrdiff_t>(r * n),
                                      x.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
        const std::vector<Quad> want = quad_entmax(row, alpha);
        double worst = 0;
        std::size_t at = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double error = std::abs(static_cast<double>(static_cast<Quad>(p[r * n + i]) - want[i]));
          if (error > worst) worst = error, at = i;
        }
        EXPECT_LE(worst, tolerance) << "alpha " << alpha << ", n " << n << ", row " << r << ": p[" << at
                                    << "] = " << p[r * n + at] << ", reference " << static_cast<double>(want[at]);
      }
    }
  }
}

/// Rows whose p is known exactly: p = (1/2, 1/4, 1/8, 1/8) on x = s + p^(alpha-1) / (alpha-1)
/// (tau = (alpha - 1) s), with two entries at x = s, exactly on the edge (p = 0), and the rest
/// far outside, for alpha = 3 and 5 (every x a short binary fraction, exact in float; with
/// alpha = 4 the division by 3 is not). p within
/// 4 ulps; the entries on the edge within 4 eps of 0.
TYPED_TEST(SupportEdge, ExactRowsWithTiesOnTheEdge) {
  using T = TypeParam;
  constexpr double kEps = std::numeric_limits<T>::epsilon();
  const std::vector<double> support = {0.5, 0.25, 0.125, 0.125};
  for (const double alpha : {3.0, 5.0}) {
    const double a = alpha - 1;
    for (const double s : {0.0, 1.0, -3.25, 1000.0}) {
      for (const std::size_t n : {6, 16, 64, 512, 600, 5000}) {
        std::vector<T> x(n, static_cast<T>(s - 4));
        std::vector<double> want(n, 0);
        for (std::size_t j = 0; j < support.size(); ++j) {  // spread between the two on the edge
          const std::size_t i = 1 + j * (n - 2) / 4;
          x[i] = static_cast<T>(s + std::pow(support[j], a) / a);
          want[i] = support[j];
        }
        x[0] = static_cast<T>(s);
        x[n - 1] = static_cast<T>(s);
        std::vector<T> p(n);
        sparcon::forward(sparcon::Family<T>::entmax(static_cast<T>(alpha)), std::span<const T>(x), std::span<T>(p),
                         sparcon::Rows{1, n});
        for (std::size_t i = 0; i < n; ++i)
          EXPECT_NEAR(static_cast<double>(p[i]), want[i], 4 * kEps * std::max(want[i], 1.0))
              << "alpha " << alpha << ", s " << s << ", n " << n << ", entry " << i;
      }
    }
  }
}

}  // namespace
}  // namespace sparcon_test
