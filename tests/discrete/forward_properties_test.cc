// Properties every forward map must have, for float and double, on random rows (scales 0.1, 1,
// 4, 30) and adversarial rows: sums to 1 (budget: to b), non-negative, invariant to a shift of
// the row, support = {i : k x_i > tau} with the returned tau, equivariant to permutations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

const std::vector<std::size_t> kLengths = {1, 2, 3, 7, 17, 100, 513};

template <class T>
class ForwardProperties : public ::testing::Test {};
TYPED_TEST_SUITE(ForwardProperties, FloatTypes);

/// Calls check(case, batch, x, output of forward) for every case and every standard input.
template <class T>
void for_each_output(
    const std::function<void(const MapCase&, const Batch&, const std::vector<T>&, const Forward<T>&)>& check) {
  for (const MapCase& c : all_cases()) {
    for (std::size_t n : kLengths) {
      if (!applies(c, n)) continue;
      for (const Batch& b : standard_batches(n, 777 + n)) {
        const std::vector<T> x = to_type<T>(b.x);
        SCOPED_TRACE(c.name + ", " + b.name + ", length " + std::to_string(n));
        check(c, b, x, run_forward(family_of<T>(c), x, b.rows));
      }
    }
  }
}

/// Where the output may differ from an exact map by more than the base tolerance (alpha > 2),
/// the reference gives the per-entry tolerance; elsewhere the base tolerance suffices.
template <class T>
std::vector<LD> tolerances(const MapCase& c, std::span<const T> x) {
  const bool needs_reference = (c.map == sparcon::Map::entmax || c.map == sparcon::Map::normmax) &&
                               c.parameter > 2;
  std::vector<LD> tol(x.size(), map_tolerance<T>());
  if (needs_reference) {
    const ref::Result r = reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(x));
    for (std::size_t i = 0; i < x.size(); ++i) tol[i] = entry_tolerance<T>(r, i);
  }
  return tol;
}

TYPED_TEST(ForwardProperties, RowsSumToOneOrToTheBudget) {
  using T = TypeParam;
  const LD tol = std::is_same_v<T, float> ? 1e-5L : 1e-12L;
  for_each_output<T>([&](const MapCase& c, const Batch& b, const std::vector<T>& x, const Forward<T>& out) {
    for (std::size_t r = 0; r < b.rows.count; ++r) {
      LD sum = 0;
      for (T v : row_of(out.p, b.rows, r)) sum += v;
      // For alpha > 2 entries near the support boundary are ill-conditioned: allow the sum of
      // their per-entry tolerances (see tolerances()).
      LD allowed = tol * row_total(c);
      if (c.parameter > 2 && c.map != sparcon::Map::budget) {
        LD conditioning = 0;
        for (LD e : tolerances<T>(c, row_of(x, b.rows, r))) conditioning += e;
        allowed = std::max(allowed, conditioning);
      }
      EXPECT_NEAR(static_cast<double>(sum), row_total(c), static_cast<double>(allowed)) << b.row_names[r];
    }
  });
}

TYPED_TEST(ForwardProperties, EntriesLieInZeroOne) {
  using T = TypeParam;
  for_each_output<T>([&](const MapCase&, const Batch& b, const std::vector<T>&, const Forward<T>& out) {
    for (std::size_t i = 0; i < out.p.size(); ++i) {  // first bad entry of the batch only
      if (!(out.p[i] >= T(0) && out.p[i] <= T(1) + static_cast<T>(map_tolerance<T>()))) {
        ADD_FAILURE() << b.row_names[i / b.rows.length] << ", entry " << i % b.rows.length << ": p = " << out.p[i];
        break;
      }
    }
  });
}

/// The support is {i : k x_i > tau} (k = alpha - 1; 1/2 for entmax-1.5; 1 for normmax and the
/// budget), read with the tau that forward() returns. Entries within a few rounding errors of the
/// boundary are not judged; an entry whose exact value would underflow T may be 0.
/// Dense maps (alpha <= 1): every entry is in, tau < (alpha - 1) x_i for alpha < 1.
TYPED_TEST(ForwardProperties, SupportIsWhereScoreExceedsTau) {
  using T = TypeParam;
  const LD eps = std::numeric_limits<T>::epsilon();
  for_each_output<T>([&](const MapCase& c, const Batch& b, const std::vector<T>& x, const Forward<T>& out) {
    const LD k = slope<T>(c);
    for (std::size_t r = 0; r < b.rows.count; ++r) {
      const LD tau = out.tau[r];
      ASSERT_TRUE(std::isfinite(tau)) << b.row_names[r];
      for (std::size_t i = 0; i < b.rows.length; ++i) {
        const std::size_t at = r * b.rows.length + i;
        const LD kx = k * static_cast<LD>(x[at]);
        const LD d = kx - tau;
        const LD margin = 16 * eps * (1 + std::fabs(kx) + std::fabs(tau));
        if (c.map == sparcon::Map::softmax || (c.map == sparcon::Map::entmax && c.parameter == 1)) {
          continue;  // tau = logsumexp; support is everything (underflow aside)
        }
        if (!is_sparse(c)) {  // alpha < 1: dense, tau below every (alpha - 1) x_i
          // tau is reported unshifted, so it carries the rounding of (alpha - 1) max x.
          EXPECT_GT(d, -margin) << b.row_names[r] << ", entry " << i << ": tau " << static_cast<double>(tau);
          continue;
        }
        // Smallest value p_i can take if entry i is in the support by d: a lower bound.
        LD exponent = 1 / k;  // entmax family
        if (c.map == sparcon::Map::budget) exponent = 1;
        if (c.map == sparcon::Map::normmax) exponent = 1 / (static_cast<LD>(static_cast<T>(c.parameter)) - 1);
        const LD smallest = std::pow(std::min<LD>(d, 1), exponent) / static_cast<LD>(b.rows.length);
        if (d > margin && smallest > 4 * static_cast<LD>(std::numeric_limits<T>::min())) {
          EXPECT_GT(out.p[at], T(0)) << b.row_names[r] << ", entry " << i << ": k x - tau = "
                                     << static_cast<double>(d);
        } else if (d < -margin) {
          EXPECT_EQ(out.p[at], T(0)) << b.row_names[r] << ", entry " << i << ": k x - tau = "
                                     << static_cast<double>(d);
        }
      }
    }
  });
}

/// Rounds a row to a grid on which x + c is exact in T, so that the shifted row is exactly the
/// row plus c and the test judges the map, not the rounding of the shift. Returns false when no
/// such grid keeps c on it (a row with entries near 1e20).
template <class T>
bool put_on_shift_grid(std::span<T> x, T c) {
  T largest = std::fabs(c);
  for (T v : x) largest = std::max(largest, std::fabs(v));
  const int exponent = std::ilogb(2 * largest + 1) + 1 - std::numeric_limits<T>::digits;
  const T step = std::ldexp(T(1), exponent);
  for (T& v : x) v = std::round(v / step) * step;
  for (T v : x) {
    if ((v + c) - c != v) return false;
  }
  return std::round(c / step) * step == c;
}

TYPED_TEST(ForwardProperties, ShiftInvariance) {
  using T = TypeParam;
  for (const T c : {T(1e3), T(-7.5)}) {
    for_each_output<T>([&](const MapCase& mc, const Batch& b, const std::vector<T>& x0, const Forward<T>&) {
      std::vector<T> x = x0;
      std::vector<bool> exact(b.rows.count);
      for (std::size_t r = 0; r < b.rows.count; ++r) {
        exact[r] = put_on_shift_grid(std::span<T>(x).subspan(r * b.rows.length, b.rows.length), c);
      }
      std::vector<T> shifted(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) shifted[i] = x[i] + c;
      const sparcon::Family<T> family = family_of<T>(mc);
      const Forward<T> base = run_forward(family, x, b.rows);
      const Forward<T> moved = run_forward(family, shifted, b.rows);
      for (std::size_t r = 0; r < b.rows.count; ++r) {
        if (!exact[r]) continue;
        const std::vector<LD> tol = tolerances<T>(mc, row_of(x, b.rows, r));
        for (std::size_t i = 0; i < b.rows.length; ++i) {  // first mismatch of the row only
          const std::size_t at = r * b.rows.length + i;
          if (!(std::fabs(moved.p[at] - base.p[at]) <= 2 * tol[i])) {
            ADD_FAILURE() << "shift " << c << ", " << b.row_names[r] << ", entry " << i << ": " << moved.p[at]
                          << " vs " << base.p[at];
            break;
          }
        }
        if (mc.map != sparcon::Map::budget) {  // tau(x + c) = tau(x) + k c
          const LD want = static_cast<LD>(base.tau[r]) + slope<T>(mc) * c;
          EXPECT_NEAR(moved.tau[r], static_cast<double>(want),
                      static_cast<double>(4 * map_tolerance<T>() * (1 + std::fabs(want))))
              << "shift " << c << ", " << b.row_names[r];
        }
      }
    });
  }
}

TYPED_TEST(ForwardProperties, PermutationEquivariance) {
  using T = TypeParam;
  for_each_output<T>([&](const MapCase& c, const Batch& b, const std::vector<T>& x, const Forward<T>& out) {
    const std::size_t n = b.rows.length;
    const std::vector<std::size_t> perm = random_permutation(n, 31 + n);
    std::vector<T> permuted(x.size());
    for (std::size_t r = 0; r < b.rows.count; ++r) {
      for (std::size_t i = 0; i < n; ++i) permuted[r * n + i] = x[r * n + perm[i]];
    }
    const Forward<T> moved = run_forward(family_of<T>(c), permuted, b.rows);
    for (std::size_t r = 0; r < b.rows.count; ++r) {
      const std::vector<LD> tol = tolerances<T>(c, row_of(x, b.rows, r));
      for (std::size_t i = 0; i < n; ++i) {  // first mismatch of the row only
        if (!(std::fabs(moved.p[r * n + i] - out.p[r * n + perm[i]]) <= 2 * tol[perm[i]])) {
          ADD_FAILURE() << b.row_names[r] << ", entry " << perm[i] << ": " << moved.p[r * n + i] << " permuted vs "
                        << out.p[r * n + perm[i]];
          break;
        }
      }
      if (c.map != sparcon::Map::budget) {
        EXPECT_NEAR(moved.tau[r], out.tau[r],
                    static_cast<double>(2 * map_tolerance<T>() * (1 + std::fabs(static_cast<LD>(out.tau[r])))))
            << b.row_names[r];
      }
    }
  });
}

}  // namespace
}  // namespace sparcon_test
