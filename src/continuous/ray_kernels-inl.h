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
// radial moments are evaluated on whole vectors by profile_moments' own two methods
// (profile_moments-inl.h): its closed form (the truncated-Gaussian moments J_m, expanded about
// the centre) for a centre within 4 s of [0, R], and the tail integrals of tail_integrals.h from
// the nearest end for a centre farther out (those rays are kept aside and taken whole vectors at
// a time at the end of pass 2). Every other ray not negligible (and every ray for other k) is
// handed to profile_moments one lane at a time, so each ray gets the method profile_moments would
// give it. The lane sums are added up at the end, in a fixed order: the result does not depend
// on the threads or on the other pairs of a call. expectation_2d takes this rule for the k other
// than 1 and 2; those take the chords of chord_kernels.h.

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
#include "continuous/profile_moments-inl.h"
#include "continuous/profile_moments.h"
#include "continuous/ray_kernels.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

// hn, D, V and M: profile_moments-inl.h's.

// Rays on which psi stays below e^-44 of its largest value on the disk are skipped.
constexpr double kNegligible = 44;

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
// from, and their tail integrals cost the same for one lane as for all of them.
class FarRays {
 public:
  void Reset(D d, std::size_t capacity) { kept_.Reset(d, capacity); }

  HWY_INLINE void Keep(D d, M which, V centre, V s, V w, V c, V sn) { kept_.Keep(d, which, {centre, s, w, c, sn}); }

  // Integrates the kept rays into sums.
  template <int K>
  void AddTo(D d, double radius, VectorSums& sums) const {
    const V vradius = hn::Set(d, radius), forty = hn::Set(d, 40.0), inverse_r2 = hn::Set(d, 1 / (radius * radius));
    // The lanes past the last ray: a ray of centre R + 1000 and width 1, weight 0.
    kept_.ForEach(d, {radius + 1000, 1.0, 0.0, 0.0, 0.0}, [&](M lanes, const std::array<V, 5>& ray) {
      const V centre = ray[0], s = ray[1];
      const M above = hn::Gt(centre, vradius);  // every kept centre lies beyond one end
      const V delta = hn::IfThenElse(above, hn::Sub(centre, vradius), hn::Neg(centre));
      const M short_lanes = hn::And(lanes, hn::Lt(hn::Mul(vradius, delta), hn::Mul(forty, hn::Mul(s, s))));
      V m[3];
      BeyondMoments<K, 1>(d, above, short_lanes, delta, s, hn::Zero(d), vradius, vradius, inverse_r2, m);
      sums.Add(lanes, ray[2], ray[3], ray[4], m[0], m[1], m[2]);
    });
  }

 private:
  KeptLanes<D, 5> kept_;  // centre, s, w, cos, sin
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
        V m[3];
        ClosedMoments<K, 1>(d, zero, vradius, hn::Set(d, 1 / (radius * radius)), centre, s, root_a, m);
        sums.Add(closed, w, c, sn, m[0], m[1], m[2]);
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
