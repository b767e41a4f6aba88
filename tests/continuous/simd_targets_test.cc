// The value-side kernels of continuous attention (src/continuous/value_kernels.cc) on every SIMD
// target Highway compiled in and this CPU supports; the target ends each test's name
// (SimdTargets/ValueKernels.AxpyDotScale/AVX2, ...). The fixture selects the target as
// tests/discrete/simd_targets_test.cc does (hwy::SetSupportedTargetsForTest, Update, then
// sparcon::simd::detail::reselect_value_kernels and, for the disc+cont paths, reselect_kernels)
// and checks the table in use is that target's. What runs per target, float and double: axpy,
// dot and scale against long-double loops at every length 0..70 and 1000 from unaligned starts;
// the value model 1D and 2D (forward and backward) against its definition with a feature count
// that leaves a tail on every target; continuous attention 1D and 2D (forward and backward) against
// the same calls on the CPU's best target.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attention_reference.h"
#include "attention_reference_2d.h"
#include "continuous_reference.h"
#include "continuous/chord_kernels.h"
#include "continuous/pair_frames.h"
#include "continuous/ray_kernels.h"
#include "continuous/value_kernels.h"
#include "continuous_cases.h"
#include "discrete/simd_kernels.h"
#include "sparcon/attention.h"
#include "sparcon/basis.h"
#include "test_support.h"
#include "value_cases.h"

namespace sparcon_test {
namespace {

std::int64_t select_target(std::int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  sparcon::simd::detail::reselect_kernels();
  const std::int64_t ray_target = sparcon::simd::detail::reselect_ray_kernels();
  const std::int64_t chord_target = sparcon::simd::detail::reselect_chord_kernels();
  const std::int64_t frames_target = sparcon::simd::detail::reselect_pair_frames();
  const std::int64_t value_target = sparcon::simd::detail::reselect_value_kernels();
  return ray_target == value_target && chord_target == value_target && frames_target == value_target ? value_target
                                                                                                      : -1;
}

class ValueKernels : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override {
    ASSERT_EQ(select_target(GetParam()), GetParam())
        << "the value kernels in use are not " << hwy::TargetName(GetParam()) << "'s";
    ASSERT_EQ(sparcon::simd::detail::kernel_target(), GetParam());
  }
  void TearDown() override { select_target(0); }

 public:
  /// Runs `call` on the CPU's best target, then returns to this test's.
  template <class F>
  void on_best_target(F call) {
    select_target(0);
    call();
    select_target(GetParam());
  }
};

TEST_P(ValueKernels, ThisTargetsKernelsAreInUse) {
  EXPECT_EQ(sparcon::simd::detail::value_kernel_target(), GetParam());
}

template <class T>
void check_axpy_dot_scale() {
  std::vector<std::size_t> lengths(71);
  for (std::size_t n = 0; n < lengths.size(); ++n) lengths[n] = n;
  lengths.push_back(1000);
  for (std::size_t n : lengths) {
    for (std::size_t offset : {0, 1, 3}) {
      SCOPED_TRACE("length " + std::to_string(n) + ", offset " + std::to_string(offset));
      const std::vector<T> x = random_values<T>(n + offset, 100 + static_cast<unsigned>(n));
      const std::vector<T> y = random_values<T>(n + offset, 200 + static_cast<unsigned>(n));
      const T* xs = x.data() + offset;
      const T* ys = y.data() + offset;
      const double w = -0.7318;
      // axpy: sum[i] += w x[i], in double (one fused or one separate rounding per entry).
      std::vector<double> sum = random_values<double>(n + offset, 300);
      const std::vector<double> before = sum;
      sparcon::simd::axpy(w, xs, sum.data() + offset, n);
      for (std::size_t i = 0; i < n; ++i) {
        const LD want = static_cast<LD>(before[offset + i]) + static_cast<LD>(w) * static_cast<LD>(xs[i]);
        ASSERT_LE(std::fabs(sum[offset + i] - want), 4e-16L * (1 + std::fabs(want))) << "axpy entry " << i;
      }
      for (std::size_t i = 0; i < offset; ++i) ASSERT_EQ(sum[i], before[i]) << "axpy wrote before its row";
      // dot, accumulated in double.
      LD want = 0, magnitude = 0;
      for (std::size_t i = 0; i < n; ++i) {
        want += static_cast<LD>(xs[i]) * static_cast<LD>(ys[i]);
        magnitude += std::fabs(static_cast<LD>(xs[i]) * static_cast<LD>(ys[i]));
      }
      // The bound of any summation order: (n + 1) eps of the sum of magnitudes.
      EXPECT_LE(std::fabs(sparcon::simd::dot(xs, ys, n) - want), static_cast<LD>(n + 1) * 1.2e-16L * (1 + magnitude))
          << "dot";
      // scale: out[i] = w x[i] rounded once to T.
      std::vector<T> out(n + offset + 1, T(5));
      sparcon::simd::scale(w, xs, out.data() + offset, n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[offset + i], static_cast<T>(w * static_cast<double>(xs[i]))) << "scale entry " << i;
      }
      for (std::size_t i = 0; i < offset; ++i) ASSERT_EQ(out[i], T(5)) << "scale wrote before its row";
      ASSERT_EQ(out[offset + n], T(5)) << "scale wrote past its row";
    }
  }
}

/// matvec and matvec_transposed against long-double loops, for every row count 0..9 and 196 and
/// every row length 0..70 and 100 (tails on every target), from unaligned starts.
template <class T>
void check_matvec() {
  std::vector<std::size_t> lengths(71);
  for (std::size_t n = 0; n < lengths.size(); ++n) lengths[n] = n;
  lengths.push_back(100);
  for (const std::size_t rows : {0u, 1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 196u}) {
    for (const std::size_t n : lengths) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", length " + std::to_string(n));
      const std::vector<T> a = random_values<T>(rows * n + 1, 400 + static_cast<unsigned>(n + rows));
      const std::vector<T> x = random_values<T>(std::max(n, rows) + 3, 500 + static_cast<unsigned>(n));
      const std::vector<double> w = random_values<double>(rows + 1, 600 + static_cast<unsigned>(rows));
      const T* as = a.data() + 1;  // unaligned
      std::vector<double> out(rows + 1, 9.0);
      sparcon::simd::matvec(as, rows, n, x.data() + 3, out.data());
      for (std::size_t l = 0; l < rows; ++l) {
        LD want = 0, magnitude = 0;
        for (std::size_t j = 0; j < n; ++j) {
          want += static_cast<LD>(as[l * n + j]) * static_cast<LD>(x[3 + j]);
          magnitude += std::fabs(static_cast<LD>(as[l * n + j]) * static_cast<LD>(x[3 + j]));
        }
        ASSERT_LE(std::fabs(out[l] - want), static_cast<LD>(n + 1) * 1.2e-16L * (1 + magnitude)) << "matvec row " << l;
      }
      ASSERT_EQ(out[rows], 9.0) << "matvec wrote past its rows";
      std::vector<double> sum = random_values<double>(n + 1, 700);
      const std::vector<double> before = sum;
      sparcon::simd::matvec_transposed(w.data() + 1, as, rows, n, sum.data());
      for (std::size_t j = 0; j < n; ++j) {
        LD want = before[j], magnitude = std::fabs(static_cast<LD>(before[j]));
        for (std::size_t l = 0; l < rows; ++l) {
          want += static_cast<LD>(w[1 + l]) * static_cast<LD>(as[l * n + j]);
          magnitude += std::fabs(static_cast<LD>(w[1 + l]) * static_cast<LD>(as[l * n + j]));
        }
        ASSERT_LE(std::fabs(sum[j] - want), static_cast<LD>(rows + 1) * 1.2e-16L * (1 + magnitude))
            << "matvec_transposed entry " << j;
      }
      ASSERT_EQ(sum[n], before[n]) << "matvec_transposed wrote past its row";
    }
  }
}

TEST_P(ValueKernels, MatVecFloat) { check_matvec<float>(); }
TEST_P(ValueKernels, MatVecDouble) { check_matvec<double>(); }

TEST_P(ValueKernels, AxpyDotScaleFloat) { check_axpy_dot_scale<float>(); }
TEST_P(ValueKernels, AxpyDotScaleDouble) { check_axpy_dot_scale<double>(); }

// The value model against its definition B_b[j, f] = sum_l G[l, j] H_b[l, f] (long double),
// forward and backward; 37 features leave a tail on every target.
template <class T>
void check_value_model() {
  const auto basis = custom_basis<T>();
  const std::size_t n = basis.size(), length = 9, e = 37;
  const std::vector<std::int64_t> lengths = {9, 4};
  const sparcon::SequenceShape shape{lengths.size(), length, e};
  const std::vector<T> values = random_values<T>(shape.batch * length * e, 7);
  const T lambda = T(0.05);
  sparcon::RidgeCache1D<T> ridge(basis, lambda);
  std::vector<T> model(shape.batch * n * e);
  sparcon::value_model_1d<T>(ridge, values, shape, lengths, model);
  const std::vector<T> dmodel = random_values<T>(model.size(), 8);
  std::vector<T> dvalues(values.size());
  sparcon::value_model_1d_backward<T>(ridge, shape, lengths, dmodel, dvalues);
  const auto bld = aref::to_ld(basis);
  std::vector<LD> want(model.size(), 0), dwant(values.size(), 0);
  for (std::size_t b = 0; b < shape.batch; ++b) {
    const auto len = static_cast<std::size_t>(lengths[b]);
    const std::vector<LD> g = aref::ridge(bld, len, lambda);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t l = 0; l < len; ++l) {
          want[(b * n + j) * e + f] += g[l * n + j] * static_cast<LD>(values[(b * length + l) * e + f]);
          dwant[(b * length + l) * e + f] += g[l * n + j] * static_cast<LD>(dmodel[(b * n + j) * e + f]);
        }
  }
  EXPECT_LE(relative_error(model, want), tolerance<T>()) << "value_model_1d";
  EXPECT_LE(relative_error(dvalues, dwant), tolerance<T>()) << "value_model_1d_backward";

  const auto basis2 = sparcon::GaussianBasis2D<T>::grid(3, T(0.02));
  const std::size_t n2 = basis2.size(), pixels = 20;
  const sparcon::ImageShape shape2{2, 4, 5, e};
  const std::vector<T> values2 = random_values<T>(shape2.batch * pixels * e, 11);
  sparcon::RidgeCache2D<T> ridge2(basis2, lambda);
  std::vector<T> model2(shape2.batch * n2 * e);
  sparcon::value_model_2d<T>(ridge2, values2, shape2, model2);
  const std::vector<T> dmodel2 = random_values<T>(model2.size(), 12);
  std::vector<T> dvalues2(values2.size());
  sparcon::value_model_2d_backward<T>(ridge2, shape2, dmodel2, dvalues2);
  const std::vector<LD> g2 = aref2d::ridge(aref2d::to_ld(basis2), {4, 5}, lambda);
  std::vector<LD> want2(model2.size(), 0), dwant2(values2.size(), 0);
  for (std::size_t b = 0; b < shape2.batch; ++b)
    for (std::size_t j = 0; j < n2; ++j)
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t l = 0; l < pixels; ++l) {
          want2[(b * n2 + j) * e + f] += g2[l * n2 + j] * static_cast<LD>(values2[(b * pixels + l) * e + f]);
          dwant2[(b * pixels + l) * e + f] += g2[l * n2 + j] * static_cast<LD>(dmodel2[(b * n2 + j) * e + f]);
        }
  EXPECT_LE(relative_error(model2, want2), tolerance<T>()) << "value_model_2d";
  EXPECT_LE(relative_error(dvalues2, dwant2), tolerance<T>()) << "value_model_2d_backward";
}

TEST_P(ValueKernels, ValueModelFloat) { check_value_model<float>(); }
TEST_P(ValueKernels, ValueModelDouble) { check_value_model<double>(); }

/// Continuous attention 1D and 2D, forward and backward, at alpha = 1, 2 and 1.5, on this target and
/// on the CPU's best: the same to the suite's tolerance (the sums differ only in their order).
template <class T>
void check_attention(ValueKernels& fixture) {
  const std::size_t e = 37;
  const auto basis = sparcon::GaussianBasis1D<T>::paper(16);
  sparcon::RidgeCache1D<T> ridge(basis, T(0.01));
  const std::vector<std::int64_t> lengths = {23, 9};
  const sparcon::SequenceShape shape{2, 23, e};
  const std::vector<T> values = random_values<T>(2 * 23 * e, 21), dcontext = random_values<T>(2 * e, 22);
  const std::vector<T> mu = {T(0.3), T(0.7)}, sigma2 = {T(0.02), T(0.1)};
  sparcon::RidgeCache2D<T> ridge2(sparcon::GaussianBasis2D<T>::grid(3, T(0.02)), T(0.01));
  const sparcon::ImageShape shape2{2, 4, 5, e};
  const std::vector<T> values2 = random_values<T>(2 * 20 * e, 23);
  const std::vector<T> mu2 = {T(0.4), T(0.5), T(0.6), T(0.3)};
  const std::vector<T> sigma = {T(0.05), T(0.01), T(0.01), T(0.04), T(0.1), T(0), T(0), T(0.08)};
  struct Out {
    std::vector<T> context, dvalues, dmu, dsigma2, context2, dvalues2, dmu2, dsigma;
  };
  auto run = [&](T alpha) {
    Out o{std::vector<T>(2 * e), std::vector<T>(values.size()), std::vector<T>(2), std::vector<T>(2),
          std::vector<T>(2 * e), std::vector<T>(values2.size()), std::vector<T>(4), std::vector<T>(8)};
    sparcon::continuous_attention_1d<T>(alpha, ridge, values, shape, lengths, mu, sigma2, o.context);
    sparcon::continuous_attention_1d_backward<T>(alpha, ridge, values, shape, lengths, mu, sigma2, dcontext, o.dvalues,
                                                 o.dmu, o.dsigma2);
    sparcon::continuous_attention_2d<T>(alpha, ridge2, values2, shape2, mu2, sigma, o.context2);
    sparcon::continuous_attention_2d_backward<T>(alpha, ridge2, values2, shape2, mu2, sigma, dcontext, o.dvalues2,
                                                 o.dmu2, o.dsigma);
    return o;
  };
  for (const T alpha : {T(1), T(2), T(1.5)}) {
    SCOPED_TRACE("alpha " + std::to_string(static_cast<double>(alpha)));
    const Out got = run(alpha);
    Out best;
    fixture.on_best_target([&] { best = run(alpha); });
    const LD tol = 10 * tolerance<T>();
    EXPECT_LE(relative_error(got.context, best.context), tol) << "1D context";
    EXPECT_LE(relative_error(got.dvalues, best.dvalues), tol) << "1D dvalues";
    EXPECT_LE(relative_error(got.dmu, best.dmu), tol) << "1D dmu";
    EXPECT_LE(relative_error(got.dsigma2, best.dsigma2), tol) << "1D dsigma2";
    EXPECT_LE(relative_error(got.context2, best.context2), tol) << "2D context";
    EXPECT_LE(relative_error(got.dvalues2, best.dvalues2), tol) << "2D dvalues";
    EXPECT_LE(relative_error(got.dmu2, best.dmu2), tol) << "2D dmu";
    EXPECT_LE(relative_error(got.dsigma, best.dsigma), tol) << "2D dsigma";
  }
}

TEST_P(ValueKernels, AttentionMatchesTheBestTargetFloat) { check_attention<float>(*this); }
TEST_P(ValueKernels, AttentionMatchesTheBestTargetDouble) { check_attention<double>(*this); }

/// The ray kernel of the 2D expectation (continuous/ray_kernels.h) on this target against the
/// rule written out ray by ray, each radial integral by long-double adaptive quadrature
/// (continuous_reference.h), for k = 1, 2 (the kernel's closed form and tail integrals on whole
/// vectors) and 4/3 (every ray through profile_moments), on pairs whose rays take every branch:
/// centres inside [0, R], within and beyond 4 s of its ends, R delta above and below 40 s^2,
/// R < s and R > 100 s, rays skipped as negligible. Held to a fraction of the sum of the rays'
/// absolute contributions of the pair (not of the row's largest r, as the 2D contract of
/// docs/math.md 12 is): 1e-9 on the third and fourth geometries, whose rays with centres 2-4 s
/// beyond [0, R] and R near s take the closed form where it cancels (k = 2: 8e-11 off with
/// fused multiply-add, 5e-10 without (SSE4 and below); k = 1: 1.2e-12; profile_moments.cc,
/// end_moments), 5e-14 on the others (within 1.5e-14 on AVX-512).
TEST_P(ValueKernels, RaySumsMatchProfileMomentsRayByRay) {
  struct Geometry {
    double a00, a01, a11, b0, b1, radius;
  };
  const std::vector<Geometry> geometries{
      {1, 0, 1, 0.5, -0.3, 6},          // centre near mu, R = 6 s
      {4, 1, 2, 30, 10, 5},             // basis function beyond the support, R delta > 40 s^2
      {1, 0.2, 0.5, 6, 1, 1.5},         // beyond by a few s with R delta < 40 s^2
      {0.5, 0, 0.5, -4, 0.5, 3},        // centre behind mu
      {100, -30, 50, 500, -200, 2},     // narrow basis function
      {0.02, 0, 0.03, 0.01, 0.02, 0.1}, // R < s
      {1e-4, 0, 2e-4, 1e-3, 0, 3},      // R far above s (k = 2 off the closed form)
      {9, 8.9, 9, 40, 41, 7},           // eccentric
  };
  for (const double k : {1.0, 2.0, 4.0 / 3.0}) {
    for (const Geometry& g : geometries) {
      for (const std::size_t n : {32u, 40u, 136u}) {
        std::vector<double> cs(n + 64, 1.0), sn(n + 64, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
          cs[i] = std::cos(2 * 3.141592653589793 * static_cast<double>(i) / static_cast<double>(n));
          sn[i] = std::sin(2 * 3.141592653589793 * static_cast<double>(i) / static_cast<double>(n));
        }
        sparcon::simd::RayPair pair;
        pair.cos = cs.data();
        pair.sin = sn.data();
        pair.n = n;
        pair.a00 = g.a00;
        pair.a01 = g.a01;
        pair.a11 = g.a11;
        pair.b0 = g.b0;
        pair.b1 = g.b1;
        pair.kappa = 1.5 * (g.b0 * g.b0 / g.a00 + g.b1 * g.b1 / g.a11) + 0.1;
        pair.radius = g.radius;
        pair.k = k;
        pair.scale = 0.37;
        const sparcon::simd::RaySums got = sparcon::simd::ray_sums(pair);
        // the rule ray by ray
        std::vector<double> log_max(n);
        double best = -1e300;
        for (std::size_t i = 0; i < n; ++i) {
          const double a = g.a00 * cs[i] * cs[i] + 2 * g.a01 * cs[i] * sn[i] + g.a11 * sn[i] * sn[i];
          const double b = g.b0 * cs[i] + g.b1 * sn[i], peak = std::clamp(b / a, 0.0, g.radius);
          log_max[i] = -0.5 * (a * peak * peak - 2 * b * peak + pair.kappa);
          best = std::max(best, log_max[i]);
        }
        LD want[6] = {}, size[6] = {};
        for (std::size_t i = 0; i < n; ++i) {
          if (log_max[i] < best - 44) continue;
          const double a = g.a00 * cs[i] * cs[i] + 2 * g.a01 * cs[i] * sn[i] + g.a11 * sn[i] * sn[i];
          const double b = g.b0 * cs[i] + g.b1 * sn[i], s = 1 / std::sqrt(a), centre = b / a;
          const double w = pair.scale * s * std::exp(-0.5 * std::max(0.0, pair.kappa - b * centre));
          cref::QuadOptions opt;
          opt.rel_tol = 1e-17L;
          std::array<LD, 4> m{};
          for (int p = 1; p <= 3; ++p) {
            const LD R = g.radius;
            m[p] = cref::integrate(
                [&](LD u) {
                  const LD z = (u - centre) / s;
                  return std::pow(1 - u * u / (R * R), LD(k)) * std::pow(u, p) * std::exp(-z * z / 2) /
                         (s * std::sqrt(2 * cref::kPi));
                },
                0, R, {std::clamp(LD(centre), LD(0), R), LD(centre) - s, LD(centre) + s, R / 2}, opt);
          }
          const LD terms[6] = {w * m[1], w * m[2] * cs[i], w * m[2] * sn[i], w * m[3] * cs[i] * cs[i],
                               w * m[3] * cs[i] * sn[i], w * m[3] * sn[i] * sn[i]};  // NOLINT
          for (int t = 0; t < 6; ++t) {
            want[t] += terms[t];
            size[t] += std::fabs(terms[t]);
          }
        }
        const double have[6] = {got.e0, got.e1[0], got.e1[1], got.e2[0], got.e2[1], got.e2[2]};
        const LD tolerance = &g == &geometries[2] || &g == &geometries[3] ? 1e-9L : 5e-14L;
        for (int t = 0; t < 6; ++t)
          EXPECT_LE(std::fabs(have[t] - want[t]), tolerance * size[t] + 1e-300L)
              << "k " << k << " R " << g.radius << " beta (" << g.b0 << ", " << g.b1 << ") n " << n << " sum " << t
              << ": got " << have[t] << " want " << static_cast<double>(want[t]);
      }
    }
  }
}

/// The chord kernel of the 2D expectation (continuous/chord_kernels.h) on this target against the
/// rule written out chord by chord, each chord's integral over [-w, w] by long-double adaptive
/// quadrature, for k = 1 and 2, on pairs whose chords take every branch: both ends more than
/// 10 s_long from psi's centre (the whole line), the centre inside nearer an end (closed form),
/// within 4 s_long of a chord's ends and beyond (tails, 2 w delta above and below 40 s_long^2),
/// chords narrow for psi (2 w < s_long, Gauss-Legendre), k = 2 with w > 100 s_long
/// (profile_moments), chords skipped as negligible. Held to a fraction of the sum over the chords
/// of a bound of their contributions' absolute values (|x| <= w): 5e-14, and 1e-9 where chords
/// of w near s_long have a centre 2-4 s_long beyond their ends and take the closed form where it
/// cancels (as the rays above).
TEST_P(ValueKernels, ChordSumsMatchTheRuleChordByChord) {
  struct Geometry {
    double m1, m2, s_long, s_short, radius;
    bool cancels;
  };
  const std::vector<Geometry> geometries{
      {0.3, -0.5, 0.8, 0.4, 2.5, false},    // centre inside, wide and narrow chords
      {1.2, 2.3, 0.3, 0.1, 2.5, false},     // near the edge: centres beyond the shorter chords
      {6.0, 1.0, 1.0, 0.5, 3.0, true},      // beyond every chord by a few s_long
      {-40, 0.2, 2.0, 2.0, 3.0, false},     // far beyond: the tails, 2 w delta > 40 s_long^2
      {0.0, 0.0, 3.0, 0.2, 2.5, false},     // psi wider than the disk along the chords
      {0.01, -0.3, 0.004, 0.002, 2.5, false},  // k = 2: w > 100 s_long; both ends far from m1
      {1.5, 0.3, 0.05, 0.02, 2.5, false},   // both ends more, and less, than 10 s_long from m1
  };
  for (const int k : {1, 2}) {
    for (const Geometry& g : geometries) {
      for (const std::size_t half : {32u, 41u, 136u}) {
        const std::size_t n = 2 * half;
        std::vector<double> cs(n + 64, 1.0), sn(n + 64, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
          cs[i] = std::cos(2 * 3.141592653589793 * static_cast<double>(i) / static_cast<double>(n));
          sn[i] = std::sin(2 * 3.141592653589793 * static_cast<double>(i) / static_cast<double>(n));
        }
        sparcon::simd::ChordPair pair;
        pair.cos = cs.data() + 1;
        pair.sin = sn.data() + 1;
        pair.n = half - 1;
        pair.m1 = g.m1;
        pair.m2 = g.m2;
        pair.s_long = g.s_long;
        pair.s_short = g.s_short;
        pair.radius = g.radius;
        pair.k = k;
        pair.scale = 0.37;
        const sparcon::simd::ChordSums got = sparcon::simd::chord_sums(pair);
        // the rule chord by chord
        std::vector<double> log_max(half - 1);
        double best = -1e300;
        for (std::size_t i = 0; i + 1 < half; ++i) {
          const double y = g.radius * cs[i + 1], w = g.radius * sn[i + 1];
          const double along = std::clamp(g.m1, -w, w) - g.m1, across = y - g.m2;
          log_max[i] = -0.5 * (across * across / (g.s_short * g.s_short) + along * along / (g.s_long * g.s_long));
          best = std::max(best, log_max[i]);
        }
        LD want[6] = {}, size[6] = {};
        for (std::size_t i = 0; i + 1 < half; ++i) {
          if (log_max[i] < best - 44) continue;
          const LD y = g.radius * cs[i + 1], w = g.radius * sn[i + 1], R = g.radius;
          const LD weight = pair.scale * w * std::pow(w / R, 2 * k) *
                            std::exp(-0.5L * (y - g.m2) * (y - g.m2) / (LD(g.s_short) * g.s_short));
          cref::QuadOptions opt;
          opt.rel_tol = 1e-17L;
          std::array<LD, 3> m{};
          for (int p = 0; p <= 2; ++p) {
            m[p] = cref::integrate(
                [&](LD x) {
                  const LD z = (x - g.m1) / g.s_long;
                  return std::pow(1 - x * x / (w * w), LD(k)) * std::pow(x, p) * std::exp(-z * z / 2) /
                         (g.s_long * std::sqrt(2 * cref::kPi));
                },
                -w, w, {std::clamp(LD(g.m1), -w, w), LD(g.m1) - g.s_long, LD(g.m1) + g.s_long}, opt);
          }
          const LD terms[6] = {weight * m[0], weight * m[1], weight * y * m[0], weight * m[2], weight * y * m[1],
                               weight * y * y * m[0]};
          // |x| <= w on the chord: the integrals of the terms' absolute values are at most these
          const LD bounds[6] = {1, w, std::fabs(y), w * w, w * std::fabs(y), y * y};
          for (int t = 0; t < 6; ++t) {
            want[t] += terms[t];
            size[t] += std::fabs(weight * m[0]) * bounds[t];
          }
        }
        const double have[6] = {got.e0, got.e1[0], got.e1[1], got.e2[0], got.e2[1], got.e2[2]};
        const LD tolerance = g.cancels ? 1e-9L : 5e-14L;
        for (int t = 0; t < 6; ++t)
          EXPECT_LE(std::fabs(have[t] - want[t]), tolerance * size[t] + 1e-300L)
              << "k " << k << " R " << g.radius << " centre (" << g.m1 << ", " << g.m2 << ") half " << half
              << " sum " << t << ": got " << have[t] << " want " << static_cast<double>(want[t]);
      }
    }
  }
}

/// The frames and bounds of a density's pairs (continuous/pair_frames.h) on this target, for 13
/// basis functions (a tail on every target) of 1:1 to 1e4:1 anisotropy at angles 0, 90 degrees
/// and between, around a rotated 5:1 density: the frame diagonalises A = Sigma^(1/2) P
/// Sigma^(1/2) (long double) into the widths' squares to 1e-13 of its largest eigenvalue, the
/// widths match A's eigenvalues (smaller one as det / larger, long double) to 1e-14, m is
/// frame^T Sigma^(-1/2) (c - mu); the bound matches its formula (pair_frames-inl.h) written out in
/// long double to 1e-12 and lies above log r, r by nested long-double quadrature over the disk.
TEST_P(ValueKernels, PairFramesDiagonaliseAndBound) {
  using cref::LD;
  const LD pi = cref::kPi;
  // Sigma^(1/2) = Q diag(2, 0.4) Q^T at 0.6 rad, its inverse, mu = (0.3, -0.2), R = 1.7
  const LD q_angle = 0.6L, cq = std::cos(q_angle), sq = std::sin(q_angle);
  auto rotated = [](LD c, LD s, LD l0, LD l1) {
    return std::array<LD, 3>{c * c * l0 + s * s * l1, c * s * (l0 - l1), s * s * l0 + c * c * l1};
  };
  const std::array<LD, 3> root = rotated(cq, sq, 2, 0.4L), inverse = rotated(cq, sq, 1 / 2.0L, 1 / 0.4L);
  sparcon::simd::DensityFrame density;
  density.mu0 = 0.3;
  density.mu1 = -0.2;
  density.root00 = static_cast<double>(root[0]);
  density.root01 = static_cast<double>(root[1]);
  density.root11 = static_cast<double>(root[2]);
  density.inverse00 = static_cast<double>(inverse[0]);
  density.inverse01 = static_cast<double>(inverse[1]);
  density.inverse11 = static_cast<double>(inverse[2]);
  const LD root_det = LD(density.root00) * density.root11 - LD(density.root01) * density.root01;
  density.det_sigma = static_cast<double>(root_det * root_det);
  density.radius = 1.7;
  for (const double k : {1.0, 2.0, 4.0}) {
    density.k = k;
    density.log_coefficient = -0.3;
    density.log_gamma = std::lgamma(k + 1);
    // basis functions: widths (sd along, sd across, angle), centres from mu's neighbourhood out
    struct Psi {
      double sd0, sd1, angle, c0, c1;
    };
    const std::vector<Psi> psis{
        {0.3, 0.3, 0.0, 0.3, -0.2},     {0.3, 0.3, 0.0, 4.0, 1.0},     {0.5, 0.1, 0.0, -3.0, 2.0},
        {0.5, 0.1, 1.5707963267948966, 2.0, 2.0},   {0.5, 0.1, 0.3, 1.0, -5.0},    {1.0, 0.01, -1.1, 0.5, 0.4},
        {2.0, 0.02, 2.0, -6.0, -6.0},   {0.05, 0.05, 0.0, 3.5, 0.0},   {0.2, 0.1, 1.0, 9.0, 3.0},
        {0.8, 0.4, -0.4, -1.0, -2.5},   {0.1, 0.2, 0.0, 0.0, 2.4},     {0.3, 0.05, 0.7, 20.0, -15.0},
        {0.6, 0.6, 0.0, -2.6, 0.1}};
    const std::size_t n = psis.size();
    std::vector<double> c0(64, 0.0), c1(64, 0.0), p00(64, 1.0), p01(64, 0.0), p11(64, 1.0), det_p(64, 1.0);
    std::vector<std::array<LD, 3>> precision(n);
    for (std::size_t j = 0; j < n; ++j) {
      const Psi& f = psis[j];
      precision[j] = rotated(std::cos(LD(f.angle)), std::sin(LD(f.angle)), 1 / (LD(f.sd0) * f.sd0),
                             1 / (LD(f.sd1) * f.sd1));
      c0[j] = f.c0;
      c1[j] = f.c1;
      p00[j] = static_cast<double>(precision[j][0]);
      p01[j] = static_cast<double>(precision[j][1]);
      p11[j] = static_cast<double>(precision[j][2]);
      precision[j] = {LD(p00[j]), LD(p01[j]), LD(p11[j])};  // what the kernel sees
      det_p[j] = static_cast<double>(precision[j][0] * precision[j][2] - precision[j][1] * precision[j][1]);
    }
    std::vector<double> out[7];
    for (auto& v : out) v.assign(64, -7.0);
    sparcon::simd::pair_frames(density, {c0.data(), c1.data(), p00.data(), p01.data(), p11.data(), det_p.data(), n},
                               {out[0].data(), out[1].data(), out[2].data(), out[3].data(), out[4].data(),
                                out[5].data(), out[6].data()});
    for (std::size_t j = 0; j < n; ++j) {
      const LD c = out[0][j], s = out[1][j], m1 = out[2][j], m2 = out[3][j], s_long = out[4][j], s_short = out[5][j];
      SCOPED_TRACE("k " + std::to_string(k) + " basis function " + std::to_string(j));
      // A = root P root
      const LD r00 = density.root00, r01 = density.root01, r11 = density.root11;
      const LD q00 = precision[j][0], q01 = precision[j][1], q11 = precision[j][2];
      const LD t00 = q00 * r00 + q01 * r01, t01 = q00 * r01 + q01 * r11, t10 = q01 * r00 + q11 * r01,
               t11 = q01 * r01 + q11 * r11;
      const LD a00 = r00 * t00 + r01 * t10, a01 = r00 * t01 + r01 * t11, a11 = r01 * t01 + r11 * t11;
      const LD large = (a00 + a11) / 2 + std::hypot((a00 - a11) / 2, a01), small = (a00 * a11 - a01 * a01) / large;
      EXPECT_NEAR(1 / (s_short * s_short), large, 1e-14 * large);
      EXPECT_NEAR(1 / (s_long * s_long), small, 1e-14 * small);
      EXPECT_GE(c, 0);
      EXPECT_NEAR(c * c + s * s, 1, 1e-15);
      // frame^T A frame, frame = [(-s, c) (c, s)]
      const LD l0 = -s, l1 = c, h0 = c, h1 = s;
      const LD along = l0 * (a00 * l0 + a01 * l1) + l1 * (a01 * l0 + a11 * l1);
      const LD across = h0 * (a00 * h0 + a01 * h1) + h1 * (a01 * h0 + a11 * h1);
      const LD mixed = l0 * (a00 * h0 + a01 * h1) + l1 * (a01 * h0 + a11 * h1);
      EXPECT_NEAR(along, small, 1e-13 * large);
      EXPECT_NEAR(across, large, 1e-13 * large);
      EXPECT_NEAR(mixed, 0, 1e-13 * large);
      const LD e0 = LD(c0[j]) - density.mu0, e1 = LD(c1[j]) - density.mu1;
      const LD u0 = LD(density.inverse00) * e0 + LD(density.inverse01) * e1;
      const LD u1 = LD(density.inverse01) * e0 + LD(density.inverse11) * e1;
      const LD scale = std::hypot(u0, u1) + 1;
      EXPECT_NEAR(m1, l0 * u0 + l1 * u1, 1e-14 * scale);
      EXPECT_NEAR(m2, h0 * u0 + h1 * u1, 1e-14 * scale);
      // the bound, written out
      const LD R = density.radius, v1 = s_long * s_long, v2 = s_short * s_short;
      LD want = density.log_coefficient;
      if (m1 * m1 + m2 * m2 > R * R) {
        LD lambda = 0, x1 = m1, x2 = m2;
        for (int step = 0; step < 2; ++step) {
          const LD excess = x1 * x1 + x2 * x2 - R * R;
          if (!(excess > 0)) break;
          lambda += excess / (2 * (v1 * x1 * x1 / (1 + lambda * v1) + v2 * x2 * x2 / (1 + lambda * v2)));
          x1 = m1 / (1 + lambda * v1);
          x2 = m2 / (1 + lambda * v2);
        }
        const LD n1 = x1 / std::hypot(x1, x2), n2 = x2 / std::hypot(x1, x2);
        const LD s_n = std::sqrt(n1 * n1 * v1 + n2 * n2 * v2), a = (n1 * m1 + n2 * m2 - R) / s_n;
        if (a > 0)
          want += -a * a / 2 - std::log(std::sqrt(2 * pi)) - std::log(a) +
                  std::min(LD(0), std::lgamma(LD(k) + 1) + LD(k) * std::log(2 * s_n / R / a));
      }
      EXPECT_NEAR(out[6][j], want, 1e-12 * (1 + std::fabs(want)));
      // r = C int_disk (1 - |u|^2 / R^2)^k N(x; m1, s_long^2) N(y; m2, s_short^2), y outer
      cref::QuadOptions opt;
      opt.rel_tol = 1e-10L;
      const LD r = std::exp(LD(density.log_coefficient)) *
                   cref::integrate(
                       [&](LD y) {
                         const LD w = std::sqrt(std::max(LD(0), R * R - y * y));
                         const LD inner = cref::integrate(
                             [&](LD x) {
                               const LD zx = (x - m1) / s_long;
                               return std::pow(1 - (x * x + y * y) / (R * R), LD(k)) * std::exp(-zx * zx / 2);
                             },
                             -w, w, {std::clamp(m1, -w, w)}, opt);
                         const LD zy = (y - m2) / s_short;
                         return inner * std::exp(-zy * zy / 2) / (2 * pi * s_long * s_short);
                       },
                       -R, R, {std::clamp(m2, -R, R)}, opt);
      EXPECT_LE(std::log(r), out[6][j] + 1e-9) << "r " << static_cast<double>(r);
    }
    for (std::size_t j = 16; j < 64; ++j) {  // nothing written past the vectors holding the 13
      EXPECT_EQ(out[0][j], -7.0);
    }
  }
}

std::string target_name(const ::testing::TestParamInfo<std::int64_t>& info) { return hwy::TargetName(info.param); }

INSTANTIATE_TEST_SUITE_P(SimdTargets, ValueKernels, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         target_name);

}  // namespace
}  // namespace sparcon_test
