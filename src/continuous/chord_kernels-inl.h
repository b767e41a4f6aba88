// The chord kernel of the 2D expectation (declared in chord_kernels.h), written once with Google
// Highway; chord_kernels.cc includes this header once per target (hwy/foreach_target.h) and
// exports it. One call covers one (density, basis function) pair, a vector of chords at a time:
//
//   pass 1: every chord's y = R cos v, w = R sin v and the log of psi's largest value on it,
//           -(y - m2)^2 / (2 s_short^2) - (clamp(m1, -w, w) - m1)^2 / (2 s_long^2), and the
//           largest of those over the chords (best);
//   pass 2: the chords within e^-44 of best (as the rays of ray_kernels-inl.h: the others are
//           negligible), with weight W = scale w (w / R)^(2k) exp(-(y - m2)^2 / (2 s_short^2))
//           and the moments I_0..I_2 of the profile (1 - x^2 / w^2)^k on [-w, w] against
//           N(x; m1, s_long^2).
//
// The chord's inner integral is profile_moments(k, w, -w, w, m1, s_long) (profile_moments.h),
// evaluated on whole vectors. A chord whose both ends lie more than 10 s_long from m1 (most
// chords of a narrow psi) is the whole line's integral, a polynomial in m1, s_long and 1 / w^2
// (InteriorMoments), taken at once. The others take profile_moments' own three methods: for
// chords narrow for psi (2 w < s_long) its 16-point Gauss-Legendre rule, else the closed form for
// a centre within 4 s_long of [-w, w] (without the far end where that lies more than 10 s_long
// from m1: OneSidedMoments) and the tail integrals from the nearest end beyond that
// (profile_moments-inl.h); pass 2 keeps their chords aside, by method, and integrates them at the
// end, whole vectors of one method at a time (the narrow ones a chord at a time, the rule's nodes
// across the lanes: NarrowMoments). For k = 2, chords longer than 100 s_long (where
// the closed form would lose digits) are handed to profile_moments one lane at a time. The lane
// sums are added up at the end, in a fixed order: the result does not depend on the threads or
// on the other pairs of a call.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_CONTINUOUS_CHORD_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_CONTINUOUS_CHORD_KERNELS_INL_H_
#undef SPARCON_CONTINUOUS_CHORD_KERNELS_INL_H_
#else
#define SPARCON_CONTINUOUS_CHORD_KERNELS_INL_H_
#endif

#include <array>
#include <cstddef>
#include <limits>
#include <vector>

#include "compress_lanes-inl.h"
#include "continuous/chord_kernels.h"
#include "continuous/gauss_legendre.h"
#include "continuous/profile_moments-inl.h"
#include "continuous/profile_moments.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

// hn, D, V and M: profile_moments-inl.h's.

// Chords on which psi stays below e^-44 of its largest value on the disk are skipped.
constexpr double kNegligibleChord = 44;

// The six sums of the rule on vectors (lane by lane): W I_0, W (I_1, y I_0), W (I_2, y I_1, y^2 I_0).
struct ChordVectorSums {
  V e0, ex, ey, exx, exy, eyy;

  explicit ChordVectorSums(D d) : e0(hn::Zero(d)), ex(e0), ey(e0), exx(e0), exy(e0), eyy(e0) {}

  // Adds the lanes `which` of a vector of chords (weight w, height y, moments m).
  HWY_INLINE void Add(M which, V w, V y, const V (&m)[3]) {
    const V w0 = hn::IfThenElseZero(which, hn::Mul(w, m[0]));
    const V w1 = hn::IfThenElseZero(which, hn::Mul(w, m[1]));
    const V w2 = hn::IfThenElseZero(which, hn::Mul(w, m[2]));
    e0 = hn::Add(e0, w0);
    ex = hn::Add(ex, w1);
    ey = hn::MulAdd(w0, y, ey);
    exx = hn::Add(exx, w2);
    exy = hn::MulAdd(w1, y, exy);
    eyy = hn::MulAdd(hn::Mul(w0, y), y, eyy);
  }
};

// The 16-point Gauss-Legendre rule of profile_moments on [-1, 1] with the profile (1 - t^2)^K
// folded into its weights (at node t the profile (1 - x^2 / w^2)^K = (1 - t^2)^K does not depend
// on the chord), padded with zero weights to 64 entries so that any vector length reads whole
// vectors.
template <int K>
struct NarrowRule {
  alignas(64) double t[64] = {};
  alignas(64) double weight[64] = {};

  static const NarrowRule& get() {
    static const NarrowRule rule = [] {
      const auto& gauss = sparcon::detail::GaussLegendre<16>::get();
      NarrowRule r;
      for (int j = 0; j < 16; ++j) {
        const double base = 1 - gauss.x[j] * gauss.x[j];
        r.t[j] = gauss.x[j];
        r.weight[j] = gauss.w[j] * (K == 1 ? base : base * base);
      }
      return r;
    }();
    return rule;
  }
};

// I_0..I_2 of one chord narrow for psi (2 w < s_long): profile_moments' 16-point Gauss-Legendre
// rule on [-w, w] (exact to rounding for the profile's polynomial times a Gaussian that varies
// slowly across the chord), its nodes across the lanes. A chord at a time: the narrow chords of a
// pair are few (at both ends of the half circle), so vectors of them would be mostly empty, and
// the 16 exponentials of a chord fill two vectors of AVX-512 (four of AVX2).
template <int K>
HWY_INLINE std::array<double, 3> NarrowMoments(D d, double half_width, double m1, double inverse_long) {
  const NarrowRule<K>& rule = NarrowRule<K>::get();
  const V w = hn::Set(d, half_width), centre = hn::Set(d, m1), inverse = hn::Set(d, inverse_long);
  const V minus_half = hn::Set(d, -0.5);
  V s0 = hn::Zero(d), s1 = s0, s2 = s0;
  for (std::size_t j = 0; j < 16; j += hn::Lanes(d)) {
    const V x = hn::Mul(w, hn::Load(d, rule.t + j)), z = hn::Mul(hn::Sub(x, centre), inverse);
    const V f = hn::Mul(hn::Load(d, rule.weight + j), hn::Exp(d, hn::Mul(minus_half, hn::Mul(z, z))));
    s0 = hn::Add(s0, f);
    s1 = hn::MulAdd(f, x, s1);
    s2 = hn::MulAdd(hn::Mul(f, x), x, s2);
  }
  // dx = w dt, and N(x; m1, s_long^2) = exp(-z^2 / 2) / (s_long sqrt(2 pi))
  const double factor = half_width * inverse_long * 0.3989422804014327;
  auto total = [&](V v) { return hn::GetLane(hn::SumOfLanes(d, v)) * factor; };
  return {total(s0), total(s1), total(s2)};
}

// A chord whose both ends lie more than this many s_long from m1 is taken as the whole line.
constexpr double kInteriorFrom = 10;

// I_0..I_2 of chords whose both ends lie more than kInteriorFrom s_long from m1, lane by lane:
// the integrals over the whole line, the profile continued as the polynomial it is (what lies
// beyond the ends is below e^-50 of the whole). With x = m1 + s z, z standard normal,
// q = (w^2 - x^2) / w^2 = q0 + q1 z + q2 z^2 with q0 = (w - m1)(w + m1) / w^2 (no cancellation
// where m1 nears an end), q1 = -2 m1 s / w^2, q2 = -s^2 / w^2, and the moments of z
// (E z^2 = 1, E z^4 = 3, E z^6 = 15): T_j = E[q^K z^j], I_0 = T_0, I_1 = m1 T_0 + s T_1,
// I_2 = m1^2 T_0 + 2 m1 s T_1 + s^2 T_2. No exponential, no normal tail.
template <int K>
HWY_INLINE void InteriorMoments(D d, V half_width, V inverse_w2, V m1, V s, V (&out)[3]) {
  const V q0 = hn::Mul(hn::Mul(hn::Sub(half_width, m1), hn::Add(half_width, m1)), inverse_w2);
  const V q1 = hn::Mul(hn::Mul(hn::Set(d, -2.0), hn::Mul(m1, s)), inverse_w2);
  const V q2 = hn::Neg(hn::Mul(hn::Mul(s, s), inverse_w2));
  const V three = hn::Set(d, 3.0);
  V t0, t1, t2;
  if constexpr (K == 1) {
    t0 = hn::Add(q0, q2);
    t1 = q1;
    t2 = hn::MulAdd(three, q2, q0);
  } else {
    // q^2 = p0 + p1 z + p2 z^2 + p3 z^3 + p4 z^4
    const V p0 = hn::Mul(q0, q0), p1 = hn::Mul(hn::Add(q0, q0), q1);
    const V p2 = hn::MulAdd(q1, q1, hn::Mul(hn::Add(q0, q0), q2)), p3 = hn::Mul(hn::Add(q1, q1), q2);
    const V p4 = hn::Mul(q2, q2);
    t0 = hn::MulAdd(three, p4, hn::Add(p0, p2));
    t1 = hn::MulAdd(three, p3, p1);
    t2 = hn::MulAdd(hn::Set(d, 15.0), p4, hn::MulAdd(three, p2, p0));
  }
  const V st1 = hn::Mul(s, t1);
  out[0] = t0;
  out[1] = hn::MulAdd(m1, t0, st1);
  out[2] = hn::MulAdd(m1, hn::MulAdd(m1, t0, hn::Add(st1, st1)), hn::Mul(hn::Mul(s, s), t2));
}

// The lanes of a vector handed to profile_moments one at a time (chords whose inner integral the
// vector methods do not take, k = 2 and w > 100 s_long): their sums go to `sums` in lane order.
HWY_NOINLINE void ScalarChords(D d, M which, V half_width, V y, V weight, const ChordPair& pair, ChordSums& sums) {
  alignas(64) double w_of[64], y_of[64], weight_of[64], which_of[64];
  hn::Store(half_width, d, w_of);
  hn::Store(y, d, y_of);
  hn::Store(weight, d, weight_of);
  hn::Store(hn::IfThenElseZero(which, hn::Set(d, 1.0)), d, which_of);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l) {
    if (which_of[l] == 0) continue;
    const auto m = sparcon::detail::profile_moments(pair.k, w_of[l], -w_of[l], w_of[l], pair.m1, pair.s_long);
    sums.add(weight_of[l], y_of[l], {m[0], m[1], m[2]});
  }
}

// Scratch of one thread: the log of psi's largest value on every chord, and the chords of the
// costlier methods (their w, y and weight), kept aside during pass 2 and integrated whole
// vectors at a time at the end: the methods change along the half circle, so vectors mix them,
// and each costs as much for one lane as for four.
struct ChordScratch {
  std::vector<double> log_max;
  KeptLanes<D, 3> closed, one_sided, beyond, narrow;
};

template <int K>
ChordSums ChordSumsImpl(const ChordPair& pair) {
  static_assert(HWY_MAX_BYTES <= 64 * sizeof(double), "the tables are padded to 64 entries");
  const D d;
  const std::size_t lanes = hn::Lanes(d), n = pair.n, padded = (n + lanes - 1) / lanes * lanes;
  static thread_local ChordScratch scratch;
  if (scratch.log_max.size() < padded) scratch.log_max.resize(padded);
  double* const log_max_of = scratch.log_max.data();
  const V radius = hn::Set(d, pair.radius), m1 = hn::Set(d, pair.m1), m2 = hn::Set(d, pair.m2);
  const V s_long = hn::Set(d, pair.s_long), inverse_long = hn::Set(d, 1 / pair.s_long);
  const V inverse_short = hn::Set(d, 1 / pair.s_short), minus_half = hn::Set(d, -0.5);
  const V lowest = hn::Set(d, -std::numeric_limits<double>::infinity());
  // Pass 1: the log of psi's largest value on each chord.
  V best = lowest;
  for (std::size_t i = 0; i < padded; i += lanes) {
    const V y = hn::Mul(radius, hn::LoadU(d, pair.cos + i)), w = hn::Mul(radius, hn::LoadU(d, pair.sin + i));
    const V across = hn::Mul(hn::Sub(y, m2), inverse_short);
    const V along = hn::Mul(hn::Sub(hn::Min(hn::Max(m1, hn::Neg(w)), w), m1), inverse_long);
    const V log_max = hn::Mul(minus_half, hn::MulAdd(across, across, hn::Mul(along, along)));
    const V kept = hn::IfThenElse(hn::FirstN(d, n - i), log_max, lowest);
    hn::StoreU(kept, d, log_max_of + i);
    best = hn::Max(best, kept);
  }
  const V cutoff = hn::Sub(hn::MaxOfLanes(d, best), hn::Set(d, kNegligibleChord));
  // Pass 2: the chords that are not negligible, each to its inner integral's method: the whole
  // line when both ends are more than interior_from from m1 (at once: no exponential); else
  // profile_moments' own choice, Gauss-Legendre for a chord narrow for psi (2 w < s_long), and
  // for the others (with w <= 100 s_long at K = 2) the closed form for m1 within `outside` of
  // [-w, w], the tails beyond (all kept aside for the end); the rest one by one.
  const V scale = hn::Set(d, pair.scale), inverse_radius = hn::Set(d, 1 / pair.radius);
  const V outside = hn::Mul(hn::Set(d, sparcon::detail::kEndMomentsFrom), s_long);
  const V interior_from = hn::Mul(hn::Set(d, kInteriorFrom), s_long);
  const V longest = hn::Mul(hn::Set(d, 100.0), s_long);
  scratch.closed.Reset(d, padded);
  scratch.one_sided.Reset(d, padded);
  scratch.beyond.Reset(d, padded);
  scratch.narrow.Reset(d, padded);
  ChordVectorSums sums(d);
  ChordSums scalar;
  for (std::size_t i = 0; i < padded; i += lanes) {
    const M used = hn::Ge(hn::LoadU(d, log_max_of + i), cutoff);
    if (hn::AllFalse(d, used)) continue;
    const V y = hn::Mul(radius, hn::LoadU(d, pair.cos + i)), w = hn::Mul(radius, hn::LoadU(d, pair.sin + i));
    const V across = hn::Mul(hn::Sub(y, m2), inverse_short);
    const V ratio2 = hn::Mul(hn::Mul(w, inverse_radius), hn::Mul(w, inverse_radius));  // (w / R)^2
    const V profile = K == 1 ? ratio2 : hn::Mul(ratio2, ratio2);
    const V weight = hn::Mul(hn::Mul(scale, hn::Mul(w, profile)), hn::Exp(d, hn::Mul(minus_half, hn::Mul(across, across))));
    const M interior = hn::And(used, hn::Gt(hn::Sub(w, hn::Abs(m1)), interior_from));
    if (!hn::AllFalse(d, interior)) {
      V m[3];
      InteriorMoments<K>(d, w, hn::Div(hn::Set(d, 1.0), hn::Mul(w, w)), m1, s_long, m);
      sums.Add(interior, weight, y, m);
    }
    M wide = hn::AndNot(interior, hn::And(used, hn::Ge(hn::Add(w, w), s_long)));
    if constexpr (K == 2) wide = hn::And(wide, hn::Le(w, longest));
    const M far = hn::Gt(hn::Abs(m1), hn::Add(w, outside));  // m1 beyond the end nearest to it
    const M closed = hn::AndNot(far, wide), beyond = hn::And(wide, far);
    // The end away from m1 more than interior_from from it: the closed form without that end.
    const M one_sided = hn::And(closed, hn::Gt(hn::Add(w, hn::Abs(m1)), interior_from));
    const M narrow = hn::And(used, hn::Lt(hn::Add(w, w), s_long));
    const M two_sided = hn::AndNot(one_sided, closed);
    if (!hn::AllFalse(d, two_sided)) scratch.closed.Keep(d, two_sided, {w, y, weight});
    if (!hn::AllFalse(d, one_sided)) scratch.one_sided.Keep(d, one_sided, {w, y, weight});
    if (!hn::AllFalse(d, beyond)) scratch.beyond.Keep(d, beyond, {w, y, weight});
    if (!hn::AllFalse(d, narrow)) scratch.narrow.Keep(d, narrow, {w, y, weight});
    const M rest = hn::AndNot(hn::Or(hn::Or(interior, closed), hn::Or(beyond, narrow)), used);
    if (!hn::AllFalse(d, rest)) ScalarChords(d, rest, w, y, weight, pair, scalar);
  }
  // The kept chords; the lanes past the last one are a chord of half width s_long at y = 0, weight 0.
  const std::array<double, 3> fill = {pair.s_long, 0.0, 0.0};
  const V one = hn::Set(d, 1.0);
  scratch.closed.ForEach(d, fill, [&](M lanes, const std::array<V, 3>& chord) {
    const V w = chord[0];
    V m[3];
    ClosedMoments<K, 0>(d, hn::Neg(w), w, hn::Div(one, hn::Mul(w, w)), m1, s_long, inverse_long, m);
    sums.Add(lanes, chord[2], chord[1], m);
  });
  const M near_is_hi = hn::Gt(m1, hn::Zero(d));  // the end nearer to m1: +w for m1 > 0
  scratch.one_sided.ForEach(d, fill, [&](M lanes, const std::array<V, 3>& chord) {
    const V w = chord[0];
    V m[3];
    OneSidedMoments<K, 0>(d, near_is_hi, hn::Neg(w), w, hn::Div(one, hn::Mul(w, w)), m1, s_long, inverse_long, m);
    sums.Add(lanes, chord[2], chord[1], m);
  });
  // Every kept chord has m1 beyond the same end (its sign's), delta = |m1| - w from it.
  const M above = near_is_hi;
  const V forty_s2 = hn::Mul(hn::Set(d, 40.0), hn::Mul(s_long, s_long));
  scratch.beyond.ForEach(d, fill, [&](M lanes, const std::array<V, 3>& chord) {
    const V w = chord[0], delta = hn::Sub(hn::Abs(m1), w);
    const M short_lanes = hn::And(lanes, hn::Lt(hn::Mul(hn::Add(w, w), delta), forty_s2));
    V m[3];
    BeyondMoments<K, 0>(d, above, short_lanes, delta, s_long, hn::Neg(w), w, w, hn::Div(one, hn::Mul(w, w)), m);
    sums.Add(lanes, chord[2], chord[1], m);
  });
  scratch.narrow.ForEach(d, fill, [&](M lanes, const std::array<V, 3>& chord) {
    alignas(64) double w_of[64], y_of[64], weight_of[64];
    hn::Store(chord[0], d, w_of);
    hn::Store(chord[1], d, y_of);
    hn::Store(chord[2], d, weight_of);
    for (std::size_t l = 0; l < hn::CountTrue(d, lanes); ++l) {  // the lanes kept are the first
      const std::array<double, 3> m = NarrowMoments<K>(d, w_of[l], pair.m1, 1 / pair.s_long);
      scalar.add(weight_of[l], y_of[l], m);
    }
  });
  ChordSums out;
  auto total = [&](V v) { return hn::GetLane(hn::SumOfLanes(d, v)); };
  out.e0 = total(sums.e0) + scalar.e0;
  out.e1[0] = total(sums.ex) + scalar.e1[0];
  out.e1[1] = total(sums.ey) + scalar.e1[1];
  out.e2[0] = total(sums.exx) + scalar.e2[0];
  out.e2[1] = total(sums.exy) + scalar.e2[1];
  out.e2[2] = total(sums.eyy) + scalar.e2[2];
  return out;
}

ChordSums ChordSumsOf(const ChordPair& pair) {
  return pair.k == 2 ? ChordSumsImpl<2>(pair) : ChordSumsImpl<1>(pair);
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
