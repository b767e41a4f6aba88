// profile_moments (profile_moments.h) for k = 1 and 2 on Highway vectors of doubles, lane by
// lane: the closed form and the tail integrals, shared by the two angular rules of the 2D
// expectation, rays from the centre of the disk (ray_kernels-inl.h: the interval [0, R] of
// every ray) and chords across it (chord_kernels-inl.h: [-w, w], w varying with the chord).
// Included once per target from those headers, inside no namespace.
//
// On a lane, the profile is (1 - u^2 / R^2)^K on [lo, hi] (R a lane's own radius, given as R and
// 1 / R^2) against N(u; centre, s^2), and the moments are m = First, First + 1, First + 2 (rays:
// 1..3, chords: 0..2).
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
#if defined(SPARCON_CONTINUOUS_PROFILE_MOMENTS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_CONTINUOUS_PROFILE_MOMENTS_INL_H_
#undef SPARCON_CONTINUOUS_PROFILE_MOMENTS_INL_H_
#else
#define SPARCON_CONTINUOUS_PROFILE_MOMENTS_INL_H_
#endif

#include <array>
#include <cstddef>

#include "continuous/tail_integrals.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

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

// 1 - Phi(|z|) from f = phi(z) (see the top of the file): the even and odd parts of G in y^2,
// two independent multiply-add chains instead of one of 24.
HWY_INLINE V NormalTail(D d, V z, V f) {
  const V x = hn::Mul(hn::Abs(z), hn::Set(d, 0.7071067811865476));
  const V t = hn::Div(hn::Set(d, 2.0), hn::Add(hn::Set(d, 2.0), x));
  // y = (2 t - 1.06) / 0.94 maps [0.06, 1] to [-1, 1].
  const V y = hn::MulAdd(t, hn::Set(d, 2.0 / 0.94), hn::Set(d, -1.06 / 0.94));
  const V y2 = hn::Mul(y, y);
  constexpr std::size_t kLast = kErfcxSeries.size() - 1;  // 24, even
  V even = hn::Set(d, kErfcxSeries[kLast]), odd = hn::Set(d, kErfcxSeries[kLast - 1]);
  for (std::size_t j = kLast - 2; j >= 2; j -= 2) {
    even = hn::MulAdd(even, y2, hn::Set(d, kErfcxSeries[j]));
    odd = hn::MulAdd(odd, y2, hn::Set(d, kErfcxSeries[j - 1]));
  }
  const V g = hn::MulAdd(odd, y, hn::MulAdd(even, y2, hn::Set(d, kErfcxSeries[0])));
  return hn::Mul(hn::Mul(f, hn::Set(d, 1.2533141373155003)), hn::Mul(t, g));  // sqrt(pi/2)
}

// P_First..P_First+2 of (1 - u^2/R^2)^K u^m against N(u; centre, s^2) on [lo, hi]
// (profile_moments.cc's polynomial_profile, its closed-form branch), lane by lane, from the
// moments U_m of u^m against N(u; centre, s^2) on [lo, hi]: P_m = sum_i binomial(K, i)
// (-1/R^2)^i U_(m+2i). U_0 = Phi(z2) - Phi(z1) (z = (u - centre) / s at the ends), and
// integrating u^(m-1) (u - centre) N by parts,
//   U_m = centre U_(m-1) + (m - 1) s^2 U_(m-2) - s (hi^(m-1) phi(z2) - lo^(m-1) phi(z1)),
// one multiply-add on the chain a step. (The same recurrence as the centred moments
// J_m = (m - 1) J_(m-2) - (z2^(m-1) phi(z2) - z1^(m-1) phi(z1)) of the standard normal, taken
// in u. Expanding U_m = sum_i binomial(m, i) centre^(m-i) s^i J_i instead, as this did before,
// costs m + 1 terms a step, and on the kernels' tests (simd_targets_test.cc) it was 2-30 times
// further off where the centre lies a few s beyond [lo, hi] and the closed form cancels.)
//
// MomentsFromEnds takes phi and the tails 1 - Phi(|z|) at both ends; an end given f = t = 0 and a
// z of its side's sign is left out, as if it lay at infinity (OneSidedMoments).
template <int K, int First>
HWY_INLINE void MomentsFromEnds(D d, V lo, V hi, V inverse_r2, V centre, V s, V z1, V f1, V t1, V z2, V f2, V t2,
                                V (&out)[3]) {
  constexpr int kDegree = First + 2 + 2 * K;  // the highest U_m needed
  // Phi(z2) - Phi(z1) from the tails, so that it keeps its relative accuracy.
  const V both_above = hn::Sub(t1, t2), both_below = hn::Sub(t2, t1);
  const V across = hn::Sub(hn::Sub(hn::Set(d, 1.0), t1), t2);
  const V zero = hn::Zero(d);
  std::array<V, kDegree + 1> U;
  U[0] = hn::IfThenElse(hn::Ge(z1, zero), both_above, hn::IfThenElse(hn::Le(z2, zero), both_below, across));
  const V sf1 = hn::Mul(s, f1), sf2 = hn::Mul(s, f2), s2 = hn::Mul(s, s);
  U[1] = hn::MulAdd(centre, U[0], hn::Sub(sf1, sf2));
  V lo_power = hn::Set(d, 1.0), hi_power = lo_power;  // lo^(m-1), hi^(m-1)
  for (int m = 2; m <= kDegree; ++m) {
    lo_power = hn::Mul(lo_power, lo);
    hi_power = hn::Mul(hi_power, hi);
    const V edge = hn::MulSub(hi_power, sf2, hn::Mul(lo_power, sf1));
    U[m] = hn::MulAdd(centre, U[m - 1], hn::MulSub(hn::Mul(hn::Set(d, m - 1.0), s2), U[m - 2], edge));
  }
  const V q = hn::Neg(inverse_r2);
  for (int m = First; m <= First + 2; ++m) {
    if constexpr (K == 1) {
      out[m - First] = hn::MulAdd(q, U[m + 2], U[m]);
    } else {
      out[m - First] = hn::Add(hn::MulAdd(hn::Add(q, q), U[m + 2], U[m]), hn::Mul(hn::Mul(q, q), U[m + 4]));
    }
  }
}

template <int K, int First>
HWY_INLINE void ClosedMoments(D d, V lo, V hi, V inverse_r2, V centre, V s, V inverse_s, V (&out)[3]) {
  const V z1 = hn::Mul(hn::Sub(lo, centre), inverse_s), z2 = hn::Mul(hn::Sub(hi, centre), inverse_s);
  const V f1 = NormalPdf(d, z1), f2 = NormalPdf(d, z2);
  const V t1 = NormalTail(d, z1, f1), t2 = NormalTail(d, z2, f2);
  MomentsFromEnds<K, First>(d, lo, hi, inverse_r2, centre, s, z1, f1, t1, z2, f2, t2, out);
}

// The closed form on lanes whose far end (lo where near_is_hi, else hi) lies more than 10 s
// from the centre, on the interval's side: that end is left out (MomentsFromEnds), one
// exponential and one tail instead of two. What it leaves out, the integral beyond that end of
// the profile continued as its polynomial, is below e^-42 of the interval's integral (whose
// centre lies at most kEndMomentsFrom s beyond the near end).
template <int K, int First>
HWY_INLINE void OneSidedMoments(D d, M near_is_hi, V lo, V hi, V inverse_r2, V centre, V s, V inverse_s, V (&out)[3]) {
  const V z = hn::Mul(hn::Sub(hn::IfThenElse(near_is_hi, hi, lo), centre), inverse_s);
  const V f = NormalPdf(d, z), t = NormalTail(d, z, f), zero = hn::Zero(d);
  const V below = hn::Set(d, -1.0), above = hn::Set(d, 1.0);  // the far end's side
  MomentsFromEnds<K, First>(d, lo, hi, inverse_r2, centre, s, hn::IfThenElse(near_is_hi, below, z),
                            hn::IfThenElse(near_is_hi, zero, f), hn::IfThenElse(near_is_hi, zero, t),
                            hn::IfThenElse(near_is_hi, z, above), hn::IfThenElse(near_is_hi, f, zero),
                            hn::IfThenElse(near_is_hi, t, zero), out);
}

// K_0..K_J(w) lane by lane: tail_integrals.h's tail_integrals<J>(w), the same steps.
template <int J>
HWY_INLINE std::array<V, J + 1> TailIntegrals(D d, V w) {
  const auto& series = sparcon::detail::kTailRatioSeries[J - 4];
  const V one = hn::Set(d, 1.0), four_plus_w = hn::Add(hn::Set(d, 4.0), w);
  const V both = hn::Div(one, hn::Mul(w, four_plus_w));  // 1 / (4 + w) = w both, 1 / w = (4 + w) both
  const V y = hn::MulAdd(hn::Set(d, 176.0 / 9), hn::Mul(w, both), hn::Set(d, -13.0 / 9));
  const V y2 = hn::Mul(y, y);
  V even = hn::Set(d, series[20]), odd = hn::Set(d, series[21]);
  for (int i = 18; i >= 0; i -= 2) {
    even = hn::MulAdd(even, y2, hn::Set(d, series[i]));
    odd = hn::MulAdd(odd, y2, hn::Set(d, series[i + 1]));
  }
  const V ratio = hn::Mul(hn::Mul(hn::Set(d, J + 1), hn::Mul(four_plus_w, both)), hn::MulAdd(odd, y, even));  // r_J
  std::array<V, J + 1> k;
  V above = ratio;
  k[J] = one;
  for (int j = J; j >= 1; --j) {
    k[j - 1] = hn::Mul(hn::MulAdd(w, k[j], above), hn::Set(d, 1.0 / j));
    above = k[j];
  }
  const V scale = hn::Div(one, hn::MulAdd(w, k[0], k[1]));
  for (V& value : k) value = hn::Mul(value, scale);
  return k;
}

// The integral of profile(u) u^m N(u; centre, s^2) du for m = First..First+2 over u = end + h v,
// v >= 0, with the centre w s behind `end` (h = +-s, pointing away from it): N(u) = phi(w) / s
// exp(-w v - v^2/2), so the integral is phi(w) sum_j g_j K_j(w), with K_j the tail integrals of
// tail_integrals.h and g_j the coefficients in v of profile(u) u^m. The profile
// (1 - u^2/R^2)^K is a polynomial, so it may be taken past the support. With
// q = 1 - u^2/R^2 = q0 + q1 v + q2 v^2 and P_i the coefficients of q^K, T_j = sum_i P_i K_(i+j)
// is the integral of q^K v^j, and u^m = (end + h v)^m combines T_0..T_m. Added, times `sign`,
// to out. Lanes with w below 4 (outside the callers' lanes) give values that are not used.
template <int K, int First>
HWY_INLINE void AddEndMoments(D d, V end, V h, V w, V radius, V inverse_r2, V sign, V (&out)[3]) {
  constexpr int J = 2 * K + First + 2;
  // beyond 40, phi(w) is 0 (tail_integrals.h); below 4 (unused lanes), 4 keeps the fit in range
  const V clamped = hn::Min(hn::Max(w, hn::Set(d, 4.0)), hn::Set(d, 40.0));
  const std::array<V, J + 1> k = TailIntegrals<J>(d, clamped);
  const V q0 = hn::Mul(hn::Mul(hn::Sub(radius, end), hn::Add(radius, end)), inverse_r2);  // 0 or 1 exactly
  const V q1 = hn::Mul(hn::Set(d, -2.0), hn::Mul(hn::Mul(end, h), inverse_r2));
  const V q2 = hn::Neg(hn::Mul(hn::Mul(h, h), inverse_r2));
  std::array<V, 2 * K + 1> p;
  if constexpr (K == 1) {
    p = {q0, q1, q2};
  } else {
    p = {hn::Mul(q0, q0), hn::Mul(hn::Add(q0, q0), q1), hn::MulAdd(q1, q1, hn::Mul(hn::Add(q0, q0), q2)),
         hn::Mul(hn::Add(q1, q1), q2), hn::Mul(q2, q2)};
  }
  V t[First + 3];
  for (int j = 0; j < First + 3; ++j) {
    t[j] = hn::Mul(p[0], k[j]);
    for (int i = 1; i <= 2 * K; ++i) t[j] = hn::MulAdd(p[i], k[i + j], t[j]);
  }
  const V factor = hn::Mul(sign, NormalPdf(d, clamped));
  const V ht1 = hn::Mul(h, t[1]), hh = hn::Mul(h, h);
  // The integrals of q^K u^m, u = end + h v, m = 0..First + 2.
  V s[4];
  s[0] = t[0];
  s[1] = hn::MulAdd(end, t[0], ht1);
  s[2] = hn::MulAdd(end, hn::MulAdd(end, t[0], hn::Add(ht1, ht1)), hn::Mul(hh, t[2]));
  if constexpr (First == 1) {
    s[3] = hn::MulAdd(hn::Mul(end, end), hn::MulAdd(end, t[0], hn::Mul(hn::Set(d, 3.0), ht1)),
                      hn::Mul(hh, hn::MulAdd(hn::Set(d, 3.0), hn::Mul(end, t[2]), hn::Mul(h, t[3]))));
  }
  for (int m = 0; m < 3; ++m) out[m] = hn::MulAdd(s[First + m], factor, out[m]);
}

// P_First..P_First+2 on [lo, hi] for a centre more than kEndMomentsFrom s beyond the end nearest
// to it (`above`: beyond hi), at distance delta from it: the half-line from that end
// (AddEndMoments); on the lanes `short_lanes`, where (hi - lo) delta < 40 s^2, less the half-line
// beyond the far end (the centre is then hi - lo + delta behind it, and that part is at most
// exp(-(2 (hi - lo) delta + (hi - lo)^2) / (2 s^2)) ~ e^-4.5 of the whole; elsewhere it is below
// e^-40 and left out).
template <int K, int First>
HWY_INLINE void BeyondMoments(D d, M above, M short_lanes, V delta, V s, V lo, V hi, V radius,
                              V inverse_r2, V (&out)[3]) {
  const V one = hn::Set(d, 1.0);
  const V h = hn::IfThenElse(above, hn::Neg(s), s);  // away from the centre
  const V inverse_s = hn::Div(one, s);
  out[0] = out[1] = out[2] = hn::Zero(d);
  AddEndMoments<K, First>(d, hn::IfThenElse(above, hi, lo), h, hn::Mul(delta, inverse_s), radius, inverse_r2,
                          one, out);
  if (hn::AllFalse(d, short_lanes)) return;
  const V far_end = hn::IfThenElse(above, lo, hi);
  AddEndMoments<K, First>(d, far_end, h, hn::Mul(hn::Add(delta, hn::Sub(hi, lo)), inverse_s), radius,
                          inverse_r2, hn::IfThenElseZero(short_lanes, hn::Set(d, -1.0)), out);
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
