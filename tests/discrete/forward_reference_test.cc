// Every forward map against the long-double reference (reference.h), for float and double,
// on random and adversarial rows of many lengths: p to 1e-12 (double) / 1e-6 (float), and tau.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "discrete/simd_kernels.h"
#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using sparcon::Map;

const std::vector<std::size_t> kLengths = {1, 2, 3, 7, 16, 17, 100, 513, 4096};

template <class T>
class ForwardMatchesReference : public ::testing::Test {};
TYPED_TEST_SUITE(ForwardMatchesReference, FloatTypes);

/// One map with one shared parameter, on the standard inputs of every length.
template <class T>
void check_all_lengths(const MapCase& c) {
  for (std::size_t n : kLengths) {
    if (!applies(c, n)) continue;
    for (const Batch& b : standard_batches(n)) {
      const std::vector<T> x = to_type<T>(b.x);
      const Forward<T> got = run_forward(family_of<T>(c), x, b.rows);
      expect_batch_matches<T>(c.map, {static_cast<T>(c.parameter)}, x, b.rows, got, b.row_names);
    }
  }
}

TYPED_TEST(ForwardMatchesReference, Softmax) { check_all_lengths<TypeParam>(make_case(Map::softmax, 1)); }

TYPED_TEST(ForwardMatchesReference, Sparsemax) { check_all_lengths<TypeParam>(make_case(Map::sparsemax, 2)); }

TYPED_TEST(ForwardMatchesReference, Entmax15) { check_all_lengths<TypeParam>(make_case(Map::entmax15, 1.5)); }

TYPED_TEST(ForwardMatchesReference, EntmaxEveryAlpha) {
  for (double alpha : entmax_alphas()) check_all_lengths<TypeParam>(make_case(Map::entmax, alpha));
}

TYPED_TEST(ForwardMatchesReference, NormmaxEveryAlpha) {
  for (double alpha : normmax_alphas()) check_all_lengths<TypeParam>(make_case(Map::normmax, alpha));
}

TYPED_TEST(ForwardMatchesReference, BudgetEveryB) {
  for (double b : budgets()) check_all_lengths<TypeParam>(make_case(Map::budget, b));
}

/// A different parameter on every row of one batch.
template <class T>
void check_per_row(Map map, const std::vector<double>& values, std::size_t length) {
  const std::vector<T> parameters = to_type<T>(values);
  const sparcon::Rows rows{values.size(), length};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, length, 1.5, 99 + length));
  const sparcon::Family<T> family = family_of<T>(map, std::span<const T>(parameters));
  expect_batch_matches<T>(map, parameters, x, rows, run_forward(family, x, rows));
}

TYPED_TEST(ForwardMatchesReference, PerRowAlpha) {
  for (std::size_t n : {1, 7, 100, 513}) check_per_row<TypeParam>(Map::entmax, entmax_alphas(), n);
}

TYPED_TEST(ForwardMatchesReference, PerRowNormmaxAlpha) {
  for (std::size_t n : {1, 7, 100}) {
    check_per_row<TypeParam>(Map::normmax, {3, 1.5, 2, 2.5, 1.25}, n);
  }
}

TYPED_TEST(ForwardMatchesReference, PerRowBudget) {
  for (std::size_t n : {4, 17, 100}) check_per_row<TypeParam>(Map::budget, {1, 3.5, 2, 4, 1.5}, n);
}

/// The named forms of discrete.h (sparcon::sparsemax(...) etc.) against the reference.
TYPED_TEST(ForwardMatchesReference, NamedForms) {
  using T = TypeParam;
  const sparcon::Rows rows{5, 33};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 2.0, 4242));
  const std::span<const T> xs(x);
  std::vector<T> p(x.size());
  const std::span<T> ps(p);
  const std::vector<T> no_tau(rows.count, T(0));
  auto check = [&](Map map, double parameter) {
    Forward<T> got{p, no_tau};
    for (std::size_t r = 0; r < rows.count; ++r) {
      const ref::Result expected = reference_row(map, static_cast<LD>(static_cast<T>(parameter)),
                                                 promote(row_of(x, rows, r)));
      EXPECT_TRUE(row_matches<T>(row_of(got.p, rows, r), T(0), expected, false))
          << case_name(map, parameter) << " (named form), row " << r;
    }
  };
  sparcon::softmax<T>(xs, ps, rows);
  check(Map::softmax, 1);
  sparcon::sparsemax<T>(xs, ps, rows);
  check(Map::sparsemax, 2);
  sparcon::entmax15<T>(xs, ps, rows);
  check(Map::entmax15, 1.5);
  sparcon::entmax<T>(xs, ps, rows, T(1.75));
  check(Map::entmax, 1.75);
  sparcon::normmax<T>(xs, ps, rows, T(2));
  check(Map::normmax, 2);
  sparcon::budget<T>(xs, ps, rows, T(3));
  check(Map::budget, 3);
}

/// Whether every p of a double row is within `eps` double epsilons of the row's largest p of
/// the long-double reference; the row's error in those units is the message.
::testing::AssertionResult within_eps_of_largest(std::span<const double> got, const ref::Result& expected, LD eps) {
  constexpr LD kEps = std::numeric_limits<double>::epsilon();
  const LD largest = *std::max_element(expected.p.begin(), expected.p.end());
  LD worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<LD>(got[i]) - expected.p[i]));
  if (worst <= eps * kEps * largest) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << static_cast<double>(worst / (kEps * largest)) << " eps of the largest p";
}

/// Double rows to the last digits: for the maps whose threshold comes from Newton's steps
/// (entmax-1.5 with more than 32 candidates, alpha 1.25 and 1.75, the general powers of
/// 1.01-1.3, whose later steps take their powers from the first step's, those below 1.1 from
/// log1p, and alpha just above 1, where k = 1/(alpha-1) is up to 1e5), every p within 12 eps of
/// the row's largest p of the long-double reference (measured: at most 8.9 eps; 1.15, 1.2 and
/// 1.3 at most 7.8, 5.1 and 4.0, 1.05 and 1.09 8.4 and 8.8 as one row at a time, 1.01 10.0;
/// with s summed in one chain, not in blocks, 1.09 read 11.3, and without log1p 1.01 read up to
/// 100). Catches a threshold that
/// stops short of the root (a Newton step whose numerator s - s^(1-1/k) cancels near alpha = 1:
/// 1e-11 errors at alpha = 1 + 1e-5), or entmax-1.5's closed form taken where it cancels (nearly
/// uniform rows, scale 0.05: 111 eps). The other alphas are left out of those rows: there every
/// u = 1 + a (y - lambda) is small, and forming it from lambda costs up to 15 eps (measured), the
/// conditioning of the lambda form, not of the solve.
TEST(ForwardMatchesReferenceDouble, NewtonThresholdsToTheLastDigits) {
  for (const double alpha : {1.5, 1.25, 1.75, 1.15, 1.2, 1.3, 1.09, 1.05, 1.01, 1.001, 1.00001}) {
    for (const std::size_t n : {24, 64, 128, 512}) {
      for (const double scale : {0.05, 0.25, 1.0, 4.0}) {
        if (scale < 0.1 && alpha != 1.5) continue;
        const sparcon::Rows rows{40, n};
        const std::vector<double> x = normal_values(rows.count, n, scale, 9000 + n);
        const Forward<double> got = run_forward(sparcon::Family<double>::entmax(alpha), x, rows);
        for (std::size_t r = 0; r < rows.count; ++r)
          EXPECT_TRUE(
              within_eps_of_largest(row_of(got.p, rows, r), ref::entmax(promote(row_of(x, rows, r)), alpha), 12))
              << "alpha " << alpha << ", length " << n << ", scale " << scale << ", row " << r;
      }
    }
  }
}

/// Whether every p of float rows is within half an ulp of reference(row, alpha) (long double),
/// plus the reference's own error (1e-3 ulp allowed). Entries whose reference is below the
/// smallest normal float are skipped, or with `every_entry` held within it (p = 0 where the
/// reference is 0). The first miss is the message.
template <class Reference>
::testing::AssertionResult correctly_rounded(const std::vector<float>& x, const std::vector<float>& p,
                                             const sparcon::Rows& rows, float alpha, Reference&& reference,
                                             bool every_entry = false) {
  using LD = long double;
  const std::size_t n = rows.length;
  for (std::size_t r = 0; r < rows.count; ++r) {
    std::vector<LD> xr(x.begin() + static_cast<std::ptrdiff_t>(r * n),
                       x.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
    const ref::Result expected = reference(xr, static_cast<LD>(alpha));
    for (std::size_t i = 0; i < n; ++i) {
      const LD want = expected.p[i];
      const bool normal = want >= std::numeric_limits<float>::min();
      if (!normal && !every_entry) continue;
      const LD tolerance = normal ? 0.501L * std::ldexp(1.0L, std::ilogb(static_cast<float>(want)) - 23)
                                  : std::numeric_limits<float>::min();
      if (!(std::fabs(static_cast<LD>(p[r * n + i]) - want) <= tolerance))
        return ::testing::AssertionFailure()
               << "alpha " << alpha << ", rows of " << n << ", row " << r << ", entry " << i << " (x = " << x[r * n + i]
               << "): got " << p[r * n + i] << ", want " << static_cast<double>(want);
    }
  }
  return ::testing::AssertionSuccess();
}

/// Float rows of entmax are correctly rounded for every alpha but 1.5 and 2 (and normmax): every
/// p within half an ulp of the long-double reference, plus the reference's own error (1e-3 ulp
/// allowed). The alphas are floats (as a float family holds them), so the reference solves the
/// same problem. Catches the float write of before (a general power as
/// exp(k log1p(a (y - lambda))) in float: 20-350 ulps in the bulk of a row, no correct digit near
/// the support's edge) and any float Pow (12-60 ulps near alpha = 1, where k amplifies the
/// rounding of u). Sparsemax and entmax-1.5 write a (x - max) + c with c rounded to float, a few
/// instructions a vector: 170-260 and 22-35 ulps where p > 1e-3 (absolute errors below 1e-7);
/// their exact write cost 30-70% of their forward on short rows (BENCHMARKS.md Part 14).
TEST(ForwardMatchesReferenceFloat, GeneralAlphaIsCorrectlyRounded) {
  for (const double wanted : {1.001, 1.008, 1.05, 1.1, 1.2, 1.25, 4.0 / 3, 1.75, 1.9, 2.5, 3.0, 0.5, 0.95}) {
    const float alpha = static_cast<float>(wanted);
    for (const std::size_t n : {16, 64, 512}) {
      for (const double scale : {0.25, 1.0, 4.0}) {
        const sparcon::Rows rows{12, n};
        const std::vector<float> x = to_type<float>(normal_values(rows.count, n, scale, 777 + n));
        const Forward<float> got = run_forward(sparcon::Family<float>::entmax(alpha), x, rows);
        ASSERT_TRUE(correctly_rounded(x, got.p, rows, alpha, ref::entmax)) << "scale " << scale;
      }
    }
  }
  for (const float alpha : {1.5F, 2.5F}) {  // normmax's write is the same general power, times 1/Z
    const sparcon::Rows rows{12, 64};
    const std::vector<float> x = to_type<float>(normal_values(rows.count, 64, 1.0, 4242));
    std::vector<float> p(x.size());
    sparcon::normmax<float>(x, p, rows, alpha);
    ASSERT_TRUE(correctly_rounded(x, p, rows, alpha, ref::normmax)) << "normmax";
  }
}

/// Float rows whose candidate threshold max - 1/a is exactly 0 (alpha = 1.125, 1/a = 8, max = 8):
/// the entries 0 are no candidates and the entries 1e-30 are, yet both have y = x - max = -8 in
/// double. The general power's float write takes p from the Newton steps' columns and must put
/// them at the collected entries' positions, not at every entry with that y (the first version
/// of WritePowerColumn did, and shifted every p after them). Rows of 16 (no floor) and 128.
TEST(ForwardMatchesReferenceFloat, EntriesBesideTheCandidateThreshold) {
  const float alpha = 1.125F;
  for (const std::size_t n : {16, 128}) {
    const sparcon::Rows rows{20, n};
    std::vector<float> x(rows.count * n);
    for (std::size_t r = 0; r < rows.count; ++r) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t m = (i * 7 + r * 3) % 11;  // the tiny and zero entries first in some rows
        x[r * n + i] = m < 3 ? 0.0F : m < 6 ? 1e-30F : 8.0F - 0.25F * static_cast<float>(m + i % 5);
      }
      x[r * n + (r % n)] = 8.0F;
    }
    std::vector<float> p(x.size());
    sparcon::entmax<float>(x, p, rows, alpha);
    ASSERT_TRUE(correctly_rounded(x, p, rows, alpha, ref::entmax, true));
  }
}

/// Rows with an entry just above the support's outer edge max - 1/(alpha - 1), on the float that
/// max - 1/a rounds to when it rounds upward (1/a not a power of two): that entry is in the
/// support, and before candidate_threshold (threshold.h) rounded down it was no candidate: float
/// rows [3e7, 29999998] with alpha = 1.4 came out [1, 0] (want [0.98355, 0.016447]), and
/// [-1000000.6875, -999999.375] with alpha = 1.75 summed to 1.0039 (the write, whose bound rounds
/// down, gave the entry a p the solve had left out). Found by an audit against a 50-digit
/// reference, 2026-12-07. Every path that collects candidates: Kernels::power_rows (rows of up
/// to kMaxPowerRow, in groups of rows and the group's last rows alone), the collection of the
/// row-at-a-time solver (longer rows) and its scan (rows longer than 4096); every entry
/// correctly rounded, the tiny ones too.
TEST(ForwardMatchesReferenceFloat, EntriesOnTheRoundedCandidateThreshold) {
  using LD = long double;
  for (const float alpha : {1.2F, 1.4F, 1.75F}) {
    const double a = static_cast<double>(alpha) - 1;
    const float gap = static_cast<float>(1 / a);  // as the threshold was taken before
    for (const float start : {3.3F, -999999.375F, 3e7F}) {
      // The first maximum from `start` on whose max - gap rounds to a float above the true edge.
      float max = start;
      while (!(static_cast<LD>(max - gap) > static_cast<LD>(max) - 1 / static_cast<LD>(a)))
        max = std::nextafter(max, std::numeric_limits<float>::infinity());
      const float edge_entry = max - gap;
      for (const std::size_t n : {2, 16, 100, 600, 5000}) {
        const sparcon::Rows rows{n <= 100 ? std::size_t{19} : std::size_t{3}, n};
        std::vector<float> x(rows.count * n);
        for (std::size_t r = 0; r < rows.count; ++r) {
          for (std::size_t i = 0; i < n; ++i)  // the rest far outside the support
            x[r * n + i] = max - 4 * gap - static_cast<float>(i % 7) * gap;
          x[r * n + (r % n)] = max;
          x[r * n + (r + 1) % n] = edge_entry;
        }
        std::vector<float> p(x.size());
        sparcon::entmax<float>(x, p, rows, alpha);
        ASSERT_TRUE(correctly_rounded(x, p, rows, alpha, ref::entmax, true))
            << "max " << max << ", entry " << edge_entry << ", rows of " << n;
      }
    }
  }
}

/// Rows of a general power (k = 1/(alpha - 1) not an integer) longer than 64, which
/// Kernels::power_rows compacts before its double steps, with those steps started above the
/// root (the test shift of simd_kernels.h): each row whose threshold is not 0 is solved again
/// from 0 on all its candidates, in groups beside rows whose threshold is 0 (one entry 1/a above
/// the rest), which stay on the compacted path. The results must be those of the usual path's
/// tests: float rows correctly rounded, double rows within 12 eps of the row's largest p.
/// Rounding alone does not reach this path; a solve again on the compacted columns, or none,
/// fails here.
TEST(ForwardMatchesReferenceGeneralPower, StartedAboveTheRoot) {
  struct Shift {
    Shift() { sparcon::simd::detail::power_rows_floor_shift = 0x1p-4; }
    ~Shift() { sparcon::simd::detail::power_rows_floor_shift = 0; }
  } shift;
  for (const double wanted : {1.01, 1.05, 1.1, 1.2, 1.3, 1.75, 1.9}) {
    const float alpha = static_cast<float>(wanted);
    for (const std::size_t n : {65, 128, 333, 512}) {
      const sparcon::Rows rows{19, n};
      std::vector<double> x = normal_values(rows.count, n, 1.0, 31 + n);
      for (std::size_t r = 0; r < rows.count; r += 3)  // threshold 0: the maximum alone
        x[r * n + r % n] = 1.5 / (alpha - 1) + 10;
      const std::vector<float> xf = to_type<float>(x);
      const Forward<float> got_float = run_forward(sparcon::Family<float>::entmax(alpha), xf, rows);
      ASSERT_TRUE(correctly_rounded(xf, got_float.p, rows, alpha, ref::entmax));
      const Forward<double> got = run_forward(sparcon::Family<double>::entmax(alpha), x, rows);
      for (std::size_t r = 0; r < rows.count; ++r)
        EXPECT_TRUE(within_eps_of_largest(row_of(got.p, rows, r),
                                          ref::entmax(promote(row_of(x, rows, r)), static_cast<LD>(alpha)), 12))
            << "alpha " << alpha << ", length " << n << ", row " << r;
    }
  }
}

}  // namespace
}  // namespace sparcon_test
