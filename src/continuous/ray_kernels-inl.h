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
// For k = 1 (alpha = 2) and k = 2 (alpha = 1.5), where R >= s (and for k = 2 R <= 100 s), the
// radial moments are evaluated on whole vectors by profile_moments' own two methods: its closed
// form (the truncated-Gaussian moments J_m, expanded about the centre) for a centre within 4 s
// of [0, R], and the tail integrals of tail_integrals.h from the nearest end for a centre
// farther out (those rays are kept aside and taken whole vectors at a time at the end of pass 2).
// Every other ray not negligible (and every ray for other k) is handed to profile_moments one
// lane at a time, so each ray gets the method profile_moments would give it. The lane sums are
// added up at the end, in a fixed order: the result does not depend on the threads or on the
// other pairs of a call.
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

#include "compress_lanes-inl.h"
#include "continuous/profile_moments.h"
#include "continuous/ray_kernels.h"
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

// K_0..K_J(w) lane by lane: tail_integrals.h's tail_integrals<J>(w, depth), the same steps.
template <int J>
HWY_INLINE std::array<V, J + 1> TailIntegrals(D d, V w, int depth) {
  const V one = hn::Set(d, 1.0), inverse_w2 = hn::Div(one, hn::Mul(w, w));
  V a_before = hn::Zero(d), a = one, b_before = one, b = one;
  for (int n = 2; n <= depth; ++n) {
    const V c = hn::Mul(hn::Set(d, J + n), inverse_w2);
    const V a_next = hn::MulAdd(c, a_before, a), b_next = hn::MulAdd(c, b_before, b);
    a_before = a;
    a = a_next;
    b_before = b;
    b = b_next;
  }
  const V c = hn::Mul(hn::Set(d, J + depth + 1), inverse_w2), four_c = hn::Mul(hn::Set(d, 4.0), c);
  const V linear = hn::Add(one, hn::Div(inverse_w2, hn::Sqrt(hn::Add(one, four_c))));
  const V tail = hn::Div(hn::Add(c, c), hn::Add(linear, hn::Sqrt(hn::MulAdd(linear, linear, four_c))));
  const V fraction = hn::Div(hn::MulAdd(tail, a_before, a), hn::MulAdd(tail, b_before, b));
  const V ratio = hn::Mul(hn::Div(hn::Set(d, J + 1), w), fraction);  // r_J
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

// The integral of profile(u) u^m N(u; centre, s^2) du for m = 1..3 over u = end + h v, v >= 0, with
// the centre w s behind `end` (h = +-s, pointing away from it): N(u) = phi(w) / s exp(-w v - v^2/2),
// so the integral is phi(w) sum_j g_j K_j(w), with K_j the tail integrals of tail_integrals.h and
// g_j the coefficients in v of profile(u) u^m. The profile (1 - u^2/R^2)^K is a polynomial, so it
// may be taken past the support. With q = 1 - u^2/R^2 = q0 + q1 v + q2 v^2 and P_i the
// coefficients of q^K, T_j = sum_i P_i K_(i+j) is the integral of q^K v^j, and u^m = (end + h v)^m
// combines T_0..T_m. Added, times `sign`, to m1..m3; the fraction's depth is the one of the
// smallest w of the lanes `lanes`.
template <int K>
HWY_INLINE void AddEndMoments(D d, M lanes, V end, V h, V w, double radius, V sign, V& m1, V& m2, V& m3) {
  constexpr int J = 2 * K + 3;
  const V clamped = hn::Min(w, hn::Set(d, 40.0));  // beyond, phi(w) is 0 (tail_integrals.h)
  const V smallest = hn::MinOfLanes(d, hn::IfThenElse(lanes, clamped, hn::Set(d, 40.0)));
  const int depth = sparcon::detail::tail_fraction_depth(hn::GetLane(smallest));
  const std::array<V, J + 1> k = TailIntegrals<J>(d, clamped, depth);
  const V inverse_r2 = hn::Set(d, 1 / (radius * radius)), vradius = hn::Set(d, radius);
  const V q0 = hn::Mul(hn::Mul(hn::Sub(vradius, end), hn::Add(vradius, end)), inverse_r2);  // 0 or 1 exactly
  const V q1 = hn::Mul(hn::Set(d, -2.0), hn::Mul(hn::Mul(end, h), inverse_r2));
  const V q2 = hn::Neg(hn::Mul(hn::Mul(h, h), inverse_r2));
  std::array<V, 2 * K + 1> p;
  if constexpr (K == 1) {
    p = {q0, q1, q2};
  } else {
    p = {hn::Mul(q0, q0), hn::Mul(hn::Add(q0, q0), q1), hn::MulAdd(q1, q1, hn::Mul(hn::Add(q0, q0), q2)),
         hn::Mul(hn::Add(q1, q1), q2), hn::Mul(q2, q2)};
  }
  V t[4];
  for (int j = 0; j < 4; ++j) {
    t[j] = hn::Mul(p[0], k[j]);
    for (int i = 1; i <= 2 * K; ++i) t[j] = hn::MulAdd(p[i], k[i + j], t[j]);
  }
  const V factor = hn::Mul(sign, NormalPdf(d, clamped));
  const V ht1 = hn::Mul(h, t[1]), hh = hn::Mul(h, h);
  // The integrals of q^K u, q^K u^2 and q^K u^3, u = end + h v.
  const V s1 = hn::MulAdd(end, t[0], ht1);
  const V s2 = hn::MulAdd(end, hn::MulAdd(end, t[0], hn::Add(ht1, ht1)), hn::Mul(hh, t[2]));
  const V s3 = hn::MulAdd(hn::Mul(end, end), hn::MulAdd(end, t[0], hn::Mul(hn::Set(d, 3.0), ht1)),
                          hn::Mul(hh, hn::MulAdd(hn::Set(d, 3.0), hn::Mul(end, t[2]), hn::Mul(h, t[3]))));
  m1 = hn::MulAdd(s1, factor, m1);
  m2 = hn::MulAdd(s2, factor, m2);
  m3 = hn::MulAdd(s3, factor, m3);
}

// P_1..P_3 for a centre more than kEndMomentsFrom s beyond the end of [0, R] nearest to
// it (`above`: beyond R), at distance delta from it: the half-line from that end (AddEndMoments);
// on the lanes `short_lanes`, where R delta < 40 s^2, less the half-line beyond the far end (the
// centre is then R + delta behind it, and that part is at most exp(-(2 R delta + R^2) / (2 s^2))
// ~ e^-4.5 of the whole; elsewhere it is below e^-40 and left out).
template <int K>
HWY_INLINE void BeyondMoments(D d, M lanes, M above, M short_lanes, V delta, V s, double radius,
                              V& m1, V& m2, V& m3) {
  const V vradius = hn::Set(d, radius), zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const V h = hn::IfThenElse(above, hn::Neg(s), s);  // away from the centre
  const V inverse_s = hn::Div(one, s);
  m1 = m2 = m3 = zero;
  AddEndMoments<K>(d, lanes, hn::IfThenElseZero(above, vradius), h, hn::Mul(delta, inverse_s), radius, one, m1, m2,
                   m3);
  if (hn::AllFalse(d, short_lanes)) return;
  const V far_end = hn::IfThenElseZero(hn::Not(above), vradius);
  AddEndMoments<K>(d, short_lanes, far_end, h, hn::Mul(hn::Add(delta, vradius), inverse_s), radius,
                   hn::IfThenElseZero(short_lanes, hn::Set(d, -1.0)), m1, m2, m3);
}

// The six sums of the rule on vectors (lane by lane): w P_1, w P_2 u and w P_3 u u^T.
struct VectorSums {
  V e0, e1c, e1s, e2cc, e2cs, e2ss;

  explicit VectorSums(D d)
      : e0(hn::Zero(d)), e1c(e0), e1s(e0), e2cc(e0), e2cs(e0), e2ss(e0) {}

  // Adds the lanes `which` of a vector of rays (weight w, direction (c, sn), moments m1..m3).
  HWY_INLINE void Add(M which, V w, V c, V sn, V m1, V m2, V m3) {
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
  }
};

// The rays whose centre lies beyond [0, R] (BeyondMoments), kept aside during pass 2 and then
// integrated whole vectors at a time: they are a few scattered lanes of the vectors they come
// from, and the continued fraction of their tail integrals costs the same for one lane as for
// all of them.
class FarRays {
 public:
  // Makes room for `capacity` rays (and a whole compressed vector beyond).
  void Reset(D d, std::size_t capacity) {
    count_ = 0;
    const std::size_t size = capacity + hn::Lanes(d);
    for (std::vector<double>* v : {&centre_, &s_, &w_, &cos_, &sin_})
      if (v->size() < size) v->resize(size);
  }

  HWY_INLINE void Keep(D d, M which, V centre, V s, V w, V c, V sn) {
    hn::StoreU(CompressLanes(d, centre, which), d, centre_.data() + count_);
    hn::StoreU(CompressLanes(d, s, which), d, s_.data() + count_);
    hn::StoreU(CompressLanes(d, w, which), d, w_.data() + count_);
    hn::StoreU(CompressLanes(d, c, which), d, cos_.data() + count_);
    hn::StoreU(CompressLanes(d, sn, which), d, sin_.data() + count_);
    count_ += hn::CountTrue(d, which);
  }

  // Integrates the kept rays into sums.
  template <int K>
  void AddTo(D d, double radius, VectorSums& sums) const {
    const V vradius = hn::Set(d, radius), forty = hn::Set(d, 40.0);
    for (std::size_t i = 0; i < count_; i += hn::Lanes(d)) {
      const M lanes = hn::FirstN(d, count_ - i);
      // The lanes past count_ hold whatever an earlier pair left: made harmless (a ray of
      // centre R + 1000 and width 1, weight 0) before anything is computed from them.
      const V centre = hn::IfThenElse(lanes, hn::LoadU(d, centre_.data() + i), hn::Set(d, radius + 1000));
      const V s = hn::IfThenElse(lanes, hn::LoadU(d, s_.data() + i), hn::Set(d, 1.0));
      const V w = hn::IfThenElseZero(lanes, hn::LoadU(d, w_.data() + i));
      const V c = hn::IfThenElseZero(lanes, hn::LoadU(d, cos_.data() + i));
      const V sn = hn::IfThenElseZero(lanes, hn::LoadU(d, sin_.data() + i));
      const M above = hn::Gt(centre, vradius);  // every kept centre lies beyond one end
      const V delta = hn::IfThenElse(above, hn::Sub(centre, vradius), hn::Neg(centre));
      const M short_lanes = hn::And(lanes, hn::Lt(hn::Mul(vradius, delta), hn::Mul(forty, hn::Mul(s, s))));
      V m1, m2, m3;
      BeyondMoments<K>(d, lanes, above, short_lanes, delta, s, radius, m1, m2, m3);
      sums.Add(lanes, w, c, sn, m1, m2, m3);
    }
  }

 private:
  std::vector<double> centre_, s_, w_, cos_, sin_;
  std::size_t count_ = 0;
};

// Scratch of one thread: a, b and log max of every ray, and the rays beyond [0, R].
struct Scratch {
  std::vector<double> a, b, log_max;
  FarRays far;
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
  // Pass 2: the rays that are not negligible; those beyond [0, R] are kept for the end.
  const V scale = hn::Set(d, pair.scale), one = hn::Set(d, 1.0);
  [[maybe_unused]] const V outside = hn::Set(d, sparcon::detail::kEndMomentsFrom), hundred = hn::Set(d, 100.0);
  VectorSums sums(d);
  if constexpr (K > 0) scratch.far.Reset(d, padded);
  RaySums scalar;
  for (std::size_t i = 0; i < padded; i += lanes) {
    const M used = hn::Ge(hn::LoadU(d, log_max_of + i), cutoff);
    if (hn::AllFalse(d, used)) continue;
    const V a = hn::LoadU(d, a_of + i), b = hn::LoadU(d, b_of + i);
    const V c = hn::LoadU(d, pair.cos + i), sn = hn::LoadU(d, pair.sin + i);
    const V root_a = hn::Sqrt(a), s = hn::Div(one, root_a), centre = hn::Div(b, a);
    const V log_f = hn::Mul(minus_half, hn::Max(zero, hn::NegMulAdd(b, centre, kappa)));
    const V w = hn::Mul(hn::Mul(scale, s), hn::Exp(d, log_f));
    M rest = used;
    if constexpr (K > 0) {
      // profile_moments' own choice: R >= s, the centre within `outside` s of [0, R] (closed
      // form), or beyond that (the tail integrals, at the end), and for K = 2 R <= 100 s.
      const V margin = hn::Mul(outside, s);
      const M wide = hn::And(used, hn::Ge(vradius, s));
      const M below = hn::Lt(centre, hn::Neg(margin)), above = hn::Gt(centre, hn::Add(vradius, margin));
      M closed = hn::AndNot(hn::Or(below, above), wide);
      if constexpr (K == 2) closed = hn::And(closed, hn::Le(vradius, hn::Mul(hundred, s)));
      if (!hn::AllFalse(d, closed)) {
        V m1, m2, m3;
        ClosedMoments<K>(d, centre, s, root_a, radius, m1, m2, m3);
        sums.Add(closed, w, c, sn, m1, m2, m3);
      }
      const M beyond = hn::And(wide, hn::Or(below, above));
      if (!hn::AllFalse(d, beyond)) scratch.far.Keep(d, beyond, centre, s, w, c, sn);
      rest = hn::AndNot(hn::Or(closed, beyond), used);
    }
    if (!hn::AllFalse(d, rest)) ScalarLanes(d, rest, centre, s, w, c, sn, pair, scalar);
  }
  if constexpr (K > 0) scratch.far.AddTo<K>(d, radius, sums);
  RaySums out;
  auto total = [&](V v) { return hn::GetLane(hn::SumOfLanes(d, v)); };
  out.e0 = total(sums.e0) + scalar.e0;
  out.e1[0] = total(sums.e1c) + scalar.e1[0];
  out.e1[1] = total(sums.e1s) + scalar.e1[1];
  out.e2[0] = total(sums.e2cc) + scalar.e2[0];
  out.e2[1] = total(sums.e2cs) + scalar.e2[1];
  out.e2[2] = total(sums.e2ss) + scalar.e2[2];
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
