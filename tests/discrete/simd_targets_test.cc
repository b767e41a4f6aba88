// The discrete kernels on every SIMD target that Highway compiled into the library and this CPU
// supports, not only the one dispatch picks: each test runs once per target, and the target ends
// its name (SimdTargets/DiscreteKernels.ForwardEveryMap/AVX2, .../AVX3, .../SSE4, ...).
// The fixture restricts Highway to the target (hwy::SetSupportedTargetsForTest, then
// GetChosenTarget().Update) and re-resolves the library's kernel table
// (sparcon::simd::detail::reselect_kernels, simd_kernels.h); it checks that the table in use is
// that target's. What runs per target, float and double: the forward pass of every map and
// parameter of map_cases.h on random and adversarial rows across vector-tail lengths, long rows
// (6007 entries, past the 4096 after which the scan tightens its bound; two threads), edge rows
// (-inf masks, all -inf, NaN and +inf, 1e6 + noise), and the backward of every map (finite
// differences in double, float against double, the closed form on each of its paths): every entry
// of the kernel table. The long-double references are computed once and shared by the targets.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "discrete/simd_kernels.h"
#include "finite_differences.h"
#include "map_cases.h"
#include "random_rows.h"
#include "sparcon/discrete.h"
#include "test_support.h"

namespace sparcon_test {
namespace {

using sparcon::Map;

/// Runs every test of the suite with the library's kernels of the target GetParam().
class DiscreteKernels : public ::testing::TestWithParam<std::int64_t> {
 protected:
  static std::int64_t select(std::int64_t target) {
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    return sparcon::simd::detail::reselect_kernels();
  }
  void SetUp() override {
    ASSERT_EQ(select(GetParam()), GetParam()) << "the kernels in use are not " << hwy::TargetName(GetParam()) << "'s";
  }
  void TearDown() override { select(0); }
};

/// Row lengths around every vector width (4 to 16 floats, 2 to 8 doubles) and beyond.
const std::vector<std::size_t> kLengths = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 67};

/// The reference of every row of a batch, computed once and kept for the other targets (it
/// does not depend on the target, and it is most of the cost).
template <class T>
const std::vector<ref::Result>& cached_reference(const MapCase& c, const std::vector<T>& x, sparcon::Rows rows,
                                                 const std::string& key) {
  static std::map<std::string, std::vector<ref::Result>> cache;
  auto [it, inserted] = cache.try_emplace(c.name + "|" + std::to_string(sizeof(T)) + "|" + key);
  if (inserted) {
    for (std::size_t r = 0; r < rows.count; ++r)
      it->second.push_back(reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(row_of(x, rows, r))));
  }
  return it->second;
}

/// sparcon's forward on this target against the (cached) reference, row by row.
template <class T>
void expect_matches_reference(const MapCase& c, const std::vector<T>& x, sparcon::Rows rows, const std::string& key,
                              unsigned threads = 1, const std::vector<std::string>& row_names = {}) {
  const Forward<T> got = run_forward(family_of<T>(c), x, rows, threads);
  const std::vector<ref::Result>& want = cached_reference(c, x, rows, key);
  for (std::size_t r = 0; r < rows.count; ++r) {
    EXPECT_TRUE(row_matches<T>(row_of(got.p, rows, r), got.tau[r], want[r], c.map != Map::budget))
        << c.name << ", row " << r << (row_names.empty() ? "" : " (" + row_names[r] + ")") << ", length " << rows.length;
  }
}

template <class T>
void check_forward_every_map() {
  for (const MapCase& c : all_cases()) {
    for (std::size_t n : kLengths) {
      if (!applies(c, n)) continue;
      for (const Batch& b : standard_batches(n, 777 + n)) {
        expect_matches_reference<T>(c, to_type<T>(b.x), b.rows, b.name + "|" + std::to_string(n), 1, b.row_names);
      }
    }
  }
}

TEST_P(DiscreteKernels, ThisTargetsKernelsAreInUse) {
  EXPECT_EQ(sparcon::simd::detail::kernel_target(), GetParam());
  EXPECT_STREQ(hwy::TargetName(sparcon::simd::detail::kernel_target()), hwy::TargetName(GetParam()));
}

/// Sparsemax's offset on a candidate list by sorting, in long double: the largest k with
/// 1 + a (k y_(k) - sum_{j<=k} y_(j)) > 0, then (1 - a sum_{j<=k} y_(j)) / k.
LD sorted_sparsemax_offset(std::vector<double> y, double a) {
  std::sort(y.begin(), y.end(), std::greater<>());
  LD sum = 0, best_sum = 0;
  std::size_t best = 0;
  for (std::size_t k = 1; k <= y.size(); ++k) {
    sum += y[k - 1];
    if (1 + a * (static_cast<LD>(k) * y[k - 1] - sum) > 0) best = k, best_sum = sum;
  }
  return (1 - a * best_sum) / static_cast<LD>(best);
}

TEST_P(DiscreteKernels, SparsemaxOffsetsAreTheSortedOne) {
  // The two sparsemax solvers of the kernel table on candidate lists of 1-40 entries (max 0):
  // continuous values, values on a coarse grid (ties, also at the support's edge) and all
  // equal; a = 1 (sparsemax) and a = 0.3.
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> unit(-1, 0);
  std::uniform_int_distribution<int> grid(-8, 0);
  int checked = 0;
  for (std::size_t n = 1; n <= 40; ++n) {
    for (int kind = 0; kind < 3; ++kind) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> y(n);
        for (double& v : y) v = kind == 0 ? unit(rng) : kind == 1 ? grid(rng) / 8.0 : 0.0;
        y[rng() % n] = 0;  // the maximum
        for (const double a : {1.0, 0.3}) {
          const LD want = sorted_sparsemax_offset(y, a);
          const double pairwise = sparcon::simd::sparsemax_offset_pairwise(y.data(), n, a);
          const double michelot = sparcon::simd::michelot_offset(y.data(), n, a);
          EXPECT_LE(std::fabs(pairwise - want), 1e-15L * (1 + std::fabs(want))) << "pairwise, n " << n << " kind " << kind << " a " << a;
          EXPECT_LE(std::fabs(michelot - want), 1e-15L * (1 + std::fabs(want))) << "michelot, n " << n << " kind " << kind << " a " << a;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 40 * 3 * 20 * 2);
}

/// The offset of sum [a y + offset]_+^2 = 1 by sorting, in long double: the largest k whose
/// closed form tau_k = m_k - sqrt((1 - v_k) / k) (m_k, v_k the mean and sum of squared
/// deviations of the top k z = a y) lies below z_(k); offset = -tau_k.
LD sorted_quadratic_offset(std::vector<double> y, double a) {
  std::sort(y.begin(), y.end(), std::greater<>());
  LD best = 0;
  for (std::size_t k = 1; k <= y.size(); ++k) {
    LD mean = 0, v = 0;
    for (std::size_t j = 0; j < k; ++j) mean += a * static_cast<LD>(y[j]);
    mean /= static_cast<LD>(k);
    for (std::size_t j = 0; j < k; ++j) v += (a * static_cast<LD>(y[j]) - mean) * (a * static_cast<LD>(y[j]) - mean);
    if (v > 1) break;
    const LD tau = mean - std::sqrt((1 - v) / static_cast<LD>(k));
    if (tau < a * static_cast<LD>(y[k - 1])) best = -tau;
  }
  return best;
}

TEST_P(DiscreteKernels, QuadraticOffsetIsTheSortedOne) {
  // k = 2 (entmax-1.5 with a = 0.5, 2-normmax with a = 1) on candidate lists of 1-40 entries
  // (max 0, all within 1/a of it, as the collect pass leaves them), with ties as above; the
  // result must also solve its equation.
  std::mt19937_64 rng(4343);
  for (std::size_t n = 1; n <= 40; ++n) {
    for (int kind = 0; kind < 3; ++kind) {
      for (int trial = 0; trial < 20; ++trial) {
        for (const double a : {0.5, 1.0}) {
          std::vector<double> y(n);
          std::uniform_real_distribution<double> below(-1 / a, 0);
          std::uniform_int_distribution<int> grid(-8, 0);
          for (double& v : y) v = kind == 0 ? below(rng) : kind == 1 ? grid(rng) / (8.0 * a) : 0.0;
          y[rng() % n] = 0;
          const LD want = sorted_quadratic_offset(y, a);
          const double got = sparcon::simd::quadratic_offset_pairwise(y.data(), n, a);
          EXPECT_LE(std::fabs(got - want), 1e-15L) << "n " << n << " kind " << kind << " a " << a;
          LD total = 0;
          for (const double v : y) total += std::pow(std::max<LD>(0, a * static_cast<LD>(v) + got), 2);
          EXPECT_LE(std::fabs(total - 1), 1e-14L) << "n " << n << " kind " << kind << " a " << a;
        }
      }
    }
  }
}

TEST_P(DiscreteKernels, DropAtOrBelowKeepsTheOthersInOrder) {
  // In-place compaction on lengths across vector tails, against a plain copy of the kept
  // entries; values on a grid so that some equal the bound (dropped: y <= bound).
  std::mt19937_64 rng(5151);
  std::uniform_int_distribution<int> grid(-10, 0);
  for (std::size_t n = 0; n <= 70; ++n) {
    for (const double bound : {-11.0, -5.0, -0.5, 0.0}) {
      std::vector<double> y(n);
      for (double& v : y) v = grid(rng) / 2.0;
      std::vector<double> want;
      for (const double v : y)
        if (v > bound) want.push_back(v);
      const std::size_t kept = sparcon::simd::drop_at_or_below(y.data(), n, bound);
      ASSERT_EQ(kept, want.size()) << "n " << n << " bound " << bound;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), y.begin())) << "n " << n << " bound " << bound;
    }
  }
}

template <class T>
void check_shifted_to_double() {
  // Exact: a float or double minus a float or double near it, in double.
  std::mt19937_64 rng(5252);
  std::normal_distribution<double> normal(0, 3);
  for (std::size_t n = 0; n <= 40; ++n) {
    std::vector<T> x(n);
    for (T& v : x) v = static_cast<T>(normal(rng));
    const T shift = static_cast<T>(normal(rng));
    std::vector<double> y(n + 1, -7.0);  // one guard entry past the end
    sparcon::simd::Kernels<T>::shifted_to_double(x.data(), n, shift, y.data());
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_EQ(y[i], static_cast<double>(x[i]) - static_cast<double>(shift)) << "n " << n << " i " << i;
    EXPECT_EQ(y[n], -7.0) << "wrote past n = " << n;
  }
}

TEST_P(DiscreteKernels, ShiftedToDoubleFloat) { check_shifted_to_double<float>(); }
TEST_P(DiscreteKernels, ShiftedToDoubleDouble) { check_shifted_to_double<double>(); }

/// |got - want| in units in the last place of T at want (a normal T).
template <class T>
double ulps_off(T got, long double want) {
  const int mantissa = std::numeric_limits<T>::digits - 1;
  const long double ulp = std::ldexp(1.0L, std::ilogb(static_cast<T>(want)) - mantissa);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

/// Positive T spread over every binade from the smallest subnormal to 2^20 (uniform exponent,
/// random mantissa), plus the ends and neighbours of 1.
template <class T>
std::vector<T> powers_of_everywhere(std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  const int low = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
  std::uniform_int_distribution<int> exponent(low, 20);
  std::uniform_real_distribution<T> mantissa(1, 2);
  std::vector<T> x = {std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(),
                      std::nextafter(std::numeric_limits<T>::min(), T(0)), T(1),
                      std::nextafter(T(1), T(0)), std::nextafter(T(1), T(2)), T(0.5), T(2)};
  while (x.size() < count) x.push_back(std::max(std::ldexp(mantissa(rng), exponent(rng)),
                                                std::numeric_limits<T>::denorm_min()));
  return x;
}

/// Pow's bound (src/pow-inl.h): 2.5 ulps, plus log2's error times |e| (0.2 ulps per unit of e).
double pow_ulps(double e) { return 2.5 + 0.2 * std::fabs(e); }

/// Weights s = p^e of kind `kind` received through weighted_sums' s_out, against powl: within
/// `ulps(e)` wherever the result is a normal T, 0 where it is below half the smallest subnormal,
/// +inf above the largest finite, and 0 for p <= 0 and NaN.
template <class T, class Ulps>
void check_weights(sparcon::simd::WeightKind kind, std::initializer_list<T> exponents, Ulps&& ulps) {
  const std::vector<T> x = powers_of_everywhere<T>(4000, 77);
  const std::vector<T> g(x.size(), T(1));
  std::vector<T> s(x.size());
  for (const T e : exponents) {
    sparcon::simd::Kernels<T>::weighted_sums(x.data(), g.data(), x.size(), {kind, e}, s.data());
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const long double want = std::pow(static_cast<long double>(x[i]), static_cast<long double>(e));
      SCOPED_TRACE("x " + std::to_string(static_cast<double>(x[i])) + " e " + std::to_string(static_cast<double>(e)));
      if (want >= std::numeric_limits<T>::min() && want <= std::numeric_limits<T>::max()) {
        worst = std::max(worst, ulps_off(s[i], want));
        ASSERT_LE(ulps_off(s[i], want), ulps(e)) << "got " << s[i] << " want " << static_cast<double>(want);
      } else if (want < std::numeric_limits<T>::denorm_min() / 2) {
        ASSERT_EQ(s[i], T(0));
      } else if (want > std::numeric_limits<T>::max() * 1.01L) {
        ASSERT_EQ(s[i], std::numeric_limits<T>::infinity());
      } else if (want < std::numeric_limits<T>::min()) {  // subnormal: within a few of its ulps
        ASSERT_LE(std::fabs(static_cast<long double>(s[i]) - want),
                  3.0L * std::numeric_limits<T>::denorm_min());
      }
    }
    ::testing::Test::RecordProperty(std::string("worst_ulps_e_") + std::to_string(static_cast<double>(e)), std::to_string(worst));
  }
  // Outside the support (p <= 0, or NaN) the weight is 0, whatever e.
  const std::vector<T> outside = {T(0), T(-0.0), T(-1), -std::numeric_limits<T>::denorm_min(),
                                  std::numeric_limits<T>::quiet_NaN()};
  for (const T e : exponents) {
    std::vector<T> zeros(outside.size(), T(7));
    sparcon::simd::Kernels<T>::weighted_sums(outside.data(), g.data(), outside.size(), {kind, e}, zeros.data());
    for (const T v : zeros) EXPECT_EQ(v, T(0)) << "e " << e;
  }
}

/// The backward's power weights (Pow, src/pow-inl.h) within pow_ulps(e): the rounding of
/// exp(e log p) in T alone is up to 116 float ulps and 996 double ulps on these inputs.
template <class T>
void check_power_weights() {
  check_weights<T>(
      sparcon::simd::WeightKind::power,
      {T(0.75), T(0.25), T(0.5), T(-1), T(1) / 3, T(4) / 3, T(1.7), T(-0.3), T(0.999), T(-2.5), T(0), T(1)}, pow_ulps);
}

/// The weights of entmax-1.25 and 1.75 by square roots, p^(3/4) = sqrt(sqrt(p)) sqrt(p) and
/// p^(1/4) = sqrt(sqrt(p)): three roundings of relative error u = 2^-digits give p^(3/4) within
/// (1 + u)^(3/2) (1 + u)^2 - 1 ~ 3.5 u, 3.5 ulps at the bottom of a binade, p^(1/4) within
/// 1.5 u; entmax-3's 1/p correctly rounded.
template <class T>
void check_root_weights() {
  check_weights<T>(sparcon::simd::WeightKind::quarter, {T(0.75), T(0.25)},
                   [](T e) { return e == T(0.75) ? 3.5 : 1.5; });
  check_weights<T>(sparcon::simd::WeightKind::reciprocal, {T(-1)}, [](T) { return 0.5; });
}

TEST_P(DiscreteKernels, PowerWeightsFloat) { check_power_weights<float>(); }
TEST_P(DiscreteKernels, PowerWeightsDouble) { check_power_weights<double>(); }
TEST_P(DiscreteKernels, RootWeightsFloat) { check_root_weights<float>(); }
TEST_P(DiscreteKernels, RootWeightsDouble) { check_root_weights<double>(); }

/// A row for the alpha gradient's sums: p of about 30% zeros, 2% NaN, 2% negative (all left out
/// of the sums, g anything there, inf mostly), the rest u^3, u uniform in (0, 1); with `tiny`,
/// 5.5% of them near the smallest normal and 5.5% e^-40u. g standard normal where it counts.
template <class T>
std::pair<std::vector<T>, std::vector<T>> support_row(std::mt19937_64& rng, std::size_t n, bool tiny) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  const double smallest = std::numeric_limits<T>::min(), tiny_share = tiny ? 0.11 : 0;
  std::vector<T> p(n), g(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = unit(rng);
    p[i] = u < 0.3                     ? T(0)
           : u < 0.32                  ? std::numeric_limits<T>::quiet_NaN()
           : u < 0.34                  ? T(-0.5)
           : u < 0.34 + tiny_share / 2 ? static_cast<T>(smallest * (1 + 7 * unit(rng)))
           : u < 0.34 + tiny_share     ? static_cast<T>(std::exp(-40 * unit(rng)))
                                       : static_cast<T>(std::pow(unit(rng), 3));
    g[i] = p[i] > 0 || u < 0.31 ? static_cast<T>(normal(rng)) : std::numeric_limits<T>::infinity();
  }
  return {p, g};
}

/// Five sums over the entries with p > 0 (`got`) against long double: each within `ulps` double
/// ulps of the sum of its terms' magnitudes, terms(i) the five terms of entry i.
template <class T, class Terms>
void expect_support_sums(const std::array<double, 5>& got, const std::vector<T>& p, double ulps, Terms terms) {
  LD want[5] = {}, size[5] = {};
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!(p[i] > 0)) continue;
    const std::array<LD, 5> term = terms(i);
    for (int t = 0; t < 5; ++t) {
      want[t] += term[t];
      size[t] += std::fabs(term[t]);
    }
  }
  for (int t = 0; t < 5; ++t)
    EXPECT_LE(std::fabs(static_cast<LD>(got[t]) - want[t]), ulps * std::numeric_limits<double>::epsilon() * size[t])
        << "sum " << t << ": " << got[t] << " vs " << static_cast<double>(want[t]);
}

/// The alpha gradient's row sums (Kernels::alpha_sums) against long double: over the entries
/// with p > 0 (zeros, NaN and negative p left out, g anything there), sum g p, sum g s, sum s,
/// sum g h, sum h with s = p^(2 - alpha) and h = p log p, each within 8 ulps of the sum of the
/// terms' magnitudes (Pow's 2.5 ulps, the roots' 3.5, Log's, then compensated sums), on rows of
/// 1-1000, for every kind of weight (1 and 2 only reach these sums here).
template <class T>
void check_alpha_sums() {
  std::mt19937_64 rng(91);
  for (const std::size_t n : {1, 5, 16, 45, 513, 1000}) {
    const auto [p, g] = support_row<T>(rng, n, false);
    for (const double alpha : {1.25, 1.5, 1.75, 2.5, 0.5, 3.0, 1.6, 2.0, 1.0}) {
      SCOPED_TRACE("n " + std::to_string(n) + " alpha " + std::to_string(alpha));
      const sparcon::simd::AlphaSums got =
          sparcon::simd::Kernels<T>::alpha_sums(p.data(), g.data(), n, sparcon::simd::EntmaxWeights<double>(alpha));
      expect_support_sums<T>({got.gp, got.gs, got.s, got.gh, got.h}, p, 8, [&](std::size_t i) {
        const LD pi = p[i], gi = g[i], si = std::pow(pi, 2 - static_cast<LD>(alpha)), hi = pi * std::log(pi);
        return std::array<LD, 5>{gi * pi, gi * si, si, gi * hi, hi};
      });
    }
  }
}

TEST_P(DiscreteKernels, AlphaSumsFloat) { check_alpha_sums<float>(); }
TEST_P(DiscreteKernels, AlphaSumsDouble) { check_alpha_sums<double>(); }

/// sum g p on a row built to cancel: float-valued p and g (so every product is exact in double),
/// the last g chosen so that the sum is about 1e-9 of the sum of |g p|. A compensated sum, in the
/// lanes and across them, is within a few ulps of the exact sum; a plain one is off by about an
/// ulp of sum |g p|, 1e7 times that. The reference: Neumaier's compensated sum in long double.
template <class T>
void check_alpha_sums_cancelling() {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  auto exact_sum = [](const std::vector<LD>& terms) {
    LD sum = 0, error = 0;
    for (const LD t : terms) {
      const LD total = sum + t;
      error += std::fabs(sum) >= std::fabs(t) ? (sum - total) + t : (t - total) + sum;
      sum = total;
    }
    return sum + error;
  };
  for (const std::size_t n : {7, 64, 1000}) {
    std::vector<T> p(n), g(n);
    std::vector<LD> terms(n - 1);
    for (std::size_t i = 0; i < n; ++i) {
      p[i] = static_cast<T>(static_cast<float>(0.01 + std::pow(unit(rng), 3)));
      g[i] = static_cast<T>(static_cast<float>(normal(rng)));
      if (i + 1 < n) terms[i] = static_cast<LD>(g[i]) * p[i];
    }
    g[n - 1] = static_cast<T>(static_cast<float>(-exact_sum(terms) / p[n - 1]));
    terms.push_back(static_cast<LD>(g[n - 1]) * p[n - 1]);
    const LD want = exact_sum(terms);
    const double got =
        sparcon::simd::Kernels<T>::alpha_sums(p.data(), g.data(), n, sparcon::simd::EntmaxWeights<double>(1.5)).gp;
    constexpr double eps = std::numeric_limits<double>::epsilon();
    EXPECT_LE(std::fabs(static_cast<LD>(got) - want), 4 * eps * std::fabs(want) + n * eps * eps)
        << "n " << n << ": " << got << " vs " << static_cast<double>(want);
  }
}

TEST_P(DiscreteKernels, AlphaSumsCancellingFloat) { check_alpha_sums_cancelling<float>(); }
TEST_P(DiscreteKernels, AlphaSumsCancellingDouble) { check_alpha_sums_cancelling<double>(); }

/// The alpha gradient's sums near alpha = 1 (Kernels::near_one_sums) against long double: with
/// l = log p, r = l^2 phi(delta l), phi(y) = (e^-y - 1 + y) / y^2, over the entries with p > 0
/// (zeros, NaN and negative p left out, g anything there), sum p l, sum p r, sum g p, sum g p r,
/// sum g p l, each within 4 ulps of the sum of the terms' magnitudes (Log's and Expm1's few
/// ulps, phi's cancellation near |y| = 1/2 where it leaves its series, then compensated sums),
/// on rows of 1-1000 with p down to the smallest normal (delta l up to 186 for doubles), for
/// delta = alpha - 1 on both sides of 0 up to 1/4, and 0 (the alpha = 1 limit, phi = 1/2).
template <class T>
void check_near_one_sums() {
  std::mt19937_64 rng(23);
  auto phi = [](LD y) {
    if (std::fabs(y) > LD(1e-3)) return (std::expm1(-y) + y) / (y * y);
    LD term = 0.5, sum = 0.5;
    for (int k = 1; k <= 8; ++k) sum += term *= -y / (k + 2);
    return sum;
  };
  for (const std::size_t n : {1, 5, 16, 45, 513, 1000}) {
    const auto [p, g] = support_row<T>(rng, n, true);
    for (const double delta : {0.0, 1e-9, -1e-9, 0.003, -0.05, 0.1, -0.2, 0.2499, -0.2499}) {
      SCOPED_TRACE("n " + std::to_string(n) + " delta " + std::to_string(delta));
      const sparcon::simd::NearOneSums got = sparcon::simd::Kernels<T>::near_one_sums(p.data(), g.data(), n, delta);
      expect_support_sums<T>({got.l, got.r, got.gp, got.gr, got.gl}, p, 4, [&](std::size_t i) {
        const LD pi = p[i], gi = g[i], l = std::log(pi), r = l * l * phi(delta * l);
        return std::array<LD, 5>{pi * l, pi * r, gi * pi, gi * pi * r, gi * pi * l};
      });
    }
  }
}

TEST_P(DiscreteKernels, NearOneSumsFloat) { check_near_one_sums<float>(); }
TEST_P(DiscreteKernels, NearOneSumsDouble) { check_near_one_sums<double>(); }

/// The threshold solver's sums for a general k (u^(k-1) by Pow in double) on one candidate:
/// slope = u^(k-1), within pow_ulps(k - 1) of powl.
TEST_P(DiscreteKernels, PowerSumsGeneralExponent) {
  const std::vector<double> u = powers_of_everywhere<double>(2000, 78);
  for (const double k : {4.0 / 3, 1.05, 7.5, 1.0 / 0.3}) {
    for (const double v : u) {
      const double y = 0;  // u = base + a y = base
      const sparcon::simd::PowerSums sums = sparcon::simd::power_sums(&y, 1, {1.0, v, k, 0});
      const long double slope = std::pow(static_cast<long double>(v), static_cast<long double>(k - 1));
      if (slope < std::numeric_limits<double>::min() || slope > std::numeric_limits<double>::max()) continue;
      SCOPED_TRACE("u " + std::to_string(v) + " k " + std::to_string(k));
      ASSERT_LE(ulps_off(sums.slope, slope), pow_ulps(k - 1));
      ASSERT_EQ(sums.count, 1U);
    }
  }
}

/// Appends a row of n entries with m candidates of a map whose candidates lie within `gap` = 1/a
/// of the maximum: the maximum 0.25, m - 1 entries within 0.97 gap below it (continuous, or on a
/// grid of gap / 8: ties, also at the support's edge) and the others 1.03-3 gaps below, shuffled.
inline void append_row_with_candidates(std::vector<double>& x, std::size_t n, std::size_t m, double gap,
                                       bool on_grid, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> near(-0.97 * gap, 0), far(-3 * gap, -1.03 * gap);
  std::uniform_int_distribution<int> grid(-8, 0);
  std::vector<double> row(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double y = i == 0 ? 0 : i < m ? (on_grid ? grid(rng) * gap / 8 : near(rng)) : far(rng);
    row[i] = 0.25 + y;
  }
  std::shuffle(row.begin(), row.end(), rng);
  x.insert(x.end(), row.begin(), row.end());
}

/// Rows of 16-4096 entries with exactly m entries within 1/a of the maximum (the candidates of
/// sparsemax, a = 1, and entmax-1.5, a = 1/2), m around the size classes of the fused short-row
/// kernel (candidates padded to a multiple of 8) and past its bounds (simd::kPairwiseLinear and
/// kPairwiseQuadratic), where the general solvers take over: continuous values, or values on a
/// grid (ties, also at the support's edge).
template <class T>
void check_short_rows_by_candidates() {
  for (const MapCase& c : {make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5)}) {
    const double gap = c.map == Map::sparsemax ? 1.0 : 2.0;
    for (const std::size_t n : {16, 64, 128, 512, 4096}) {
      for (const std::size_t m : {1, 2, 7, 8, 9, 15, 16, 17, 24, 25, 31, 32, 33, 50}) {
        if (m > n) continue;
        for (int kind = 0; kind < 2; ++kind) {
          const sparcon::Rows rows{4, n};
          std::mt19937_64 rng(1000 * n + 10 * m + kind);
          std::vector<double> x;
          for (std::size_t r = 0; r < rows.count; ++r) append_row_with_candidates(x, n, m, gap, kind == 1, rng);
          expect_matches_reference<T>(c, to_type<T>(x), rows,
                                      "by-candidates|" + std::to_string(n) + "|" + std::to_string(m) + "|" +
                                          std::to_string(kind));
        }
      }
    }
  }
}

/// Sparsemax and entmax-1.5 rows in L1 go through the fused kernel in runs (simd::Kernels::
/// short_rows), which hands the rows it cannot finish to the general path and goes on after
/// them: a batch of rows of 600 with such rows between ordinary ones (a NaN, all -inf, +inf,
/// 300 candidates near the maximum: past simd::kMaxFusedCandidates), for sparsemax, entmax-1.5
/// and entmax with alpha per row in runs of 2, 1.5 and 1.25 (which the kernel does not take).
/// Every finite row against the reference, the others as the conventions say.
template <class T>
void check_fused_rows_hand_over() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::size_t n = 600;
  const sparcon::Rows rows{9, n};
  std::vector<T> x = to_type<T>(normal_values(rows.count, n, 1.0, 96));
  x[1 * n + 250] = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t i = 3 * n; i < 4 * n; ++i) x[i] = -inf;
  std::mt19937_64 rng(97);
  std::uniform_real_distribution<double> near(-0.9, 0);
  for (std::size_t i = 4 * n; i < 4 * n + 300; ++i) x[i] = static_cast<T>(near(rng));  // >= 300 candidates
  x[6 * n + 7] = inf;
  const std::vector<std::size_t> finite = {0, 2, 4, 5, 7, 8};
  const std::vector<T> alphas = {2, 2, 2, 1.5, 1.5, 1.25, 1.5, 2, 1.25};
  for (const auto& [name, family] : {std::pair{std::string("sparsemax"), sparcon::Family<T>::sparsemax()},
                                     std::pair{std::string("entmax15"), sparcon::Family<T>::entmax15()},
                                     std::pair{std::string("entmax, alpha per row"),
                                               sparcon::Family<T>::entmax(std::span<const T>(alphas))}}) {
    SCOPED_TRACE(name);
    const Forward<T> out = run_forward(family, x, rows);
    for (const std::size_t r : finite) {
      const ref::Result want = reference_row(family.map, static_cast<LD>(family.parameter[r]), promote(row_of(x, rows, r)));
      EXPECT_TRUE(row_matches<T>(row_of(out.p, rows, r), out.tau[r], want, true)) << "row " << r;
    }
    for (const std::size_t r : {1, 6}) {
      for (std::size_t i = r * n; i < (r + 1) * n; ++i) ASSERT_TRUE(std::isnan(out.p[i])) << "row " << r;
    }
    for (std::size_t i = 3 * n; i < 4 * n; ++i) ASSERT_EQ(out.p[i], T(0)) << "all -inf row";
    EXPECT_EQ(out.tau[3], inf);
  }
}

/// The forward of a batch with rows the conventions fix: p = 0 and tau = +inf on the all -inf
/// row, NaN on the rows in `nan_rows`, every other row against the reference.
template <class T>
void expect_batch_with_degenerate_rows(const MapCase& c, const std::vector<T>& x, sparcon::Rows rows,
                                       std::size_t all_minus_inf_row, const std::vector<std::size_t>& nan_rows) {
  const Forward<T> got = run_forward(family_of<T>(c), x, rows);
  for (std::size_t r = 0; r < rows.count; ++r) {
    const auto p = row_of(got.p, rows, r);
    if (r == all_minus_inf_row) {
      for (const T v : p) ASSERT_EQ(v, T(0)) << c.name << ", length " << rows.length << ", all -inf row";
      EXPECT_EQ(got.tau[r], std::numeric_limits<T>::infinity());
    } else if (std::find(nan_rows.begin(), nan_rows.end(), r) != nan_rows.end()) {
      for (const T v : p) ASSERT_TRUE(std::isnan(v)) << c.name << ", length " << rows.length << ", row " << r;
    } else {
      const ref::Result want =
          reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(row_of(x, rows, r)));
      EXPECT_TRUE(row_matches<T>(p, got.tau[r], want, true)) << c.name << ", length " << rows.length << ", row " << r;
    }
  }
}

/// Sparsemax and entmax-1.5 rows of up to simd::kMaxTinyRow
/// entries go through the fused kernel a vector of rows at a time (one row per lane, sorted by a
/// network): batches of 45 rows (five blocks of 8 lanes, or 11 of 4, 22 of 2, then a tail) of
/// every length around the network sizes and the bounds, each row of another kind (N(0,1),
/// 4 N(0,1), 0.01 N(0,1), a grid with ties, masked -inf entries, one finite entry, a large common
/// offset, all entries equal), and rows without a distribution (NaN, +inf, all -inf) inside the
/// first blocks and the tail (the other rows of such a block go one by one, and the blocks resume
/// after; the blocks of rows 16-39 have none).
template <class T>
void check_tiny_rows() {
  const T inf = std::numeric_limits<T>::infinity();
  const sparcon::Rows shape{45, 0};  // rows 5 and 41: a NaN, 13: +inf, 14: all -inf
  for (const MapCase& c : {make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5)}) {
    for (const std::size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33}) {
      const sparcon::Rows rows{shape.count, n};
      std::mt19937_64 rng(7000 + n);
      std::normal_distribution<double> normal;
      std::uniform_int_distribution<int> grid(-6, 0);
      std::vector<double> x(rows.size());
      for (std::size_t r = 0; r < rows.count; ++r) {
        double* row = x.data() + r * n;
        const int kind = static_cast<int>(r % 8);
        for (std::size_t i = 0; i < n; ++i) {
          const double v = normal(rng);
          row[i] = kind == 0 ? v
                   : kind == 1 ? 4 * v
                   : kind == 2 ? 0.01 * v
                   : kind == 3 ? grid(rng) * 0.25
                   : kind == 4 ? (i % 3 == 1 ? -static_cast<double>(inf) : v)
                   : kind == 5 ? (i == n / 2 ? v : -static_cast<double>(inf))
                   : kind == 6 ? (std::is_same_v<T, double> ? 1e6 : 1e3) + v
                               : 0.5;
        }
      }
      x[5 * n + n / 2] = std::numeric_limits<double>::quiet_NaN();
      x[13 * n + (n - 1)] = static_cast<double>(inf);
      for (std::size_t i = 14 * n; i < 15 * n; ++i) x[i] = -static_cast<double>(inf);
      x[41 * n] = std::numeric_limits<double>::quiet_NaN();
      expect_batch_with_degenerate_rows(c, to_type<T>(x), rows, 14, {5, 13, 41});
    }
  }
}

/// Longer sparsemax and entmax-1.5 rows go through the fused kernel in groups of lanes while a
/// group stays in L1: rows with few candidates (up to 16 for sparsemax, 32 for entmax-1.5) are
/// solved together, the others on their own in the same group. Batches of 37 rows of 40 to 512
/// entries (float rows of up to 512 and double rows of up to 256 in groups on AVX-512; 600, one
/// row at a time) whose rows have m candidates (append_row_with_candidates)
/// cycling through 1 ... 200 from row to row, and rows the kernel leaves at several lanes of a
/// group (NaN, all -inf, +inf, more than 256 candidates where the row is long enough).
template <class T>
void check_grouped_rows() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<std::size_t> counts = {1, 7, 15, 16, 17, 24, 31, 32, 33, 50, 200};
  for (const MapCase& c : {make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5)}) {
    const double gap = c.map == Map::sparsemax ? 1.0 : 2.0;
    for (const std::size_t n : {40, 64, 100, 256, 300, 512, 600}) {
      const sparcon::Rows rows{37, n};
      std::mt19937_64 rng(9000 + n);
      std::vector<double> x;
      for (std::size_t r = 0; r < rows.count; ++r) {
        const std::size_t m = std::min(n, counts[r % counts.size()] + (r == 21 && n >= 300 ? 100 : 0));
        append_row_with_candidates(x, n, m, gap, r % 2 == 1, rng);
      }
      if (n >= 300) {  // row 21: more than 256 candidates
        for (std::size_t i = 0; i < 280; ++i) x[21 * n + i] = 0.25 - gap * 0.5 * static_cast<double>(i) / 280;
      } else {
        x[21 * n + 5] = static_cast<double>(inf);
      }
      x[3 * n + 1] = std::numeric_limits<double>::quiet_NaN();
      for (std::size_t i = 12 * n; i < 13 * n; ++i) x[i] = -static_cast<double>(inf);
      x[30 * n + n - 1] = static_cast<double>(inf);
      std::vector<std::size_t> nan_rows = {3, 30};
      if (n < 300) nan_rows.push_back(21);
      expect_batch_with_degenerate_rows(c, to_type<T>(x), rows, 12, nan_rows);
    }
  }
}

/// The fused kernel narrows rows with more candidates than its solvers take (a Newton step's
/// lower bound drops the entries below it) and solves a group's block at 16 columns when no row
/// of the group has more candidates, at 32 (entmax-1.5) otherwise. Batches of 48 rows of 64 to
/// 1024 entries in runs of 8 (a group of AVX-512's lanes; two of AVX2's) that have all few
/// candidates (1-16), all many (33-200: narrowed), or mixed; continuous values or a grid (ties,
/// also at the support's edge); and rows of equal entries, where the first Newton step lands on
/// the threshold itself.
template <class T>
void check_narrowed_rows() {
  for (const MapCase& c : {make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5)}) {
    const double gap = c.map == Map::sparsemax ? 1.0 : 2.0;
    for (const std::size_t n : {64, 128, 256, 1024}) {
      const sparcon::Rows rows{48, n};
      std::mt19937_64 rng(11000 + n);
      std::uniform_int_distribution<std::size_t> few(1, 16), many(33, std::min<std::size_t>(200, n));
      std::vector<double> x;
      for (std::size_t r = 0; r < rows.count; ++r) {
        const std::size_t run = r / 8;
        if (run == 5 && r % 2 == 0) {
          x.insert(x.end(), n, 0.5);
          continue;
        }
        const std::size_t m = run % 3 == 0 ? few(rng) : run % 3 == 1 ? many(rng) : (r % 2 ? few(rng) : many(rng));
        append_row_with_candidates(x, n, m, gap, run >= 3, rng);
      }
      expect_batch_with_degenerate_rows(c, to_type<T>(x), rows, rows.count, {});
    }
  }
}

TEST_P(DiscreteKernels, NarrowedRowsFloat) { check_narrowed_rows<float>(); }
TEST_P(DiscreteKernels, NarrowedRowsDouble) { check_narrowed_rows<double>(); }

/// Entmax-1.5's float rows of 33-64 entries take Newton's steps in lanes on AVX-512, 16 rows at
/// a time (simd NewtonLaneRows): the steps stop when no row's count of kept entries changes, the
/// closed form takes that set, and the write counts the entries it keeps, handing a row whose set
/// was not its support to the row path. Batches of 128 rows of 33, 47 and 64 entries (sparsemax
/// too, on its own paths): N(0,1), 4 N(0,1) and 0.1 N(0,1) scores, a common offset of 1000, rows
/// with one entry placed 2e-3 or 5e-3 below the threshold of the others (the reference's) or
/// 1e-6 above it, and a group of 16 rows (the second) where the steps stop short of the support:
/// the maximum, three entries 0.2 below it in the other half of the row, one entry 4e-3 below the
/// threshold of those four (entmax-1.5: the first step, from the pair's offset 0.755 to 0.577,
/// keeps it, so the count of 5 does not change, in every lane; the support is 4), the others 25
/// below. A NaN row, a +inf row and an all -inf row in the third group.
template <class T>
void check_lane_rows() {
  const double inf = std::numeric_limits<double>::infinity();
  for (const MapCase& c : {make_case(Map::entmax15, 1.5), make_case(Map::sparsemax, 2)}) {
    const LD a = c.map == Map::sparsemax ? 1 : 0.5L;  // p_i = [a x_i - tau]_+^k: the edge at x = tau / a
    for (const std::size_t n : {33, 47, 64}) {
      const sparcon::Rows rows{128, n};
      std::mt19937_64 rng(13000 + n);
      std::normal_distribution<double> normal;
      std::vector<double> x(rows.size());
      for (std::size_t r = 0; r < rows.count; ++r) {
        double* row = x.data() + r * n;
        const int kind = r >= 16 && r < 32 ? 7 : static_cast<int>(r % 7);
        const double scale = kind == 1 ? 4 : kind == 2 ? 0.1 : 1;
        for (std::size_t i = 0; i < n; ++i)
          row[i] = static_cast<double>(static_cast<T>(scale * normal(rng) + (kind == 3 ? 1e3 : 0)));
        std::size_t j = (r * 7) % n;  // the entry placed at the edge
        if (kind == 7) {
          const std::size_t half = (n + 1) / 2, max_at = r % (half - 1);
          std::fill(row, row + n, -25.0);
          row[max_at] = 0;
          row[half] = row[half + 1] = row[n - 1] = -0.2;
          j = max_at + 1;
        }
        if (kind >= 4) {
          row[j] = -inf;
          const std::vector<T> others(row, row + n);
          const LD edge =
              reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(std::span<const T>(others)))
                  .tau /
              a;
          row[j] = static_cast<double>(edge) + (kind == 4 ? -2e-3 : kind == 5 ? -5e-3 : kind == 6 ? 1e-6 : -4e-3);
        }
      }
      x[37 * n + n / 3] = std::numeric_limits<double>::quiet_NaN();
      x[40 * n + n - 1] = inf;
      for (std::size_t i = 45 * n; i < 46 * n; ++i) x[i] = -inf;
      expect_batch_with_degenerate_rows(c, to_type<T>(x), rows, 45, {37, 40});
    }
  }
}

TEST_P(DiscreteKernels, LaneRowsFloat) { check_lane_rows<float>(); }
TEST_P(DiscreteKernels, LaneRowsDouble) { check_lane_rows<double>(); }

/// The threshold of a row's two entries max and second alone (in x, long double): sparsemax's
/// t with (max - t) + (second - t) = 1, entmax-1.5's with ((max - t)/2)^2 + ((second - t)/2)^2 = 1,
/// or max - 1/a where second is not in that pair's support.
LD pair_threshold(Map map, LD max, LD second) {
  const LD d = max - second;
  if (map == Map::sparsemax) return d < 1 ? (max + second - 1) / 2 : max - 1;
  return d < 2 ? max - (d + std::sqrt(8 - d * d)) / 2 : max - 2;
}

/// The collection of sparsemax's and entmax-1.5's longer rows starts above the threshold of the
/// row's maximum and another of its entries alone (simd PairThreshold), which lies below the
/// row's own. Rows with a third entry just above it, in the support (the row's threshold lies
/// between the pair's and the third entry): 1, 4 or 1024 spacings of T above it, or 1e-2; the
/// other entries below max - 1/a. The maximum at 0.25 or 1000.5, the second entry 0, 0.6 or
/// 1.8 / a below it, and at a position that moves from row to row, so that it falls in either
/// half of the row the kernels take the two maxima from (vectors, or accumulators, on every
/// target). Sparsemax's third entry carries p of about 2/3 of its distance, which the reference
/// comparison sees wherever the collection dropped it.
template <class T>
void check_pair_threshold_rows() {
  for (const MapCase& c : {make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5)}) {
    const double gap = c.map == Map::sparsemax ? 1.0 : 2.0;
    for (const std::size_t n : {40, 64, 100, 128, 129, 300, 1000}) {
      std::mt19937_64 rng(12000 + n);
      std::uniform_real_distribution<double> far(-3 * gap, -1.05 * gap);
      std::vector<double> x;
      std::size_t count = 0;
      for (const double max : {0.25, 1000.5}) {
        for (const double e : {0.0, 0.6, 1.8}) {
          for (const double above : {1.0, 4.0, 1024.0, -1e-2}) {  // spacings of T, or (< 0) absolute
            for (int variant = 0; variant < 6; ++variant, ++count) {
              std::vector<double> row(n);
              for (double& v : row) v = static_cast<T>(max + far(rng));
              const std::size_t at_max = (count * 5) % n, at_second = (at_max + 1 + count * 11 % (n - 1)) % n;
              std::size_t at_third = (at_max + n / 2 + variant) % n;
              while (at_third == at_max || at_third == at_second) at_third = (at_third + 1) % n;
              const T top = static_cast<T>(max), second = static_cast<T>(max - e * gap / 2);
              const LD t = pair_threshold(c.map, top, second);
              T third = static_cast<T>(t);
              if (above > 0) {
                while (static_cast<LD>(third) <= t) third = std::nextafter(third, std::numeric_limits<T>::infinity());
                for (int step = 1; step < static_cast<int>(above); ++step)
                  third = std::nextafter(third, std::numeric_limits<T>::infinity());
              } else {
                third = static_cast<T>(t - static_cast<LD>(above));
              }
              row[at_max] = top;
              row[at_second] = second;
              row[at_third] = third;
              x.insert(x.end(), row.begin(), row.end());
            }
          }
        }
      }
      expect_matches_reference<T>(c, to_type<T>(x), sparcon::Rows{count, n}, "pair-threshold|" + std::to_string(n));
    }
  }
}

TEST_P(DiscreteKernels, PairThresholdRowsFloat) { check_pair_threshold_rows<float>(); }
TEST_P(DiscreteKernels, PairThresholdRowsDouble) { check_pair_threshold_rows<double>(); }

TEST_P(DiscreteKernels, GroupedRowsFloat) { check_grouped_rows<float>(); }
TEST_P(DiscreteKernels, GroupedRowsDouble) { check_grouped_rows<double>(); }

TEST_P(DiscreteKernels, TinyRowsFloat) { check_tiny_rows<float>(); }
TEST_P(DiscreteKernels, TinyRowsDouble) { check_tiny_rows<double>(); }

TEST_P(DiscreteKernels, FusedRowsHandOverFloat) { check_fused_rows_hand_over<float>(); }
TEST_P(DiscreteKernels, FusedRowsHandOverDouble) { check_fused_rows_hand_over<double>(); }

TEST_P(DiscreteKernels, ShortRowsByCandidatesFloat) { check_short_rows_by_candidates<float>(); }
TEST_P(DiscreteKernels, ShortRowsByCandidatesDouble) { check_short_rows_by_candidates<double>(); }

TEST_P(DiscreteKernels, ForwardEveryMapFloat) { check_forward_every_map<float>(); }
TEST_P(DiscreteKernels, ForwardEveryMapDouble) { check_forward_every_map<double>(); }

/// Rows past the 4096 entries after which the scan tightens its bound as it reads, two threads.
template <class T>
void check_long_rows() {
  const sparcon::Rows rows{2, 6007};
  const std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 1.0, 91));
  for (const MapCase& c : {make_case(Map::softmax, 1), make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5),
                           make_case(Map::entmax, 1.25), make_case(Map::entmax, 3), make_case(Map::entmax, 0.75),
                           make_case(Map::normmax, 2), make_case(Map::normmax, 1.5), make_case(Map::budget, 3.5)}) {
    expect_matches_reference<T>(c, x, rows, "long", 2);
  }
}

TEST_P(DiscreteKernels, LongRowsFloat) { check_long_rows<float>(); }
TEST_P(DiscreteKernels, LongRowsDouble) { check_long_rows<double>(); }

template <class T>
void check_edge_rows() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::size_t n = 37;
  // Row 0: some -inf; 1: all -inf; 2: a NaN; 3: a +inf; 4: 1e6 + noise (double only) or noise.
  const sparcon::Rows rows{5, n};
  std::vector<T> x = to_type<T>(normal_values(rows.count, n, 1.5, 92));
  for (std::size_t i : {0, 4, 5, 17, 36}) x[i] = -inf;
  for (std::size_t i = n; i < 2 * n; ++i) x[i] = -inf;
  x[2 * n + 20] = std::numeric_limits<T>::quiet_NaN();
  x[3 * n + 33] = inf;
  if (std::is_same_v<T, double>) {
    for (std::size_t i = 4 * n; i < 5 * n; ++i) x[i] += T(1e6);
  }
  const std::vector<T> g = to_type<T>(normal_values(rows.count, n, 1.0, 93));
  for (const MapCase& c : all_cases()) {
    SCOPED_TRACE(c.name);
    const Forward<T> out = run_forward(family_of<T>(c), x, rows);
    for (std::size_t r : {0, 4}) {
      const ref::Result want =
          reference_row(c.map, static_cast<LD>(static_cast<T>(c.parameter)), promote(row_of(x, rows, r)));
      EXPECT_TRUE(row_matches<T>(row_of(out.p, rows, r), out.tau[r], want, c.map != Map::budget)) << "row " << r;
    }
    for (std::size_t i : {0, 4, 5, 17, 36}) EXPECT_EQ(out.p[i], T(0)) << "masked entry " << i;
    for (std::size_t i = n; i < 2 * n; ++i) EXPECT_EQ(out.p[i], T(0)) << "all -inf row, entry " << i - n;
    EXPECT_EQ(out.tau[1], inf);
    for (std::size_t i = 2 * n; i < 4 * n; ++i) EXPECT_TRUE(std::isnan(out.p[i])) << "NaN / +inf rows, entry " << i;
    std::vector<T> dx(x.size(), T(7));
    sparcon::backward<T>(family_of<T>(c), out.p, g, std::span<T>(dx), rows);
    for (std::size_t i = n; i < 2 * n; ++i) EXPECT_EQ(dx[i], T(0)) << "all -inf row, gradient entry " << i - n;
    for (std::size_t i : {0, 4, 5, 17, 36}) EXPECT_EQ(dx[i], T(0)) << "masked entry's gradient " << i;
  }
}

/// Entries outside the support (p = 0, also masked -inf entries of dense entmax) take no part in
/// the backward of every map but softmax, whatever g holds there: with NaN and inf at those
/// entries, dx is the dx of g with zeros there, entry for entry, and +0 at them. Rows of 37, 700
/// and 5000 entries; -inf every 7 entries, so that vectors are partly zero (the passes skip only
/// all-zero vectors); scores of N(0, 0.2^2) and N(0, 8^2) in turn, so that rows of 700 take the
/// passes with and without skipping (decided by the row before).
template <class T>
void check_backward_outside_support() {
  const T inf = std::numeric_limits<T>::infinity();
  for (const std::size_t n : {37, 700, 5000}) {
    const sparcon::Rows rows{4, n};
    std::vector<T> x = to_type<T>(normal_values(rows.count, n, 1.0, 94 + n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] *= (i / n) % 2 ? T(8) : T(0.2);
    for (std::size_t i = 0; i < x.size(); i += 7) x[i] = -inf;
    const std::vector<T> g = to_type<T>(normal_values(rows.count, n, 1.0, 95 + n));
    for (const MapCase& c : all_cases()) {
      const bool softmax = c.map == Map::softmax || (c.map == Map::entmax && c.parameter == 1);
      if (!applies(c, n) || softmax) continue;
      SCOPED_TRACE(c.name + ", length " + std::to_string(n));
      const Forward<T> out = run_forward(family_of<T>(c), x, rows);
      std::vector<T> zeroed = g, poisoned = g;
      std::size_t outside = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (out.p[i] != 0) continue;
        zeroed[i] = 0;
        poisoned[i] = ++outside % 2 ? std::numeric_limits<T>::quiet_NaN() : -inf;
      }
      ASSERT_GT(outside, 0u);
      std::vector<T> want(x.size()), got(x.size());
      sparcon::backward<T>(family_of<T>(c), out.p, zeroed, std::span<T>(want), rows);
      sparcon::backward<T>(family_of<T>(c), out.p, poisoned, std::span<T>(got), rows);
      for (std::size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << "entry " << i;
        ASSERT_EQ(got[i], want[i]) << "entry " << i;
        if (out.p[i] == 0) {
          ASSERT_FALSE(std::signbit(got[i])) << "entry " << i << " outside the support";
        }
      }
    }
  }
}

TEST_P(DiscreteKernels, BackwardOutsideSupportFloat) { check_backward_outside_support<float>(); }
TEST_P(DiscreteKernels, BackwardOutsideSupportDouble) { check_backward_outside_support<double>(); }

TEST_P(DiscreteKernels, EdgeRowsFloat) { check_edge_rows<float>(); }
TEST_P(DiscreteKernels, EdgeRowsDouble) { check_edge_rows<double>(); }

constexpr LD kStep = 1e-7L;

/// backward() against central differences of the reference (double), and the float backward
/// against the double one on the same p and g.
TEST_P(DiscreteKernels, BackwardEveryMap) {
  std::mt19937_64 rng(2025);
  for (const MapCase& c : all_cases()) {
    for (std::size_t n : {1, 3, 8, 9, 17, 33}) {
      if (!applies(c, n)) continue;
      const sparcon::Rows rows{2, n};
      const auto [x, p, g, fd] = backward_rows(c, rows, rng, kStep);
      std::vector<double> dx(x.size());
      sparcon::backward<double>(family_of<double>(c), p, g, std::span<double>(dx), rows);
      for (std::size_t r = 0; r < rows.count; ++r) {
        EXPECT_TRUE(gradients_agree(row_of(dx, rows, r), fd[r])) << c.name << ", length " << n << ", row " << r;
      }
      const std::vector<float> pf(p.begin(), p.end()), gf(g.begin(), g.end());
      std::vector<float> dxf(x.size());
      sparcon::backward<float>(family_of<float>(c), pf, gf, std::span<float>(dxf), rows);
      std::vector<double> pd(pf.begin(), pf.end()), gd(gf.begin(), gf.end()), dxd(x.size());
      sparcon::backward<double>(family_of<double>(c), pd, gd, std::span<double>(dxd), rows);
      for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(dxf[i], dxd[i], 1e-5 * (1 + std::fabs(dxd[i]))) << c.name << " (float), length " << n << ", entry " << i;
      }
    }
  }
}

/// dx = s (g - sum(s g) / sum(s)) in long double, s the weights of p for the map with
/// parameter `alpha` (entmax, normmax) of one row.
template <class T>
void expect_centered_backward(Map map, LD alpha, std::span<const T> p, std::span<const T> g,
                              std::span<const T> dx) {
  const std::size_t n = p.size();
  std::vector<LD> s(n);
  LD sg = 0, ss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const LD pi = p[i];
    switch (map) {
      case Map::softmax: s[i] = pi; break;
      case Map::sparsemax: s[i] = pi > 0 ? 1 : 0; break;
      case Map::entmax15: s[i] = std::sqrt(pi); break;
      case Map::budget: s[i] = pi > 0 && pi < 1 ? 1 : 0; break;
      default: s[i] = pi > 0 ? std::pow(pi, 2 - alpha) : 0;
    }
    sg += s[i] * static_cast<LD>(g[i]);
    ss += s[i];
  }
  const LD q = ss > 0 ? sg / ss : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const LD want = s[i] * (static_cast<LD>(g[i]) - q);
    const LD got = dx[i];
    ASSERT_LE(std::fabs(got - want), 10 * map_tolerance<T>() * (1 + std::fabs(want)))
        << "entry " << i << ": " << static_cast<double>(got) << " vs " << static_cast<double>(want);
  }
}

/// The backward against its closed form on every path: rows longer than
/// simd::kMaxCenteredRow (a kernel call per pass and row; 5003, two threads), short rows in
/// groups of one row per lane (up to 256 entries: lengths of one vector of every target and
/// type, 1 to 16, and of 2, 4 and 8 vectors, which are unrolled: 8 to 128; with tails, 45 and 256;
/// row counts that leave a partial group) and longer ones with the zero vectors skipped or not
/// (700: scores of N(0, 3^2), and in turn N(0, 0.3^2) and N(0, 12^2), whose supports take
/// both), each map with a shared parameter, and entmax with a
/// parameter per row in runs (1.25, 1.25, 2, 1.5, 1.5, 1.75, 3, 1.6, 1.25), whose rows of one run share
/// their weights. A row's gradient is also the same to the bit when it is computed alone as among
/// the others: first in its group (short rows), or with its zero vectors skipped where the rows
/// before had it take them (longer rows: the rows of 704 alternate between few and many).
template <class T>
void check_centered_backward() {
  for (const sparcon::Rows rows :
       {sparcon::Rows{2, 5003}, sparcon::Rows{37, 64}, sparcon::Rows{23, 1}, sparcon::Rows{9, 2}, sparcon::Rows{17, 4},
        sparcon::Rows{21, 8}, sparcon::Rows{19, 16}, sparcon::Rows{13, 32}, sparcon::Rows{35, 45},
        sparcon::Rows{11, 128}, sparcon::Rows{18, 256}, sparcon::Rows{7, 700}, sparcon::Rows{8, 704}}) {
    SCOPED_TRACE("rows of " + std::to_string(rows.length));
    std::vector<T> x = to_type<T>(normal_values(rows.count, rows.length, 3.0, 94 + rows.length));
    if (rows.length == 704)
      for (std::size_t i = 0; i < x.size(); ++i) x[i] *= (i / rows.length) % 2 ? T(4) : T(0.1);
    const std::vector<T> g = to_type<T>(normal_values(rows.count, rows.length, 1.0, 95 + rows.length));
    std::vector<T> per_row_alpha(rows.count);
    const T runs[] = {1.25, 1.25, 2, 1.5, 1.5, 1.75, 3, 1.6, 1.25};
    for (std::size_t r = 0; r < rows.count; ++r) per_row_alpha[r] = runs[r % std::size(runs)];
    std::vector<std::pair<std::string, sparcon::Family<T>>> families;
    for (const MapCase& c : {make_case(Map::softmax, 1), make_case(Map::sparsemax, 2), make_case(Map::entmax15, 1.5),
                             make_case(Map::entmax, 1.25), make_case(Map::entmax, 1.75), make_case(Map::entmax, 3),
                             make_case(Map::budget, 3.5)})
      families.emplace_back(c.name, family_of<T>(c));
    families.emplace_back("entmax, alpha per row",
                          family_of<T>(Map::entmax, sparcon::PerRow<T>(std::span<const T>(per_row_alpha))));
    for (const auto& [name, family] : families) {
      if (family.map == Map::budget && static_cast<double>(rows.length) < 3.5) continue;
      SCOPED_TRACE(name);
      const Forward<T> out = run_forward(family, x, rows);
      std::vector<T> dx(x.size());
      sparcon::backward<T>(family, out.p, g, std::span<T>(dx), rows, sparcon::Threads{2});
      for (std::size_t r = 0; r < rows.count; ++r) {
        SCOPED_TRACE("row " + std::to_string(r));
        expect_centered_backward<T>(family.map, static_cast<LD>(family.parameter[r]), row_of(out.p, rows, r),
                                    row_of(g, rows, r), row_of(dx, rows, r));
        const sparcon::Rows one{1, rows.length};
        const std::span<const T> p_row = row_of(out.p, rows, r);
        std::vector<T> alone(rows.length);
        sparcon::backward<T>(family_of<T>(family.map, sparcon::PerRow<T>(family.parameter[r])), p_row,
                             row_of(g, rows, r), std::span<T>(alone), one);
        const std::span<const T> among = row_of(dx, rows, r);
        ASSERT_TRUE(std::equal(alone.begin(), alone.end(), among.begin(), among.end(),
                               [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }))
            << "the row alone differs from the row among others";
      }
    }
  }
}

/// Entmax with alpha > 2 on rows that one weight dominates: s = p^(2 - alpha) of an entry m near
/// the edge of the support (p_m from 1e-3 down to 1e-9, 1e-7 in float) far above the others', so
/// that dx_m = s_m (g_m - q) is s_m times a difference of about (sum s - s_m) / s_m. Against
/// dx_i = s_i sum_j s_j (g_i - g_j) / sum s in long double (by pairs: no cancellation), within
/// 16 eps of s_i sum_j s_j |g_i - g_j| / sum s (the size of the terms) plus
/// s_i max|g| (sum s - s_m) / sum s (the rounding of the usual form where no weight dominates:
/// for m, max|g| times the others' weights). The usual form s_m (g_m - q) is off by eps max|g| s_m
/// at m: measured 7e3 to 1e15 times the bound, against at most 5.2 now (2026-12-07). Every path:
/// rows of 4 to 256 in groups (one and two whole vectors of every target, 24 and 45 with tails),
/// 300 and 700 one at a time, 1500 past kMaxCenteredRow; supports of 2 to 12 entries with two
/// tiny ones in some rows, g = N(0, 1), offset by 100 in some rows, NaN outside the support; a
/// row's dx is also the same to the bit alone as among the others.
template <class T>
void check_dominated_backward() {
  std::mt19937_64 rng(38);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.05, 1.0);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<double> tiny =
      std::is_same_v<T, float> ? std::vector<double>{1e-3, 1e-5, 1e-7} : std::vector<double>{1e-3, 1e-6, 1e-9};
  for (const double alpha : {2.5, 3.0, 4.0, 5.0}) {
    for (const std::size_t n : {4, 8, 16, 24, 32, 45, 64, 128, 256, 300, 700, 1500}) {
      SCOPED_TRACE("alpha " + std::to_string(alpha) + ", rows of " + std::to_string(n));
      const sparcon::Rows rows{19, n};
      std::vector<T> p(rows.count * n, T(0)), g(rows.count * n);
      for (std::size_t r = 0; r < rows.count; ++r) {
        T* pr = p.data() + r * n;
        const std::size_t support = std::min<std::size_t>(n, 2 + r % 11);
        std::vector<std::size_t> at(n);
        for (std::size_t i = 0; i < n; ++i) at[i] = i;
        std::shuffle(at.begin(), at.end(), rng);
        for (std::size_t k = 0; k < support; ++k) pr[at[k]] = static_cast<T>(uniform(rng));
        pr[at[0]] = static_cast<T>(tiny[r % tiny.size()]);
        if (r % 4 == 3 && support > 2) pr[at[1]] = static_cast<T>(tiny[(r + 1) % tiny.size()]);
        const double offset = r % 5 == 4 ? 100 : 0;
        for (std::size_t i = 0; i < n; ++i) g[r * n + i] = pr[i] > 0 ? static_cast<T>(offset + normal(rng)) : nan;
      }
      const auto family = sparcon::Family<T>::entmax(static_cast<T>(alpha));
      std::vector<T> dx(p.size());
      sparcon::backward<T>(family, p, g, std::span<T>(dx), rows);
      const LD eps = std::numeric_limits<T>::epsilon();
      for (std::size_t r = 0; r < rows.count; ++r) {
        SCOPED_TRACE("row " + std::to_string(r));
        const T* pr = p.data() + r * n;
        const T* gr = g.data() + r * n;
        std::vector<LD> s(n, 0);
        LD sum = 0, largest = 0, g_size = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if (!(pr[i] > 0)) continue;
          s[i] = std::pow(static_cast<LD>(pr[i]), 2 - static_cast<LD>(alpha));
          sum += s[i];
          largest = std::max(largest, s[i]);
          g_size = std::max(g_size, std::fabs(static_cast<LD>(gr[i])));
        }
        for (std::size_t i = 0; i < n; ++i) {
          if (s[i] == 0) {
            ASSERT_EQ(dx[r * n + i], T(0)) << "entry " << i << " outside the support";
            continue;
          }
          LD want = 0, size = 0;
          for (std::size_t j = 0; j < n; ++j) {
            if (s[j] == 0) continue;
            const LD term = s[i] * s[j] * (static_cast<LD>(gr[i]) - static_cast<LD>(gr[j])) / sum;
            want += term;
            size += std::fabs(term);
          }
          const LD bound = 16 * eps * (size + s[i] * g_size * (sum - largest) / sum);
          ASSERT_LE(std::fabs(static_cast<LD>(dx[r * n + i]) - want), bound)
              << "entry " << i << " (p " << static_cast<double>(pr[i]) << "): " << static_cast<double>(dx[r * n + i])
              << " vs " << static_cast<double>(want);
        }
        std::vector<T> alone(n);
        sparcon::backward<T>(family, std::span<const T>(pr, n), std::span<const T>(gr, n), std::span<T>(alone),
                             sparcon::Rows{1, n});
        ASSERT_TRUE(std::equal(alone.begin(), alone.end(), dx.begin() + r * n, [](T a, T b) {
          return std::memcmp(&a, &b, sizeof(T)) == 0;
        })) << "the row alone differs from the row among others";
      }
    }
  }
}

TEST_P(DiscreteKernels, DominatedBackwardFloat) { check_dominated_backward<float>(); }
TEST_P(DiscreteKernels, DominatedBackwardDouble) { check_dominated_backward<double>(); }

/// Entmax with a general alpha solves a group of rows side by side, one row per lane, and takes
/// the powers of its later Newton steps from the first step's where the move is small, by Pow
/// again where it is not, lane by lane: a row's output is the same to the bit computed alone as
/// among others (rows of 16 to 512, alphas whose k = 1/(alpha-1) is 1.3 to 100, N(0, 2^2) scores,
/// the group's rows with their entries near the support's edge at different places; 1.01 and 1.05,
/// k = 100 and 20, take the first step's powers from log1p).
template <class T>
void check_rows_alone() {
  for (const double alpha : {1.01, 1.05, 1.1, 1.15, 1.2, 1.3, 1.75}) {
    for (const std::size_t n : {16, 128, 512}) {
      const sparcon::Rows rows{67, n};
      const std::vector<T> x = to_type<T>(normal_values(rows.count, n, 2.0, 97 + n));
      const auto family = sparcon::Family<T>::entmax(static_cast<T>(alpha));
      const Forward<T> among = run_forward(family, x, rows);
      for (std::size_t r = 0; r < rows.count; ++r) {
        const std::span<const T> row = row_of(x, rows, r);
        const Forward<T> alone = run_forward(family, std::vector<T>(row.begin(), row.end()), sparcon::Rows{1, n});
        const std::span<const T> p = row_of(among.p, rows, r);
        ASSERT_TRUE(std::equal(alone.p.begin(), alone.p.end(), p.begin(), p.end(),
                               [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }))
            << "alpha " << alpha << ", rows of " << n << ", row " << r << ": alone differs from among others";
      }
    }
  }
}

TEST_P(DiscreteKernels, RowsAloneFloat) { check_rows_alone<float>(); }
TEST_P(DiscreteKernels, RowsAloneDouble) { check_rows_alone<double>(); }

TEST_P(DiscreteKernels, CenteredBackwardFloat) { check_centered_backward<float>(); }
TEST_P(DiscreteKernels, CenteredBackwardDouble) { check_centered_backward<double>(); }

std::string target_name(const ::testing::TestParamInfo<std::int64_t>& info) { return hwy::TargetName(info.param); }

INSTANTIATE_TEST_SUITE_P(SimdTargets, DiscreteKernels, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         target_name);

}  // namespace
}  // namespace sparcon_test
