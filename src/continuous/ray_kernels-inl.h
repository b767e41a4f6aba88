// The ray kernel of the 2D expectation (declared in ray_kernels.h), written once with Google
// Highway; ray_kernels.cc includes this header once per target (hwy/foreach_target.h) and
// exports it. One call covers one (density, basis function) pair, a vector of rays at a time:
//
//   pass 1: every ray's a = u^T A u, b = beta . u and the log of psi's largest value on [0, R]
//           along it, and the largest of those over the rays (best);
//   pass 2: the rays within e^-44 of best (expectation_2d.cc: the others are negligible), with
//           s = a^-1/2, centre = b / a, weight w = scale s exp(-max(0, kappa - b centre) / 2) and
//           the radial moments P_1..P_3 of profile_moments.h on [0, R].
//
// For k = 1 (alpha = 2) and k = 2 (alpha = 1.5) the radial moments are profile_moments.h's
// closed form (the truncated-Gaussian moments J_m, expanded about the centre), evaluated on
// whole vectors, wherever profile_moments itself takes it: R >= s, the centre within 8 s
// (k = 2: 4 s) of [0, R], and for k = 2 R <= 100 s. Every other ray not negligible (and every
// ray for other k) is handed to profile_moments one lane at a time, so each ray gets the method
// profile_moments would give it. The lane sums are added up at the end, in a fixed order: the
// result does not depend on the threads or on the other pairs of a call.
//
// The closed form needs the normal tail 1 - Phi(|z|) = phi(z) sqrt(pi/2) t G(t), t = 2 / (2 + x),
// x = |z| / sqrt 2 (so that t G(t) = erfc(x) exp(x^2)), with G the interpolant of degree 24 at
// the Chebyshev points of t in [0.06, 1] (x <= 31.3; beyond, phi(z) < 1e-300 and the tail is 0 to
// double), fitted in 50-digit arithmetic (mpmath): within 2.3e-17 relative of G in exact
// arithmetic. Converted to powers of the Chebyshev variable (the coefficients decay fast enough
// that the sum of their magnitudes is 1.02, so Horner's rule is well conditioned) and evaluated
// by Horner's rule on its even and odd parts in y^2 in double, within 4.4e-16 of G (checked at
// 4001 points). phi(z) = exp(-z^2 / 2) / sqrt(2 pi) takes z^2 as the exact
// sum of two doubles (fused multiply-add), so that |z| up to 38 loses nothing to the square.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_CONTINUOUS_RAY_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_CONTINUOUS_RAY_KERNELS_INL_H_
#undef SPARCON_CONTINUOUS_RAY_KERNELS_INL_H_
#else
#define SPARCON_CONTINUOUS_RAY_KERNELS_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "continuous/profile_moments.h"
#include "continuous/ray_kernels.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

// Rays on which psi stays below e^-44 of its largest value on the disk are skipped.
constexpr double kNegligible = 44;

// G(t) = erfc(x) exp(x^2) / t with t = 2 / (2 + x), t in [0.06, 1]: its Chebyshev interpolant
// of degree 24 written as a polynomial in y = (2 t - 1.06) / 0.94 (coefficients of y^0..y^24).
constexpr std::array<double, 25> kErfcxSeries = {
    5.3191301684604718e-1, 3.3890380298086015e-1, 1.2615761693283746e-1, 1.2899021128971249e-2,
    -9.0886197588234957e-3, -1.9489974578588308e-3, 1.1642225261238882e-3, 1.680052506760105e-4,
    -2.0102673223356295e-4, 1.2796406256404029e-5, 3.1711161947495926e-5, -1.1489817173949491e-5,
    -2.3321658614501734e-6, 3.1380595272524637e-6, -7.4957083440439522e-7, -3.5337172640327869e-7,
    3.2748924471322087e-7, -8.0822166802910445e-8, -4.0772471951643407e-8, 4.6424339842693114e-8,
    -1.0472564727393572e-8, -9.4708571433776783e-9, 5.108473444626925e-9, 7.860875968442678e-10,
    -6.8881997369310524e-10};

// phi(z), with z^2 = hi + lo exactly: exp(-(hi + lo)/2) = exp(-hi/2) (1 - lo/2) to rounding.
HWY_INLINE V NormalPdf(D d, V z) {
  const V hi = hn::Mul(z, z), lo = hn::MulSub(z, z, hi);
  const V e = hn::Exp(d, hn::Mul(hn::Set(d, -0.5), hi));
  return hn::Mul(hn::Mul(e, hn::NegMulAdd(hn::Set(d, 0.5), lo, hn::Set(d, 1.0))),
                 hn::Set(d, 0.3989422804014327));  // 1 / sqrt(2 pi)
}

// 1 - Phi(|z|) from f = phi(z) (see the top of the file), for two vectors at once: the even and
// odd parts of G in y^2 for each, four independent multiply-add chains instead of one of 24.
HWY_INLINE void NormalTails(D d, V z1, V f1, V z2, V f2, V& tail1, V& tail2) {
  const V x1 = hn::Mul(hn::Abs(z1), hn::Set(d, 0.7071067811865476));
  const V x2 = hn::Mul(hn::Abs(z2), hn::Set(d, 0.7071067811865476));
  const V t1 = hn::Div(hn::Set(d, 2.0), hn::Add(hn::Set(d, 2.0), x1));
  const V t2 = hn::Div(hn::Set(d, 2.0), hn::Add(hn::Set(d, 2.0), x2));
  // y = (2 t - 1.06) / 0.94 maps [0.06, 1] to [-1, 1].
  const V y1 = hn::MulAdd(t1, hn::Set(d, 2.0 / 0.94), hn::Set(d, -1.06 / 0.94));
  const V y2 = hn::MulAdd(t2, hn::Set(d, 2.0 / 0.94), hn::Set(d, -1.06 / 0.94));
  const V w1 = hn::Mul(y1, y1), w2 = hn::Mul(y2, y2);
  constexpr std::size_t kLast = kErfcxSeries.size() - 1;  // 24, even
  V even1 = hn::Set(d, kErfcxSeries[kLast]), even2 = even1;
  V odd1 = hn::Set(d, kErfcxSeries[kLast - 1]), odd2 = odd1;
  for (std::size_t j = kLast - 2; j >= 2; j -= 2) {
    even1 = hn::MulAdd(even1, w1, hn::Set(d, kErfcxSeries[j]));
    even2 = hn::MulAdd(even2, w2, hn::Set(d, kErfcxSeries[j]));
    odd1 = hn::MulAdd(odd1, w1, hn::Set(d, kErfcxSeries[j - 1]));
    odd2 = hn::MulAdd(odd2, w2, hn::Set(d, kErfcxSeries[j - 1]));
  }
  const V zeroth = hn::Set(d, kErfcxSeries[0]), root_half_pi = hn::Set(d, 1.2533141373155003);  // sqrt(pi/2)
  const V g1 = hn::MulAdd(odd1, y1, hn::MulAdd(even1, w1, zeroth));
  const V g2 = hn::MulAdd(odd2, y2, hn::MulAdd(even2, w2, zeroth));
  tail1 = hn::Mul(hn::Mul(f1, root_half_pi), hn::Mul(t1, g1));
  tail2 = hn::Mul(hn::Mul(f2, root_half_pi), hn::Mul(t2, g2));
}

constexpr double binomial(int m, int i) {
  double out = 1;
  for (int j = 1; j <= i; ++j) out = out * (m - i + j) / j;
  return out;
}

// P_1..P_3 of (1 - u^2/R^2)^K u^m against N(u; centre, s^2) on [0, R] (profile_moments.cc's
// polynomial_profile, its closed-form branch), lane by lane.
template <int K>
HWY_INLINE void ClosedMoments(D d, V centre, V s, V inverse_s, double radius, V& m1, V& m2, V& m3) {
  constexpr int kDegree = 3 + 2 * K;  // the highest U_m needed
  const V z1 = hn::Mul(hn::Neg(centre), inverse_s), z2 = hn::Mul(hn::Sub(hn::Set(d, radius), centre), inverse_s);
  const V f1 = NormalPdf(d, z1), f2 = NormalPdf(d, z2);
  V t1, t2;
  NormalTails(d, z1, f1, z2, f2, t1, t2);
  // Phi(z2) - Phi(z1) from the tails, so that it keeps its relative accuracy.
  const V both_above = hn::Sub(t1, t2), both_below = hn::Sub(t2, t1);
  const V across = hn::Sub(hn::Sub(hn::Set(d, 1.0), t1), t2);
  const V zero = hn::Zero(d);
  std::array<V, kDegree + 1> J;
  J[0] = hn::IfThenElse(hn::Ge(z1, zero), both_above, hn::IfThenElse(hn::Le(z2, zero), both_below, across));
  J[1] = hn::Sub(f1, f2);
  V z1_power = hn::Set(d, 1.0), z2_power = hn::Set(d, 1.0);  // z^(m-1)
  for (int m = 2; m <= kDegree; ++m) {
    z1_power = hn::Mul(z1_power, z1);
    z2_power = hn::Mul(z2_power, z2);
    const V edge = hn::Sub(hn::Mul(z2_power, f2), hn::Mul(z1_power, f1));
    J[m] = hn::Sub(hn::Mul(hn::Set(d, m - 1.0), J[m - 2]), edge);
  }
  // U_m = sum_i binomial(m, i) d^(m-i) s^i J_i.
  std::array<V, kDegree + 1> d_power, sj, U;
  d_power[0] = hn::Set(d, 1.0);
  for (int m = 1; m <= kDegree; ++m) d_power[m] = hn::Mul(d_power[m - 1], centre);
  V s_power = hn::Set(d, 1.0);
  for (int i = 0; i <= kDegree; ++i) {
    sj[i] = hn::Mul(s_power, J[i]);
    s_power = hn::Mul(s_power, s);
  }
  for (int m = 1; m <= kDegree; ++m) {
    V sum = hn::Zero(d);
    for (int i = 0; i <= m; ++i) sum = hn::MulAdd(hn::Mul(hn::Set(d, binomial(m, i)), d_power[m - i]), sj[i], sum);
    U[m] = sum;
  }
  const V q = hn::Set(d, -1 / (radius * radius));
  V out[3];
  for (int m = 1; m <= 3; ++m) {
    if constexpr (K == 1) {
      out[m - 1] = hn::MulAdd(q, U[m + 2], U[m]);
    } else {
      out[m - 1] = hn::Add(hn::MulAdd(hn::Add(q, q), U[m + 2], U[m]), hn::Mul(hn::Mul(q, q), U[m + 4]));
    }
  }
  m1 = out[0];
  m2 = out[1];
  m3 = out[2];
}

// int_0^inf profile(u) u^m N(u; centre, s^2) dx for m = 1..3 along u = end + direction x, with
// the centre at distance delta behind `end` (profile_moments.cc's by_laguerre, lane by lane):
// N(u) = N(end) exp(-x / l) exp(-x^2 / (2 s^2)) with l = s^2 / delta, so the integral is
// N(end) l sum_i w_i profile(u_i) u_i^m exp(-(l x_i)^2 / (2 s^2)), u_i = end + direction l x_i.
// The profile (1 - u^2/R^2)^K is a polynomial, so it may be evaluated past the support.
// The rule is profile_moments' for the narrowest Gaussian (delta / s) of the lanes `lanes`.
template <int K>
HWY_INLINE void AddLaguerre(D d, M lanes, V end, V direction, V delta, V centre, V s, double radius, V sign,
                            V& m1, V& m2, V& m3) {
  const V width = hn::IfThenElse(lanes, hn::Div(delta, s), hn::Set(d, std::numeric_limits<double>::infinity()));
  const sparcon::detail::LaguerreRule rule = sparcon::detail::laguerre_rule(hn::GetLane(hn::MinOfLanes(d, width)));
  const V one = hn::Set(d, 1.0), minus_half = hn::Set(d, -0.5), inverse_radius = hn::Set(d, 1 / radius);
  const V decay = hn::Div(hn::Mul(s, s), delta), step = hn::Mul(direction, decay), ratio = hn::Div(decay, s);
  V a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (int i = 0; i < rule.nodes; ++i) {
    const V x = hn::Set(d, rule.x[i]);
    const V u = hn::MulAdd(step, x, end), v = hn::Mul(u, inverse_radius);
    const V base = hn::NegMulAdd(v, v, one), profile = K == 1 ? base : hn::Mul(base, base);
    const V rx = hn::Mul(ratio, x);
    const V g = hn::Mul(hn::Mul(hn::Set(d, rule.w[i]), profile), hn::Exp(d, hn::Mul(minus_half, hn::Mul(rx, rx))));
    const V gu = hn::Mul(g, u), guu = hn::Mul(gu, u);
    a1 = hn::Add(a1, gu);
    a2 = hn::Add(a2, guu);
    a3 = hn::MulAdd(guu, u, a3);
  }
  const V factor = hn::Mul(sign, hn::Mul(hn::Div(NormalPdf(d, hn::Div(hn::Sub(end, centre), s)), s), decay));
  m1 = hn::MulAdd(a1, factor, m1);
  m2 = hn::MulAdd(a2, factor, m2);
  m3 = hn::MulAdd(a3, factor, m3);
}

// P_1..P_3 for a centre more than 4 s beyond the end of [0, R] nearest to it (`above`: beyond R),
// at distance delta from it: the Gauss-Laguerre rule from that end, as profile_moments takes it
// when R delta >= 40 s^2 (the rest of the half-line is then below e^-40 of the integral); on the
// lanes `short_lanes`, where R delta < 40 s^2 (profile_moments' composite rule), the part beyond
// the far end is subtracted, by the same rule from there (the centre is then R + delta behind it,
// and that part is at most exp(-(2 R delta + R^2) / (2 s^2)) ~ e^-4.5 of the whole).
template <int K>
HWY_INLINE void BeyondMoments(D d, M lanes, M above, M short_lanes, V centre, V delta, V s, double radius,
                              V& m1, V& m2, V& m3) {
  const V vradius = hn::Set(d, radius), zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const V direction = hn::IfThenElse(above, hn::Neg(one), one);  // away from the centre
  m1 = m2 = m3 = zero;
  AddLaguerre<K>(d, lanes, hn::IfThenElseZero(above, vradius), direction, delta, centre, s, radius, one, m1, m2, m3);
  if (hn::AllFalse(d, short_lanes)) return;
  const V far_end = hn::IfThenElseZero(hn::Not(above), vradius);
  AddLaguerre<K>(d, short_lanes, far_end, direction, hn::Add(delta, vradius), centre, s, radius,
                 hn::IfThenElseZero(short_lanes, hn::Set(d, -1.0)), m1, m2, m3);
}

// Scratch of one thread: a, b and log max of every ray.
struct Scratch {
  std::vector<double> a, b, log_max;
};

// The lanes of a vector handed to profile_moments one at a time (rays whose radial integral
// the closed form does not take): their sums go to `sums` in lane order.
HWY_NOINLINE void ScalarLanes(D d, M which, V centre, V s, V w, V c, V sn, const RayPair& pair,
                              RaySums& sums) {
  alignas(64) double centre_of[64], s_of[64], w_of[64], c_of[64], sn_of[64], which_of[64];
  hn::Store(centre, d, centre_of);
  hn::Store(s, d, s_of);
  hn::Store(w, d, w_of);
  hn::Store(c, d, c_of);
  hn::Store(sn, d, sn_of);
  hn::Store(hn::IfThenElseZero(which, hn::Set(d, 1.0)), d, which_of);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l) {
    if (which_of[l] == 0) continue;
    const auto m = sparcon::detail::profile_moments(pair.k, pair.radius, 0, pair.radius, centre_of[l], s_of[l]);
    const double w1 = w_of[l] * m[1], w2 = w_of[l] * m[2], w3 = w_of[l] * m[3];
    sums.e0 += w1;
    sums.e1[0] += w2 * c_of[l];
    sums.e1[1] += w2 * sn_of[l];
    sums.e2[0] += w3 * c_of[l] * c_of[l];
    sums.e2[1] += w3 * c_of[l] * sn_of[l];
    sums.e2[2] += w3 * sn_of[l] * sn_of[l];
  }
}

// K = 1 or 2: the closed form on whole vectors; K = 0: every ray through profile_moments.
template <int K>
RaySums RaySumsImpl(const RayPair& pair) {
  static_assert(HWY_MAX_BYTES <= 64 * sizeof(double), "the tables are padded to 64 entries");
  const D d;
  const std::size_t lanes = hn::Lanes(d), n = pair.n, padded = (n + lanes - 1) / lanes * lanes;
  static thread_local Scratch scratch;
  if (scratch.a.size() < padded) {
    scratch.a.resize(padded);
    scratch.b.resize(padded);
    scratch.log_max.resize(padded);
  }
  double* const a_of = scratch.a.data();
  double* const b_of = scratch.b.data();
  double* const log_max_of = scratch.log_max.data();
  const double radius = pair.radius;
  const V a00 = hn::Set(d, pair.a00), a01 = hn::Set(d, 2 * pair.a01), a11 = hn::Set(d, pair.a11);
  const V b0 = hn::Set(d, pair.b0), b1 = hn::Set(d, pair.b1), kappa = hn::Set(d, pair.kappa);
  const V vradius = hn::Set(d, radius), zero = hn::Zero(d), minus_half = hn::Set(d, -0.5);
  const V lowest = hn::Set(d, -std::numeric_limits<double>::infinity());
  // Pass 1: a, b and the log of psi's largest value on [0, R] along each ray.
  V best = lowest;
  for (std::size_t i = 0; i < padded; i += lanes) {
    const V c = hn::LoadU(d, pair.cos + i), sn = hn::LoadU(d, pair.sin + i);
    const V a = hn::MulAdd(hn::Mul(a00, c), c, hn::MulAdd(hn::Mul(a01, c), sn, hn::Mul(hn::Mul(a11, sn), sn)));
    const V b = hn::MulAdd(b0, c, hn::Mul(b1, sn));
    const V peak = hn::Min(hn::Max(hn::Div(b, a), zero), vradius);
    // -(a peak^2 - 2 b peak + kappa) / 2
    const V quadratic = hn::Add(hn::Mul(hn::Sub(hn::Mul(a, peak), hn::Add(b, b)), peak), kappa);
    const V log_max = hn::IfThenElse(hn::FirstN(d, n - i), hn::Mul(minus_half, quadratic), lowest);
    hn::StoreU(a, d, a_of + i);
    hn::StoreU(b, d, b_of + i);
    hn::StoreU(log_max, d, log_max_of + i);
    best = hn::Max(best, log_max);
  }
  const V cutoff = hn::Sub(hn::MaxOfLanes(d, best), hn::Set(d, kNegligible));
  // Pass 2: the rays that are not negligible.
  const V scale = hn::Set(d, pair.scale), one = hn::Set(d, 1.0);
  [[maybe_unused]] const V outside = hn::Set(d, K == 1 ? 8.0 : 4.0), hundred = hn::Set(d, 100.0);
  V e0 = zero, e1c = zero, e1s = zero, e2cc = zero, e2cs = zero, e2ss = zero;
  RaySums scalar;
  for (std::size_t i = 0; i < padded; i += lanes) {
    const M used = hn::Ge(hn::LoadU(d, log_max_of + i), cutoff);
    if (hn::AllFalse(d, used)) continue;
    const V a = hn::LoadU(d, a_of + i), b = hn::LoadU(d, b_of + i);
    const V c = hn::LoadU(d, pair.cos + i), sn = hn::LoadU(d, pair.sin + i);
    const V root_a = hn::Sqrt(a), s = hn::Div(one, root_a), centre = hn::Div(b, a);
    const V log_f = hn::Mul(minus_half, hn::Max(zero, hn::NegMulAdd(b, centre, kappa)));
    const V w = hn::Mul(hn::Mul(scale, s), hn::Exp(d, log_f));
    // Adds w P_1, w P_2 u and w P_3 u u^T of the lanes `which` to the sums.
    auto add = [&](M which, V m1, V m2, V m3) {
      const V w1 = hn::IfThenElseZero(which, hn::Mul(w, m1));
      const V w2 = hn::IfThenElseZero(which, hn::Mul(w, m2));
      const V w3 = hn::IfThenElseZero(which, hn::Mul(w, m3));
      e0 = hn::Add(e0, w1);
      e1c = hn::MulAdd(w2, c, e1c);
      e1s = hn::MulAdd(w2, sn, e1s);
      const V w3c = hn::Mul(w3, c);
      e2cc = hn::MulAdd(w3c, c, e2cc);
      e2cs = hn::MulAdd(w3c, sn, e2cs);
      e2ss = hn::MulAdd(hn::Mul(w3, sn), sn, e2ss);
    };
    M closed = hn::FirstN(d, 0);
    if constexpr (K > 0) {
      // profile_moments' own choice: R >= s, the centre within `outside` s of [0, R], and for
      // K = 2 R <= 100 s.
      const V margin = hn::Mul(outside, s);
      closed = hn::And(used, hn::And(hn::Ge(vradius, s), hn::And(hn::Ge(centre, hn::Neg(margin)),
                                                                  hn::Le(centre, hn::Add(vradius, margin)))));
      if constexpr (K == 2) closed = hn::And(closed, hn::Le(vradius, hn::Mul(hundred, s)));
      if (!hn::AllFalse(d, closed)) {
        V m1, m2, m3;
        ClosedMoments<K>(d, centre, s, root_a, radius, m1, m2, m3);
        add(closed, m1, m2, m3);
      }
    }
    M rest = hn::AndNot(closed, used);
    if constexpr (K > 0) {
      // Beyond: R >= s and the centre more than `outside` s (at least 4 s) beyond the nearest end.
      const V margin = hn::Mul(outside, s);
      const M above = hn::Gt(centre, hn::Add(vradius, margin));
      const M beyond = hn::And(rest, hn::And(hn::Ge(vradius, s), hn::Or(above, hn::Lt(centre, hn::Neg(margin)))));
      if (!hn::AllFalse(d, beyond)) {
        const V delta = hn::IfThenElse(above, hn::Sub(centre, vradius), hn::Neg(centre));
        const M short_lanes =
            hn::And(beyond, hn::Lt(hn::Mul(vradius, delta), hn::Mul(hn::Set(d, 40.0), hn::Mul(s, s))));
        V m1, m2, m3;
        BeyondMoments<K>(d, beyond, above, short_lanes, centre, delta, s, radius, m1, m2, m3);
        add(beyond, m1, m2, m3);
        rest = hn::AndNot(beyond, rest);
      }
    }
    if (!hn::AllFalse(d, rest)) ScalarLanes(d, rest, centre, s, w, c, sn, pair, scalar);
  }
  RaySums out;
  auto total = [&](V v) { return hn::GetLane(hn::SumOfLanes(d, v)); };
  out.e0 = total(e0) + scalar.e0;
  out.e1[0] = total(e1c) + scalar.e1[0];
  out.e1[1] = total(e1s) + scalar.e1[1];
  out.e2[0] = total(e2cc) + scalar.e2[0];
  out.e2[1] = total(e2cs) + scalar.e2[1];
  out.e2[2] = total(e2ss) + scalar.e2[2];
  return out;
}

RaySums RaySumsOf(const RayPair& pair) {
  if (pair.k == 1) return RaySumsImpl<1>(pair);
  if (pair.k == 2) return RaySumsImpl<2>(pair);
  return RaySumsImpl<0>(pair);
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
