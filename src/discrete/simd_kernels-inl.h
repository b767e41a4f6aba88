// The SIMD row kernels of the discrete core (declared in simd_kernels.h), written once with
// Google Highway. simd_kernels.cc includes this header once per target (hwy/foreach_target.h)
// and exports a table of them; HWY_DYNAMIC_DISPATCH picks the best target for the running CPU.
//
// Tails shorter than a vector are copied into a padded stack block and run through the same
// vector code, so no kernel reads or writes outside the row.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_DISCRETE_SIMD_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_DISCRETE_SIMD_KERNELS_INL_H_
#undef SPARCON_DISCRETE_SIMD_KERNELS_INL_H_
#else
#define SPARCON_DISCRETE_SIMD_KERNELS_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "compensated_sum.h"
#include "compress_lanes-inl.h"
#include "discrete/least_kept_entry.h"
#include "discrete/newton_threshold.h"
#include "discrete/simd_kernels.h"
#include "discrete/support_edge.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "pow-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

// The widest vector of any target, for padded tails.
constexpr std::size_t kMaxBytes = HWY_MAX_BYTES < 64 ? 64 : HWY_MAX_BYTES;

// The first `lanes` (<= N) entries of x as a vector, the other lanes `pad`. Where masked loads
// cannot fault (AVX-512) a masked load, which never reads outside x; elsewhere through a padded
// stack block (whose vector load waits for the scalar stores to retire: a store-forwarding
// stall of some 15 cycles, which matters for the short candidate lists of the solvers).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadTail(D d, const T* x, std::size_t lanes, T pad) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  const auto valid = hn::FirstN(d, lanes);
  return hn::IfThenElse(valid, hn::MaskedLoad(valid, d, x), hn::Set(d, pad));
#else
  alignas(kMaxBytes) T block[kMaxBytes / sizeof(T)];
  std::fill(block, block + hn::Lanes(d), pad);
  std::memcpy(block, x, lanes * sizeof(T));
  return hn::Load(d, block);
#endif
}

// Calls body(index, vector_of_x) for full vectors of x[0, n), then for the tail padded with
// `pad`; body(i, v, lanes) gets the number of valid lanes (N except for the tail).
template <class D, class T, class Body>
HWY_INLINE void ForEachVector(D d, const T* x, std::size_t n, T pad, Body&& body) {
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) body(i, hn::LoadU(d, x + i), N);
  if (i < n) body(i, LoadTail(d, x + i, n - i, pad), n - i);
}

// Stores the first `lanes` lanes of v at out.
template <class D, class V, class T>
HWY_INLINE void StorePartial(D d, V v, T* out, std::size_t lanes) {
  if (lanes == hn::Lanes(d)) {
    hn::StoreU(v, d, out);
  } else {
#if !HWY_MEM_OPS_MIGHT_FAULT
    hn::BlendedStore(v, hn::FirstN(d, lanes), d, out);  // writes only the first `lanes`
#else
    alignas(kMaxBytes) T block[kMaxBytes / sizeof(T)];
    hn::Store(v, d, block);
    std::memcpy(out, block, lanes * sizeof(T));
#endif
  }
}

// ---- candidate scan --------------------------------------------------------------------------

// Entries strictly above this are candidates (threshold.h).
using sparcon::detail::candidate_threshold;

// Appends the lanes of v where keep is true to out[count, ...) and returns the new count; a
// whole vector is stored (room for Lanes past count). Compress into a register and store the
// whole vector: a compressing store straight to memory is microcoded and slow on some CPUs
// (AMD Zen 4).
template <class D, class M>
HWY_INLINE std::size_t AppendKept(D d, hn::Vec<D> v, M keep, hn::TFromD<D>* out,
                                  std::size_t count) {
  hn::StoreU(CompressLanes(d, v, keep), d, out + count);
  return count + hn::CountTrue(d, keep);
}

template <class T>
void Scan(CandidateScan<T>& s) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);

  T running_max = s.running_max;
  V threshold = hn::Set(d, candidate_threshold(running_max, s.gap, s.floor));

  // The rare path: v has a lane above the threshold (or a NaN, which fails every `<=`).
  // Returns false when the row holds a NaN or +inf.
  auto take = [&](V v) HWY_ATTR -> bool {
    if (!hn::AllFalse(d, hn::IsNaN(v))) return false;
    // The running maximum moves only when a lane exceeds it, so the reduction is rare.
    if (!hn::AllFalse(d, hn::Gt(v, hn::Set(d, running_max)))) {
      const T vmax = hn::GetLane(hn::MaxOfLanes(d, v));
      if (vmax == kInf<T>) return false;
      running_max = vmax;
      threshold = hn::Set(d, candidate_threshold(running_max, s.gap, s.floor));
    }
    // The scan stops while fewer than N entries of the buffer are free.
    s.count = AppendKept(d, v, hn::Gt(v, threshold), s.buffer, s.count);
    return true;
  };
  auto above = [&](V v) HWY_ATTR { return hn::Not(hn::Le(v, threshold)); };

  std::size_t i = s.position;
  const std::size_t n = s.length;
  bool finite = true;
  // Four vectors per test: the common case (nothing above the threshold) is 4 loads,
  // 4 compares and one branch.
  for (; finite && i + 4 * N <= n && s.count + 4 * N <= s.capacity; i += 4 * N) {
    const V v0 = hn::LoadU(d, s.x + i), v1 = hn::LoadU(d, s.x + i + N);
    const V v2 = hn::LoadU(d, s.x + i + 2 * N), v3 = hn::LoadU(d, s.x + i + 3 * N);
    const auto any = hn::Or(hn::Or(above(v0), above(v1)), hn::Or(above(v2), above(v3)));
    if (HWY_LIKELY(hn::AllFalse(d, any))) continue;
    finite = take(v0) && take(v1) && take(v2) && take(v3);
  }
  for (; finite && i < n && s.count + N <= s.capacity; i += N) {
    alignas(kMaxBytes) T block[kMaxBytes / sizeof(T)];
    const T* src = s.x + i;
    if (i + N > n) {  // tail, padded with -inf which is never a candidate
      std::fill(block, block + N, -kInf<T>);
      std::memcpy(block, s.x + i, (n - i) * sizeof(T));
      src = block;
    }
    const V v = hn::LoadU(d, src);
    if (!hn::AllFalse(d, above(v))) finite = take(v);
  }
  s.position = std::min(i, n);
  s.running_max = running_max;
  s.not_finite = !finite;
}

// Branch-free: every vector is compressed and stored, so `out` needs n + Lanes entries.
template <class T>
std::size_t Collect(const T* x, std::size_t n, T threshold, T* out) {
  const hn::ScalableTag<T> d;
  const auto t = hn::Set(d, threshold);
  std::size_t count = 0;
  ForEachVector(d, x, n, -kInf<T>, [&](std::size_t, auto v, std::size_t) HWY_ATTR {
    count = AppendKept(d, v, hn::Gt(v, t), out, count);
  });
  return count;
}

// Collect with a skip: a block of four vectors with no entry above the threshold costs four
// comparisons and a branch, the others are compressed as Collect does (`out` needs n + Lanes
// entries). It pays even where the branch mispredicts often (sparsemax on N(0,1) rows: about
// three blocks in four of a row of 512 hold a candidate, one in three of a row of 4096, from the
// normal tail). Against Collect (floats, AVX-512, an AMD EPYC Zen 5, 2026-12-06; N(0, s^2)
// rows, s = 1/4, 1, 4): sparsemax rows of 512 1.02/1.09/1.15x faster, of 4096 1.04/1.26/1.31x;
// entmax-1.5 1.01/1.05/1.11x and 1.09/1.23/1.31x; alpha 1.25 and 1.75 on rows of 512
// 1.01-1.08x, on rows of 64-128 unchanged.
template <class T>
HWY_INLINE std::size_t CollectSkipping(const T* x, std::size_t n, T threshold, T* out) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  const V t = hn::Set(d, threshold);
  std::size_t count = 0, i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const V v[4] = {hn::LoadU(d, x + i), hn::LoadU(d, x + i + N), hn::LoadU(d, x + i + 2 * N),
                    hn::LoadU(d, x + i + 3 * N)};
    const hn::Mask<decltype(d)> keep[4] = {hn::Gt(v[0], t), hn::Gt(v[1], t), hn::Gt(v[2], t),
                                           hn::Gt(v[3], t)};
    if (HWY_LIKELY(hn::AllFalse(d, hn::Or(hn::Or(keep[0], keep[1]), hn::Or(keep[2], keep[3])))))
      continue;
    for (int j = 0; j < 4; ++j) count = AppendKept(d, v[j], keep[j], out, count);
  }
  return count + Collect(x + i, n - i, threshold, out + count);
}

// The maximum of x[0, n) (NaN if any entry is NaN); with lane_maxima (room for 2 N), also the
// maxima of its four accumulators taken pairwise: 2 N entries of x (or -inf), a sample of its
// largest. With second, also another entry's value (or -inf): the largest of the pair of
// accumulators that does not hold the maximum (see PairThreshold).
template <class T>
HWY_INLINE T MaxOf(const T* x, std::size_t n, T* lane_maxima, T* second = nullptr) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  // Four independent accumulators: one would make the pass latency-bound. A NaN is caught
  // by x != x, kept as the sum of those masks' lanes in a fifth accumulator.
  V m0 = hn::Set(d, -kInf<T>), m1 = m0, m2 = m0, m3 = m0;
  auto nan = hn::IsNaN(m0);
  std::size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const V v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + N);
    const V v2 = hn::LoadU(d, x + i + 2 * N), v3 = hn::LoadU(d, x + i + 3 * N);
    m0 = hn::Max(m0, v0);
    m1 = hn::Max(m1, v1);
    m2 = hn::Max(m2, v2);
    m3 = hn::Max(m3, v3);
    nan = hn::Or(nan, hn::Or(hn::Or(hn::IsNaN(v0), hn::IsNaN(v1)), hn::Or(hn::IsNaN(v2), hn::IsNaN(v3))));
  }
  ForEachVector(d, x + i, n - i, -kInf<T>, [&](std::size_t, V v, std::size_t) HWY_ATTR {
    m0 = hn::Max(m0, v);
    nan = hn::Or(nan, hn::IsNaN(v));
  });
  if (!hn::AllFalse(d, nan)) return std::numeric_limits<T>::quiet_NaN();
  const V m01 = hn::Max(m0, m1), m23 = hn::Max(m2, m3);
  if (lane_maxima) {
    hn::StoreU(m01, d, lane_maxima);
    hn::StoreU(m23, d, lane_maxima + N);
  }
  if (second) {  // two reductions side by side: no longer a chain than one
    const T first = hn::GetLane(hn::MaxOfLanes(d, m01)), last = hn::GetLane(hn::MaxOfLanes(d, m23));
    *second = std::min(first, last);
    return std::max(first, last);
  }
  return hn::GetLane(hn::MaxOfLanes(d, hn::Max(m01, m23)));
}

template <class T>
T Max(const T* x, std::size_t n) {
  return MaxOf(x, n, static_cast<T*>(nullptr));
}

// A row of n <= kVectors Lanes entries read once into kVectors registers (-inf past its end),
// for its maximum and then its collection from the registers, without a second read. Every
// vector is loaded, compared and stored whatever n is: a branch per vector on n cost as much as
// the second read saves (measured).
template <std::size_t kVectors, class T>
struct RowInRegisters {
  using D = hn::ScalableTag<T>;
  using V = hn::Vec<D>;
  V v[kVectors];

  // Loads x[0, n) and returns its maximum in every lane (NaN if any entry is NaN); *second
  // receives another entry's value (or -inf) in every lane: the largest of the half of the
  // vectors that does not hold the maximum (see PairThreshold). The halves' two reductions run
  // side by side, and the results stay in vectors for the collection's threshold.
  HWY_INLINE V Load(const T* x, std::size_t n, V* second) {
    static_assert(kVectors % 2 == 0);
    const D d;
    const std::size_t N = hn::Lanes(d);
    auto nan = hn::IsNaN(hn::Zero(d));
    V m[2] = {hn::Set(d, -kInf<T>), hn::Set(d, -kInf<T>)};
    for (std::size_t j = 0; j < kVectors; ++j) {
      const std::size_t i = j * N;
      v[j] = i + N <= n ? hn::LoadU(d, x + i)
             : i < n    ? LoadTail(d, x + i, n - i, -kInf<T>)
                        : hn::Set(d, -kInf<T>);
      m[2 * j / kVectors] = hn::Max(m[2 * j / kVectors], v[j]);
      nan = hn::Or(nan, hn::IsNaN(v[j]));
    }
    const V first = hn::MaxOfLanes(d, m[0]), last = hn::MaxOfLanes(d, m[1]);
    *second = hn::Min(first, last);
    if (!hn::AllFalse(d, nan)) return hn::Set(d, std::numeric_limits<T>::quiet_NaN());
    return hn::Max(first, last);
  }
  // MaxOf's 2 N lane maxima into lane_maxima: vector j taken by accumulator j mod 4.
  HWY_INLINE void StoreLaneMaxima(T* lane_maxima) const {
    static_assert(kVectors % 4 == 0);
    const D d;
    V m[4] = {v[0], v[1], v[2], v[3]};
    for (std::size_t j = 4; j < kVectors; ++j) m[j % 4] = hn::Max(m[j % 4], v[j]);
    hn::Store(hn::Max(m[0], m[1]), d, lane_maxima);
    hn::Store(hn::Max(m[2], m[3]), d, lane_maxima + hn::Lanes(d));
  }
  // The entries above threshold into out (room for n + Lanes), in order; returns their number.
  HWY_INLINE std::size_t Compress(T threshold, T* out) const {
    return Compress(hn::Set(D(), threshold), out);
  }
  HWY_INLINE std::size_t Compress(V t, T* out) const {
    const D d;
    std::size_t count = 0;
    for (std::size_t j = 0; j < kVectors; ++j)
      count = AppendKept(d, v[j], hn::Gt(v[j], t), out, count);
    return count;
  }
};

template <class T>
void ShiftedToDouble(const T* x, std::size_t n, T shift, double* y) {
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  const auto s = hn::Set(d, static_cast<double>(shift));
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    if constexpr (std::is_same_v<T, float>) {
      hn::StoreU(hn::Sub(hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, decltype(d)>(), x + i)), s), d, y + i);
    } else {
      hn::StoreU(hn::Sub(hn::LoadU(d, x + i), s), d, y + i);
    }
  }
  for (; i < n; ++i) y[i] = static_cast<double>(x[i]) - static_cast<double>(shift);
}

// ---- write pass ------------------------------------------------------------------------------

// A vector of T with as many lanes as d's (a column of a tiny block, or half a vector of floats)
// in d's type: promoted to double, or as it is where T is already that type.
template <class D, class V>
HWY_INLINE hn::Vec<D> PromoteColumn(D d, V v) {
  if constexpr (std::is_same_v<hn::TFromV<V>, hn::TFromD<D>>) {
    return v;
  } else {
    return hn::PromoteTo(d, v);
  }
}

// p = [a (x - shift) + c]_+, or its square: Write's kinds linear and square, inlined into the
// short-row kernels.
template <class T>
HWY_INLINE void WriteOffsetPower(const T* x, T* p, std::size_t n, T shift, T a, T c, bool square) {
  const hn::ScalableTag<T> d;
  const auto shift_vector = hn::Set(d, shift), a_vector = hn::Set(d, a), c_vector = hn::Set(d, c);
  const auto zero = hn::Zero(d);
  ForEachVector(d, x, n, T(0), [&](std::size_t i, auto v, std::size_t lanes) HWY_ATTR {
    auto u = hn::Max(hn::MulAdd(a_vector, hn::Sub(v, shift_vector), c_vector), zero);
    if (square) u = hn::Mul(u, u);
    StorePartial(d, u, p + i, lanes);
  });
}

// WriteKind::integer_power: u = a (x - shift) + c in double (x - shift exact there, c to
// double's rounding rather than T's), p = [u]_+^k by two or three products, rounded to T once.
// A power through exp(k log1p(.)) in T costs some 40 operations a vector and rounds twice.
template <class T>
HWY_INLINE void WriteIntegerPower(const T* x, T* p, std::size_t n, const WriteParams<T>& w) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<T, decltype(d)> dt;
  const auto shift = hn::Set(d, static_cast<double>(w.shift)), a = hn::Set(d, w.exact_a);
  const auto c = hn::Set(d, w.exact_offset), zero = hn::Zero(d);
  const bool fourth = w.exact_k == 4;
  ForEachVector(dt, x, n, T(0), [&](std::size_t i, auto v, std::size_t lanes) HWY_ATTR {
    // A masked entry (-inf) gives u = -inf, clamped to 0.
    const auto u = hn::Max(hn::MulAdd(a, hn::Sub(PromoteColumn(d, v), shift), c), zero);
    const auto square = hn::Mul(u, u);
    const auto power = fourth ? hn::Mul(square, square) : hn::Mul(square, u);
    if constexpr (std::is_same_v<T, float>) {
      StorePartial(dt, hn::DemoteTo(dt, power), p + i, lanes);
    } else {
      StorePartial(dt, power, p + i, lanes);
    }
  });
}

// WriteKind::power over `rows` rows of n (row r at x + r n, out at p + r n, which may be x):
// u = a (x - shifts[r]) + offsets[r] and p = u^k scale where u > 0, all in double (Pow,
// pow-inl.h), rounded to T once: float rows within half an ulp of the exact p for every alpha.
// (Before: exp(k log1p(a (y - lambda))) in T, 20-60 float ulps in the bulk of a row near
// alpha = 1 and 140-350 at alpha = 1.75-1.9; entries near the support's edge had no correct
// digit. Pow in float with the residuals of u and k still left 12-60 ulps near alpha = 1.)
// Up to kBlock entries at a time (whole rows, or a long row's parts): the positions of the
// entries that may be inside (x above its row's bound, checked in T) are packed, the powers
// taken over whole vectors of those entries only (gathered with their row's shift and offset),
// then the block zeroed and the powers stored to their positions. A sparse row's support is a
// few entries spread over many vectors (entmax-1.75 on N(0, 1) rows of 512: 6.5 entries in 5.9
// of 32 vectors of 16 floats; 3.5 on rows of 16), so the powers of every lane of the
// vectors it touches cost some ten times the powers needed, and short rows one at a time
// waited on a power's latency each.
template <class T>
HWY_INLINE void WriteGeneralPowers(const T* x, T* p, std::size_t n, std::size_t rows, const double* shifts,
                                   const double* offsets, double a, double k, double scale) {
  const hn::ScalableTag<T> dv;
  const hn::RebindToSigned<decltype(dv)> dvi;  // positions and rows in T's width
  using I = hn::TFromD<decltype(dvi)>;
  const hn::ScalableTag<double> d;
  const hn::Rebind<T, decltype(d)> dt;
  const hn::Rebind<I, decltype(d)> di;
  const hn::Rebind<std::int64_t, decltype(d)> di64;
  const std::size_t N = hn::Lanes(d), N_T = hn::Lanes(dv);
  constexpr std::size_t kBranchFreeRow = 1024;
  const auto av = hn::Set(d, a), kv = hn::Set(d, k), scale_v = hn::Set(d, scale);
  const auto zero = hn::Zero(d), infinity = hn::Set(d, kInf<double>);
  constexpr std::size_t kBlock = 1024, kSlack = kMaxBytes / sizeof(T);  // a whole vector past the end
  alignas(kMaxBytes) I positions[kBlock + kSlack], row_of[kBlock + kSlack];
  alignas(kMaxBytes) T powers[kBlock + kSlack];
  const auto lane = hn::Iota(dvi, 0);  // Highway 1.0.3 builds Iota through memory: once, not per vector
  std::size_t chunk = 0, count = 0;    // where the block starts (an entry of x), entries packed
  // The powers of the packed entries, then the block [chunk, end) zeroed and the powers stored.
  auto flush = [&](std::size_t end) HWY_ATTR {
    const T* block = x + chunk;
    for (std::size_t j = 0; j < count; j += N) {
      const std::size_t part = std::min(N, count - j);
      const auto where = LoadTail(di, positions + j, part, I(0));
      const auto row = LoadTail(di, row_of + j, part, I(0));
      hn::Vec<decltype(d)> value;
      hn::Vec<decltype(di64)> row64;
      if constexpr (std::is_same_v<T, float>) {
        value = hn::PromoteTo(d, hn::GatherIndex(dt, block, where));
        row64 = hn::PromoteTo(di64, row);
      } else {
        value = hn::GatherIndex(d, block, where);
        row64 = row;
      }
      // Outside: below the support, or a masked entry (-inf; +inf in u when a < 0).
      const auto u = hn::MulAdd(av, hn::Sub(value, hn::GatherIndex(d, shifts, row64)), hn::GatherIndex(d, offsets, row64));
      const auto inside = hn::And(hn::Gt(u, zero), hn::Lt(u, infinity));
      const auto power = hn::IfThenElseZero(inside, hn::Mul(Pow(d, hn::IfThenElse(inside, u, hn::Set(d, 1.0)), kv), scale_v));
      if constexpr (std::is_same_v<T, float>) {
        hn::Store(hn::DemoteTo(dt, power), dt, powers + j);
      } else {
        hn::Store(power, dt, powers + j);
      }
    }
    T* out = p + chunk;
    std::fill(out, p + end, T(0));
    for (std::size_t j = 0; j < count; ++j) out[positions[j]] = powers[j];
    chunk = end;
    count = 0;
  };
  for (std::size_t r = 0; r < rows; ++r) {
    // u > 0 needs x > shift - offset / a (a > 0), checked in T against a bound rounded down past
    // the rounding of its double form; with a < 0 every finite entry may be inside.
    const double edge = shifts[r] - offsets[r] / a;
    const T bound = a > 0 ? sparcon::detail::round_down<T>(
                                edge - 4 * std::numeric_limits<double>::epsilon() * (std::abs(shifts[r]) + std::abs(edge)))
                          : -kInf<T>;
    const auto below_all = hn::Set(dv, bound);
    const auto row = hn::Set(dvi, static_cast<I>(r));
    for (std::size_t begin = 0; begin < n; begin += kBlock) {
      const std::size_t length = std::min(kBlock, n - begin), from = r * n + begin;
      if (from + length - chunk > kBlock) flush(from);
      const T* block = x + from;
      auto pack = [&](std::size_t i, auto maybe) HWY_ATTR {
        const auto position = hn::Add(lane, hn::Set(dvi, static_cast<I>(from - chunk + i)));
        hn::StoreU(CompressLanes(dvi, position, hn::RebindMask(dvi, maybe)), dvi, positions + count);
        hn::StoreU(row, dvi, row_of + count);
        count += hn::CountTrue(dv, maybe);
      };
      std::size_t i = 0;
      // Rows of up to kBranchFreeRow pack every vector without a branch: which vectors hold
      // entries inside is as good as random there (entmax-1.75, rows of 512: 5.9 of 32), and a
      // mispredicted branch costs more than a compress. Longer rows are sparser in vectors:
      // four vectors with nothing inside are passed over on one test.
      if (n > kBranchFreeRow) {
        for (; i + 4 * N_T <= length; i += 4 * N_T) {
          const auto m0 = hn::Gt(hn::LoadU(dv, block + i), below_all);
          const auto m1 = hn::Gt(hn::LoadU(dv, block + i + N_T), below_all);
          const auto m2 = hn::Gt(hn::LoadU(dv, block + i + 2 * N_T), below_all);
          const auto m3 = hn::Gt(hn::LoadU(dv, block + i + 3 * N_T), below_all);
          if (HWY_LIKELY(hn::AllFalse(dv, hn::Or(hn::Or(m0, m1), hn::Or(m2, m3))))) continue;
          pack(i, m0);
          pack(i + N_T, m1);
          pack(i + 2 * N_T, m2);
          pack(i + 3 * N_T, m3);
        }
      }
      ForEachVector(dv, block + i, length - i, T(0), [&](std::size_t j, auto v, std::size_t lanes) HWY_ATTR {
        pack(i + j, hn::And(hn::Gt(v, below_all), hn::FirstN(dv, lanes)));
      });
    }
  }
  flush(rows * n);
}

template <class T>
void Write(const T* x, T* p, std::size_t n, const WriteParams<T>& w) {
  const hn::ScalableTag<T> d;
  const auto shift = hn::Set(d, w.shift), a = hn::Set(d, w.a), c = hn::Set(d, w.c);
  const auto lambda = hn::Set(d, w.lambda), k = hn::Set(d, w.k);
  const auto zero = hn::Zero(d), one = hn::Set(d, T(1)), infinity = hn::Set(d, kInf<T>);
  const auto minus_one = hn::Set(d, T(-1));

  auto run = [&](auto f) HWY_ATTR {
    ForEachVector(d, x, n, T(0), [&](std::size_t i, auto v, std::size_t lanes) HWY_ATTR {
      StorePartial(d, f(hn::Sub(v, shift)), p + i, lanes);
    });
  };
  switch (w.kind) {
    case WriteKind::linear:
    case WriteKind::square:
      return WriteOffsetPower(x, p, n, w.shift, w.a, w.c, w.kind == WriteKind::square);
    case WriteKind::power: {
      const double shift = static_cast<double>(w.shift);
      return WriteGeneralPowers(x, p, n, 1, &shift, &w.exact_offset, w.exact_a, w.exact_k, w.scale);
    }
    case WriteKind::power_near_one:
      run([&](auto y) HWY_ATTR {
        const auto t = hn::Mul(a, hn::Sub(y, lambda));
        // Outside: below the support, or a masked entry (-inf; +inf in t when a < 0).
        const auto inside = hn::And(hn::Gt(t, minus_one), hn::Lt(t, infinity));
        if (hn::AllFalse(d, inside)) return zero;  // most vectors of a sparse row
        const auto e = hn::Exp(d, hn::Mul(k, hn::Log1p(d, hn::IfThenElseZero(inside, t))));
        return hn::IfThenElseZero(inside, e);
      });
      break;
    case WriteKind::offset_power:
      if constexpr (std::is_same_v<T, float>) {
        // p = u^k with k < 1 is ill-conditioned where u is tiny, and c rounded to float would
        // move such entries by far more than 1e-6: float rows take the general power's write,
        // in double from the exact offset.
        const double shift = static_cast<double>(w.shift);
        return WriteGeneralPowers(x, p, n, 1, &shift, &w.exact_offset, w.exact_a, w.exact_k, 1.0);
      } else {
        run([&](auto y) HWY_ATTR {
          const auto u = hn::MulAdd(a, y, c);
          const auto inside = hn::And(hn::Gt(u, zero), hn::Lt(u, infinity));
          if (hn::AllFalse(d, inside)) return zero;
          const auto safe = hn::IfThenElse(inside, u, one);
          return hn::IfThenElseZero(inside, Pow(d, safe, k));
        });
      }
      break;
    case WriteKind::integer_power:
      return WriteIntegerPower(x, p, n, w);
    case WriteKind::exponential:
      run([&](auto y) HWY_ATTR { return hn::Exp(d, hn::Sub(y, lambda)); });
      break;
    case WriteKind::clip:
      run([&](auto y) HWY_ATTR { return hn::Min(hn::Max(hn::Sub(y, lambda), zero), one); });
      break;
  }
}

// Sums in vector registers of the working type, flushed into double every kBlock entries so
// that long float rows keep double accuracy.
constexpr std::size_t kBlock = 1024;

template <class T>
double Sum(const T* p, std::size_t n) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  double total = 0;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t length = std::min(kBlock, n - begin);
    V acc[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};  // independent chains
    std::size_t i = 0;
    for (; i + 4 * N <= length; i += 4 * N)
      for (std::size_t j = 0; j < 4; ++j) acc[j] = hn::Add(acc[j], hn::LoadU(d, p + begin + i + j * N));
    ForEachVector(d, p + begin + i, length - i, T(0),
                  [&](std::size_t, V v, std::size_t) HWY_ATTR { acc[0] = hn::Add(acc[0], v); });
    const V all = hn::Add(hn::Add(acc[0], acc[1]), hn::Add(acc[2], acc[3]));
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, all)));
  }
  return total;
}

template <class T>
void Scale(T* p, std::size_t n, T factor) {
  const hn::ScalableTag<T> d;
  const auto f = hn::Set(d, factor);
  ForEachVector(d, p, n, T(0), [&](std::size_t i, auto v, std::size_t lanes) HWY_ATTR {
    StorePartial(d, hn::Mul(v, f), p + i, lanes);
  });
}

// Softmax of `rows` rows of n <= kMaxSoftmaxRow entries in one call (Kernels::softmax_rows): per
// row the maximum (MaxOf), p = exp(x - max) written with its sum taken on the way (in float
// vectors, as Sum takes a block of kBlock entries; the tail padded with -inf, whose exponential
// is 0), then p times 1 / sum (in double, rounded once), and tau = max + log(sum): softmax_row's
// passes (forward.cc) without a call per pass, which on rows of a few vectors cost more than the
// arithmetic. Stops at the first row whose maximum is not finite (NaN, +inf, or every entry
// -inf) and returns its index (rows when every row is done).
template <class T>
std::size_t SoftmaxRows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n) {
  static_assert(kMaxSoftmaxRow <= kBlock, "a row's sum is one block");
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = x + r * n;
    T* out = p + r * n;
    const T max = MaxOf(row, n, static_cast<T*>(nullptr));
    if (!std::isfinite(max)) return r;
    const V shift = hn::Set(d, max);
    V sum = hn::Zero(d);
    ForEachVector(d, row, n, -kInf<T>, [&](std::size_t i, V v, std::size_t lanes) HWY_ATTR {
      const V e = hn::Exp(d, hn::Sub(v, shift));
      sum = hn::Add(sum, e);
      StorePartial(d, e, out + i, lanes);
    });
    const double total = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sum)));
    const V factor = hn::Set(d, static_cast<T>(1 / total));
    ForEachVector(d, out, n, T(0), [&](std::size_t i, V v, std::size_t lanes) HWY_ATTR {
      StorePartial(d, hn::Mul(v, factor), out + i, lanes);
    });
    if (tau) tau[r] = static_cast<T>(static_cast<double>(max) + std::log(total));
  }
  return rows;
}

// ---- backward --------------------------------------------------------------------------------

// Like ForEachVector over two arrays of the same length.
template <class D, class T, class Body>
HWY_INLINE void ForEachVectorPair(D d, const T* p, const T* g, std::size_t n, Body&& body) {
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) body(i, hn::LoadU(d, p + i), hn::LoadU(d, g + i), N);
  if (i < n) body(i, LoadTail(d, p + i, n - i, T(0)), LoadTail(d, g + i, n - i, T(0)), n - i);
}

// Weights of 0 or 1 (sparsemax's support, the budget's interior): sum s is a count of lanes.
template <WeightKind K>
constexpr bool kCountedWeight = K == WeightKind::support || K == WeightKind::interior;

// Weights that cost a power, a root or a division per entry: the backward keeps them from its
// sums for the centring rather than computing them twice.
template <WeightKind K>
constexpr bool kCostlyWeight = K == WeightKind::sqrt || K == WeightKind::quarter ||
                               K == WeightKind::reciprocal || K == WeightKind::power;

// Weights that grow without bound as p -> 0 (alpha > 2; power also takes alpha < 2, whose weights
// are at most 1): the backward tracks their largest and centres a row that one of them dominates
// from that entry's g (dominated_row, Centring).
template <WeightKind K>
constexpr bool kUnboundedWeight = K == WeightKind::reciprocal || K == WeightKind::power;

// Where s(p) = 1 for weights of 0 or 1: p > 0 (support), 0 < p < 1 (interior).
template <WeightKind K, class D, class V>
HWY_INLINE auto WeightMask(D d, V p) {
  static_assert(kCountedWeight<K>);
  using T = hn::TFromD<D>;
  if constexpr (K == WeightKind::support) {
    return hn::Gt(p, hn::Zero(d));
  } else {
    return hn::And(hn::Gt(p, hn::Zero(d)), hn::Lt(p, hn::Set(d, T(1))));
  }
}

// s(p) for one vector; the kind is a template parameter so that the loops carry no switch.
template <WeightKind K, class D, class V>
HWY_INLINE V Weight(D d, V p, V e) {
  using T = hn::TFromD<D>;
  const auto zero = hn::Zero(d), one = hn::Set(d, T(1));
  if constexpr (kCountedWeight<K>) {
    return hn::IfThenElseZero(WeightMask<K>(d, p), one);
  } else if constexpr (K == WeightKind::identity) {
    return p;
  } else if constexpr (K == WeightKind::sqrt) {
    return hn::Sqrt(p);
  } else if constexpr (K == WeightKind::quarter) {
    // p^(1/4) = sqrt(sqrt(p)) and p^(3/4) = sqrt(sqrt(p)) sqrt(p), within 1.5 and 3.5 ulps
    // from the roots' and the product's roundings (measured at most 2.1; Pow: 2.5 ulps) at a
    // third of Pow's cost (the backward of entmax-1.25 and 1.75 2-3x faster).
    const V h = hn::Sqrt(p);
    const V s = hn::Mul(hn::Sqrt(h), hn::IfThenElse(hn::Gt(e, hn::Set(d, T(0.5))), h, one));
    return hn::IfThenElseZero(hn::Gt(p, zero), s);  // 0 for p <= 0 and NaN, as a power's
  } else if constexpr (K == WeightKind::reciprocal) {
    return hn::IfThenElseZero(hn::Gt(p, zero), hn::Div(one, p));  // correctly rounded
  } else {
    const auto positive = hn::Gt(p, zero);
    if (hn::AllFalse(d, positive)) return zero;
    const auto safe = hn::IfThenElse(positive, p, one);
    return hn::IfThenElseZero(positive, Pow(d, safe, e));
  }
}

// Whether s(0) = 0 (every kind but identity, where s = p: also 0, but dense rows gain nothing):
// the backward passes skip a vector whose p (or s) is all zero without reading g (one cache line
// of g saved), and mask g where s = 0 in the others, so that an entry outside the support takes
// no part in the gradient whatever g holds there (0, not 0 * inf) and gets dx = +0, as in a
// skipped vector. (Rows longer than 256 entries keep the skip for entmax-1.5's square roots too:
// see CenteredRows.)
template <WeightKind K>
constexpr bool kZeroAtZero = K != WeightKind::identity;

template <WeightKind K, class D, class V>
HWY_INLINE V MaskedGradient(D d, V s, V g) {
  if constexpr (kZeroAtZero<K>) {
    return hn::IfThenZeroElse(hn::Eq(s, hn::Zero(d)), g);
  } else {
    return g;
  }
}

// dx = s (g - q) for one vector of weights s, 0 where s = 0 (see MaskedGradient).
template <WeightKind K, class D, class V>
HWY_INLINE V CenteredGradient(D d, V s, V g, V q) {
  return MaskedGradient<K>(d, s, hn::Mul(s, hn::Sub(g, q)));
}

// dx = s ((g - reference) - q) (Centring) for one vector; the reference is only taken by the
// kinds of kUnboundedWeight (elsewhere 0: g - 0 is g, the subtraction left out).
template <WeightKind K, class D, class V>
HWY_INLINE V CenteredGradient(D d, V s, V g, V reference, V q) {
  if constexpr (kUnboundedWeight<K>) g = hn::Sub(g, reference);
  return CenteredGradient<K>(d, s, g, q);
}

// CenterVectors with the reference subtracted (kFrom) or not.
template <WeightKind K, bool Skip, bool Count, bool kFrom, class D, class T = hn::TFromD<D>,
          class WeightOf>
HWY_INLINE std::size_t CenterVectorsFrom(D d, const T* source, const T* g, T* dx, std::size_t n,
                                         const Centring<T>& c, WeightOf&& weight) {
  using V = hn::Vec<D>;
  const std::size_t N = hn::Lanes(d);
  const V qv = hn::Set(d, c.q), reference = hn::Set(d, c.reference);
  auto center = [&](std::size_t i, V v, V gv, std::size_t lanes) HWY_ATTR {
    const V sv = weight(v);
    StorePartial(
        d,
        kFrom ? CenteredGradient<K>(d, sv, gv, reference, qv) : CenteredGradient<K>(d, sv, gv, qv),
        dx + i, lanes);
  };
  std::size_t i = 0, zero_vectors = 0;
  for (; i + N <= n; i += N) {
    const V v = hn::LoadU(d, source + i);
    if constexpr (Skip) {
      if (hn::AllTrue(d, hn::Eq(v, hn::Zero(d)))) {
        ++zero_vectors;
        hn::StoreU(hn::Zero(d), d, dx + i);  // s = 0: dx = 0 without reading g
        continue;
      }
    } else if constexpr (Count) {
      zero_vectors += hn::AllTrue(d, hn::Eq(v, hn::Zero(d)));
    }
    center(i, v, hn::LoadU(d, g + i), N);
  }
  ForEachVectorPair(d, source + i, g + i, n - i,
                    [&](std::size_t t, V v, V gv, std::size_t lanes)
                        HWY_ATTR { center(i + t, v, gv, lanes); });
  return zero_vectors;
}

// Calls f(std::integral_constant<WeightKind, K>) for the runtime kind.
template <class F>
HWY_INLINE auto WithWeightKind(WeightKind kind, F&& f) {
  switch (kind) {
    case WeightKind::support: return f(std::integral_constant<WeightKind, WeightKind::support>());
    case WeightKind::interior: return f(std::integral_constant<WeightKind, WeightKind::interior>());
    case WeightKind::identity: return f(std::integral_constant<WeightKind, WeightKind::identity>());
    case WeightKind::sqrt: return f(std::integral_constant<WeightKind, WeightKind::sqrt>());
    case WeightKind::quarter: return f(std::integral_constant<WeightKind, WeightKind::quarter>());
    case WeightKind::reciprocal:
      return f(std::integral_constant<WeightKind, WeightKind::reciprocal>());
    case WeightKind::power: break;
  }
  return f(std::integral_constant<WeightKind, WeightKind::power>());
}

// The sums of one row for weights of kind K: sum s g and sum s, in vector registers of T within
// blocks of kBlock entries, flushed into double, and for kUnboundedWeight the largest s; s_out,
// if not null, receives s.
template <WeightKind K, bool Skip = kZeroAtZero<K>, class D, class T = hn::TFromD<D>>
HWY_INLINE WeightedSums RowSums(D d, const T* p, const T* g, std::size_t n, hn::Vec<D> e, T* s_out) {
  using V = hn::Vec<D>;
  const std::size_t N = hn::Lanes(d);
  // Weights of 0 or 1: sum s is a count of lanes, exact, with no vector reduction to wait for.
  constexpr bool kCounted = kCountedWeight<K>;
  WeightedSums out;
  V largest = hn::Zero(d);
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t length = std::min(kBlock, n - begin);
    // Four accumulator pairs: one would make the pass latency-bound (FMA after FMA).
    V sg[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    V s[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    std::size_t ones = 0;
    auto add = [&](std::size_t j, std::size_t i, V pv, V gv, std::size_t lanes) HWY_ATTR {
      const V sv = Weight<K>(d, pv, e);
      if (s_out) StorePartial(d, sv, s_out + begin + i, lanes);
      if constexpr (kUnboundedWeight<K>) largest = hn::Max(largest, sv);
      sg[j] = hn::MulAdd(sv, MaskedGradient<K>(d, sv, gv), sg[j]);
      if constexpr (kCounted) {
        ones += hn::CountTrue(d, hn::Ne(sv, hn::Zero(d)));
      } else {
        s[j] = hn::Add(s[j], sv);
      }
    };
    std::size_t i = 0;
    for (; i + 4 * N <= length; i += 4 * N) {
      for (std::size_t j = 0; j < 4; ++j) {
        const T* at = p + begin + i + j * N;
        const V pv = hn::LoadU(d, at);
        // Where s(p) = 0 for p = 0 and the whole vector is 0 (most of a sparse row), g is
        // not read at all: a vector is one cache line of g saved.
        if (Skip && hn::AllTrue(d, hn::Eq(pv, hn::Zero(d)))) {
          if (s_out) hn::StoreU(hn::Zero(d), d, s_out + begin + i + j * N);
          continue;
        }
        add(j, i + j * N, pv, hn::LoadU(d, g + begin + i + j * N), N);
      }
    }
    ForEachVectorPair(d, p + begin + i, g + begin + i, length - i,
                      [&](std::size_t t, V pv, V gv, std::size_t lanes) HWY_ATTR {
                        add(0, i + t, pv, gv, lanes);
                      });
    const V sg_all = hn::Add(hn::Add(sg[0], sg[1]), hn::Add(sg[2], sg[3]));
    out.sg += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sg_all)));
    if constexpr (kCounted) {
      out.s += static_cast<double>(ones);
    } else {
      const V s_all = hn::Add(hn::Add(s[0], s[1]), hn::Add(s[2], s[3]));
      out.s += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, s_all)));
    }
  }
  if constexpr (kUnboundedWeight<K>) out.largest = hn::GetLane(hn::MaxOfLanes(d, largest));
  return out;
}

// dx = s ((g - c.reference) - c.q) for one row, s = weight(v) of each vector v of `source` (p,
// or the weights themselves), dx's zeros those of CenteredGradient<K>. Skip: a vector of
// `source` that is all 0 gives dx = 0 without reading g (s(0) = 0). Returns the number of whole
// vectors of `source` that are all 0 where Skip or Count (else 0). A reference of 0 is left out
// (the loop without its subtraction: rows of 4096, alpha = 1.75, measured 0.85x with it).
template <WeightKind K, bool Skip, bool Count, class D, class T = hn::TFromD<D>, class WeightOf>
HWY_INLINE std::size_t CenterVectors(D d, const T* source, const T* g, T* dx, std::size_t n,
                                     const Centring<T>& c, WeightOf&& weight) {
  if constexpr (kUnboundedWeight<K>) {
    if (c.reference != 0)
      return CenterVectorsFrom<K, Skip, Count, true>(d, source, g, dx, n, c, weight);
  }
  return CenterVectorsFrom<K, Skip, Count, false>(d, source, g, dx, n, c, weight);
}

// dx = s ((g - c.reference) - c.q) for one row, s = s(p) of kind K (0, without reading g, where
// p is all 0). Returns the number of whole vectors of p that are all 0 where Skip or Count (else
// 0).
template <WeightKind K, bool Skip = kZeroAtZero<K>, bool Count = false, class D,
          class T = hn::TFromD<D>>
HWY_INLINE std::size_t CenterRow(D d, const T* p, const T* g, T* dx, std::size_t n, hn::Vec<D> e,
                                 const Centring<T>& c) {
  return CenterVectors<K, Skip, Count>(d, p, g, dx, n, c,
                                       [&](hn::Vec<D> pv) HWY_ATTR { return Weight<K>(d, pv, e); });
}

// dx = s ((g - c.reference) - c.q) for one row from its weights s (kept by RowSums; dx may equal
// s or g). As CenterRow of WeightKind::power (whose weights these are), so that both give the
// same zeros; Skip, Count and the count returned as CenterRow's, on s.
template <bool Skip = true, bool Count = false, class D, class T = hn::TFromD<D>>
HWY_INLINE std::size_t CenterWeightsRow(D d, const T* s, const T* g, T* dx, std::size_t n,
                                        const Centring<T>& c) {
  return CenterVectors<WeightKind::power, Skip, Count>(d, s, g, dx, n, c,
                                                       [](hn::Vec<D> sv) HWY_ATTR { return sv; });
}

// The weights of the vectors of p, of kind K (DominantCentring's source is p).
template <WeightKind K, class D>
struct WeightOfP {
  static constexpr WeightKind kKind = K;
  D d;
  hn::Vec<D> e;
  HWY_INLINE hn::Vec<D> operator()(hn::Vec<D> pv) const { return Weight<K>(d, pv, e); }
};

// Weights kept from the sums (DominantCentring's source is the weights), masked as
// WeightKind::power's, as CenterWeightsRow's.
template <class D>
struct KeptWeight {
  static constexpr WeightKind kKind = WeightKind::power;
  HWY_INLINE hn::Vec<D> operator()(hn::Vec<D> sv) const { return sv; }
};

// The sum of weights above which a dominated row's first shift may not serve as its reference
// (DominantCentring): 1/eps of T.
template <class T>
inline constexpr T kFirstShiftLimit = 1 / std::numeric_limits<T>::epsilon();

// The Centring of a row that one weight dominates (dominated_row), from `first`, the row's usual
// shift sum s g / sum s (sum: the row's sum s): reference = first and q = sum s (g - first) /
// sum. The dominant term s_m (g_m - first) is s_m times the others' share (sum - s_m) / sum of
// their differences of g, plus s_m times the rounding of `first` (about eps |g|), so the
// rounding of the sum reaches dx_m = s_m ((g_m - first) - q) scaled by that share, as
// dominated_row needs, while the share is above about eps. A dominated row's weights are at
// least 1, so sum - s_m >= 1 in a row of two entries or more, and only a row with sum > 1/eps
// (in T) can have a smaller share (none of 65536 N(0, 1) rows of 16 floats at alpha = 3, 0.6%
// at 5, 8% at 8); it takes reference = g_m instead, m the entry whose weight (weight(v)
// of the vectors v of `source`: WeightOfP of p, or KeptWeight) is `largest` (the largest g
// where weights tie): its sum holds no s_m g_m at all. g_m - g_m is 0 even where g_m is huge; a
// g of inf or NaN makes q NaN, as the usual form does. Skip: vectors of `source` that are all 0
// (weight 0) are passed over without reading g, as the backward's passes do in sparse rows
// (alpha = 5's rows of 512 ran at 0.78-0.81 of the speed before this centring with the skip,
// 0.63-0.65 without).
template <bool Skip, class D, class T = hn::TFromD<D>, class WeightOf>
HWY_NOINLINE Centring<T> DominantCentring(D d, const T* source, const T* g, std::size_t n,
                                          double sum, T largest, T first, WeightOf weight) {
  constexpr WeightKind K = WeightOf::kKind;
  using V = hn::Vec<D>;
  const std::size_t N = hn::Lanes(d);
  // body(weights, g) for the vectors of entries [begin, begin + length).
  auto for_each = [&](std::size_t begin, std::size_t length, auto&& body) HWY_ATTR {
    std::size_t i = begin;
    for (; i + N <= begin + length; i += N) {
      const V v = hn::LoadU(d, source + i);
      if (Skip && hn::AllTrue(d, hn::Eq(v, hn::Zero(d)))) continue;
      body(weight(v), hn::LoadU(d, g + i));
    }
    const std::size_t lanes = begin + length - i;
    if (lanes > 0)
      body(weight(LoadTail(d, source + i, lanes, T(0))), LoadTail(d, g + i, lanes, T(0)));
  };
  Centring<T> c;
  c.reference = first;
  if (sum > kFirstShiftLimit<T>) {
    const V lowest = hn::Set(d, -std::numeric_limits<T>::infinity());
    V candidates = lowest;
    for_each(0, n, [&](V sv, V gv) HWY_ATTR {
      candidates = hn::Max(candidates, hn::IfThenElse(hn::Eq(sv, hn::Set(d, largest)), gv, lowest));
    });
    c.reference = hn::GetLane(hn::MaxOfLanes(d, candidates));
  }
  // In blocks of kBlock entries flushed into double, as RowSums.
  const V reference = hn::Set(d, c.reference);
  double total = 0;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    V block = hn::Zero(d);
    for_each(begin, std::min(kBlock, n - begin), [&](V sv, V gv) HWY_ATTR {
      block = hn::MulAdd(sv, MaskedGradient<K>(d, sv, hn::Sub(gv, reference)), block);
    });
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, block)));
  }
  c.q = static_cast<T>(total / sum);
  return c;
}

template <class T>
WeightedSums SumWeighted(const T* p, const T* g, std::size_t n, const Weights<T>& w, T* s_out) {
  const hn::ScalableTag<T> d;
  const auto e = hn::Set(d, w.e);
  return WithWeightKind(w.kind, [&](auto kind) HWY_ATTR {
    return RowSums<decltype(kind)::value>(d, p, g, n, e, s_out);
  });
}

template <class T>
void WeightedCenter(const T* p, const T* g, T* dx, std::size_t n, const Weights<T>& w,
                    const Centring<T>& c) {
  const hn::ScalableTag<T> d;
  const auto e = hn::Set(d, w.e);
  WithWeightKind(w.kind, [&](auto kind) HWY_ATTR {
    CenterRow<decltype(kind)::value>(d, p, g, dx, n, e, c);
    return 0;
  });
}

template <class T>
void CenterWeights(const T* s, const T* g, T* dx, std::size_t n, const Centring<T>& c) {
  CenterWeightsRow(hn::ScalableTag<T>(), s, g, dx, n, c);
}

template <class T>
Centring<T> DominantCentringOf(const T* source, bool weights, const T* g, std::size_t n,
                               const Weights<T>& w, const WeightedSums& sums) {
  using D = hn::ScalableTag<T>;
  const D d;
  const T largest = static_cast<T>(sums.largest);
  const T first = centering_shift<T>(sums);
  if (weights)
    return DominantCentring<true>(d, source, g, n, sums.s, largest, first, KeptWeight<D>());
  const auto e = hn::Set(d, w.e);
  return WithWeightKind(w.kind, [&](auto kind) HWY_ATTR {
    return DominantCentring<true>(d, source, g, n, sums.s, largest, first,
                                  WeightOfP<decltype(kind)::value, D>{d, e});
  });
}

// The operations that SumsOfLanes combines lanes with.
struct LaneSum {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Add(a, b);
  }
};
struct LaneMax {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Max(a, b);
  }
};

// The fold of two vectors at lane distance w (a power of two below N): lane i is
// a[i] op a[i ^ w] where bit w of i is clear, b[i] op b[i ^ w] where it is set.
template <class Op, class D, class V = hn::Vec<D>>
HWY_INLINE V FoldLanes(D d, V a, V b, std::size_t w) {
  const hn::RebindToSigned<D> di;
  using TI = hn::TFromD<decltype(di)>;
  const auto iota = hn::Iota(di, 0), width = hn::Set(di, static_cast<TI>(w));
  const auto partner = hn::IndicesFromVec(d, hn::Xor(iota, width));
  const auto first = hn::RebindMask(d, hn::Eq(hn::And(iota, width), hn::Zero(di)));
  return Op()(hn::IfThenElse(first, a, hn::TableLookupLanes(b, partner)),
              hn::IfThenElse(first, hn::TableLookupLanes(a, partner), b));
}

#if HWY_TARGET != HWY_SCALAR
// v[k] = v[2k] op v[2k + 1] (k < count / 2) interleaved within each 128-bit block by groups of
// sizeof(U) bytes: an even group holds v[2k]'s group at its place in the lower half of the block
// op the one at that place in the upper half, an odd group v[2k + 1]'s.
template <class Op, class U, class D, class V = hn::Vec<D>>
HWY_INLINE void InterleavedTotals(D d, V* v, std::size_t count) {
  const hn::Repartition<U, D> du;
  for (std::size_t k = 0; k < count / 2; ++k) {
    const auto a = hn::BitCast(du, v[2 * k]), b = hn::BitCast(du, v[2 * k + 1]);
    v[k] = Op()(hn::BitCast(d, hn::InterleaveLower(du, a, b)),
                hn::BitCast(d, hn::InterleaveUpper(du, a, b)));
  }
}
#endif

// Lane r of the result is the sum (Op = LaneSum; LaneMax: the largest) of the lanes of v[r],
// r < N = Lanes(d); v is overwritten. Every row's lanes are added in the same tree wherever the
// row sits among the N, so a row's sum does not depend on the rows beside it (nor on the thread
// split). First within 128-bit blocks of B lanes, a transposition that adds as it goes (pairs of
// vectors interleaved by lanes, then, for floats, by pairs of lanes: v[m] then holds rows
// mB..mB+B-1 in each block, a partial sum per block); then across blocks: halves by
// ConcatLowerLower / ConcatUpperUpper (AVX2, AVX-512), AVX-512's quarters by one FoldLanes.
template <class Op = LaneSum, class D, class V = hn::Vec<D>>
HWY_INLINE V SumsOfLanes(D d, V* v) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  return v[0];
#else
  using T = hn::TFromD<D>;
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  constexpr std::size_t kBlock = std::min<std::size_t>(kLanes, 16 / sizeof(T));
  constexpr std::size_t kBlocks = kLanes / kBlock;
  static_assert(kBlock >= 2 && kBlock <= 4 && (kBlocks == 1 || kBlocks == 2 || kBlocks == 4),
                "SumsOfLanes: vectors of 1, 2 or 4 blocks of 128 bits");
  HWY_DASSERT(hn::Lanes(d) == kLanes);
  InterleavedTotals<Op, hwy::MakeUnsigned<T>>(d, v, kLanes);
  if constexpr (kBlock == 4) InterleavedTotals<Op, std::uint64_t>(d, v, kLanes / 2);
  auto halves = [&](V a, V b) HWY_ATTR {
    return Op()(hn::ConcatLowerLower(d, b, a), hn::ConcatUpperUpper(d, b, a));
  };
  if constexpr (kBlocks == 1) {
    return v[0];
  } else if constexpr (kBlocks == 2) {
    return halves(v[0], v[1]);
  } else {
    return FoldLanes<Op>(d, halves(v[0], v[2]), halves(v[1], v[3]), kBlock);
  }
#endif
}

// dominated_row lane by lane, in T: lane r of `largest` and `sum_s` holds row r's largest weight
// and sum of weights.
template <class D, class V = hn::Vec<D>>
HWY_INLINE auto DominatedLanes(D d, V largest, V sum_s) {
  using T = hn::TFromD<D>;
  return hn::And(hn::Gt(largest, hn::Set(d, T(1))),
                 hn::Ge(largest, hn::Mul(sum_s, hn::Set(d, static_cast<T>(kDominantShare)))));
}

// A group's rows (CenteredRowGroup, VectorRowGroup: up to N rows of kVectors = 1 or 2 whole
// vectors, n entries, row r's weights kept at kept + r n, its g at g + r n, its sum of weights
// in lane r of sum_s, q[r] its shift sum s g / sum s, e the kind's exponent) that one weight
// dominates (dominated_row, in T) centred as DominantCentring centres them, from their first
// shift: reference[r] = q[r] on entry and q[r] = sum s (g - reference[r]) / sum s; the other
// rows keep q[r] and get reference[r] = 0. All rows at once, without a branch per row, reduced
// across lanes as the group's sums (SumsOfLanes), so that a row's result does not depend on its
// group: each row's largest weight (a transposed max), then, where some row is dominated, the
// sums.
//
// The first shift serves as well as g_m, as in DominantCentring (which has the argument, and
// which the rows with sum s above 1/eps take here): the second sums with r = g_m would need
// g_m's search, a second transposed max, for every dominated group (89% of groups of 16 at
// alpha = 3); without it, 1.25x faster on alpha = 3's rows of 16 floats, 1.13x on 32, 1.02-1.05x
// at 5 (compare.sh, 2026-12-07). Weights of the power kind with e >= 0 are at most 1: never
// dominated, and the group is left as it is.
template <WeightKind K, std::size_t kVectors, class D, class T = hn::TFromD<D>>
HWY_INLINE void CentreDominatedGroup(D d, const T* kept, const T* g, std::size_t rows,
                                     std::size_t n, hn::Vec<D> sum_s, hn::Vec<D> e, T* q,
                                     T* reference) {
  static_assert(kVectors == 1 || kVectors == 2);
  using V = hn::Vec<D>;
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  const std::size_t N = hn::Lanes(d);
  const V zero = hn::Zero(d);
  hn::Store(zero, d, reference);
  if constexpr (K == WeightKind::power) {
    if (hn::GetLane(e) >= 0) return;
  }
  // body(s, g) for the vectors of row r.
  auto for_each = [&](std::size_t r, auto&& body) HWY_ATTR {
    for (std::size_t j = 0; j < kVectors; ++j)
      body(hn::LoadU(d, kept + r * n + j * N), hn::LoadU(d, g + r * n + j * N));
  };
  V v[kLanes];
  for (std::size_t r = 0; r < N; ++r) {
    v[r] = zero;
    if (r < rows) for_each(r, [&](V sv, V) HWY_ATTR { v[r] = hn::Max(v[r], sv); });
  }
  const V largest = SumsOfLanes<LaneMax>(d, v);
  const auto dominated = DominatedLanes(d, largest, sum_s);
  if (hn::AllFalse(d, dominated)) return;
  for (std::size_t r = 0; r < N; ++r) {
    v[r] = zero;
    if (r >= rows) continue;
    const V rr = hn::Set(d, q[r]);
    for_each(r, [&](V sv, V gv) HWY_ATTR {
      v[r] = hn::MulAdd(sv, MaskedGradient<K>(d, sv, hn::Sub(gv, rr)), v[r]);
    });
  }
  const V first = hn::Load(d, q);
  hn::Store(hn::IfThenElseZero(dominated, first), d, reference);
  hn::Store(hn::IfThenElse(dominated, hn::Div(SumsOfLanes(d, v), sum_s), first), d, q);
  constexpr T kLarge = kFirstShiftLimit<T>;
  const auto large =
      hn::And(hn::And(dominated, hn::Gt(sum_s, hn::Set(d, kLarge))), hn::FirstN(d, rows));
  if (HWY_LIKELY(hn::AllFalse(d, large))) return;
  alignas(kMaxBytes) T sum[kLanes], top[kLanes];
  hn::Store(sum_s, d, sum);
  hn::Store(largest, d, top);
  for (std::size_t r = 0; r < rows; ++r) {
    if (!(sum[r] > kLarge) || !dominated_row(top[r], sum[r])) continue;
    const Centring<T> c = DominantCentring<false>(d, kept + r * n, g + r * n, n, sum[r], top[r],
                                                  reference[r], KeptWeight<D>());
    q[r] = c.q;
    reference[r] = c.reference;
  }
}

// A group's rows (CenteredRowGroup) that one weight dominates, row by row: lane r of `largest`
// and sum_s holds row r's largest weight and sum of weights, its weights are kept at kept + r n;
// a row where dominated_row holds (in T) gets q[r] and reference[r] from DominantCentring, the
// others keep q[r] and get reference[r] = 0. The rows are found by the bits of their mask.
template <class D, class T = hn::TFromD<D>>
HWY_INLINE void CentreDominatedRows(D d, hn::Vec<D> largest, hn::Vec<D> sum_s, std::size_t rows,
                                    const T* kept, const T* g, std::size_t n, T* q, T* reference) {
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  hn::Store(hn::Zero(d), d, reference);
  const auto dominated = hn::And(DominatedLanes(d, largest, sum_s), hn::FirstN(d, rows));
  if (HWY_LIKELY(hn::AllFalse(d, dominated))) return;
  alignas(kMaxBytes) T top[kLanes], sum[kLanes];
  hn::Store(largest, d, top);
  hn::Store(sum_s, d, sum);
  std::uint8_t bytes[(kLanes + 7) / 8 + 8] = {};
  hn::StoreMaskBits(d, dominated, bytes);
  std::uint64_t bits;
  std::memcpy(&bits, bytes, sizeof(bits));
  for (; bits != 0; bits &= bits - 1) {
    const std::size_t r = static_cast<std::size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero64(bits));
    const Centring<T> c = DominantCentring<false>(d, kept + r * n, g + r * n, n, sum[r], top[r],
                                                  q[r], KeptWeight<D>());
    q[r] = c.q;
    reference[r] = c.reference;
  }
}

// Rows up to this length take the backward in groups (CenteredRowGroup), without a branch per
// vector; longer rows one at a time.
constexpr std::size_t kBranchFreeRow = 256;

// The backward of up to N = Lanes(d) rows of length n <= kBranchFreeRow: the sums of each row
// in vectors (sum s g and sum s, one accumulator pair per row), reduced all at once by
// SumsOfLanes (lane r: row r), q = sum s g / sum s (or 0 where sum s = 0) by one vector
// division, then dx = s (g - q) row by row with q broadcast from its lane. A row at a time
// costs two reductions across lanes and a division that the centring waits for; here the group
// shares them (measured 2.0x faster on rows of 16 floats, 1.3x on 64, 1.2x on 128; AVX-512).
// For T = float the quotient is the one centering_shift takes through double (a quotient of
// floats rounded once in double and again to float is the correctly rounded one). kVectors > 0:
// n = kVectors N, the loops unrolled (rows of 1, 2 or 4 vectors: a loop over so few vectors,
// with its tail test, cost as much as their arithmetic; AVX2, rows of 16 floats, 1.1-1.6x; rows
// of 8 vectors: AVX-512, 4096 rows of 128 floats, an AMD EPYC Zen 5, 2026-12-07, 1.03-1.07x
// (sparsemax, entmax-1.5) and 1.01-1.05x (softmax) faster).
template <WeightKind K, std::size_t kVectors, class D, class T = hn::TFromD<D>>
HWY_INLINE void CenteredRowGroup(D d, const T* p, const T* g, T* dx, std::size_t rows,
                                 std::size_t n, hn::Vec<D> e) {
  using V = hn::Vec<D>;
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  // Weights of 0 or 1: s g is g where p is in the support (or the interior), 0 elsewhere, and
  // dx the same of g - q; the products by 1 of the general formula left out (same bits).
  constexpr bool kCounted = kCountedWeight<K>;
  const std::size_t N = hn::Lanes(d);
  const V zero = hn::Zero(d), one = hn::Set(d, T(1));
  auto for_each = [&](std::size_t r, auto&& body) HWY_ATTR {
    if constexpr (kVectors > 0) {
      for (std::size_t j = 0; j < kVectors; ++j) {
        const std::size_t at = r * n + j * N;
        body(j * N, hn::LoadU(d, p + at), hn::LoadU(d, g + at), N);
      }
    } else {
      ForEachVectorPair(d, p + r * n, g + r * n, n, body);
    }
  };
  // Weights that cost a power or roots (kCostlyWeight) are kept from the sums for the
  // centring (entmax-1.5: 1.1-1.3x faster on rows of 64-128 than taking the roots again).
  constexpr bool kKeep = kCostlyWeight<K>;
  alignas(kMaxBytes) T kept[kKeep ? kLanes * kBranchFreeRow + kLanes : 1];
  // Weights without bound (kUnboundedWeight): rows that one weight dominates centred from their
  // first shift where they have one or two vectors, as VectorRowGroup's, the group at once
  // (CentreDominatedGroup); in longer ones from that entry's g, row by row (CentreDominatedRows,
  // from the largest weight of each row, lane by lane in big): alpha = 3's rows of 64 and 128,
  // 12% of them dominated, ran at 0.74 and 0.82 of the speed before this centring so, against
  // 0.61 and 0.63 with the largest weight's g found for the whole group (alpha = 5, 30-40%
  // dominated: 0.79 either way; compare.sh, 2026-12-07).
  constexpr bool kLargest = kUnboundedWeight<K>;
  constexpr bool kByGroup = kVectors == 1 || kVectors == 2, kTrack = kLargest && !kByGroup;
  V sg[kLanes], s[kLanes], big[kTrack ? kLanes : 1];
  for (std::size_t r = 0; r < N; ++r) {
    sg[r] = zero;
    s[r] = zero;
    if constexpr (kTrack) big[r] = zero;
    if (r >= rows) continue;
    for_each(r, [&](std::size_t i, V pv, V gv, std::size_t) HWY_ATTR {
      if constexpr (kCounted) {
        const auto m = WeightMask<K>(d, pv);
        sg[r] = hn::Add(sg[r], hn::IfThenElseZero(m, gv));
        s[r] = hn::Add(s[r], hn::IfThenElseZero(m, one));
      } else {
        const V sv = Weight<K>(d, pv, e);
        if constexpr (kKeep) hn::StoreU(sv, d, kept + r * n + i);
        if constexpr (kTrack) big[r] = hn::Max(big[r], sv);
        sg[r] = hn::MulAdd(sv, MaskedGradient<K>(d, sv, gv), sg[r]);
        s[r] = hn::Add(s[r], sv);
      }
    });
  }
  const V sum_sg = SumsOfLanes(d, sg), sum_s = SumsOfLanes(d, s);
  alignas(kMaxBytes) T q[kLanes], reference[kLanes];
  hn::Store(hn::IfThenElseZero(hn::Gt(sum_s, zero), hn::Div(sum_sg, sum_s)), d, q);
  if constexpr (kLargest && kByGroup) {
    CentreDominatedGroup<K, kVectors>(d, kept, g, rows, n, sum_s, e, q, reference);
  } else if constexpr (kTrack) {
    CentreDominatedRows(d, SumsOfLanes<LaneMax>(d, big), sum_s, rows, kept, g, n, q, reference);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const V qr = hn::Set(d, q[r]);
    const V rr = kLargest ? hn::Set(d, reference[r]) : zero;
    T* out = dx + r * n;
    for_each(r, [&](std::size_t i, V pv, V gv, std::size_t lanes) HWY_ATTR {
      if constexpr (kCounted) {
        StorePartial(d, hn::IfThenElseZero(WeightMask<K>(d, pv), hn::Sub(gv, qr)), out + i, lanes);
      } else {
        const V sv = kKeep ? hn::LoadU(d, kept + r * n + i) : Weight<K>(d, pv, e);
        StorePartial(d, CenteredGradient<K>(d, sv, gv, rr, qr), out + i, lanes);
      }
    });
  }
}

// Makes the compiler assume that the memory at `stored` was read and may have changed, so that
// the values stored there are loaded again rather than kept in registers: a vector of per-row
// values stored once and broadcast row by row then takes a broadcast from memory each (a load)
// where GCC 12 had kept the vector and permuted it (a shuffle, on the ports that the
// reductions across lanes use too).
HWY_INLINE void ReadFromMemory(const void* stored) {
#if HWY_COMPILER_MSVC
  (void)stored;
#else
  asm volatile("" : : "r"(stored) : "memory");
#endif
}

// CenteredRowGroup of kRows = N or N / 2 rows of kVectors N entries (kVectors = 1 or 2, N >= 2):
// every row's sums are the sums of its vectors' products, with no accumulator to add to, and the
// loops over the rows unrolled, so that the sums stay in registers (CenteredRowGroup keeps them
// on the stack, indexed by a row the loop does not unroll, and adds each to a zero).
//  - Rows of one vector, N at a time: one SumsOfLanes for each sum. AVX-512, 65536 rows of 16
//    floats, an AMD EPYC Zen 5 (2026-12-05): 1.15x (softmax, sparsemax), 1.3x (entmax-1.5) and
//    1.08x (alpha = 1.75) faster than CenteredRowGroup.
//  - Rows of two vectors, N / 2 at a time: their two sums fill N vectors, which one SumsOfLanes
//    reduces (lane r: row r's sum s g, lane N / 2 + r: its sum s). 32768 rows of 32 floats
//    (compare.sh, two runs, 2026-12-07): 1.20-1.21x (softmax), 1.18-1.40x (sparsemax),
//    1.32-1.36x (entmax-1.5), 1.09-1.15x (alpha = 1.75) faster; in the L2 (2048 rows)
//    1.0-1.2x. N rows at a time, their 2 N sums spilled from AVX-512's 32 registers (0.6-0.94x);
//    rows of four vectors lost in half groups too (0.82-0.95x) and stay with CenteredRowGroup.
// Each row's q is broadcast from memory (ReadFromMemory): kept in a register, GCC 12 made each
// broadcast a permutation, on the shuffle ports that the reductions load too (rows of 16:
// 1.20-1.38x (softmax), 1.02-1.30x (sparsemax, by the machine's phase), 1.09-1.11x
// (entmax-1.5), 1.02x (alpha = 1.75) faster; compare.sh and stack-layout sweeps, 2026-12-07).
#if HWY_TARGET != HWY_SCALAR  // (N = 1: no halves)
template <WeightKind K, std::size_t kVectors, std::size_t kRows, class D, class T = hn::TFromD<D>>
HWY_INLINE void VectorRowGroup(D d, const T* p, const T* g, T* dx, hn::Vec<D> e) {
  using V = hn::Vec<D>;
  constexpr std::size_t kLanes = hn::MaxLanes(D()), n = kVectors * kLanes;
  static_assert((kVectors == 1 || kVectors == 2) && (kRows == kLanes || 2 * kRows == kLanes));
  constexpr bool kCounted = kCountedWeight<K>;
  const V zero = hn::Zero(d), one = hn::Set(d, T(1));
  constexpr bool kKeep = kCostlyWeight<K>;
  alignas(kMaxBytes) T kept[kKeep ? kRows * n : 1];
  // Vector j of row r added to the row's sums sg and s, as CenteredRowGroup adds them (a
  // product fused into the sum after the first), so that a row's sums do not depend on its path.
  auto add = [&](std::size_t r, std::size_t j, V& sg, V& s) HWY_ATTR {
    const std::size_t at = r * n + j * kLanes;
    const V pv = hn::LoadU(d, p + at), gv = hn::LoadU(d, g + at);
    if constexpr (kCounted) {
      const auto m = WeightMask<K>(d, pv);
      sg = j == 0 ? hn::IfThenElseZero(m, gv) : hn::Add(sg, hn::IfThenElseZero(m, gv));
      s = j == 0 ? hn::IfThenElseZero(m, one) : hn::Add(s, hn::IfThenElseZero(m, one));
    } else {
      const V sv = Weight<K>(d, pv, e);
      if constexpr (kKeep) hn::Store(sv, d, kept + at);
      const V masked = MaskedGradient<K>(d, sv, gv);
      sg = j == 0 ? hn::Mul(sv, masked) : hn::MulAdd(sv, masked, sg);
      s = j == 0 ? sv : hn::Add(s, sv);
    }
  };
  V sums[2 * kRows];  // sums[r]: row r's sum s g, sums[kRows + r]: its sum s
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kRows; ++r) {
    add(r, 0, sums[r], sums[kRows + r]);
    if constexpr (kVectors == 2) add(r, 1, sums[r], sums[kRows + r]);
  }
  const V sum_sg = SumsOfLanes(d, sums);
  V sum_s;
  if constexpr (kRows == kLanes) {
    sum_s = SumsOfLanes(d, sums + kRows);
  } else {
    sum_s = hn::ConcatUpperUpper(d, sum_sg, sum_sg);  // lane r < N / 2: row r's sum s
  }
  alignas(kMaxBytes) T q[kLanes], reference[kLanes];
  hn::Store(hn::IfThenElseZero(hn::Gt(sum_s, zero), hn::Div(sum_sg, sum_s)), d, q);
  // Weights without bound (kUnboundedWeight): rows that one weight dominates centred from their
  // first shift (CentreDominatedGroup).
  constexpr bool kLargest = kUnboundedWeight<K>;
  if constexpr (kLargest) {
    CentreDominatedGroup<K, kVectors>(d, kept, g, kRows, n, sum_s, e, q, reference);
    ReadFromMemory(reference);
  }
  ReadFromMemory(q);
  auto center = [&](std::size_t at, V qr, V rr) HWY_ATTR {
    const V pv = hn::LoadU(d, p + at), gv = hn::LoadU(d, g + at);
    if constexpr (kCounted) {
      hn::StoreU(hn::IfThenElseZero(WeightMask<K>(d, pv), hn::Sub(gv, qr)), d, dx + at);
    } else {
      const V sv = kKeep ? hn::Load(d, kept + at) : Weight<K>(d, pv, e);
      hn::StoreU(CenteredGradient<K>(d, sv, gv, rr, qr), d, dx + at);
    }
  };
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kRows; ++r) {
    const V qr = hn::Set(d, q[r]);
    const V rr = kLargest ? hn::Set(d, reference[r]) : zero;
    center(r * n, qr, rr);
    if constexpr (kVectors == 2) center(r * n + kLanes, qr, rr);
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

// Longer rows skip the vectors of p that are all zero while the rows before had at least this
// share of them (see CenteredLongRows), for vectors of `lanes` lanes: skipping gains a vector's
// work where p is zero and costs a mispredicted branch where a zero vector and a non-zero one
// alternate, so it pays above the share z with z G = (1 - z) M, G the gain (proportional to the
// lanes) and M the misprediction; with M = 3 G_16 (G_16 the gain with 16 lanes),
// z = 48 / (48 + lanes): 0.75 for 16 lanes, 0.86 for 8. Measured on an AMD EPYC (2026-12-02,
// entmax-1.5 on rows of 512): with 16 floats, 0.75 between 0.7 and 0.8; with 8 (AVX2), 0.75
// took 254 us on N(0,1) scores against 185 with 0.85 (and 89 against 93 on 4 N(0,1)).
inline double SkipShare(std::size_t lanes) { return 48.0 / (48.0 + static_cast<double>(lanes)); }

// CenteredRowGroup over `rows` rows, N at a time; rows of 1, 2, 4 or 8 whole vectors unrolled.
template <WeightKind K, class D, class T = hn::TFromD<D>>
HWY_INLINE void CenteredRowGroups(D d, const T* p, const T* g, T* dx, std::size_t rows,
                                  std::size_t n, hn::Vec<D> e) {
  const std::size_t N = hn::Lanes(d);
  auto groups = [&](auto vectors) HWY_ATTR __attribute__((always_inline)) {
    for (std::size_t first = 0; first < rows; first += N) {
      const std::size_t at = first * n;
      CenteredRowGroup<K, decltype(vectors)::value>(d, p + at, g + at, dx + at, std::min(N, rows - first), n, e);
    }
  };
  // Rows of one or two whole vectors by VectorRowGroup (N or N / 2 at a time), the last rows
  // by CenteredRowGroup. Inlined (both lambdas): out of line, GCC's choices cost rows of 16 and
  // 64 5-15%.
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  auto vector_groups = [&](auto vectors) HWY_ATTR __attribute__((always_inline)) {
    constexpr std::size_t kVectors = decltype(vectors)::value;
    std::size_t first = 0;
#if HWY_TARGET != HWY_SCALAR
    constexpr std::size_t kRows = kVectors == 1 ? kLanes : kLanes / 2;
    for (; first + kRows <= rows; first += kRows)
      VectorRowGroup<K, kVectors, kRows>(d, p + first * n, g + first * n, dx + first * n, e);
#endif
    if (first < rows)
      CenteredRowGroup<K, kVectors>(d, p + first * n, g + first * n, dx + first * n, rows - first,
                                    n, e);
  };
  const bool whole_vectors = N == kLanes && N >= 2;  // VectorRowGroup's vectors
  if (whole_vectors && n == N) {
    vector_groups(std::integral_constant<std::size_t, 1>());
  } else if (whole_vectors && n == 2 * N) {
    vector_groups(std::integral_constant<std::size_t, 2>());
  } else if (n == N) {
    groups(std::integral_constant<std::size_t, 1>());
  } else if (n == 2 * N) {
    groups(std::integral_constant<std::size_t, 2>());
  } else if (n == 4 * N) {
    groups(std::integral_constant<std::size_t, 4>());
  } else if (n == 8 * N) {
    groups(std::integral_constant<std::size_t, 8>());
  } else {
    groups(std::integral_constant<std::size_t, 0>());
  }
}

// Rows longer than kBranchFreeRow (up to kMaxCenteredRow) one after another: per row the sums,
// q = sum s g / sum s and the centring, the same arithmetic as SumWeighted and WeightedCenter /
// CenterWeights (so the same results to the bit).
template <WeightKind K, class D, class T = hn::TFromD<D>>
HWY_NOINLINE void CenteredLongRows(D d, const T* p, const T* g, T* dx, std::size_t rows,
                                   std::size_t n, hn::Vec<D> e) {
  // Weights that cost a power or roots are computed once per row into a stack block; entmax-1.5's
  // square roots only where the row does not skip (rows of 512 of N(0,1) scores: 1.12x faster
  // than taking them twice), a row that skips takes its few roots twice rather than store and
  // load its zeros.
  constexpr bool kAlwaysKeep = KeepsWeightsPerRow(K),
                 kMayKeep = kAlwaysKeep || K == WeightKind::sqrt;
  // Longer rows save g's cache lines (and the weights' roots or powers) by skipping where most
  // vectors of p are zero, and lose a mispredicted branch per vector where the support is
  // scattered over many (entmax-1.5 on rows of 512: skipping 1.6x faster on 4 N(0,1) scores,
  // 2.5x slower on N(0,1)); they skip while the share of zero vectors in the rows before, each
  // row weighing 1/4 against those before it, is at least SkipShare: a running share, so that
  // rows near SkipShare do not switch back and forth. (The weights of a power or fourth roots
  // used to skip in every row, which cost entmax-1.25 1.4x on 4 N(0,1) scores, where 74% of the
  // vectors are zero.) A row's dx is the same to the bit either way. Returns the row's number of
  // zero vectors.
  auto row = [&](auto skip, std::size_t at) HWY_ATTR -> std::size_t {
    constexpr bool kSkip = decltype(skip)::value, kCount = kZeroAtZero<K>;
    // The Centring of the row from its sums: q, or for a row that one weight dominates
    // (kUnboundedWeight only) DominantCentring's, on the weights kept or those of p.
    auto centring = [&](const WeightedSums& sums, const T* source, auto weight) HWY_ATTR {
      Centring<T> c{centering_shift<T>(sums)};
      if constexpr (kUnboundedWeight<K>) {
        if (dominated_row(sums.largest, sums.s))
          c = DominantCentring<kSkip>(d, source, g + at, n, sums.s, static_cast<T>(sums.largest),
                                      c.q, weight);
      }
      return c;
    };
    if constexpr (kAlwaysKeep || (kMayKeep && !kSkip)) {
      alignas(kMaxBytes) T s[kMaxCenteredRow];
      const WeightedSums sums = RowSums<K, kSkip>(d, p + at, g + at, n, e, s);
      return CenterWeightsRow<kSkip, kCount>(d, s, g + at, dx + at, n,
                                             centring(sums, s, KeptWeight<D>()));
    } else {
      const WeightedSums sums =
          RowSums<K, kSkip>(d, p + at, g + at, n, e, static_cast<T*>(nullptr));
      return CenterRow<K, kSkip, kCount>(d, p + at, g + at, dx + at, n, e,
                                         centring(sums, p + at, WeightOfP<K, D>{d, e}));
    }
  };
  if constexpr (!kZeroAtZero<K>) {
    for (std::size_t r = 0; r < rows; ++r) row(std::false_type(), r * n);
  } else {
    const std::size_t vectors = n / hn::Lanes(d);
    const double share = SkipShare(hn::Lanes(d));
    const double row_weight = 0.25 / static_cast<double>(vectors);  // a row's 1/4, per vector
    double zero_share = 1;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t zero_vectors =
          zero_share >= share ? row(std::true_type(), r * n) : row(std::false_type(), r * n);
      zero_share = 0.75 * zero_share + row_weight * static_cast<double>(zero_vectors);
    }
  }
}

// Rows that fit in L1, one after another in one call, without a dispatch per pass and per row:
// rows of up to kBranchFreeRow entries in groups of N (CenteredRowGroups; the groups skip no
// zero vectors: a mispredicted branch per short row costs more than the cache line of g it
// saves, measured 1.1-3.8x on rows of 16-128, AVX-512 and AVX2, an AMD EPYC, 2026-12-02), longer
// ones row by row (CenteredLongRows).
template <class T>
void CenteredRows(const T* p, const T* g, T* dx, std::size_t rows, std::size_t n, const Weights<T>& w) {
  HWY_ASSERT(n <= kMaxCenteredRow);
  const hn::ScalableTag<T> d;
  const auto e = hn::Set(d, w.e);
  WithWeightKind(w.kind, [&](auto kind) HWY_ATTR {
    constexpr WeightKind K = decltype(kind)::value;
    if (n <= kBranchFreeRow) {
      CenteredRowGroups<K>(d, p, g, dx, rows, n, e);
    } else {
      CenteredLongRows<K>(d, p, g, dx, rows, n, e);
    }
    return 0;
  });
}

// ---- the alpha gradient's sums ---------------------------------------------------------------

// The rounding error of total = a + b, lane by lane, exactly (Knuth's TwoSum, branch-free, as
// CompensatedSum's).
template <class V>
HWY_INLINE V TwoSumError(V a, V b, V total) {
  const V b_part = hn::Sub(total, a);
  return hn::Add(hn::Sub(a, hn::Sub(total, b_part)), hn::Sub(b, b_part));
}

// sum + error over the lanes, compensated: the halves folded onto each other (TwoSum, every
// addition's rounding error kept) down to one lane, the errors added along.
template <class D, class V = hn::Vec<D>>
HWY_INLINE double CompensatedLaneSum(D d, V sum, V error) {
#if HWY_TARGET == HWY_SCALAR  // one lane, and no UpperHalf
  (void)d;
  return hn::GetLane(sum) + hn::GetLane(error);
#else
  if constexpr (hn::MaxLanes(D()) == 1) {
    return hn::GetLane(sum) + hn::GetLane(error);
  } else {
    const hn::Half<D> dh;
    const auto low = hn::LowerHalf(dh, sum), high = hn::UpperHalf(dh, sum);
    const auto total = hn::Add(low, high);
    const auto errors = hn::Add(hn::LowerHalf(dh, error), hn::UpperHalf(dh, error));
    return CompensatedLaneSum(dh, total, hn::Add(errors, TwoSumError(low, high, total)));
  }
#endif
}

// Five sums over the entries of a row with p > 0, in double: terms(d, p, g, valid) gives the
// five terms of a vector of them (valid: the lanes that hold entries; the others hold p = 1,
// g = 0), each summed in compensated lanes (TwoSum: every addition's rounding error kept) and
// folded across them compensated. The row is taken in blocks: first its entries with p > 0 are
// packed (p and g, compressed vector by vector, NaN and the padding left out), then the terms
// run on whole vectors of the packed entries only, so that a sparse row pays its powers and logs
// for its support, not its length (entmax-1.6 on rows of 128: a few entries spread over 16
// vectors of doubles).
template <class T, class Terms>
HWY_INLINE std::array<double, 5> SumSupportTerms(const T* p, const T* g, std::size_t n,
                                                 Terms terms) {
  const hn::ScalableTag<T> dt;
  const hn::ScalableTag<double> d;
  const hn::Rebind<T, decltype(d)> dn;  // as many T as d has doubles
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t kBlock = 256;
  const std::size_t NT = hn::Lanes(dt), N = hn::Lanes(d);
  V sums[5], errors[5];
  for (std::size_t t = 0; t < 5; ++t) sums[t] = errors[t] = hn::Zero(d);
  // Room for a whole compressed vector beyond the block, and for the padding of the last one.
  alignas(kMaxBytes) T packed_p[kBlock + kMaxBytes / sizeof(T)];
  alignas(kMaxBytes) T packed_g[kBlock + kMaxBytes / sizeof(T)];
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t end = std::min(n, start + kBlock);
    std::size_t count = 0;
    for (std::size_t i = start; i < end; i += NT) {
      const std::size_t lanes = std::min(NT, end - i);
      const auto pv = LoadTail(dt, p + i, lanes, T(0));
      const auto inside = hn::Gt(pv, hn::Zero(dt));  // NaN, 0 and the padding: outside
      hn::StoreU(CompressLanes(dt, pv, inside), dt, packed_p + count);
      hn::StoreU(CompressLanes(dt, LoadTail(dt, g + i, lanes, T(0)), inside), dt, packed_g + count);
      count += hn::CountTrue(dt, inside);
    }
    hn::StoreU(hn::Set(dt, T(1)), dt, packed_p + count);
    hn::StoreU(hn::Zero(dt), dt, packed_g + count);
    for (std::size_t i = 0; i < count; i += N) {
      const std::array<V, 5> v =
          terms(d, PromoteColumn(d, hn::LoadU(dn, packed_p + i)),
                PromoteColumn(d, hn::LoadU(dn, packed_g + i)), hn::FirstN(d, count - i));
      for (std::size_t t = 0; t < 5; ++t) {
        const V total = hn::Add(sums[t], v[t]);
        errors[t] = hn::Add(errors[t], TwoSumError(sums[t], v[t], total));
        sums[t] = total;
      }
    }
  }
  std::array<double, 5> out;
  for (std::size_t t = 0; t < 5; ++t) out[t] = CompensatedLaneSum(d, sums[t], errors[t]);
  return out;
}

// SumAlphaTerms for weights of kind K (exponent e for quarter and power).
template <WeightKind K, class T>
AlphaSums SumAlphaTermsOf(const T* p, const T* g, std::size_t n, double e) {
  const auto out = SumSupportTerms(p, g, n, [e](auto d, auto pv, auto gv, auto valid) HWY_ATTR {
    // The padding's p = 1 and g = 0 add nothing to the sums of g and of h = p log p; its weight
    // is masked.
    const auto s = hn::IfThenElseZero(valid, Weight<K>(d, pv, hn::Set(d, e)));
    const auto h = hn::Mul(pv, hn::Log(d, pv));
    return std::array{hn::Mul(gv, pv), hn::Mul(gv, s), s, hn::Mul(gv, h), h};
  });
  return {.gp = out[0], .gs = out[1], .s = out[2], .gh = out[3], .h = out[4]};
}

// AlphaSums of one row (Kernels::alpha_sums): over the entries with p > 0, in double (float p and
// g promoted), s = p^(2 - alpha) as the backward's Weight of kind w.kind and h = p log p by
// Highway's Log (a few ulps each, as std::pow and std::log), the five sums each in a lane-wise
// compensated sum (TwoSum: every addition's rounding error kept and added at the end), so that
// their error does not grow with n: the gradient's direct form cancels, and the scalar loop it
// replaces was compensated too (a scalar power and log per entry, which made entmax-1.25's
// alpha gradient 20x its backward).
template <class T>
AlphaSums SumAlphaTerms(const T* p, const T* g, std::size_t n, const Weights<double>& w) {
  return WithWeightKind(w.kind, [&](auto kind) HWY_ATTR {
    return SumAlphaTermsOf<decltype(kind)::value>(p, g, n, w.e);
  });
}

// phi(y) = (e^-y - 1 + y) / y^2 without the cancellation near y = 0: for |y| <= 1/2 its Taylor
// series sum_k (-y)^k / (k + 2)! to k = 14 (the terms beyond are below 2^-60 of the sum), else
// by Expm1.
constexpr std::array<double, 15> MakePhiSeries() {
  std::array<double, 15> c{0.5};  // 1 / (k + 2)!
  for (int k = 1; k < 15; ++k) c[k] = c[k - 1] / (k + 2);
  return c;
}
constexpr std::array<double, 15> kPhiSeries = MakePhiSeries();

template <class D, class V = hn::Vec<D>>
HWY_INLINE V Phi(D d, V y) {
  const V minus_y = hn::Neg(y);
  V series = hn::Set(d, kPhiSeries[14]);
  for (int k = 13; k >= 0; --k) series = hn::MulAdd(series, minus_y, hn::Set(d, kPhiSeries[k]));
  const auto small = hn::Le(hn::Abs(y), hn::Set(d, 0.5));
  if (hn::AllTrue(d, small)) return series;
  const V safe = hn::IfThenElse(small, hn::Set(d, 1.0), y);
  const V direct = hn::Div(hn::Add(hn::Expm1(d, hn::Neg(safe)), safe), hn::Mul(safe, safe));
  return hn::IfThenElse(small, series, direct);
}

// NearOneSums of one row (Kernels::near_one_sums): with l = log p, r = l^2 phi(delta l), over the
// entries with p > 0, in double, compensated as SumSupportTerms: sum p l, sum p r, sum g p,
// sum g p r, sum g p l.
template <class T>
NearOneSums SumNearOneTerms(const T* p, const T* g, std::size_t n, double delta) {
  const auto out = SumSupportTerms(p, g, n, [delta](auto d, auto pv, auto gv, auto) HWY_ATTR {
    // The padding's p = 1 gives l = 0, r = 0: nothing.
    const auto l = hn::Log(d, pv);
    const auto r = hn::Mul(hn::Mul(l, l), Phi(d, hn::Mul(hn::Set(d, delta), l)));
    const auto pl = hn::Mul(pv, l), pr = hn::Mul(pv, r);
    return std::array{pl, pr, hn::Mul(gv, pv), hn::Mul(gv, pr), hn::Mul(gv, pl)};
  });
  return {.l = out[0], .r = out[1], .gp = out[2], .gr = out[3], .gl = out[4]};
}
// ---- threshold solver sums ---------------------------------------------------------------------

// u^(k-1) for one vector, the kind of power chosen at compile time (kPowerGeneral: any k,
// by Pow (pow-inl.h); kPowerSqrt: k = 1/2; otherwise the integer k itself).
constexpr int kPowerGeneral = 0, kPowerSqrt = -1;

template <int Power, class D, class V>
HWY_INLINE V PowerMinusOne(D d, V u, V k_minus_one) {
  if constexpr (Power == kPowerGeneral) {
    return Pow(d, u, k_minus_one);
  } else if constexpr (Power == kPowerSqrt) {
    return hn::Div(hn::Set(d, 1.0), hn::Sqrt(u));
  } else {
    V r = hn::Set(d, 1.0);
    for (int i = 1; i < Power; ++i) r = hn::Mul(r, u);
    return r;
  }
}

// One vector's terms of the power sums at u: s += u^k and slope += u^(k-1) where `inside`
// (the caller's test of 0 < u < inf), 0 elsewhere.
template <int Power, class D, class V, class M>
HWY_INLINE void AddPowerTerms(D d, V u, M inside, V k_minus_one, V& s, V& slope) {
  const V safe = hn::IfThenElse(inside, u, hn::Set(d, 1.0));
  const V pk1 = hn::IfThenElseZero(inside, PowerMinusOne<Power>(d, safe, k_minus_one));
  s = hn::MulAdd(pk1, safe, s);
  slope = hn::Add(slope, pk1);
}

// kPowerNearOne: u = 1 + t with t = a (y - lambda), lambda in PowerSumParams::base, and
// u^(k-1) = exp((k - 1) log1p(t)) (see PowerSumParams::near_one).
constexpr int kPowerNearOne = -2;

template <int Power>
PowerSums SumPowersOf(const double* y, std::size_t n, const PowerSumParams& w) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const V a = hn::Set(d, w.a), base = hn::Set(d, w.base), k1 = hn::Set(d, w.k - 1);
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), infinity = hn::Set(d, kInf<double>);
  // Two sets of accumulators, even and odd vectors, halve the add latency chains.
  V s[2] = {zero, zero}, slope[2] = {zero, zero}, lowest[2] = {infinity, infinity};
  std::size_t count = 0;
  // The smallest u and the count over the lanes inside.
  auto tally = [&](int j, V u, auto inside) HWY_ATTR {
    lowest[j] = hn::Min(lowest[j], hn::IfThenElse(inside, u, infinity));
    count += hn::CountTrue(d, inside);
  };
  // The -inf padding of a tail gives u = -inf, or +inf when a < 0: both are outside.
  auto add = [&](int j, V v) HWY_ATTR {
    if constexpr (Power == kPowerNearOne) {
      const V t = hn::Mul(a, hn::Sub(v, base));
      const auto inside = hn::And(hn::Gt(t, hn::Set(d, -1.0)), hn::Lt(t, infinity));
      const V u = hn::Add(one, t);
      const V pk1 = hn::IfThenElseZero(
          inside, hn::Exp(d, hn::Mul(k1, hn::Log1p(d, hn::IfThenElseZero(inside, t)))));
      s[j] = hn::MulAdd(pk1, hn::IfThenElse(inside, u, one), s[j]);
      slope[j] = hn::Add(slope[j], pk1);
      tally(j, u, inside);
    } else {
      // u = base + a y, with the sum 1 - a lambda + a y formed as fma(a, y, base).
      const V u = hn::MulAdd(a, v, base);
      const auto inside = hn::And(hn::Gt(u, zero), hn::Lt(u, infinity));
      AddPowerTerms<Power>(d, u, inside, k1, s[j], slope[j]);
      tally(j, u, inside);
    }
  };
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    add(0, hn::LoadU(d, y + i));
    add(1, hn::LoadU(d, y + i + N));
  }
  ForEachVector(d, y + i, n - i, -kInf<double>, [&](std::size_t, V v, std::size_t) HWY_ATTR { add(0, v); });
  return {hn::GetLane(hn::SumOfLanes(d, hn::Add(s[0], s[1]))),
          hn::GetLane(hn::SumOfLanes(d, hn::Add(slope[0], slope[1]))), count,
          hn::GetLane(hn::MinOfLanes(d, hn::Min(lowest[0], lowest[1])))};
}

PowerSums SumPowers(const double* y, std::size_t n, const PowerSumParams& w) {
  if (w.near_one) return SumPowersOf<kPowerNearOne>(y, n, w);
  switch (w.integer_k) {
    case 1: return SumPowersOf<1>(y, n, w);
    case 2: return SumPowersOf<2>(y, n, w);
    case 3: return SumPowersOf<3>(y, n, w);
    case 4: return SumPowersOf<4>(y, n, w);
    default: break;
  }
  if (w.k == 0.5) return SumPowersOf<kPowerSqrt>(y, n, w);
  return SumPowersOf<kPowerGeneral>(y, n, w);
}

// In place: the compressed vector stored at `kept` <= i overwrites only entries already read.
std::size_t DropAtOrBelow(double* y, std::size_t n, double bound) {
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  const auto b = hn::Set(d, bound);
  std::size_t kept = 0, i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, y + i);
    kept = AppendKept(d, v, hn::Gt(v, b), y, kept);
  }
  for (; i < n; ++i) {  // the tail, branch-free
    const double v = y[i];
    y[kept] = v;
    kept += v > bound;
  }
  return kept;
}

double MichelotOffset(const double* y, std::size_t n, double a) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const V a_vector = hn::Set(d, a);
  double bound = -kInf<double>, offset = 1;
  for (std::size_t size = n + 1;;) {
    const V b = hn::Set(d, bound);
    V sum = hn::Zero(d);
    std::size_t count = 0;
    // The -inf padding of a tail is never above a bound.
    ForEachVector(d, y, n, -kInf<double>, [&](std::size_t, V v, std::size_t) HWY_ATTR {
      const auto in = hn::Gt(v, b);
      sum = hn::Add(sum, hn::IfThenElseZero(in, hn::Mul(a_vector, v)));
      count += hn::CountTrue(d, in);
    });
    // count >= 1: offset_S >= 1/|S| > 0 puts every bound below the maximum, y = 0.
    offset = (1 - hn::GetLane(hn::SumOfLanes(d, sum))) / static_cast<double>(count);
    if (count == size) return offset;
    size = count;
    bound = -offset / a;
  }
}

// ---- thresholds of few candidates ------------------------------------------------------------

// The pairwise criteria below read their candidates from a block padded with -inf to a multiple
// of kPairwiseStep entries (and of the vector length): every row of one size class then runs
// the same number of iterations, where a data-dependent trip count costs a mispredicted branch
// per row, more than the padding's arithmetic. -inf entries are never in a support: their
// criteria are NaN or -inf, and they add zero to every sum of the others.
constexpr std::size_t kPairwiseStep = 8;

struct PaddedCandidates {
  alignas(kMaxBytes) double y[kMaxPairwise + kMaxBytes / sizeof(double)];
  std::size_t size;  ///< padded length: a multiple of kPairwiseStep, at least the count
};

HWY_INLINE std::size_t PaddedSize(std::size_t count) {
  return (count + kPairwiseStep - 1) / kPairwiseStep * kPairwiseStep;
}

// y[0, n) (n <= kMaxPairwise), padded.
HWY_INLINE void Pad(const double* y, std::size_t n, PaddedCandidates& out) {
  HWY_ASSERT(n <= kMaxPairwise);
  const hn::ScalableTag<double> d;
  const std::size_t N = hn::Lanes(d);
  out.size = PaddedSize(n);
  for (std::size_t i = 0; i < out.size; i += N) {
    const auto v = i + N <= n ? hn::LoadU(d, y + i)
                   : i < n    ? LoadTail(d, y + i, n - i, -kInf<double>)
                              : hn::Set(d, -kInf<double>);
    hn::Store(v, d, out.y + i);
  }
}

// Sparsemax's offset without iterating: with z = a y, entry i is in the support iff
//   1 + a sum_j min(0, y_i - y_j) > 0,
// i.e. 1 + a (c_i y_i - s_i) > 0 with c_i = #{j : y_j >= y_i} and s_i the sum of those y_j.
// That is the sorted criterion 1 + k z_(k) > sum_{j<=k} z_(j), which is non-increasing in k
// (from k to k + 1 it changes by k (z_(k+1) - z_(k)) <= 0), so the entries where it holds are
// the support; tied entries share it. Then offset = (1 - a sum_S y) / |S|, the last offset_S of
// Michelot's method. n^2 / lanes subtractions on whole vectors of i, summed in four chains
// (short ones: the whole computation is a latency chain per row), and one reduction at the
// end, where each of Michelot's passes waits for a reduction and a division. The differences
// y_i - y_j of neighbouring entries are exact, so the criterion is too but for the sum's
// rounding. Padding (-inf) adds min(0, +inf) = 0 to the others and keeps itself out.
double LinearOffsetOfPadded(const PaddedCandidates& c, double a) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  const V a_vector = hn::Set(d, a), one = hn::Set(d, 1.0), zero = hn::Zero(d);
  V support_sum = zero;
  std::size_t size = 0;
  for (std::size_t i = 0; i < c.size; i += N) {
    const V yi = hn::Load(d, c.y + i);
    V below[4] = {zero, zero, zero, zero};  // c.size is a multiple of 4
    for (std::size_t j = 0; j < c.size; j += 4) {
      for (std::size_t u = 0; u < 4; ++u)
        below[u] = hn::Add(below[u], hn::Min(hn::Sub(yi, hn::Set(d, c.y[j + u])), zero));
    }
    const V total = hn::Add(hn::Add(below[0], below[1]), hn::Add(below[2], below[3]));
    const auto in = hn::Gt(hn::MulAdd(a_vector, total, one), zero);  // padding: NaN or -inf
    support_sum = hn::Add(support_sum, hn::IfThenElseZero(in, hn::Mul(a_vector, yi)));
    size += hn::CountTrue(d, in);
  }
  // size >= 1: the maximum (y = 0) always passes.
  return (1 - hn::GetLane(hn::SumOfLanes(d, support_sum))) / static_cast<double>(size);
}

double SparsemaxOffsetPairwise(const double* y, std::size_t n, double a) {
  PaddedCandidates c;
  Pad(y, n, c);
  return LinearOffsetOfPadded(c, a);
}

// The same for k = 2 (entmax-1.5, 2-normmax), sum_S (z + offset)^2 = 1 with z = a y. With
// f(t) = sum_j [z_j - t]_+^2, decreasing where positive, and f(tau) = 1 at the threshold tau =
// -offset, entry i is in the support iff z_i > tau iff f(z_i) < 1:
//   sum_j min(0, y_i - y_j)^2 < 1 / a^2,
// one accumulation per pair, as for k = 1 (tied entries share it; padding adds 0 to the others
// and gets NaN or +inf itself). On that support S, offset = sqrt((1 - sum_S (z - m)^2) / |S|) - m
// with m the mean of z over S, in two passes (no cancellation in the centred sum).
double QuadraticOffsetOfPadded(const PaddedCandidates& c, double a) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  const V a_vector = hn::Set(d, a), zero = hn::Zero(d);
  const V minus_inf = hn::Set(d, -kInf<double>), bound = hn::Set(d, 1 / (a * a));
  // The support's z, -inf elsewhere, kept for the second pass.
  alignas(kMaxBytes) double support_z[kMaxPairwise + kMaxBytes / sizeof(double)];
  V support_sum = zero;
  std::size_t size = 0;
  for (std::size_t i = 0; i < c.size; i += N) {
    const V yi = hn::Load(d, c.y + i);
    V above[4] = {zero, zero, zero, zero};  // c.size is a multiple of 4
    for (std::size_t j = 0; j < c.size; j += 4) {
      for (std::size_t u = 0; u < 4; ++u) {
        const V gap = hn::Min(hn::Sub(yi, hn::Set(d, c.y[j + u])), zero);
        above[u] = hn::MulAdd(gap, gap, above[u]);
      }
    }
    const V f = hn::Add(hn::Add(above[0], above[1]), hn::Add(above[2], above[3]));
    const V zi = hn::Mul(a_vector, yi);
    const auto in = hn::Lt(f, bound);
    hn::Store(hn::IfThenElse(in, zi, minus_inf), d, support_z + i);
    support_sum = hn::Add(support_sum, hn::IfThenElseZero(in, zi));
    size += hn::CountTrue(d, in);
  }
  const double count = static_cast<double>(size);  // >= 1: the maximum always passes
  const double mean = hn::GetLane(hn::SumOfLanes(d, support_sum)) / count;
  const V m = hn::Set(d, mean);
  V spread = zero;
  for (std::size_t i = 0; i < c.size; i += N) {
    const V z = hn::Load(d, support_z + i);
    const auto in = hn::Gt(z, minus_inf);
    const V u = hn::IfThenElseZero(in, hn::Sub(z, m));
    spread = hn::MulAdd(u, u, spread);
  }
  const double v = hn::GetLane(hn::SumOfLanes(d, spread));
  return std::sqrt(std::max(0.0, 1 - v) / count) - mean;
}

double QuadraticOffsetPairwise(const double* y, std::size_t n, double a) {
  PaddedCandidates c;
  Pad(y, n, c);
  return QuadraticOffsetOfPadded(c, a);
}

// Candidates of the Newton iteration of newton_threshold.h in a block on the stack, with the
// sums and the drop of the solvers' kernels inlined (threshold.cc's sums_at_lambda for k = 2).
struct BlockCandidates {
  double* y;
  std::size_t n;
  double a;
  std::size_t size() const { return n; }
  PowerSums sums(double lambda) const { return SumPowersOf<2>(y, n, {a, 1 - a * lambda, 2.0, 2}); }
  void drop_at_or_below(double bound) { n = DropAtOrBelow(y, n, bound); }
};

// ---- tiny rows, one row per lane ---------------------------------------------------------------

// A block of rows (the tiny rows, or a group of candidates) holds a row per lane and is sorted
// in float, a vector of floats of rows converted to double after the sort, or in double, a
// vector of doubles of rows (half as many for the same instructions). Floats sort in float on
// every target below AVX-512 (AVX2, an AMD EPYC Zen 3, 2026-12-03: rows of 16 1.1-1.2x faster
// than in double, of 64 1.2-1.3x).
template <class T>
constexpr bool kSortsOnlyFloatLanes = std::is_same_v<T, float> && HWY_TARGET > HWY_AVX3 && HWY_TARGET != HWY_SCALAR;
// On AVX-512 floats sort in float where the network is long: tiny rows of 16 and 32 entries
// (TinyRows; 1.2-1.3x faster than 8 rows in double on rows of 16 of sparsemax and entmax-1.5, an
// AMD EPYC Zen 5, 2026-12-05), and entmax-1.5's groups of up to 32 candidates (ShortRows: rows of
// 64 and 128 1.1-1.2x faster). Shorter networks gain less than the 16-row transpose and the
// conversions cost (sparsemax's groups of 16 candidates: 0.8-0.9x), and rows of 4-8 entries
// keep doubles (not measured).
template <class T, std::size_t Size>
constexpr bool kSortsFloatLanes =
    kSortsOnlyFloatLanes<T> || (std::is_same_v<T, float> && HWY_TARGET <= HWY_AVX3 && Size >= 16);

// The rows of a block that sorts in float (Floats) or in double.
template <class T, bool Floats>
HWY_INLINE std::size_t BlockRowsOf() {
  if constexpr (Floats) {
    return hn::Lanes(hn::ScalableTag<float>());
  } else {
    return hn::Lanes(hn::ScalableTag<double>());
  }
}

// The rows of a tiny block (TinyRows) of rows of up to Size entries.
template <class T, std::size_t Size>
HWY_INLINE std::size_t BlockRows() {
  return BlockRowsOf<T, kSortsFloatLanes<T, Size>>();
}

// Rows of a few entries cost a horizontal reduction per pass; the kernels for them take a block
// of BlockRows<T, Size>() rows at once, transposed (column j of the rows in one vector, row l in
// lane l), so that each reduction becomes lane-wise arithmetic shared by the rows.
template <std::size_t Size, class T>
struct TinyBlock {
  alignas(kMaxBytes) T columns[Size][kMaxBytes / sizeof(double)];  ///< column j, row l in lane l
};

// Transposes the block of rows of length n <= Size at x by scalar stores; the kernels do it a
// block ahead of the vector loads that read it: a load that spans several stores waits for them
// to retire, and a gather per column costs more (both measured).
template <std::size_t Size, class T>
HWY_INLINE void TransposeTinyBlock(const T* x, std::size_t n, TinyBlock<Size, T>& block) {
  const std::size_t L = BlockRows<T, Size>();
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t j = 0; j < n; ++j) block.columns[j][l] = x[l * n + j];
}

// a of the short-row kernels: 1 for sparsemax (k = 1), 1/2 for entmax-1.5 (k = 2).
constexpr double ShortRowScale(int k) { return k == 1 ? 1.0 : 0.5; }

// Batcher's odd-even merge sort of `size` = 2^m entries as its compare-exchanges f(i, j), i < j,
// in order (Knuth, TAOCP 5.3.4): exchanging so that v[i] >= v[j] at each sorts v decreasingly.
template <class F>
constexpr void ForEachOddEvenMergePair(std::size_t size, F&& f) {
  for (std::size_t p = 1; p < size; p *= 2)
    for (std::size_t k = p; k >= 1; k /= 2)
      for (std::size_t j = k % p; j + k < size; j += 2 * k)
        for (std::size_t i = 0; i < std::min(k, size - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) f(i + j, i + j + k);
}

template <std::size_t Size>
constexpr auto OddEvenMergePairs() {
  constexpr std::size_t count = [] {
    std::size_t c = 0;
    ForEachOddEvenMergePair(Size, [&](std::size_t, std::size_t) { ++c; });
    return c;
  }();
  std::array<std::array<std::uint8_t, 2>, count> pairs{};
  std::size_t c = 0;
  ForEachOddEvenMergePair(Size, [&](std::size_t i, std::size_t j) {
    pairs[c++] = {static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(j)};
  });
  return pairs;
}

template <std::size_t Size>
constexpr auto kOddEvenMergePairs = OddEvenMergePairs<Size>();

// Sorts each lane of v[0, Size) decreasingly (no NaN), by the network above unrolled: the
// indices are constants, so that v stays in registers.
template <std::size_t Size, class D, std::size_t... I>
HWY_INLINE void SortLanesDescending(D, hn::Vec<D>* v, std::index_sequence<I...>) {
  constexpr auto& pairs = kOddEvenMergePairs<Size>;
  auto exchange = [&](std::size_t i, std::size_t j) HWY_ATTR {
    const hn::Vec<D> high = hn::Max(v[i], v[j]);
    v[j] = hn::Min(v[i], v[j]);
    v[i] = high;
  };
  (exchange(pairs[I][0], pairs[I][1]), ...);
}

// The thresholds of sparsemax (k = 1, a = 1) or entmax-1.5 (k = 2, a = 1/2) for hn::Lanes(d)
// rows at once, row l in lane l, from the columns y[0, Size) in double, sorted decreasingly in
// each lane (by SolveTinyColumns below), whose lane l holds row l's entries (or its candidates:
// every entry above max - 1/a, the maximum among them), padded with -inf, its maximum finite.
// The support is found in sorted order with y = x - max (y_0 = 0 >= y_1 >= ...) from
//   G_k = sum_(j<k) (y_j - y_k) = G_(k-1) + k d,
//   F_k = sum_(j<k) (y_j - y_k)^2 = F_(k-1) + d (2 G_(k-1) + k d),   d = y_(k-1) - y_k >= 0,
// sums of non-negative terms (no cancellation). They are the pairwise criteria of
// LinearOffsetOfPadded and QuadraticOffsetOfPadded at entry k: k = 1 keeps entry k iff
// 1 - a G_k > 0, k = 2 iff F_k < 1 / a^2 (an entry at or below max - 1/a fails both); both are
// monotone in k, so the support is the first K entries. Then, as there, k = 1:
// offset = (1 - a sum_S y) / K; k = 2, with the mean and the centred sum of z = a y over S from
// G_K and F_K (mean_S y = y_K + G_K / K, sum_S (y - mean)^2 = F_K - G_K^2 / K, below 1 / a^2 on
// the support):
//   offset = sqrt((1 - a^2 (F_K - G_K^2 / K)) / K) - a mean_S y.
// Padding and masked entries (-inf) give d = +inf or NaN, which fails both criteria. y holds H
// parts of Size columns each (part h: y[h Size, h Size + Size), rows [h N, h N + N)), taken in
// the same loop: each part's sums are a chain of dependent additions, and two parts side by side
// keep both chains in flight (the floats' halves, SolveTinyColumns). Stores each lane's maximum
// and offset, part h at [h N, h N + N).
template <std::size_t Size, std::size_t H, class D>
HWY_INLINE void StoreSortedThresholds(D d, const hn::Vec<D>* y, int k, double* maxima,
                                      double* offsets) {
  using V = hn::Vec<D>;
  using M = hn::Mask<D>;
  const std::size_t N = hn::Lanes(d);
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const double a = ShortRowScale(k);
  const V a_vector = hn::Set(d, a);
  V max[H], offset[H];
  for (std::size_t h = 0; h < H; ++h) max[h] = y[h * Size];
  // Whether no lane of any part keeps the entry.
  auto none = [&](const M* in) HWY_ATTR {
    M any = in[0];
    for (std::size_t h = 1; h < H; ++h) any = hn::Or(any, in[h]);
    return hn::AllFalse(d, any);
  };
  if (k == 1) {
    V g[H], support_sum[H], size[H];  // entry 0, y = 0, is always in the support
    for (std::size_t h = 0; h < H; ++h) g[h] = support_sum[h] = zero, size[h] = one;
    for (std::size_t i = 1; i < Size; ++i) {
      M in[H];
      V yi[H];
      for (std::size_t h = 0; h < H; ++h) {
        const V gap = hn::Sub(y[h * Size + i - 1], y[h * Size + i]);
        yi[h] = hn::Sub(y[h * Size + i], max[h]);
        g[h] = hn::MulAdd(hn::Set(d, static_cast<double>(i)), gap, g[h]);
        in[h] = hn::Gt(hn::NegMulAdd(a_vector, g[h], one), zero);
      }
      // The criterion is monotone: once no lane keeps entry i, no later entry is kept (a
      // sparsemax support is mostly a few of the candidates: 1.08-1.14x faster on rows of 16,
      // 1.03-1.05x on 64, within 3% beyond; entmax-1.5's is most of them, and the same exit
      // lost 5% on its rows of 16; AMD EPYC, 2026-12-03).
      if (none(in)) break;
      for (std::size_t h = 0; h < H; ++h) {
        support_sum[h] =
            hn::Add(support_sum[h], hn::IfThenElseZero(in[h], hn::Mul(a_vector, yi[h])));
        size[h] = hn::Add(size[h], hn::IfThenElseZero(in[h], one));
      }
    }
    for (std::size_t h = 0; h < H; ++h) offset[h] = hn::Div(hn::Sub(one, support_sum[h]), size[h]);
  } else {
    const V bound = hn::Set(d, 1 / (a * a));
    V g[H], f[H], size[H], last_y[H], last_g[H], last_f[H];
    for (std::size_t h = 0; h < H; ++h)
      g[h] = f[h] = last_y[h] = last_g[h] = last_f[h] = zero, size[h] = one;
    for (std::size_t i = 1; i < Size; ++i) {
      M in[H];
      V yi[H];
      for (std::size_t h = 0; h < H; ++h) {
        const V gap = hn::Sub(y[h * Size + i - 1], y[h * Size + i]);
        const V step = hn::Mul(hn::Set(d, static_cast<double>(i)), gap);
        yi[h] = hn::Sub(y[h * Size + i], max[h]);
        f[h] = hn::MulAdd(gap, hn::Add(hn::Add(g[h], g[h]), step), f[h]);
        g[h] = hn::Add(g[h], step);
        in[h] = hn::Lt(f[h], bound);
      }
      // Past the support of every lane, as for k = 1; only for the candidates of longer rows
      // (up to 32): on rows of 16 (every entry a column) the exit's mispredictions cost more
      // than the columns it saves (AVX2, an AMD EPYC Zen 3, 2026-12-03: rows of 64 1.1x faster,
      // rows of 16 0.85x; as on AVX-512 before).
      if (Size > 16 && none(in)) break;
      for (std::size_t h = 0; h < H; ++h) {
        size[h] = hn::Add(size[h], hn::IfThenElseZero(in[h], one));
        last_y[h] = hn::IfThenElse(in[h], yi[h], last_y[h]);
        last_g[h] = hn::IfThenElse(in[h], g[h], last_g[h]);
        last_f[h] = hn::IfThenElse(in[h], f[h], last_f[h]);
      }
    }
    for (std::size_t h = 0; h < H; ++h) {
      const V mean_gap = hn::Div(last_g[h], size[h]);  // mean_S y - y_K
      const V spread =
          hn::Mul(hn::Mul(a_vector, a_vector), hn::NegMulAdd(mean_gap, last_g[h], last_f[h]));
      offset[h] = hn::Sub(hn::Sqrt(hn::Div(hn::Max(zero, hn::Sub(one, spread)), size[h])),
                          hn::Mul(a_vector, hn::Add(last_y[h], mean_gap)));
    }
  }
  for (std::size_t h = 0; h < H; ++h) {
    hn::Store(max[h], d, maxima + h * N);
    hn::Store(offset[h], d, offsets + h * N);
  }
}

// The thresholds of the rows in the lanes of the columns y[0, Size) (doubles, or floats with
// twice as many lanes, see kSortsFloatLanes; Size a power of two) by StoreSortedThresholds:
// each lane sorted by a sorting network (exact: a sort does not round, nor does the conversion
// of floats to double after it). A row of a few entries (or candidates) is otherwise all fixed
// cost: passes that each end in a horizontal reduction; here the lanes share them. Stores each
// lane's maximum and offset, as doubles; returns false, having stored nothing, when a lane has
// no finite maximum (a NaN or +inf entry, or every entry -inf).
template <std::size_t Size, class D>
HWY_INLINE bool SolveTinyColumns(D d, hn::Vec<D>* y, int k, double* maxima, double* offsets) {
  using T = hn::TFromD<D>;
  const auto infinity = hn::Set(d, kInf<T>);
  auto unusable = hn::Lt(infinity, infinity);  // no lane yet
  for (std::size_t j = 0; j < Size; ++j) unusable = hn::Or(unusable, hn::Not(hn::Lt(y[j], infinity)));  // NaN or +inf
  if (!hn::AllFalse(d, unusable)) return false;
  SortLanesDescending<Size>(d, y, std::make_index_sequence<kOddEvenMergePairs<Size>.size()>());
  if (!hn::AllFalse(d, hn::Eq(y[0], hn::Set(d, -kInf<T>)))) return false;
  if constexpr (std::is_same_v<T, double>) {
    StoreSortedThresholds<Size, 1>(d, y, k, maxima, offsets);
  }
#if HWY_TARGET != HWY_SCALAR  // (which has no halves: kSortsFloatLanes is false there)
  if constexpr (std::is_same_v<T, float>) {  // the lower and upper halves of the lanes together
    static_assert(hn::MaxLanes(D()) == 2 * hn::MaxLanes(hn::ScalableTag<double>()));
    const hn::ScalableTag<double> dd;
    const hn::Half<D> dh;
    hn::Vec<decltype(dd)> halves[2 * Size];
    for (std::size_t j = 0; j < Size; ++j) {
      halves[j] = hn::PromoteTo(dd, hn::LowerHalf(dh, y[j]));
      halves[Size + j] = hn::PromoteTo(dd, hn::UpperHalf(dh, y[j]));
    }
    StoreSortedThresholds<Size, 2>(dd, halves, k, maxima, offsets);
  }
#endif
  return true;
}

// SolveTinyColumns on the columns [0, n) of a block (the others taken as -inf); the block may hold
// more columns than Size (Capacity), only the first Size are read.
template <std::size_t Size, std::size_t Capacity, class T>
HWY_INLINE bool SolveTinyBlock(const TinyBlock<Capacity, T>& block, std::size_t n, int k, double* maxima,
                               double* offsets) {
  static_assert(Size <= Capacity);
  using U = std::conditional_t<kSortsFloatLanes<T, Capacity>, float, double>;  // the type the network sorts
  const hn::ScalableTag<U> d;
  const hn::Rebind<T, decltype(d)> dt;
  hn::Vec<decltype(d)> y[Size];
  for (std::size_t j = 0; j < Size; ++j)
    y[j] = j < n ? PromoteColumn(d, hn::Load(dt, block.columns[j])) : hn::Set(d, -kInf<U>);
  return SolveTinyColumns<Size>(d, y, k, maxima, offsets);
}

// The offset of one row of sparsemax (k = 1) or entmax-1.5 (k = 2) from its count <= 32
// candidates (every entry of its support among them, the maximum too) by the arithmetic of a
// group's lanes: sorted, then StoreSortedThresholds on a vector whose lanes all hold the row. A
// row alone, among a batch's last rows or left by its group (ShortRows' row_done) so gets the
// bits a full group gives it: the sort is exact, the prefix scan sees the same leading entries
// (the candidates are a row's largest), and entries past the support change nothing, however many
// (a pairwise criterion here before 2026-12-07 put one or two ulps between a double row alone and
// in a batch, for 9-27 of 64 rows of entmax-1.5: the thread count changed the bits).
// One copy a target, for both row types and at one width (32: the scan stops past the support),
// so that this rare path adds one inlined scan to the file, not six.
HWY_NOINLINE double SortedRowOffset(double* candidates, std::size_t count, int k) {
  const hn::ScalableTag<double> d;
  std::sort(candidates, candidates + count, [](double u, double v) { return u > v; });
  hn::Vec<decltype(d)> y[kPairwiseQuadratic];
  for (std::size_t j = 0; j < kPairwiseQuadratic; ++j)
    y[j] = hn::Set(d, j < count ? candidates[j] : -kInf<double>);
  alignas(kMaxBytes) double maxima[kMaxBytes / sizeof(double)], offsets[kMaxBytes / sizeof(double)];
  StoreSortedThresholds<kPairwiseQuadratic, 1>(d, y, k, maxima, offsets);
  return offsets[0];
}

// One row's threshold for the write: the row's maximum and p = [a (x - max) + offset]_+^k, with
// lambda = (1 - offset) / a for tau.
template <class T>
struct RowThreshold {
  T max;
  double offset, lambda;
  /// From the offset of the closed forms (Newton gives lambda, with its own offset).
  static RowThreshold FromOffset(T max, double offset, int k) {
    return {max, offset, (1 - offset) / ShortRowScale(k)};
  }
};

// p = [a (x - max) + offset]_+^k (k = 1, 2) over a row of length n, as Write does it; tau (if not
// null) = a (max + lambda) - 1.
template <class T>
HWY_INLINE void WriteShortRow(const T* x, T* p, T* tau, std::size_t n, int k, const RowThreshold<T>& t) {
  const double a = ShortRowScale(k);
  WriteOffsetPower(x, p, n, t.max, static_cast<T>(a), static_cast<T>(t.offset), k == 2);
  if (tau) *tau = sparcon::detail::entmax_tau(a, t.max, t.lambda);
}

#if HWY_TARGET != HWY_SCALAR
// ---- blocks of rows of floats loaded whole -------------------------------------------------------

// Floats on every target but HWY_SCALAR load a block's rows whole, a vector at a time, and make
// their columns in registers: N rows of N floats into N columns of N floats (TransposeSquare,
// N = 4, 8 or 16) where they sort in float (kFloatBlockRows<true> rows), on AVX-512 also 8 rows
// of 16 into 16 columns of 8 doubles (ColumnsOfRows) where they sort in double
// (kFloatBlockRows<false>). A block's rows are given as rows[h][l] = entries [N h, N h + N) of
// row l, -inf past its end.
using FloatTag = hn::ScalableTag<float>;
using FloatVec = hn::Vec<FloatTag>;
constexpr std::size_t kRowLanes = hn::MaxLanes(FloatTag());  // N
template <bool Floats>
constexpr std::size_t kFloatBlockRows = Floats ? kRowLanes : kRowLanes / 2;
// The vectors of a row of up to Size entries.
template <std::size_t Size>
constexpr std::size_t kRowVectors = (Size + kRowLanes - 1) / kRowLanes;

// Entries [N h, N h + N) of the first `count` at x as a vector, the other lanes -inf.
HWY_INLINE FloatVec RowVector(const float* x, std::size_t count, std::size_t h) {
  const std::size_t lanes = std::min(kRowLanes, count - std::min(count, kRowLanes * h));
  return LoadTail(FloatTag(), x + kRowLanes * h, lanes, -kInf<float>);
}

#if HWY_TARGET <= HWY_AVX3
// y[j] = column j (j < 16) of the 8 rows of 16 floats, in double, row l in lane l: the rows
// interleaved by pairs of floats, then of doubles (u[j], u[4 + j]: rows 0-3 and 4-7 of column
// 4b + j in 128-bit block b), then whole blocks regrouped.
template <class DD>
HWY_INLINE void ColumnsOfRows(DD, const hn::Vec<hn::ScalableTag<float>>* rows, hn::Vec<DD>* y) {
  __m512 t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = _mm512_unpacklo_ps(rows[2 * p].raw, rows[2 * p + 1].raw);
    t[2 * p + 1] = _mm512_unpackhi_ps(rows[2 * p].raw, rows[2 * p + 1].raw);
  }
  for (int h = 0; h < 2; ++h) {
    const __m512d a = _mm512_castps_pd(t[4 * h]), b = _mm512_castps_pd(t[4 * h + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * h + 1]), e = _mm512_castps_pd(t[4 * h + 3]);
    u[4 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    u[4 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    u[4 * h + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, e));
    u[4 * h + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, e));
  }
  auto lower = [](__m512 v) HWY_ATTR { return hn::Vec<DD>{_mm512_cvtps_pd(_mm512_castps512_ps256(v))}; };
  auto upper = [](__m512 v) HWY_ATTR {
    return hn::Vec<DD>{_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))};
  };
  for (int j = 0; j < 4; ++j) {
    const __m512 low = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 high = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 first = _mm512_shuffle_f32x4(low, low, _MM_SHUFFLE(3, 1, 2, 0));     // columns j, 4 + j
    const __m512 second = _mm512_shuffle_f32x4(high, high, _MM_SHUFFLE(3, 1, 2, 0));  // 8 + j, 12 + j
    y[j] = lower(first);
    y[4 + j] = upper(first);
    y[8 + j] = lower(second);
    y[12 + j] = upper(second);
  }
}
#endif

// columns[j] = column j of the N rows rows[0, N) of N floats (N = 4, 8 or 16), row l in lane
// l: the rows interleaved by pairs of floats, then of pairs (column 4b + j of rows 4q..4q + 3
// in 128-bit block b of u[4q + j]), then, for N = 8, the 256-bit halves regrouped, for N = 16
// the 128-bit blocks (a 4 x 4 transpose of blocks for each j).
template <class D>
HWY_INLINE void TransposeSquare(D d, const hn::Vec<D>* rows, hn::Vec<D>* columns) {
  constexpr std::size_t N = hn::MaxLanes(D());
  static_assert(N == 4 || N == 8 || N == 16);
  const hn::Repartition<double, D> d64;
  hn::Vec<D> t[N], u[N];
  for (std::size_t p = 0; p < N / 2; ++p) {
    t[2 * p] = hn::InterleaveLower(d, rows[2 * p], rows[2 * p + 1]);
    t[2 * p + 1] = hn::InterleaveUpper(d, rows[2 * p], rows[2 * p + 1]);
  }
  for (std::size_t q = 0; q < N / 4; ++q) {
    const auto a = hn::BitCast(d64, t[4 * q]), b = hn::BitCast(d64, t[4 * q + 2]);
    const auto c = hn::BitCast(d64, t[4 * q + 1]), e = hn::BitCast(d64, t[4 * q + 3]);
    u[4 * q] = hn::BitCast(d, hn::InterleaveLower(d64, a, b));
    u[4 * q + 1] = hn::BitCast(d, hn::InterleaveUpper(d64, a, b));
    u[4 * q + 2] = hn::BitCast(d, hn::InterleaveLower(d64, c, e));
    u[4 * q + 3] = hn::BitCast(d, hn::InterleaveUpper(d64, c, e));
  }
  for (std::size_t j = 0; j < 4; ++j) {
    if constexpr (N == 4) {
      columns[j] = u[j];
    } else if constexpr (N == 8) {
      columns[j] = hn::ConcatLowerLower(d, u[4 + j], u[j]);
      columns[4 + j] = hn::ConcatUpperUpper(d, u[4 + j], u[j]);
    } else {
#if HWY_TARGET <= HWY_AVX3
      const __m512 s0 = _mm512_shuffle_f32x4(u[j].raw, u[4 + j].raw, _MM_SHUFFLE(1, 0, 1, 0));
      const __m512 s1 = _mm512_shuffle_f32x4(u[j].raw, u[4 + j].raw, _MM_SHUFFLE(3, 2, 3, 2));
      const __m512 s2 = _mm512_shuffle_f32x4(u[8 + j].raw, u[12 + j].raw, _MM_SHUFFLE(1, 0, 1, 0));
      const __m512 s3 = _mm512_shuffle_f32x4(u[8 + j].raw, u[12 + j].raw, _MM_SHUFFLE(3, 2, 3, 2));
      columns[j] = hn::Vec<D>{_mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(2, 0, 2, 0))};
      columns[4 + j] = hn::Vec<D>{_mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(3, 1, 3, 1))};
      columns[8 + j] = hn::Vec<D>{_mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(2, 0, 2, 0))};
      columns[12 + j] = hn::Vec<D>{_mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(3, 1, 3, 1))};
#endif
    }
  }
}

// SolveTinyColumns on the columns [0, Size) of a block of kFloatBlockRows<Floats> rows given as
// vectors, sorted in float (Floats) or in double (AVX-512 only).
template <std::size_t Size, bool Floats>
HWY_INLINE bool SolveFloatRows(const FloatVec (*rows)[kFloatBlockRows<Floats>], int k, double* maxima,
                               double* offsets) {
  if constexpr (Floats) {
    FloatVec y[kRowLanes * kRowVectors<Size>];
    for (std::size_t h = 0; h < kRowVectors<Size>; ++h) TransposeSquare(FloatTag(), rows[h], y + kRowLanes * h);
    return SolveTinyColumns<Size>(FloatTag(), y, k, maxima, offsets);
  } else {
#if HWY_TARGET <= HWY_AVX3
    const hn::ScalableTag<double> dd;
    hn::Vec<decltype(dd)> y[16 * kRowVectors<Size>];
    for (std::size_t h = 0; h < kRowVectors<Size>; ++h) ColumnsOfRows(dd, rows[h], y + 16 * h);
    return SolveTinyColumns<Size>(dd, y, k, maxima, offsets);
#else
    static_assert(Floats, "floats sort in double on AVX-512 only");
#endif
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

// Rows [0, rows) of length n <= Size, a block of lanes at a time; the rows of a block that
// SolveTinyColumns leaves and the last rows, fewer than a block, go one by one to row_done(r),
// which returns false for a row it leaves to the caller. Returns that row's index, or rows.
// Floats load each row as whole vectors and turn them into columns in registers (SolveFloatRows):
// on AVX-512 every row (masked loads; 1-2% faster on rows of 16 than the block, within noise, an
// AMD EPYC, 2026-12-03), elsewhere rows of a multiple of N entries (AVX2, an AMD EPYC Zen 3, the
// same day: rows of 16 1.2-1.3x faster than the block; a partial vector through LoadTail's stack
// block made them 0.8x as fast). The other rows are transposed into a block by scalar stores,
// the next block before the current one is solved (a vector load across fresh stores waits for
// them to retire).
template <std::size_t Size, class T, class RowDone>
HWY_INLINE std::size_t TinyRows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n, int k,
                                RowDone&& row_done) {
  const std::size_t L = BlockRows<T, Size>();
  TinyBlock<Size, T> blocks[2];
  alignas(kMaxBytes) double maxima[kMaxBytes / sizeof(float)], offsets[kMaxBytes / sizeof(float)];
  // The thresholds of rows [r, r + L), the b-th block.
  auto solve_block = [&](std::size_t b, std::size_t r) HWY_ATTR -> bool {
#if HWY_TARGET != HWY_SCALAR
    if constexpr (std::is_same_v<T, float>) {
      constexpr bool kMasked = HWY_TARGET <= HWY_AVX3;
      if (kMasked || n % kRowLanes == 0) {
        constexpr bool kFloats = kSortsFloatLanes<T, Size>;
        FloatVec loaded[kRowVectors<Size>][kFloatBlockRows<kFloats>];
        for (std::size_t l = 0; l < kFloatBlockRows<kFloats>; ++l) {
          for (std::size_t h = 0; h < kRowVectors<Size>; ++h) {
            loaded[h][l] = kMasked ? RowVector(x + (r + l) * n, n, h)
                         : kRowLanes * h < n ? hn::LoadU(FloatTag(), x + (r + l) * n + kRowLanes * h)
                                             : hn::Set(FloatTag(), -kInf<float>);
          }
        }
        return SolveFloatRows<Size, kFloats>(loaded, k, maxima, offsets);
      }
    }
#endif
    if (b == 0) TransposeTinyBlock(x + r * n, n, blocks[0]);
    if (r + 2 * L <= rows) TransposeTinyBlock(x + (r + L) * n, n, blocks[(b + 1) & 1]);
    return SolveTinyBlock<Size>(blocks[b & 1], n, k, maxima, offsets);
  };
  // The block's rows written, their length a constant where it is Size: whole vectors, no tail
  // (floats, AVX-512, against the length as a variable: sparsemax on rows of 16 1.27x faster, 32
  // 1.10x; entmax-1.5 1.20x and 1.08x; an AMD EPYC Zen 5, 2026-12-06).
  auto write_block = [&](std::size_t r, auto length) HWY_ATTR {
    for (std::size_t l = 0; l < L; ++l, ++r) {
      WriteShortRow(x + r * length, p + r * length, tau ? tau + r : nullptr, length, k,
                    RowThreshold<T>::FromOffset(static_cast<T>(maxima[l]), offsets[l], k));
    }
  };
  std::size_t r = 0;
  for (std::size_t b = 0; r + L <= rows; ++b) {
    if (solve_block(b, r)) {
      if (n == Size) {
        write_block(r, std::integral_constant<std::size_t, Size>());
      } else {
        write_block(r, n);
      }
      r += L;
      continue;
    }
    for (std::size_t end = r + L; r < end; ++r)  // the block's rows one by one
      if (!row_done(r)) return r;
  }
  for (; r < rows; ++r)
    if (!row_done(r)) return r;
  return rows;
}

// ---- narrowing the candidates ------------------------------------------------------------------

// Candidates past this many take a Newton step that drops the entries below its lower bound
// (NarrowCandidates), at most kMaxNarrowingSteps times.
constexpr int kMaxNarrowingSteps = 3;

// A lower bound lambda > 0 of the threshold from one Newton step (k = 1: Michelot's) taken at
// the lower bound lambda of the candidates x[0, n) (all of them above max + lambda - 1/a), with
// u = 1 + a (x - max - lambda) in double:
//   k = 1:  F = sum u - 1,              lambda' = lambda + (sum u - 1) / (a |u > 0|),
//   k = 2:  F = (sum u^2)^(1/2) - 1,    lambda' = lambda + (s - sqrt s) / (a sum u),  s = sum u^2.
// F is convex and decreasing in lambda (a norm of the convex [1 + a (y - lambda)]_+), so a step
// from the left stays at or left of its root; returns lambda itself when the step is at rounding
// level (at the root).
template <class T>
HWY_INLINE double NewtonLowerBound(const T* x, std::size_t n, T max, double a, int k, double lambda) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const hn::Rebind<T, decltype(d)> dt;
  const std::size_t N = hn::Lanes(d);
  const V shift = hn::Set(d, static_cast<double>(max)), a_vector = hn::Set(d, a);
  const V base = hn::Set(d, 1 - a * lambda), zero = hn::Zero(d);
  V sum[2] = {zero, zero}, squares[2] = {zero, zero};
  std::size_t count = 0;
  auto add = [&](int j, V v) HWY_ATTR {
    const V u = hn::MulAdd(a_vector, hn::Sub(v, shift), base);  // -inf padding: u = -inf
    const auto inside = hn::Gt(u, zero);
    const V kept = hn::IfThenElseZero(inside, u);
    sum[j] = hn::Add(sum[j], kept);
    squares[j] = hn::MulAdd(kept, kept, squares[j]);
    count += hn::CountTrue(d, inside);
  };
  std::size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    add(0, PromoteColumn(d, hn::LoadU(dt, x + i)));
    add(1, PromoteColumn(d, hn::LoadU(dt, x + i + N)));
  }
  for (; i < n; i += N) add(0, PromoteColumn(d, LoadTail(dt, x + i, std::min(N, n - i), -kInf<T>)));
  const double s1 = hn::GetLane(hn::SumOfLanes(d, hn::Add(sum[0], sum[1])));
  double step;
  if (k == 1) {
    step = (s1 - 1) / (a * static_cast<double>(count));
  } else {
    const double s2 = hn::GetLane(hn::SumOfLanes(d, hn::Add(squares[0], squares[1])));
    step = (s2 - std::sqrt(s2)) / (a * s1);
  }
  return step > 0 ? lambda + step : lambda;
}

// The candidates' threshold from a lower bound lambda of the threshold: entries at or below
// max + lambda - 1/a are outside the support; less a margin far above its rounding, rounded down.
template <class T>
HWY_INLINE T BelowLowerBound(T max, double lambda, double a) {
  const double margin = 0x1p-30 * (std::abs(static_cast<double>(max)) + 1 / a);
  return sparcon::detail::round_down<T>(static_cast<double>(max) + lambda - 1 / a - margin);
}

// The threshold of the collection of a row (k = 1 or 2, a = ShortRowScale(k)) with maximum max
// and another entry `second` <= max, in every lane: entries at or below it are outside the
// support. It is the threshold of those two entries alone, max + lambda - 1/a for the root lambda
// of (1 - a lambda)^k + (1 - a lambda - e)^k = 1, e = a (max - second) (F of NewtonLowerBound on
// the pair), which with e clamped to [0, 1] (from e = 1 on, the pair's support is the maximum
// alone, and the threshold max - 1/a) is
//   k = 1:  max - (1 + e) / 2,
//   k = 2:  max - (e + sqrt(2 - e^2)),
// less a margin of 2^-16 (|max| + 1/a), far above the few roundings of T on the way (at most
// about 2^-20 of that). The row's F adds terms >= 0, each decreasing in lambda, to the pair's,
// so its threshold lies at or above the pair's. On N(0,1) scores, with second the largest of
// the half of the row without the maximum (RowInRegisters::Load, MaxOf), it takes entmax-1.5's
// candidates of rows of 64 from 24 on average to 16.5 (rows with more than 32, which
// NarrowCandidates must narrow, from 22% to 1.6%), sparsemax's of rows of 128 from 9 to 5 and of
// 512 from 14 to 6.4 (more than 16: from 11% to 0.2%, and from 34% to 1.6%); sampled in Python,
// 5000-20000 rows a shape. In vectors: the halves' maxima are reduced in vectors, and the chain
// from them to the collection's comparisons has no scalar step.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V PairThreshold(D d, V max, V second, int k) {
  using T = hn::TFromD<D>;
  const V one = hn::Set(d, T(1)), gap = hn::Set(d, static_cast<T>(1 / ShortRowScale(k)));
  const V e =
      hn::Min(hn::Mul(hn::Sub(max, second), hn::Set(d, static_cast<T>(ShortRowScale(k)))), one);
  const V drop = k == 1 ? hn::Mul(hn::Add(one, e), hn::Set(d, T(0.5)))
                        : hn::Add(e, hn::Sqrt(hn::NegMulAdd(e, e, hn::Set(d, T(2)))));
  const V margin = hn::Mul(hn::Set(d, static_cast<T>(0x1p-16)), hn::Add(hn::Abs(max), gap));
  return hn::Sub(hn::Sub(max, drop), margin);
}

// The lower bound lambda >= 0 of the threshold (Newton's start) that a collection's threshold t
// of a row with maximum max proves: t = max + lambda - 1/a.
template <class T>
HWY_INLINE double LowerBoundBelow(T t, T max, double a) {
  return std::max(0.0, static_cast<double>(t) - static_cast<double>(max) + 1 / a);
}

// The candidates of a row (k = 1 or 2) into out (room for n + N) above PairThreshold, from the
// largest entries of two halves of the row found with its maximum *max (read once for rows of up
// to 8 vectors, RowInRegisters); *lambda the lower bound of the threshold it proves. Returns 0
// where the maximum is not finite. For sparsemax's rows of 64 of N(0,1) scores the pair's
// threshold keeps 4.3 candidates on average where max - 1 keeps 7: 63% of their groups of 8
// rows then have at most 8 candidates a row, and are solved at 8 columns (ShortRows).
template <class T>
HWY_INLINE std::size_t CollectAbovePairBound(const T* row, std::size_t n, int k, T* max, T* out,
                                             double* lambda) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t N = hn::Lanes(d);
  auto in_registers = [&](auto registers) HWY_ATTR -> std::size_t {
    V second;
    const V maximum = registers.Load(row, n, &second);
    *max = hn::GetLane(maximum);
    if (!(*max > -kInf<T> && *max < kInf<T>)) return 0;
    const V t = PairThreshold(d, maximum, second, k);
    *lambda = LowerBoundBelow(hn::GetLane(t), *max, ShortRowScale(k));
    return registers.Compress(t, out);
  };
  if (n <= 4 * N) return in_registers(RowInRegisters<4, T>());
  if (n <= 8 * N) return in_registers(RowInRegisters<8, T>());
  T second;
  *max = MaxOf(row, n, static_cast<T*>(nullptr), &second);
  if (!(*max > -kInf<T> && *max < kInf<T>)) return 0;
  const T t = hn::GetLane(PairThreshold(d, hn::Set(d, *max), hn::Set(d, second), k));
  *lambda = LowerBoundBelow(t, *max, ShortRowScale(k));
  return CollectSkipping(row, n, t, out);
}

// Rows of at least this many entries may take LaneMaximaLowerBound before their collection.
constexpr std::size_t kMinLaneBoundRow = 128;

// Entmax-1.5's rows longer than this take LaneMaximaLowerBound's bound (CollectAboveLaneBound),
// the others PairThreshold's (CollectAbovePairBound). Rows of 128 N(0,1) scores keep about as
// many candidates with either (21.6 on average with the pair's, 20 with the lane maxima's) and
// were 1.05x faster with the pair's (compare.sh, 6 processes, an AMD EPYC Zen 5, 2026-12-06);
// rows of 512 keep 43 with the pair's, 34 with the lane maxima's.
constexpr std::size_t kMaxPairBoundRow = 128;

// A lower bound lambda of a threshold (entmax-1.5's, k = 2, or a power's, PowerRows) from a
// row's 2N lane maxima (MaxOf's), before its collection, or 0 where it would not pay:
// bound(), one Newton step from 0 (NewtonLowerBound, PowerLowerBound) on those 2N entries
// alone, whose F is below the row's (they are a subset of its entries), so that the step stays
// at or left of the row's threshold. On N(0,1) scores it takes entmax-1.5's
// candidates of rows of 128 from 38 on average to 20, of rows of 512 from 83 to 34 (2N = 16;
// NarrowCandidates would narrow them after the collection). Taken only where at least 3/4 of
// the lane maxima are candidates, i.e. where the row has many: the step is a chain of
// reductions, a square root and a division that the collection waits for, and cost more than it
// saved on rows of few candidates (4 N(0,1) scores: 0.64-0.77x) and on rows of 64 (0.81x; AVX2,
// an AMD EPYC Zen 3, 2026-12-03; rows of 128 and 512 of N(0,1) 1.1x and 1.3x faster).
// candidate: the row's candidate_threshold.
template <class T, class Bound>
HWY_INLINE double LaneMaximaLowerBound(const T* lane_maxima, T candidate, Bound&& bound) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  const auto above = hn::Set(d, candidate);
  const std::size_t near = hn::CountTrue(d, hn::Gt(hn::Load(d, lane_maxima), above)) +
                           hn::CountTrue(d, hn::Gt(hn::Load(d, lane_maxima + N), above));
  return 4 * near >= 3 * 2 * N ? bound() : 0.0;
}

// The candidates of a row of n >= kMinLaneBoundRow entries into out (room for n + N) above
// max - 1/a, or above LaneMaximaLowerBound's bound where it takes one (*lambda: the bound, or 0);
// *max the row's maximum. Returns 0 where the maximum is not finite. Inline: out of line (as it
// was until 2026-12-06, for a lean loop in the rows that do not take it), it cost its callers
// in ShortRows 1.07-1.14x on rows of 32-128 of both sparsemax and entmax-1.5, though only
// entmax-1.5's longer rows call it: GCC 12 then also kept TinyRows<32> out of line
// (inlining decisions; compare.sh, 6 processes, twice; an AMD EPYC Zen 5).
template <class T>
HWY_INLINE std::size_t CollectAboveLaneBound(const T* row, std::size_t n, double a, int k, T* max,
                                             T* out, double* lambda) {
  alignas(kMaxBytes) T lane_maxima[2 * kMaxBytes / sizeof(T)];  // 2 N of them, see MaxOf
  const std::size_t N = hn::Lanes(hn::ScalableTag<T>());
  // The threshold of the collection, once *max and lane_maxima are known.
  auto threshold = [&]() HWY_ATTR {
    const T candidate = candidate_threshold(*max, 1 / a, -kInf<T>);
    *lambda = LaneMaximaLowerBound(lane_maxima, candidate, [&]() HWY_ATTR {
      return NewtonLowerBound(lane_maxima, 2 * N, *max, a, k, 0.0);
    });
    return *lambda > 0 ? BelowLowerBound(*max, *lambda, a) : candidate;
  };
  if (n <= 8 * N) {  // read once (RowInRegisters)
    RowInRegisters<8, T> registers;
    hn::Vec<hn::ScalableTag<T>> second;  // not used
    *max = hn::GetLane(registers.Load(row, n, &second));
    if (!(*max > -kInf<T> && *max < kInf<T>)) return 0;
    registers.StoreLaneMaxima(lane_maxima);
    return registers.Compress(threshold(), out);
  }
  *max = MaxOf(row, n, lane_maxima);
  if (!(*max > -kInf<T> && *max < kInf<T>)) return 0;
  return CollectSkipping(row, n, threshold(), out);
}

// Rows with many candidates (N(0,1) scores: entmax-1.5 rows of 64 have 24 on average within the
// gap of their maximum, 11 after one step; rows of 512 have 83, then 29, then 18) cost a solver
// on their own; a Newton step over them in one SIMD pass, and the drop of the entries below its
// lower bound, is cheaper. While more than `limit` candidates are left in buffer[0, count) (at
// most kMaxNarrowingSteps steps, and only while they drop), each step's bound, less a margin far
// above its rounding, drops the entries at or below max + lambda - 1/a. Returns the count left;
// *lambda is the last lower bound (unchanged without a step: 0, or CollectAboveLaneBound's). The
// threshold solved on the candidates left is the row's: every entry of the support is above each
// lower bound. Out of line: most rows do not need it, and their loop stays lean.
template <class T>
HWY_NOINLINE std::size_t NarrowCandidates(T* buffer, std::size_t count, T max, int k, std::size_t limit,
                                          double* lambda) {
  const double a = ShortRowScale(k);
  for (int step = 0; step < kMaxNarrowingSteps && count > limit; ++step) {
    const double next = NewtonLowerBound(buffer, count, max, a, k, *lambda);
    if (!(next > *lambda)) break;
    *lambda = next;
    const std::size_t kept = Collect(buffer, count, BelowLowerBound(max, next, a), buffer);  // in place
    if (kept == count) break;
    count = kept;
  }
  return count;
}

// ---- the fused short row ---------------------------------------------------------------------

// The longest rows, and the most bytes of rows, that ShortRows takes in groups of lanes (half
// of a 32 KiB L1). Measured: rows of 64 and 128 gain on AVX-512 and AVX2; rows of 512 lost up to
// 10% for entmax-1.5 (AVX2) while their candidates mostly exceeded the block, and since
// NarrowCandidates gain 1.15x (sparsemax) and 1.3x (entmax-1.5) on AVX-512, 1.1-1.5x on AVX2 (an
// AMD EPYC, 2026-12-02; floats: 16 KiB a group of 8); rows of 4096 floats lost, their group of 8
// (128 KiB) read again from L2 by the writes. (Groups of 16 rows, entmax-1.5's floats on
// AVX-512, take rows of up to 256.)
constexpr std::size_t kMaxGroupedRow = 512;
constexpr std::size_t kMaxGroupBytes = 16384;

// The block of a group of rows in ShortRows: row l's candidates are collected into Slot(l)
// (room for kMaxGroupedRow + kMaxLanes), Add(l, count) puts them (count <= Size) in lane l,
// Solve<S> finds the thresholds of the columns [0, S) by SolveTinyColumns (S = Size, or 16 or 8
// when no row has more). A lane that no row was added to since the last Solve keeps finite values
// (the maximum 0 alone at first, then an earlier row's candidates), whose threshold is computed
// and not used. Floats: whether a block of floats sorts in float (kSortsFloatLanes).
template <std::size_t Size, class T, bool Floats = false>
struct GroupBlock {
  static constexpr std::size_t kRows = kMaxBytes / sizeof(double);  // at least BlockRowsOf<T, false>()
  TinyBlock<Size, T> block;
  alignas(kMaxBytes) T slots[kRows][kMaxGroupedRow + kMaxBytes / sizeof(T)];

  GroupBlock() {
    for (std::size_t j = 0; j < Size; ++j)
      for (auto& entry : block.columns[j]) entry = j == 0 ? T(0) : -kInf<T>;
  }
  T* Slot(std::size_t l) { return slots[l]; }
  // By scalar stores as each row is collected, so that they have retired when Solve's vector
  // loads read the columns.
  void Add(std::size_t l, std::size_t count) {
    for (std::size_t j = 0; j < Size; ++j) block.columns[j][l] = j < count ? slots[l][j] : -kInf<T>;
  }
  template <std::size_t S>
  void Solve(int k, double* maxima, double* offsets) {
    SolveTinyBlock<S>(block, S, k, maxima, offsets);
  }
};

#if HWY_TARGET != HWY_SCALAR
// Floats (measured on AVX-512 1.1-1.2x faster than a scatter or scalar stores per row on rows of
// 64-128, an AMD EPYC, 2026-12-03; on AVX2 with the sort in float 1.1-1.2x faster than TinyBlock's
// scalar stores, an AMD EPYC Zen 3, the same day): each row is collected into a slot of its own, and
// Solve loads the rows added as whole vectors (by then the stores that put them there have long
// retired: loaded right after them, a vector across several fresh stores waits for them) and
// turns them into the block's columns in registers (SolveFloatRows). Below AVX-512, whose masked
// loads read no further than asked, Add pads the slot with -inf and Solve loads whole vectors.
template <std::size_t Size, bool Floats>
struct GroupBlock<Size, float, Floats> {
  static constexpr std::size_t kVectors = kRowVectors<Size>, kRows = kFloatBlockRows<Floats>;
  static constexpr bool kPads = HWY_TARGET > HWY_AVX3;
  static_assert(Size % kRowLanes == 0 && Size <= 32);
  alignas(kMaxBytes) float slots[kRows][kMaxGroupedRow + 2 * 32];  // Collect's n + N, or count + Size
  FloatVec rows[kVectors][kRows];
  bool pending[kRows] = {};
  std::size_t counts[kRows] = {};

  GroupBlock() {
    const FloatTag d;
    for (std::size_t l = 0; l < kRows; ++l) {
      for (std::size_t h = 0; h < kVectors; ++h)  // the maximum 0 alone
        rows[h][l] = hn::IfThenElse(hn::FirstN(d, h == 0 ? 1 : 0), hn::Zero(d), hn::Set(d, -kInf<float>));
    }
  }
  float* Slot(std::size_t l) { return slots[l]; }
  void Add(std::size_t l, std::size_t count) {
    pending[l] = true;
    counts[l] = count;
    if constexpr (kPads) {
      for (std::size_t h = 0; h < kVectors; ++h)
        hn::StoreU(hn::Set(FloatTag(), -kInf<float>), FloatTag(), slots[l] + count + kRowLanes * h);
    }
  }
  template <std::size_t S>
  void Solve(int k, double* maxima, double* offsets) {
    static_assert(S <= Size && (S % kRowLanes == 0 || kRowLanes % S == 0));
    for (std::size_t l = 0; l < kRows; ++l) {
      if (!pending[l]) continue;
      for (std::size_t h = 0; h < kRowVectors<S>; ++h) {
        rows[h][l] = kPads ? hn::LoadU(FloatTag(), slots[l] + kRowLanes * h) : RowVector(slots[l], counts[l], h);
      }
      pending[l] = false;
    }
    SolveFloatRows<S, Floats>(rows, k, maxima, offsets);
  }
};
#endif

#if HWY_TARGET <= HWY_AVX3
// ---- entmax-1.5's rows of 33-64 floats in lanes: Newton's steps on whole rows ---------------

// The most Newton's steps a group takes in NewtonLaneRows before its closed form (groups of 16
// rows of 64 N(0,1) scores take 3-4 passes; sampled in Python).
constexpr int kMaxLanePasses = 12;

// Entmax-1.5's rows of 33 to 64 floats on AVX-512, 16 rows at a time, a row per lane: the group
// transposed in registers into 64 columns (TransposeSquare), and each row's threshold found
// without a collection or a sort, by passes over the columns that the 16 rows share. In units
// y = (x - max)/2 a row's p = [y + o]_+^2, its offset o in (0, 1] the root of sum [y + o]_+^2 = 1:
//  - start: the offset of the maximum and the smaller of the two halves' maxima alone (the
//    largest entry of the half without the maximum): (max - PairThreshold)/2, at or above the
//    row's, since more entries lower the offset;
//  - Newton's steps in float on the norm, F(o) = (sum [y + o]_+^2)^(1/2) - 1, increasing and
//    convex, from above, where they stay: o' = o - (s2 - sqrt s2)/s1 with s_j = sum [y + o]_+^j,
//    until no lane's set S of kept entries (y + o > 0) would change in the next step: the step
//    is below the smallest y + o of S in every lane (or kMaxLanePasses). (Until 2026-12-07 a
//    count of S in each pass also stopped them where it had not changed; on N(0,1) rows that
//    never came first, and the passes without it, their sums over S by masked additions, went
//    from 7 operations a column to 5: rows of 64 1.03x faster);
//  - the closed form on S in double, from Y1 = sum_S y and Y2 = sum_S y^2 (x - max exact there):
//    o = sqrt((1 - (Y2 - Y1 Y1/c))/c) - Y1/c with c = |S|, the root of sum_S (y + o)^2 = 1 that
//    keeps S;
//  - the write (WriteShortRow's arithmetic) counts the entries it keeps: where that count is not
//    c, S was not the support (the steps stopped short of an entry: two of them on the same side
//    of it, in every lane at once; or rounding at the support's edge), and the row goes to
//    row_done, as does every row of a group with an entry NaN or +inf, or a row all -inf.
// A row costs 5 operations a column and step (a pass shares them among 16 rows) and 14 in
// the closed form's pass, against the collection and the sorting network of 32 in groups
// (CollectAbovePairBound, GroupBlock): on 8192 x 64 N(0,1) scores 1.06-1.17x faster (the
// medians of three compare.sh runs of 6 processes each, an AMD EPYC Zen 5, 2026-12-06). Not
// taken: sparsemax's rows of 64 (Michelot's steps in the same passes: 0.88x; its rows have fewer
// candidates), rows of 65-128 of either map (0.60x and 0.77x: twice the columns a pass). Out of
// line: inlined into ShortRows, GCC's choices elsewhere cost rows of 32 10%.
template <class RowDone>
HWY_NOINLINE std::size_t NewtonLaneRows(const float* x, float* p, float* tau, std::size_t rows,
                                        std::size_t n, RowDone&& row_done) {
  constexpr std::size_t N = kRowLanes, C = 4 * N;
  static_assert(N == 16);
  const FloatTag d;
  const hn::Half<FloatTag> dh;
  const hn::ScalableTag<double> dd;
  using DV = hn::Vec<decltype(dd)>;
  using DM = hn::Mask<decltype(dd)>;
  constexpr double a = 0.5;  // ShortRowScale(2)
  const FloatVec av = hn::Set(d, static_cast<float>(a)), zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  const FloatVec minus_inf = hn::Set(d, -kInf<float>);
  FloatVec columns[C];
  alignas(kMaxBytes) float maxima[N], counts[N];
  alignas(kMaxBytes) double offsets[N];
  std::size_t r = 0;
  for (; r + N <= rows; r += N) {
    const float* group = x + r * n;
    for (std::size_t h = 0; h < C / N; ++h) {
      FloatVec loaded[N];
      for (std::size_t l = 0; l < N; ++l)
        loaded[l] =
            N * (h + 1) <= n ? hn::LoadU(d, group + l * n + N * h) : RowVector(group + l * n, n, h);
      TransposeSquare(d, loaded, columns + N * h);
    }
    // The maximum, the smaller of the halves' maxima, and a sum that is NaN where an entry is.
    FloatVec first_half = columns[0], second_half = columns[C / 2],
             sum = hn::Add(columns[0], columns[C / 2]);
    for (std::size_t j = 1; j < C / 2; ++j) {
      first_half = hn::Max(first_half, columns[j]);
      second_half = hn::Max(second_half, columns[C / 2 + j]);
      sum = hn::Add(sum, hn::Add(columns[j], columns[C / 2 + j]));
    }
    const FloatVec max = hn::Max(first_half, second_half),
                   second = hn::Min(first_half, second_half);
    const auto finite = hn::And(hn::Lt(max, hn::Set(d, kInf<float>)), hn::Gt(max, minus_inf));
    if (!hn::AllTrue(d, hn::AndNot(hn::IsNaN(sum), finite))) {
      for (std::size_t l = 0; l < N; ++l)
        if (!row_done(r + l)) return r + l;
      continue;
    }
    // The pair's threshold t in x, less its margin: offset a (max - t), at or above the pair's.
    FloatVec offset = hn::Mul(av, hn::Sub(max, PairThreshold(d, max, second, 2)));
    // Newton's steps: s = a x + (o - a max) = y + o.
    FloatVec shift;
    for (int pass = 0;; ++pass) {
      shift = hn::NegMulAdd(av, max, offset);
      // Four chains of sums, each in registers (an array indexed j % 4 was kept in memory), over
      // S by masked additions: an entry outside adds nothing, with no [s]_+ to take.
      FloatVec s1_0 = zero, s1_1 = zero, s1_2 = zero, s1_3 = zero, s2_0 = zero, s2_1 = zero,
               s2_2 = zero, s2_3 = zero, m_0 = one, m_1 = one;
      auto step = [&](FloatVec column, FloatVec& s1, FloatVec& s2, FloatVec& m) HWY_ATTR {
        const FloatVec s = hn::MulAdd(av, column, shift);
        const __mmask16 in = hn::Gt(s, zero).raw;
        s1 = FloatVec{_mm512_mask_add_ps(s1.raw, in, s1.raw, s.raw)};
        s2 = FloatVec{_mm512_mask3_fmadd_ps(s.raw, s.raw, s2.raw, in)};
        m = FloatVec{_mm512_mask_min_ps(m.raw, in, m.raw, s.raw)};
      };
      for (std::size_t j = 0; j < C; j += 4) {
        step(columns[j], s1_0, s2_0, m_0);
        step(columns[j + 1], s1_1, s2_1, m_1);
        step(columns[j + 2], s1_2, s2_2, m_0);
        step(columns[j + 3], s1_3, s2_3, m_1);
      }
      const FloatVec sum1 = hn::Add(hn::Add(s1_0, s1_1), hn::Add(s1_2, s1_3));
      const FloatVec sum2 = hn::Add(hn::Add(s2_0, s2_1), hn::Add(s2_2, s2_3));
      const FloatVec drop = hn::Div(hn::Sub(sum2, hn::Sqrt(sum2)), sum1);
      // The step keeps S in every lane, or the last pass.
      if (hn::AllTrue(d, hn::Gt(hn::Min(m_0, m_1), drop)) || pass == kMaxLanePasses) break;
      offset = hn::Sub(offset, drop);
    }
    // The closed form on S = {y + o > 0} of the last pass, in double: lanes [0, 8) and [8, 16).
    FloatVec count;  // |S|
    {
      const DV ad = hn::Set(dd, a);
      const DV minus_amax[2] = {
          hn::Mul(hn::Set(dd, -a), hn::PromoteTo(dd, hn::LowerHalf(dh, max))),
          hn::Mul(hn::Set(dd, -a), hn::PromoteTo(dd, hn::UpperHalf(dh, max)))};
      // Two chains of sums for each half of the lanes, in registers.
      DV y1_0 = hn::Zero(dd), y1_1 = y1_0, y1_2 = y1_0, y1_3 = y1_0, y2_0 = y1_0, y2_1 = y1_0,
         y2_2 = y1_0, y2_3 = y1_0;
      auto add = [&](DM in, DV column, DV minus_amax, DV& y1, DV& y2) HWY_ATTR {
        const DV y = hn::IfThenElseZero(in, hn::MulAdd(ad, column, minus_amax));
        y1 = hn::Add(y1, y);
        y2 = hn::MulAdd(y, y, y2);
      };
      FloatVec count_0 = zero, count_1 = zero;
      for (std::size_t j = 0; j < C; j += 2) {
        for (std::size_t i = 0; i < 2; ++i) {
          const FloatVec v = columns[j + i];
          const auto in = hn::Gt(hn::MulAdd(av, v, shift), zero);
          FloatVec& c = i == 0 ? count_0 : count_1;
          c = FloatVec{_mm512_mask_add_ps(c.raw, in.raw, c.raw, one.raw)};  // one masked add
          const DV low = hn::PromoteTo(dd, hn::LowerHalf(dh, v)),
                   high = hn::PromoteTo(dd, hn::UpperHalf(dh, v));
          add(DM{static_cast<__mmask8>(in.raw)}, low, minus_amax[0], i == 0 ? y1_0 : y1_1,
              i == 0 ? y2_0 : y2_1);
          add(DM{static_cast<__mmask8>(in.raw >> 8)}, high, minus_amax[1], i == 0 ? y1_2 : y1_3,
              i == 0 ? y2_2 : y2_3);
        }
      }
      count = hn::Add(count_0, count_1);
      const DV one_d = hn::Set(dd, 1.0);
      const DV y1[2] = {hn::Add(y1_0, y1_1), hn::Add(y1_2, y1_3)},
               y2[2] = {hn::Add(y2_0, y2_1), hn::Add(y2_2, y2_3)};
      for (int q = 0; q < 2; ++q) {
        const DV sum1 = y1[q];
        const DV size =
            hn::PromoteTo(dd, q == 0 ? hn::LowerHalf(dh, count) : hn::UpperHalf(dh, count));
        const DV mean = hn::Div(sum1, size),
                 spread = hn::NegMulAdd(sum1, mean, y2[q]);  // Y2 - Y1 Y1/c
        const DV o =
            hn::Sub(hn::Sqrt(hn::Div(hn::Max(hn::Zero(dd), hn::Sub(one_d, spread)), size)), mean);
        hn::Store(o, dd, offsets + 8 * q);
      }
    }
    hn::Store(max, d, maxima);
    hn::Store(count, d, counts);
    // The writes (WriteOffsetPower's arithmetic), each counting the entries it keeps.
    for (std::size_t l = 0; l < N; ++l) {
      const std::size_t row = r + l;
      const FloatVec shift_vector = hn::Set(d, maxima[l]),
                     c_vector = hn::Set(d, static_cast<float>(offsets[l]));
      std::size_t kept = 0;
      ForEachVector(d, x + row * n, n, -kInf<float>,
                    [&](std::size_t i, FloatVec v, std::size_t lanes) HWY_ATTR {
                      FloatVec u = hn::MulAdd(av, hn::Sub(v, shift_vector), c_vector);
                      kept += hn::CountTrue(d, hn::Gt(u, zero));
                      u = hn::Max(u, zero);
                      u = hn::Mul(u, u);
                      StorePartial(d, u, p + row * n + i, lanes);
                    });
      if (kept == 0 || kept != static_cast<std::size_t>(counts[l])) {  // (0: an offset not > 0)
        if (!row_done(row)) return row;
      } else if (tau) {
        tau[row] = sparcon::detail::entmax_tau(a, maxima[l], (1 - offsets[l]) / a);
      }
    }
  }
  for (; r < rows; ++r)
    if (!row_done(r)) return r;
  return rows;
}
#endif  // HWY_TARGET <= HWY_AVX3

// Whole rows of sparsemax (k = 1) or entmax-1.5 (k = 2) in one call (see Kernels::short_rows), so
// that a row costs no call, allocation or dispatch. Per row the maximum and the collection of
// the candidates (the entries above max - 1/a, or above a lower bound of the threshold:
// PairThreshold's, LaneMaximaLowerBound's); rows of up to kMaxTinyRow entries skip the
// collection and go a block of lanes at a time (TinyRows).
// Longer rows (up to kMaxGroupedRow) go in groups of lanes too, in L1: a group's rows with at
// most Size candidates (16 for k = 1, 32 for k = 2) have them moved into one block
// (GroupBlock), whose thresholds SolveTinyColumns finds at once; a row with more, or in a
// longer row, takes a group's arithmetic on its own (up to 32 candidates: SortedRowOffset)
// or the general solvers' steps on a block of its candidates on the stack
// (threshold.cc: Michelot's passes for k = 1, Newton with the closed form for k = 2).
template <class T>
std::size_t ShortRows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n, int k, T* buffer) {
  const double a = ShortRowScale(k);
  const std::size_t pairwise = k == 1 ? kPairwiseLinear : kPairwiseQuadratic;
  alignas(kMaxBytes) double y[kMaxFusedCandidates + kMaxBytes / sizeof(double)];
  // The last row's lower bound of lambda (its collection's, NarrowCandidates'), Newton's start.
  double lower = 0;
  // The candidates of row r into out (room for n + kMaxLanes), *max its maximum; 0 when the
  // maximum is not finite (NaN, +inf or all -inf: the caller's row). Inlined into each caller:
  // as a call (GCC 12 did not inline it), a group's collections paid a frame and vzeroupper each
  // and did not overlap (sparsemax's rows of 64 1.13x faster inlined, of 128 1.06x, entmax-1.5's
  // of 64 1.04x; inlining the write too gained nothing; an AMD EPYC Zen 5, 2026-12-06).
  auto collect = [&](std::size_t r, T* max, T* out)
                     HWY_ATTR __attribute__((always_inline)) -> std::size_t {
    const T* row = x + r * n;
    if (k == 2 && n > kMaxPairBoundRow)
      return CollectAboveLaneBound(row, n, a, k, max, out, &lower);
    return CollectAbovePairBound(row, n, k, max, out, &lower);
  };
  // The threshold from the count candidates at `candidates`; false beyond kMaxFusedCandidates.
  // Up to 32 of them by a group's arithmetic (SortedRowOffset), so that a row's bits do not
  // depend on whether it was solved in a group.
  auto solve = [&](const T* candidates, std::size_t count, T max, RowThreshold<T>* t)
                   HWY_ATTR -> bool {
    if (count <= kPairwiseQuadratic) {
      alignas(kMaxBytes) double sorted[kPairwiseQuadratic];
      for (std::size_t i = 0; i < count; ++i) sorted[i] = static_cast<double>(candidates[i]);
      *t = RowThreshold<T>::FromOffset(max, SortedRowOffset(sorted, count, k), k);
    } else if (count <= kMaxFusedCandidates) {
      ShiftedToDouble(candidates, count, max, y);
      if (k == 1) {
        *t = RowThreshold<T>::FromOffset(max, MichelotOffset(y, count, a), k);
      } else {
        BlockCandidates candidates{y, count, a};
        const sparcon::detail::PowerThreshold solved = sparcon::detail::quadratic_threshold(candidates, a, n, lower);
        *t = {max, solved.offset, solved.lambda};
      }
    } else {
      return false;
    }
    return true;
  };
  auto write = [&](std::size_t r, const RowThreshold<T>& t) HWY_ATTR {
    WriteShortRow(x + r * n, p + r * n, tau ? tau + r : nullptr, n, k, t);
  };
  // One row; false leaves it to the caller (a maximum that is not finite, or more candidates).
  auto row_done = [&](std::size_t r) HWY_ATTR {
    T max;
    RowThreshold<T> t;
    std::size_t count = collect(r, &max, buffer);
    if (count > pairwise) count = NarrowCandidates(buffer, count, max, k, pairwise, &lower);
    if (count == 0 || !solve(buffer, count, max, &t)) return false;
    write(r, t);
    return true;
  };
  // Rows [from, rows) one by one; the index of the first one left to the caller, or rows.
  auto one_by_one = [&](std::size_t from) HWY_ATTR {
    for (std::size_t r = from; r < rows; ++r)
      if (!row_done(r)) return r;
    return rows;
  };
  // Sparsemax's rows of 17-32 too: in groups (collected, 16 candidates a block) they took
  // 1.7-1.9x as long on AVX-512, 1.3-1.7x on AVX2, 1.0-1.2x on SSE4 (floats; doubles 1.6-1.9x
  // and 1.2x; an AMD EPYC Zen 5, 2026-12-05).
  static_assert(kMaxTinyRow == 32);
  if (n <= 2) return TinyRows<2>(x, p, tau, rows, n, k, row_done);
  if (n <= 4) return TinyRows<4>(x, p, tau, rows, n, k, row_done);
  if (n <= 8) return TinyRows<8>(x, p, tau, rows, n, k, row_done);
  if (n <= 16) return TinyRows<16>(x, p, tau, rows, n, k, row_done);
  if (n <= 32) return TinyRows<32>(x, p, tau, rows, n, k, row_done);
#if HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_same_v<T, float>) {
    if (k == 2 && n <= 64) return NewtonLaneRows(x, p, tau, rows, n, row_done);
  }
#endif
  // Size: the most candidates of a row in the block (rows with more are narrowed to it first);
  // the block is solved at 16 columns when no row of the group has more (the sorting network of
  // 16 costs a third of that of 32), at 8 when none has more than 8 (sparsemax's rows of 64 and
  // 128 1.02x and 1.01x faster, compare.sh, an AMD EPYC Zen 5, 2026-12-07: half of the groups,
  // whose Solve then costs 0.6 of Solve<16>, its loads and transposes fixed). Each row of a group
  // is collected into a slot of its own, which GroupBlock may read only when the group is solved.
  auto grouped = [&](auto size, auto floats) HWY_ATTR -> std::size_t {
    constexpr std::size_t Size = decltype(size)::value, Narrow = 16, Narrowest = 8;
    constexpr bool Floats = decltype(floats)::value;
    constexpr std::size_t kLanes = kMaxBytes / sizeof(float);
    const std::size_t L = BlockRowsOf<T, Floats>();
    GroupBlock<Size, T, Floats> block;
    RowThreshold<T> thresholds[kLanes] = {};
    bool in_block[kLanes] = {};
    alignas(kMaxBytes) double maxima[kLanes], offsets[kLanes];
    // Writes the group's rows [r, r + lanes): their thresholds from the block or their own.
    // most: the most candidates of a row in the block, 0 where none is (a row in the block keeps
    // at least its maximum).
    auto write_group = [&](std::size_t r, std::size_t lanes, std::size_t most) HWY_ATTR {
      if (most > 0) {  // finite lanes only
        if (most > Narrow) {
          block.template Solve<Size>(k, maxima, offsets);
        } else if (most > Narrowest) {
          block.template Solve<Narrow>(k, maxima, offsets);
        } else {
          block.template Solve<Narrowest>(k, maxima, offsets);
        }
      }
      for (std::size_t l = 0; l < lanes; ++l) {
        if (in_block[l])
          thresholds[l] = RowThreshold<T>::FromOffset(static_cast<T>(maxima[l]), offsets[l], k);
        write(r + l, thresholds[l]);
      }
    };
    // Each group in three passes: its rows collected (up to the first whose maximum is not
    // finite, the caller's) and added to the block without a branch (a row with more than Size
    // candidates fills its lane with its first Size, finite, whose threshold is not used), then
    // the rows with more narrowed and added again, then those still left solved on their own.
    // A Newton step of NarrowCandidates (reductions, a square root and a division that its
    // collection waits for) on a fifth of entmax-1.5's rows of 64 stalled the rows after it,
    // and its mispredicted branch among the collections discarded their work (three passes:
    // rows of 64 1.14-1.16x faster; with the branch left in the first, 1.01x; an AMD EPYC Zen 5,
    // 2026-12-05).
    std::size_t r = 0;
    for (; r + L <= rows; r += L) {
      std::size_t counts[kLanes], end = L;
      T row_maxima[kLanes];
      double lower_bounds[kLanes];
      std::size_t most = 0;  // see write_group
      auto add = [&](std::size_t l) HWY_ATTR {
        block.Add(l, counts[l]);
        in_block[l] = counts[l] <= Size;
        most = std::max(most, in_block[l] ? counts[l] : 0);
      };
      for (std::size_t l = 0; l < L; ++l) {
        counts[l] = collect(r + l, &row_maxima[l], block.Slot(l));
        lower_bounds[l] = lower;
        if (counts[l] == 0) {
          end = l;
          break;
        }
        add(l);
      }
      for (std::size_t l = 0; l < end; ++l) {
        if (in_block[l]) continue;
        counts[l] = NarrowCandidates(block.Slot(l), counts[l], row_maxima[l], k, Size, &lower_bounds[l]);
        add(l);
      }
      for (std::size_t l = 0; l < end; ++l) {
        if (in_block[l]) continue;
        lower = lower_bounds[l];  // Newton's start
        if (!solve(block.Slot(l), counts[l], row_maxima[l], &thresholds[l])) {
          write_group(r, l, most);  // the rows before, then this one is the caller's
          return r + l;
        }
      }
      write_group(r, end, most);
      if (end < L) return r + end;
    }
    return one_by_one(r);
  };
  // A group's rows are read again by the writes after the last one's collection: groups whose
  // rows exceed kMaxGroupBytes go one by one. Floats on AVX-512 sort entmax-1.5's groups in float
  // (16 rows) where those fit, else in double (8 rows: rows of 512 lost 3-5% with 16 rows in 32
  // KiB, an AMD EPYC Zen 5, 2026-12-05), sparsemax's always in double (see kSortsFloatLanes).
  using Size16 = std::integral_constant<std::size_t, 16>;
  using Size32 = std::integral_constant<std::size_t, 32>;
  using Default = std::integral_constant<bool, kSortsOnlyFloatLanes<T>>;  // in double unless it must
  using InFloat = std::integral_constant<bool, std::is_same_v<T, float> && HWY_TARGET != HWY_SCALAR>;
  auto fits = [&](std::size_t group_rows) HWY_ATTR {
    return n <= kMaxGroupedRow && n * group_rows * sizeof(T) <= kMaxGroupBytes;
  };
  if (k == 1) return fits(BlockRowsOf<T, Default::value>()) ? grouped(Size16(), Default()) : one_by_one(0);
  if (fits(BlockRowsOf<T, InFloat::value>())) return grouped(Size32(), InFloat());
  if (fits(BlockRowsOf<T, Default::value>())) return grouped(Size32(), Default());
  return one_by_one(0);
}

// ---- rows of a general power, one row per lane ------------------------------------------------

// Candidates of Lanes(d) rows in lanes (y[j stride + l], -inf past a lane's count): each lane's
// entries v with keep(v) move to the front of its column, in order, and the rows past a lane's
// new count become -inf. All lanes at once: entry j goes to row `kept` of its lane (kept <= j:
// a row already read), and `kept` counts it if it stays. Returns the most entries a lane kept.
// The columns of `extra` (value j of lane l at [j extra_stride + l]) move with y's, entries past
// a lane's new count left as they were.
template <class D, class Keep, std::size_t E = 0>
HWY_INLINE std::size_t CompactLanes(D d, hn::TFromD<D>* y, std::size_t stride, std::size_t columns,
                                    Keep&& keep, const std::array<hn::TFromD<D>*, E>& extra = {},
                                    std::size_t extra_stride = 0) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const auto step = hn::Set(di, static_cast<I>(stride)), lane = hn::Iota(di, 0);
  const auto extra_step = hn::Set(di, static_cast<I>(extra_stride));
  auto kept = lane, extra_kept = lane;  // the index of row 0 of each lane
  for (std::size_t j = 0; j < columns; ++j) {
    const auto v = hn::Load(d, y + j * stride);
    hn::ScatterIndex(v, d, y, kept);
    for (T* e : extra) hn::ScatterIndex(hn::Load(d, e + j * extra_stride), d, e, extra_kept);
    const auto stays = hn::RebindMask(di, keep(v));
    kept = hn::Add(kept, hn::IfThenElseZero(stays, step));
    if constexpr (E > 0) extra_kept = hn::Add(extra_kept, hn::IfThenElseZero(stays, extra_step));
  }
  for (std::size_t j = 0; j < columns; ++j) {
    const auto stays = hn::RebindMask(d, hn::Lt(hn::Add(lane, hn::Set(di, static_cast<I>(j * stride))), kept));
    hn::Store(hn::IfThenElse(stays, hn::Load(d, y + j * stride), hn::Set(d, -kInf<T>)), d, y + j * stride);
  }
  return static_cast<std::size_t>(hn::GetLane(hn::MaxOfLanes(di, kept))) / stride;
}

// The drop of newton_threshold for candidates in lanes, after a step at lambda where `count`
// entries had u > 0: at a lower bound lambda (`lower_bound`: s >= 1) the entries with u <= 0
// stay outside, and a `done` lane needs none. Once every lane would keep at most half the
// columns, each lane's entries above lambda - 1/a (less a margin; all of them where lambda is
// no lower bound, none where the lane is done) are kept (CompactLanes). Only zero terms leave
// the sums, so the sums after it are the same to the bit. Returns the columns left.
// The columns of `extra` (see CompactLanes) move with y's.
template <class D, std::size_t E = 0, class V = hn::Vec<D>, class M = hn::Mask<D>>
HWY_INLINE std::size_t DropOutsideLanes(D d, hn::TFromD<D>* y, std::size_t stride,
                                        std::size_t columns, double a, V lambda, V count,
                                        M lower_bound, M done,
                                        const std::array<hn::TFromD<D>*, E>& extra = {},
                                        std::size_t extra_stride = 0) {
  using T = hn::TFromD<D>;
  const V zero = hn::Zero(d), infinity = hn::Set(d, kInf<T>);
  const V keeps = hn::IfThenElse(done, zero, hn::IfThenElse(lower_bound, count, hn::Set(d, static_cast<T>(columns))));
  if (2 * static_cast<std::size_t>(hn::GetLane(hn::MaxOfLanes(d, keeps))) >= columns) return columns;
  constexpr T kEps = std::numeric_limits<T>::epsilon();
  const V gap = hn::Set(d, static_cast<T>(1 / a));
  const V keep_above = hn::Sub(hn::Sub(lambda, gap), hn::Mul(hn::Set(d, 4 * kEps), hn::Add(hn::Abs(lambda), gap)));
  const V bound = hn::IfThenElse(lower_bound, keep_above, hn::IfThenElse(done, infinity, hn::Neg(infinity)));
  return CompactLanes(
      d, y, stride, columns, [&](V v) HWY_ATTR { return hn::Gt(v, bound); }, extra, extra_stride);
}

// The power sums of LaneThresholds for a general k, s = sum u^k and slope = sum u^(k-1) with
// u = 1 + a (y - lambda), where each step after the first is a small move of lambda: the first
// pass takes u^(k-1) by Pow and keeps it with 1/u for every entry (at the reference lambda_0,
// u_0); a later pass at lambda has u = u_0 (1 - e), e = a (lambda - lambda_0) / u_0, so
// u^(k-1) = u_0^(k-1) (1 - e)^(k-1), the second factor by its binomial series to e^8, taken where
// |e| <= `reach` <= 2^-6: the first term left out, binomial(k - 1, 9) e^9, is then below 2^-60,
// and the later ones fall by a factor |e| (k - 1 - i) / (i + 1) <= |e| k / 10 < 2^-4 each
// (k <= 1 / kMinPowerRowsA = 128: reach is about 3e-4 there, far above the later steps' moves,
// 1e-9 / u_0 and less from the float start). Elsewhere by Pow again: an entry that was outside
// at lambda_0 (1/u_0 kept as infinity) or whose u_0 is small, about 1e-3 and below from the
// double steps' start just below the float lambda (0.3-1.4% of the vectors on N(0, 1) rows of
// 512). Lane by lane, so that a row's sums do not depend on the rows beside it; a vector with
// any such lane takes both. The product of two rounded factors is within about 2 ulps of
// u^(k-1), against Pow's one. s adds its terms in blocks of 16 columns: a row's ~500 terms in
// one lane's chain of additions cost alpha = 1.09 up to 11.3 eps of the largest p on double rows
// of 512, against 8.8 in blocks (the test NewtonThresholdsToTheLastDigits; Knuth's two-sum on
// every term did as well, 8.6-8.8 at 1.01-1.09, but cost 1.15 and 1.3 4-6% of their forward).
// `near_one` (double rows with a < 0.1, k > 10, as the row-at-a-time solver's sums_at_lambda; float
// rows lose nothing to the rounding of u, about k ulps of double): u = 1 + t with
// t = a (y - lambda), and u^(k-1) = exp((k - 1) log1p(t)) wherever it is taken in full (the first
// pass, the far lanes), so that the rounding of 1 - a lambda is not amplified by k; the series'
// factor (1 - e)^(k-1) has no such rounding to amplify.
template <class D>
class GeneralPowerSums {
 public:
  using V = hn::Vec<D>;
  static constexpr int kDegree = 8;

  GeneralPowerSums(D d, double k, bool near_one)
      : k_minus_one_(hn::Set(d, k - 1)), reference_(hn::Zero(d)), near_one_(near_one) {
    // binomial(k - 1, i) (-1)^i, i = 1..kDegree + 1
    double c = 1, next = 0;
    for (int i = 1; i <= kDegree + 1; ++i) {
      c *= -(k - i) / i;
      if (i <= kDegree) {
        c_[i - 1] = hn::Set(d, c);
      } else {
        next = std::abs(c);
      }
    }
    reach_ = hn::Set(
        d, next > 0 ? std::min(0x1p-6, std::pow(0x1p-60 / next, 1.0 / (kDegree + 1))) : 0x1p-6);
  }

  // s, slope and the count of entries with u > 0 at lambda (base = 1 - a lambda), over `columns`
  // columns (y[j stride], stride >= Lanes): the first call by Pow, keeping the reference, the
  // others from it.
  HWY_INLINE void Sums(D d, const double* y, std::size_t stride, std::size_t columns, V av,
                       V lambda, V& s, V& slope, V& count) {
    const V zero = hn::Zero(d), one = hn::Set(d, 1.0);
    s = slope = count = zero;
    V s_block = zero;
    constexpr std::size_t kBlock = 16;
    Terms(d, y, stride, columns, av, lambda,
          [&](std::size_t j, V, V pk1, V u, auto inside) HWY_ATTR {
            s_block = hn::MulAdd(pk1, u, s_block);
            if (j % kBlock == kBlock - 1) {
              s = hn::Add(s, s_block);
              s_block = zero;
            }
            slope = hn::Add(slope, pk1);
            count = hn::Add(count, hn::IfThenElseZero(inside, one));
          });
    s = hn::Add(s, s_block);
  }

  // After Sums: p = u^k at lambda (0 where u <= 0) of every entry of the lanes set in `lanes`
  // into out[j stride + l], and the smallest y of each such lane's entries (y > -inf) into
  // lowest[l], from the reference as Sums takes them: the float rows' write (WritePowerColumn).
  HWY_INLINE void Powers(D d, const double* y, std::size_t stride, std::size_t columns, V av,
                         V lambda, hn::Mask<D> lanes, double* out, double* lowest) {
    const V infinity = hn::Set(d, kInf<double>);
    V least = infinity;
    Terms(d, y, stride, columns, av, lambda, [&](std::size_t j, V v, V pk1, V u, auto) HWY_ATTR {
      hn::BlendedStore(hn::Mul(pk1, u), lanes, d, out + j * stride);
      least = hn::Min(least, hn::IfThenElse(hn::Gt(v, hn::Neg(infinity)), v, infinity));
    });
    hn::BlendedStore(least, lanes, d, lowest);
  }

  // The kept columns (j Lanes + l), which move with the entries where LaneThresholds drops some.
  std::array<double*, 2> Kept() { return {power_, inverse_}; }

 private:
  // term(j, v, pk1, u, inside) for each column j < columns of y (v = y[j stride]) at lambda:
  // pk1 = u^(k-1) where inside (u > 0), else 0, and u (1 outside). The first call takes every
  // power in full and keeps it with 1/u as the reference; the later ones by the series.
  template <class Term>
  HWY_INLINE void Terms(D d, const double* y, std::size_t stride, std::size_t columns, V av,
                        V lambda, Term&& term) {
    const std::size_t L = hn::Lanes(d);
    const V zero = hn::Zero(d), one = hn::Set(d, 1.0), minus_one = hn::Set(d, -1.0);
    const V base = hn::NegMulAdd(av, lambda, one);
    const bool fill = !kept_;
    const V shift = hn::Mul(av, hn::Sub(lambda, reference_));  // e u_0
    for (std::size_t j = 0; j < columns; ++j) {
      const V v = hn::Load(d, y + j * stride);
      V u, t;
      if (near_one_) {
        t = hn::Mul(av, hn::Sub(v, lambda));
        u = hn::Add(one, t);
      } else {
        u = hn::MulAdd(av, v, base);
      }
      // y = -inf (past a row's count): u = -inf, t = -inf
      const auto inside = near_one_ ? hn::Gt(t, minus_one) : hn::Gt(u, zero);
      const V safe = hn::IfThenElse(inside, u, one);
      // u^(k-1) in full, by Pow or (near_one) from log1p(t).
      auto full_power = [&]() HWY_ATTR {
        return near_one_
                   ? hn::Exp(d, hn::Mul(k_minus_one_, hn::Log1p(d, hn::IfThenElseZero(inside, t))))
                   : Pow(d, safe, k_minus_one_);
      };
      V pk1;
      if (fill) {
        pk1 = full_power();
        hn::Store(hn::IfThenElseZero(inside, pk1), d, power_ + j * L);
        hn::Store(hn::IfThenElse(inside, hn::Div(one, safe), hn::Set(d, kInf<double>)), d,
                  inverse_ + j * L);
      } else {
        const V e = hn::Mul(shift, hn::Load(d, inverse_ + j * L));
        V series = c_[kDegree - 1];
        for (int i = kDegree - 2; i >= 0; --i) series = hn::MulAdd(series, e, c_[i]);
        pk1 = hn::Mul(hn::Load(d, power_ + j * L), hn::MulAdd(series, e, one));
        const auto far =
            hn::AndNot(hn::Le(hn::Abs(e), reach_), inside);  // inside, |e| > reach or NaN
        if (HWY_UNLIKELY(!hn::AllFalse(d, far))) pk1 = hn::IfThenElse(far, full_power(), pk1);
      }
      term(j, v, hn::IfThenElseZero(inside, pk1), safe, inside);
    }
    if (fill) {
      reference_ = lambda;
      kept_ = true;
    }
  }

  static constexpr std::size_t kMaxLanes = kMaxBytes / sizeof(double);
  V k_minus_one_, reference_, reach_;
  V c_[kDegree];
  bool near_one_;
  bool kept_ = false;
  alignas(kMaxBytes) double power_[kMaxPowerRow * kMaxLanes];
  alignas(kMaxBytes) double inverse_[kMaxPowerRow * kMaxLanes];
};

// LaneThresholds' options for a general power (GeneralPowerSums):
struct GeneralPowerOptions {
  // The full powers from log1p near alpha = 1 (double rows: float rows lose nothing to the k
  // roundings of u, and with Pow their forward at alpha 1.01-1.09 was 1.02-1.08x faster).
  bool near_one = false;
  // If not null, each lane not `settled` gets p = u^k at its lambda of its entries left at the
  // end (GeneralPowerSums::Powers) into powers[j stride + l], the least of them into lowest[l].
  double* powers = nullptr;
  double* lowest = nullptr;
};

// Newton's iteration of newton_threshold (newton_threshold.h) for k > 1, k != 2, one row per
// lane: the candidates y = x - max of L = Lanes(d) rows in columns (y[j stride + l]: candidate
// j of row l, -inf past a row's count), lambda of each row from `start` (0 is a lower bound:
// the maximum alone reaches 1; any other start is checked by the first step, which makes it
// the bracket's lower or upper end). The same steps, bracket and stop per lane as the
// row-at-a-time solver (and, for a general power, its drop of the candidates proven outside);
// a lane that stops is frozen while the others go on, so a row's lambda does not depend on the
// rows beside it. One row at a time, each step waits on the last (a vector exp and log per
// candidate, then a scalar expm1 and log1p); side by side the rows' steps overlap.
// `settled` lanes are done from the start (their lambda is `start`). With `short_start`, a lane
// whose sums at `start` are below 1 stops there and is set in *short_start: the caller's
// columns then hold only the entries with u > 0 at `start`, exact for every lambda >= start,
// which the bracket keeps to once start is a lower bound.
// `general`: a general power's options (GeneralPowerOptions).
template <int Power, class D, class V = hn::Vec<D>>
HWY_INLINE V LaneThresholds(D d, double* y, std::size_t stride, std::size_t columns, double a,
                            double k, std::size_t n, V start, hn::Mask<D> settled,
                            hn::Mask<D>* short_start, const GeneralPowerOptions& general = {}) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  constexpr double kNearRoot = 0x1p-10, kNearRootMaxK = 4;  // as in newton_threshold
  const V av = hn::Set(d, a), k_minus_one = hn::Set(d, k - 1), ak = hn::Set(d, a * k);
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), infinity = hn::Set(d, kInf<double>);
  const V minus_inverse_k = hn::Set(d, -1 / k), half = hn::Set(d, 0.5);
  const V upper = hn::Set(d, -std::expm1(-std::log(static_cast<double>(n)) / k) / a);
  V lambda = start, lo = zero, hi = infinity;
  auto done = settled;
  // A general power's sums from those of the first step (GeneralPowerSums).
  struct NoPowers {
    NoPowers(D, double, bool) {}
  };
  std::conditional_t<Power == kPowerGeneral, GeneralPowerSums<D>, NoPowers> powers(
      d, k, general.near_one);
  for (int it = 0; it < 200; ++it) {
    const V base = hn::NegMulAdd(av, lambda, one);  // 1 - a lambda
    // With the products of k = 3, 4, four sets of sums (column j in set j % 4): one set waited
    // on its own additions (entmax-1.25 on rows of 512, about 420 candidates a row: 1.1-1.2x
    // faster). A general power is the cost itself there.
    constexpr std::size_t kSets = Power == kPowerGeneral ? 1 : 4;
    V sums[4] = {zero, zero, zero, zero}, slopes[4] = {zero, zero, zero, zero}, counts[4] = {zero, zero, zero, zero};
    auto add = [&](std::size_t j, std::size_t set) HWY_ATTR {
      const V u = hn::MulAdd(av, hn::Load(d, y + j * stride), base);
      const auto inside = hn::Gt(u, zero);  // y = -inf (past a row's count): u = -inf
      AddPowerTerms<Power>(d, u, inside, k_minus_one, sums[set], slopes[set]);
      counts[set] = hn::Add(counts[set], hn::IfThenElseZero(inside, one));
    };
    if constexpr (Power == kPowerGeneral) {
      powers.Sums(d, y, stride, columns, av, lambda, sums[0], slopes[0], counts[0]);
    } else {
      std::size_t j = 0;
      for (; j + kSets <= columns; j += kSets)
        for (std::size_t set = 0; set < kSets; ++set) add(j + set, set);
      for (; j < columns; ++j) add(j, j % kSets);
    }
    const V s = hn::Add(hn::Add(sums[0], sums[1]), hn::Add(sums[2], sums[3]));
    const V slope = hn::Add(hn::Add(slopes[0], slopes[1]), hn::Add(slopes[2], slopes[3]));
    const V count = hn::Add(hn::Add(counts[0], counts[1]), hn::Add(counts[2], counts[3]));
    if (it == 0 && short_start != nullptr) {  // a start that is no lower bound stops the lane
      *short_start = hn::AndNot(done, hn::Lt(s, one));
      done = hn::Or(done, *short_start);
    }
    const auto active = hn::Not(done);
    const auto above = hn::Ge(s, one);
    // The entries proven outside leave, as newton_threshold drops them (DropOutsideLanes).
    // Only where a step costs a power per entry: with the products of k = 3, 4 the compaction
    // (a pass over every lane's entries) cost more than the steps it saved (entmax-1.25 on
    // N(0,1) rows of 512: 3.5x slower by a scalar loop per lane, 0.87-0.93x with the
    // scatter; entmax-1.75 7% faster).
    const auto lower_bound = hn::And(active, above);
    if constexpr (Power == kPowerGeneral) {
      // With `powers`, a lane that is done keeps its entries above its lambda - 1/a (only those
      // with u <= 0 there leave: zero terms of its powers at the end), else it keeps none.
      const auto none = hn::Lt(one, zero);
      columns = DropOutsideLanes(d, y, stride, columns, a, lambda, count,
                                 general.powers ? hn::Or(lower_bound, done) : lower_bound,
                                 general.powers ? none : done, powers.Kept(), hn::Lanes(d));
    }
    lo = hn::IfThenElse(lower_bound, lambda, lo);
    hi = hn::IfThenElse(hn::AndNot(above, active), lambda, hi);
    const auto finished = hn::Or(hn::Eq(s, one), hn::Eq(slope, zero));
    // The step on F = s^(1/k) - 1, (s - s^(1-1/k)) / (a slope) with the numerator as
    // -s expm1(-log1p(s - 1) / k); near the root for k <= 4 the step on f = s - 1.
    const V excess = hn::Sub(s, one);
    const V f_step = hn::Add(lambda, hn::Div(excess, hn::Mul(ak, slope)));
    V next = f_step;
    const auto use_f = k <= kNearRootMaxK ? hn::Le(excess, hn::Set(d, kNearRoot)) : hn::Lt(one, zero);
    if (!hn::AllTrue(d, hn::Or(use_f, hn::Or(done, finished)))) {
      const V numerator = hn::Neg(hn::Mul(s, hn::Expm1(d, hn::Mul(hn::Log1p(d, excess), minus_inverse_k))));
      next = hn::IfThenElse(use_f, f_step, hn::Add(lambda, hn::Div(numerator, hn::Mul(av, slope))));
    }
    // A step at the rounding level ends the lane (taken if inside the bracket); a step outside
    // the bracket bisects, the upper end first set to where every entry is at most 1/n.
    const auto tiny = hn::Le(hn::Abs(hn::Sub(next, lambda)), hn::Mul(hn::Set(d, 4 * kEps), hn::Max(one, hn::Abs(lambda))));
    const auto in_bracket = hn::And(hn::Gt(next, lo), hn::Lt(next, hi));
    const auto bisect = hn::AndNot(hn::Or(in_bracket, tiny), active);
    hi = hn::IfThenElse(hn::And(bisect, hn::Eq(hi, infinity)), hn::Max(lo, upper), hi);
    next = hn::IfThenElse(bisect, hn::MulAdd(half, hn::Sub(hi, lo), lo), next);
    const auto moves = hn::AndNot(finished, hn::AndNot(hn::AndNot(in_bracket, tiny), active));
    lambda = hn::IfThenElse(moves, next, lambda);
    done = hn::Or(done, hn::Or(finished, tiny));
    if (hn::AllTrue(d, done)) break;
  }
  if constexpr (Power == kPowerGeneral)
    if (general.powers != nullptr)
      powers.Powers(d, y, stride, columns, av, lambda, hn::Not(settled), general.powers,
                    general.lowest);
  return lambda;
}

// offset_threshold (threshold.cc) for 0 < k < 1 (alpha > 2), one row per lane as in
// LaneThresholds: Newton's steps on the offset c = 1 - a lambda, f(c) = sum [c + a y]_+^k - 1
// increasing, bracketed by bisection on [n^(-1/k), 1], with the same probe two ulps toward the
// root where a step at the rounding level leaves the bracket, and the same stop on the bracket.
// Returns c per lane.
template <int Power, class D, class V = hn::Vec<D>>
HWY_INLINE V LaneOffsets(D d, const double* y, std::size_t stride, std::size_t columns, double a, double k,
                         std::size_t n) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const V av = hn::Set(d, a), k_minus_one = hn::Set(d, k - 1), kv = hn::Set(d, k);
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), half = hn::Set(d, 0.5);
  V lo = hn::Set(d, std::exp(-std::log(static_cast<double>(n)) / k)), hi = one, c = hi;
  auto none = hn::Lt(one, zero);
  auto done = none, probed = none;
  for (int it = 0; it < 200; ++it) {
    V s = zero, slope = zero;
    for (std::size_t j = 0; j < columns; ++j) {
      const V u = hn::MulAdd(av, hn::Load(d, y + j * stride), c);
      AddPowerTerms<Power>(d, u, hn::Gt(u, zero), k_minus_one, s, slope);  // y = -inf: u = -inf
    }
    const auto active = hn::Not(done);
    const V f = hn::Sub(s, one);
    slope = hn::Mul(kv, slope);
    const auto nonnegative = hn::Ge(f, zero);
    hi = hn::IfThenElse(hn::And(active, nonnegative), c, hi);
    lo = hn::IfThenElse(hn::AndNot(nonnegative, active), c, lo);
    const auto finished = hn::Or(hn::Eq(f, zero), hn::Eq(slope, zero));
    V next = hn::Sub(c, hn::Div(f, slope));
    const auto outside = hn::Not(hn::And(hn::Gt(next, lo), hn::Lt(next, hi)));
    // Outside the bracket: a probe two ulps toward the root if the step was at the rounding
    // level and the last step was no probe, else bisection.
    const V probe = hn::IfThenElse(hn::Lt(f, zero), hn::Mul(c, hn::Set(d, 1 + 2 * kEps)),
                                   hn::Mul(c, hn::Set(d, 1 - 2 * kEps)));
    const auto stalled = hn::Le(hn::Abs(hn::Sub(next, c)), hn::Mul(hn::Set(d, 4 * kEps), c));
    const auto take_probe = hn::AndNot(probed, hn::And(stalled, hn::And(hn::Gt(probe, lo), hn::Lt(probe, hi))));
    probed = hn::And(outside, take_probe);
    next = hn::IfThenElse(outside, hn::IfThenElse(take_probe, probe, hn::MulAdd(half, hn::Sub(hi, lo), lo)), next);
    const auto stops = hn::Or(hn::Eq(next, c), hn::Le(hn::Sub(hi, lo), hn::Mul(hn::Set(d, 2 * kEps), hi)));
    c = hn::IfThenElse(hn::AndNot(finished, active), next, c);
    done = hn::Or(done, hn::Or(finished, stops));
    if (hn::AllTrue(d, done)) break;
  }
  return c;
}

// PowerRows' NewtonLowerBound: a lower bound lambda >= 0 of the threshold of
// sum [1 + a (y - lambda)]_+^k = 1 (k > 1, y = x - max) from one Newton step from 0 on
// F = s^(1/k) - 1 over x[0, n) alone, s = sum u^k, u = 1 + a y:
//   lambda' = s (1 - s^(-1/k)) / (a sum u^(k-1))
// (in a vector by Pow: the scalar expm1 and log1p of LaneThresholds' numerator cost 13% of
// entmax-1.25 on rows of 128, a scalar pow 9%; the cancellation near s = 1 only touches steps
// far below the margin of BelowLowerBound).
// F is convex and decreasing (the k-norm of the convex [1 + a (y - lambda)]_+), and that of a
// subset of a row's entries is below the row's, so the step stays at or left of the row's
// root. 0 where the step is not positive or not finite.
template <int Power, class T>
HWY_INLINE double PowerLowerBound(const T* x, std::size_t n, T max, double a, double k) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const hn::Rebind<T, decltype(d)> dt;
  const V shift = hn::Set(d, static_cast<double>(max)), av = hn::Set(d, a), one = hn::Set(d, 1.0);
  const V k_minus_one = hn::Set(d, k - 1);
  V s = hn::Zero(d), slope = s;
  ForEachVector(dt, x, n, -kInf<T>, [&](std::size_t, auto v, std::size_t) HWY_ATTR {
    const V u = hn::MulAdd(av, hn::Sub(PromoteColumn(d, v), shift), one);  // -inf padding: u = -inf
    AddPowerTerms<Power>(d, u, hn::Gt(u, hn::Zero(d)), k_minus_one, s, slope);
  });
  const V sum = hn::SumOfLanes(d, s);
  const V step = hn::Div(hn::Mul(sum, hn::Sub(one, Pow(d, sum, hn::Set(d, -1 / k)))),
                         hn::Mul(av, hn::SumOfLanes(d, slope)));
  const double lambda = hn::GetLane(step);
  return lambda > 0 && lambda < kInf<double> ? lambda : 0.0;
}

// The start of LaneThresholds for a general power: the same Newton steps (on F, and on f near
// the root for k <= 4) in float, from `start` (0, or a lower bound from the lane maxima, below
// which no step goes), twice the rows a vector. With Pow's shorter float
// polynomials a step costs about a quarter of double's (AVX-512), and the first steps, far from
// the root, need no more precision. A lane stops once its step is below 2^-12 of
// max(1, |lambda|) (Newton then has the root to about float's rounding), at kMaxSteps, or where
// a step is not finite (no entry left inside: the -inf lanes past a group's rows); a start that
// is not >= 0 becomes 0. LaneThresholds' double steps from there decide lambda with the stop
// and bracket of the row-at-a-time solver, typically in three steps (two to the root from
// float's 1e-7, one that finds the step at the rounding level) where from 0 they took five to
// eight; the start moves the result only within the rounding of the root.
// y: the candidates of Lanes(df) rows in columns (y[j Lanes(df) + l]), -inf past a row's count.
// With `drop`, the entries proven outside leave on the way, as LaneThresholds drops them (on
// rows of 16-64 that cost more than it saved).
template <class DF, class VF = hn::Vec<DF>>
HWY_INLINE VF FloatLaneStarts(DF df, float* y, std::size_t columns, double a, double k, VF start, bool drop) {
  constexpr int kMaxSteps = 24;
  const std::size_t G = hn::Lanes(df);
  const VF av = hn::Set(df, static_cast<float>(a)), ak = hn::Set(df, static_cast<float>(a * k));
  const VF k_minus_one = hn::Set(df, static_cast<float>(k - 1));
  const VF minus_inverse_k = hn::Set(df, static_cast<float>(-1 / k));
  const VF zero = hn::Zero(df), one = hn::Set(df, 1.0F), resolution = hn::Set(df, 0x1p-12F);
  VF lambda = start, lo = start;
  auto done = hn::Lt(one, zero);  // none
  for (int it = 0; it < kMaxSteps; ++it) {
    const VF base = hn::NegMulAdd(av, lambda, one);  // 1 - a lambda
    VF s = zero, slope = zero, count = zero;
    for (std::size_t j = 0; j < columns; ++j) {
      const VF u = hn::MulAdd(av, hn::Load(df, y + j * G), base);
      const auto inside = hn::Gt(u, zero);
      AddPowerTerms<kPowerGeneral>(df, u, inside, k_minus_one, s, slope);
      count = hn::Add(count, hn::IfThenElseZero(inside, one));
    }
    // The lanes' lower bounds (in float), below which no step goes: so the entries dropped at
    // one stay zero terms, and a lane's start does not depend on when the drop came.
    const auto lower_bound = hn::AndNot(done, hn::Ge(s, one));
    lo = hn::IfThenElse(lower_bound, lambda, lo);
    if (drop) columns = DropOutsideLanes(df, y, G, columns, a, lambda, count, lower_bound, done);
    const VF excess = hn::Sub(s, one);
    VF step = hn::Div(excess, hn::Mul(ak, slope));
    const auto use_f = k <= 4 ? hn::Le(excess, hn::Set(df, 0x1p-10F)) : hn::Lt(one, zero);
    if (!hn::AllTrue(df, hn::Or(use_f, done))) {
      const VF numerator = hn::Neg(hn::Mul(s, hn::Expm1(df, hn::Mul(hn::Log1p(df, excess), minus_inverse_k))));
      step = hn::IfThenElse(use_f, step, hn::Div(numerator, hn::Mul(av, slope)));
    }
    const VF next = hn::Add(lambda, step);
    const auto moves = hn::AndNot(done, hn::IsFinite(next));
    const VF previous = lambda;
    lambda = hn::IfThenElse(moves, hn::Max(next, lo), lambda);
    const auto small = hn::Le(hn::Abs(hn::Sub(lambda, previous)), hn::Mul(resolution, hn::Max(one, hn::Abs(lambda))));
    done = hn::Or(done, hn::Or(hn::Not(moves), small));
    if (hn::AllTrue(df, done)) break;
  }
  return hn::IfThenElseZero(hn::Ge(lambda, zero), lambda);
}

// The write of a float row of a general power from the powers its double steps took
// (LaneThresholds' `powers`): the entries the steps kept are, in order, the row's candidates
// (x > threshold, the collection's test) with y = x - max (in double, as the columns hold it) at
// or above the least of them, `lowest`: every later filter (the floor's, the drops') keeps the
// entries above a bound on y. Those are the entries x >= least_kept_entry (not x >= max + lowest
// rounded: a candidate x tiny beside max may share its y with an entry that is no candidate).
// Entry j of them has p = column[j stride]; the others are 0. The powers are the series' (a
// product of two rounded factors, within about 3 ulps of double: correctly rounded to float but
// where p lies within 1e-15 of a tie), no Pow of every entry of the support (the general power's
// write was a third of the forward near alpha = 1).
template <class T>
HWY_INLINE void WritePowerColumn(const T* x, T* p, std::size_t n, T threshold, T max, double lowest,
                                 const double* column, std::size_t stride) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  alignas(kMaxBytes) I positions[kMaxPowerRow + kMaxBytes / sizeof(T)];
  std::size_t kept = 0;
  const auto bound = hn::Set(d, sparcon::detail::least_kept_entry(threshold, max, lowest));
  const auto lanes = hn::Iota(di, 0);  // (Iota at a variable start is built lane by lane)
  ForEachVector(d, x, n, -kInf<T>, [&](std::size_t i, auto v, std::size_t) HWY_ATTR {
    const auto keep = hn::RebindMask(di, hn::Ge(v, bound));  // the padding (-inf) is not kept
    const auto at = hn::Add(lanes, hn::Set(di, static_cast<I>(i)));
    kept = AppendKept(di, at, keep, positions, kept);
  });
  std::fill(p, p + n, T(0));  // after the last read of x: p may be x
  for (std::size_t j = 0; j < kept; ++j) p[positions[j]] = static_cast<T>(column[j * stride]);
}

// The L vectors block[0, L) (L = Lanes(d)) transposed in place: afterwards lane l of block[i]
// holds what lane i of block[l] held. Read as one array of L x L entries, the block's entry at
// (i, l) sits at index i L + l, 2 log2(L) bits; a round that puts the even lanes of every pair
// of vectors first and their odd lanes after rotates that index right by one bit, and log2(L)
// rounds swap its halves: (i, l) to (l, i). (Any lane type and count; the float blocks of the
// short rows take TransposeSquare, fewer shuffles for 32-bit lanes.)
template <class D>
HWY_INLINE void TransposeBlock(D d, hn::Vec<D>* block) {
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to move (and no ConcatEven)
  constexpr std::size_t L = hn::MaxLanes(D());
  if constexpr (L > 1) {
    for (std::size_t round = 1; round < L; round *= 2) {
      hn::Vec<D> out[L];
      for (std::size_t q = 0; q < L / 2; ++q) {
        out[q] = hn::ConcatEven(d, block[2 * q + 1], block[2 * q]);
        out[L / 2 + q] = hn::ConcatOdd(d, block[2 * q + 1], block[2 * q]);
      }
      for (std::size_t i = 0; i < L; ++i) block[i] = out[i];
    }
  }
#else
  (void)d;
  (void)block;
#endif
}

// A group's columns (PowerRows) from its rows' candidates as Collect left them, row l at
// collected + l kMaxPowerRow: y[j stride + l] = collected[l kMaxPowerRow + j] - maxima[l] in
// double for j < counts[l], -inf for counts[l] <= j < columns and for the rows
// group <= l < rows (rows a multiple of Lanes(double), at most stride). Lanes(double) rows by
// Lanes(double) candidates at a time, transposed in registers, one store a column's vector (a
// store per candidate into its row's column was 12% of entmax-1.25's forward on rows of 512).
template <class T>
HWY_INLINE void FillColumns(const T* collected, const std::size_t* counts, const T* maxima,
                            std::size_t group, std::size_t rows, std::size_t stride,
                            std::size_t columns, double* y) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<T, decltype(d)> dt;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t L = hn::MaxLanes(d);
  const V minus_inf = hn::Set(d, -kInf<double>);
  for (std::size_t h = 0; h < rows; h += L) {
    for (std::size_t j = 0; j < columns; j += L) {
      V block[L];
      for (std::size_t i = 0; i < L; ++i) {
        const std::size_t l = h + i, count = l < group ? counts[l] : 0;
        if (count <= j) {
          block[i] = minus_inf;
          continue;
        }
        const V v = PromoteColumn(d, hn::LoadU(dt, collected + l * kMaxPowerRow + j));
        block[i] =
            hn::IfThenElse(hn::FirstN(d, count - j),
                           hn::Sub(v, hn::Set(d, static_cast<double>(maxima[l]))), minus_inf);
      }
      TransposeBlock(d, block);
      for (std::size_t i = 0; i < L && j + i < columns; ++i)
        hn::Store(block[i], d, y + (j + i) * stride + h);
    }
  }
}

// Whole rows of entmax with k = 1/a not 1 or 2 and a >= kMinPowerRowsA (k <= 128, not 1.5 or 2), of
// length n <= kMaxPowerRow, Lanes(float) rows at a time for a k that is not an integer, else
// Lanes(double) (see Kernels::power_rows): per row the maximum and the candidates (entries
// above max - 1/a), the threshold by LaneThresholds (k > 1; a k that is not an integer from
// FloatLaneStarts) or LaneOffsets (k < 1) on each Lanes(double) of them, then the write of
// entmax_row. Stops at the first row whose maximum is not finite and returns its index (rows
// when every row is done).
template <class T>
std::size_t PowerRows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n, double a,
                      double k) {
  HWY_ASSERT(n <= kMaxPowerRow);
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> dh;  // as many lanes as d
#if HWY_TARGET == HWY_SCALAR
  const hn::Rebind<float, decltype(d)> df;  // one lane of each
#else
  const hn::Repartition<float, decltype(d)> df;  // as many bytes: twice the lanes
#endif
  constexpr std::size_t kMaxG = kMaxBytes / sizeof(float);
  // A general power starts from FloatLaneStarts. On rows of up to kMaxUncompactedRow the double
  // steps start at its lambda on every candidate (entmax-1.75, A/B on an AMD EPYC Zen 5,
  // AVX-512: 1.15-1.25x faster on rows of 16, 1.1x on 64). On longer rows, whose candidates are
  // mostly outside the support, the float steps drop those they prove outside, and the double
  // steps start at `floor`, just below the float lambda, on the candidates with u > 0 there
  // only: exact for every lambda >= floor, which the bracket keeps to once the first step has
  // proven floor a lower bound, so the result is that of the steps from floor on every
  // candidate, to the bit. A row where floor is no lower bound is solved again on all its
  // candidates from 0 (floor may lie where no entry is inside, where Newton has no step). The
  // choice is on n, not on the candidates, so that a row's result does not depend on the rows
  // beside it.
  constexpr std::size_t kMaxUncompactedRow = 64;
  const bool general = k > 1 && k != 3 && k != 4, compact = general && n > kMaxUncompactedRow;
  // Rows a group: Lanes(float) where FloatLaneStarts runs, else Lanes(double) (the columns of
  // rows of 512 with alpha = 1.25, near 420 candidates, stay in L1: twice as many rows a group
  // spilled them and cost 10%).
  const std::size_t L = hn::Lanes(d), G = general ? hn::Lanes(df) : L;
  const double gap = 1 / a;
  const auto zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const auto none = hn::Lt(one, zero);
  // Candidate j of the group's row l at [j G + l], in double and (general powers) in float.
  alignas(kMaxBytes) double y[kMaxPowerRow * kMaxG];
  alignas(kMaxBytes) float y_float[kMaxPowerRow * kMaxG];
  // The group's rows' candidates as Collect leaves them, row l at l kMaxPowerRow (Collect's
  // whole-vector stores need a vector past the last row's end).
  alignas(kMaxBytes) T collected[kMaxG * kMaxPowerRow + kMaxBytes / sizeof(T)];
  alignas(kMaxBytes) double lambda[kMaxG], offset[kMaxG], shifts[kMaxG];
  alignas(kMaxBytes) double edge[kMaxG] = {};  // k < 1: 1 where the row has a candidate at the edge
  const double edge_window = k < 1 ? sparcon::detail::support_edge_window(k) : 0;
  alignas(kMaxBytes) float starts[kMaxG];
  // Float rows of a general power take p from the double steps' powers (WritePowerColumn), but
  // rows of up to kMaxUncompactedRow with k < 2, whose support is a few entries the general
  // power's write finds at once (entmax-1.75 on rows of 64 of N(0, 4^2) 0.92x as fast the other
  // way; rows of 512 1.18x faster). Double rows keep the write of entmax_row: near alpha = 1
  // exp(k log1p(.)) from lambda, whose error the double rows' tests bound to the last digits;
  // the series' product adds 2 ulps.
  const bool power_columns = general && std::is_same_v<T, float> && (compact || k > 2);
  alignas(kMaxBytes) double powers[kMaxPowerRow * kMaxG];
  alignas(kMaxBytes) double lowest[kMaxG];
  T maxima[kMaxG] = {}, thresholds[kMaxG] = {};
  std::size_t counts[kMaxG] = {};
  // Rows of kMinLaneBoundRow and more: the candidates above a lower bound of lambda from the
  // lane maxima (LaneMaximaLowerBound, PowerLowerBound) where it pays, else 0, and Newton's start
  // (N(0,1) rows of 512: entmax-1.25's from about 410 to 190 a row and a step fewer, alpha = 4/3's
  // from 250 to 75; entmax-1.75's lane maxima are mostly no candidates, and it takes none).
  const bool lane_bound = n >= kMinLaneBoundRow;
  alignas(kMaxBytes) T lane_maxima[2 * kMaxBytes / sizeof(T)];
  alignas(kMaxBytes) double lower[kMaxG] = {};
  const WriteKind kind = EntmaxWriteKind<T>(a, k);  // entmax_row's write, the same for every row
  // Row l of the group: its maximum (false where not finite: the caller's row) and bound.
  auto bound_row = [&](std::size_t first, std::size_t l) HWY_ATTR __attribute__((always_inline)) {
    const T* row = x + (first + l) * n;
    const T max = lane_bound ? MaxOf(row, n, lane_maxima) : Max(row, n);
    if (!(max > -kInf<T> && max < kInf<T>)) return false;
    maxima[l] = max;
    lower[l] = 0;
    if (lane_bound && k > 1) {
      const std::size_t m = 2 * hn::Lanes(hn::ScalableTag<T>());  // MaxOf's lane maxima
      lower[l] = LaneMaximaLowerBound(
          lane_maxima, candidate_threshold(max, gap, -kInf<T>), [&]() HWY_ATTR {
            return k == 3   ? PowerLowerBound<3>(lane_maxima, m, max, a, k)
                   : k == 4 ? PowerLowerBound<4>(lane_maxima, m, max, a, k)
                            : PowerLowerBound<kPowerGeneral>(lane_maxima, m, max, a, k);
          });
    }
    return true;
  };
  // Row l's candidates into its column, above its bound's threshold.
  auto collect_row = [&](std::size_t first, std::size_t l) HWY_ATTR __attribute__((always_inline)) {
    thresholds[l] = lower[l] > 0 ? BelowLowerBound(maxima[l], lower[l], a)
                                 : candidate_threshold(maxima[l], gap, -kInf<T>);
    counts[l] =
        CollectSkipping(x + (first + l) * n, n, thresholds[l], collected + l * kMaxPowerRow);
  };
  // Where the group before took a bound, the bounds of all the group's rows go before their
  // collections: a bound is a chain of reductions and a power, which the next rows' maxima and
  // bounds overlap only when nothing waits on it in between (each row collected right after
  // its bound, entmax-1.25 on rows of 128 lost 10-15% to the bounds instead of gaining 5%).
  // Elsewhere each row is collected right after its maximum, while it is in L1 (the bounds
  // first cost entmax-1.75 and entmax-3, which mostly or never take one, 4-9% on rows of 128
  // and 512). Either order gives the same values.
  bool bounds_first = lane_bound && k > 1;
  for (std::size_t first = 0; first < rows; first += G) {
    std::size_t group = std::min(G, rows - first), columns = 0;
    for (std::size_t l = 0; l < group; ++l) {
      if (!bound_row(first, l)) {
        group = l;
        break;
      }
      if (!bounds_first) collect_row(first, l);
    }
    bool took_bound = false;
    for (std::size_t l = 0; l < group; ++l) {
      if (bounds_first) collect_row(first, l);
      columns = std::max(columns, counts[l]);
      took_bound = took_bound || lower[l] > 0;
    }
    bounds_first = took_bound;
    for (std::size_t l = group; l < G; ++l) lower[l] = 0;
    FillColumns(collected, counts, maxima, group, G, G, columns, y);
    if (general) {
      alignas(kMaxBytes) float lower_float[kMaxG];  // the float steps' start
      for (std::size_t l = 0; l < G; ++l) lower_float[l] = static_cast<float>(lower[l]);
      for (std::size_t j = 0; j < columns; ++j)
        for (std::size_t h = 0; h < G; h += L)
          hn::Store(hn::DemoteTo(dh, hn::Load(d, y + j * G + h)), dh, y_float + j * G + h);
      hn::Store(FloatLaneStarts(df, y_float, columns, a, k, hn::Load(df, lower_float), compact), df, starts);
    }
    // Each Lanes(double) of the group's rows: lambda[l] and offset[l] as the solvers return
    // them, {lambda, 1 - a lambda} from Newton, {(1 - c) / a, c} from the offset form.
    for (std::size_t h = 0; h < group; h += L) {
      std::size_t part_columns = 0;  // the most candidates of these rows
      for (std::size_t l = h; l < std::min(h + L, group); ++l) part_columns = std::max(part_columns, counts[l]);
      double* part = y + h;
      if (k < 1) {
        hn::Store(k == 0.5 ? LaneOffsets<kPowerSqrt>(d, part, G, part_columns, a, k, n)
                           : LaneOffsets<kPowerGeneral>(d, part, G, part_columns, a, k, n), d, offset + h);
        // The rows with a candidate within the window of the edge (support_edge.h), in lanes.
        const auto c = hn::Load(d, offset + h), av = hn::Set(d, a);
        const auto window = hn::Mul(c, hn::Set(d, edge_window));
        auto near = none;
        for (std::size_t j = 0; j < part_columns; ++j)  // y = -inf: |u| = inf
          near =
              hn::Or(near, hn::Lt(hn::Abs(hn::MulAdd(av, hn::Load(d, part + j * G), c)), window));
        hn::Store(hn::IfThenElseZero(near, one), d, edge + h);
        for (std::size_t l = h; l < h + L; ++l) lambda[l] = (1 - offset[l]) / a;
        continue;
      }
      const GeneralPowerOptions options{.near_one = a < kNearOneA && std::is_same_v<T, double>,
                                        .powers = power_columns ? powers + h : nullptr,
                                        .lowest = lowest + h};
      hn::Vec<decltype(d)> result;
      if (k == 3) {
        result = LaneThresholds<3>(d, part, G, part_columns, a, k, n, hn::Load(d, lower + h), none, nullptr);
      } else if (k == 4) {
        result = LaneThresholds<4>(d, part, G, part_columns, a, k, n, hn::Load(d, lower + h), none, nullptr);
      } else if (!compact) {
        result = LaneThresholds<kPowerGeneral>(d, part, G, part_columns, a, k, n,
                                               hn::PromoteTo(d, hn::Load(dh, starts + h)), none,
                                               nullptr, options);
      } else {
        const auto start = hn::PromoteTo(d, hn::Load(dh, starts + h));
        const double test_shift = sparcon::simd::detail::power_rows_floor_shift;
        const auto floor = HWY_UNLIKELY(test_shift > 0)
                               ? hn::Max(zero, hn::Mul(start, hn::Set(d, 1 + test_shift)))
                               : hn::Max(zero, hn::NegMulAdd(hn::Set(d, 0x1p-16),
                                                             hn::Max(one, hn::Abs(start)), start));
        // u = 1 + a (y - floor) as LaneThresholds forms it: an entry with u <= 0 there has
        // u <= 0 at every lambda >= floor (the rounding of both products is monotone).
        const auto av = hn::Set(d, a), base = hn::NegMulAdd(av, floor, one);
        const std::size_t kept = CompactLanes(d, part, G, part_columns, [&](auto v) HWY_ATTR {
          return hn::Gt(hn::MulAdd(av, v, base), zero);
        });
        auto short_start = none;
        result = LaneThresholds<kPowerGeneral>(d, part, G, kept, a, k, n, floor, none, &short_start,
                                               options);
        if (!hn::AllFalse(d, short_start)) {  // all candidates again, for those rows from 0
          FillColumns(collected + h * kMaxPowerRow, counts + h, maxima + h, group - h, L, G,
                      part_columns, part);
          result =
              hn::IfThenElse(short_start,
                             LaneThresholds<kPowerGeneral>(d, part, G, part_columns, a, k, n, zero,
                                                           hn::Not(short_start), nullptr, options),
                             result);
        }
      }
      hn::Store(result, d, lambda + h);
      for (std::size_t l = h; l < h + L; ++l) offset[l] = 1 - a * lambda[l];
    }
    // The write of entmax_row for this k: a general power's (and in float, k < 1's: see Write)
    // for the group's rows together.
    if (power_columns) {
      for (std::size_t l = 0; l < group; ++l)
        WritePowerColumn(x + (first + l) * n, p + (first + l) * n, n, thresholds[l], maxima[l],
                         lowest[l], powers + l, G);
    } else if (kind == WriteKind::power ||
               (kind == WriteKind::offset_power && std::is_same_v<T, float>)) {
      for (std::size_t l = 0; l < group; ++l) shifts[l] = static_cast<double>(maxima[l]);
      WriteGeneralPowers(x + first * n, p + first * n, n, group, shifts, offset, a, k, 1.0);
    } else {
      for (std::size_t l = 0; l < group; ++l)
        Write(x + (first + l) * n, p + (first + l) * n, n,
              {.kind = kind,
               .shift = maxima[l],
               .a = static_cast<T>(a),
               .c = static_cast<T>(offset[l]),
               .lambda = static_cast<T>(lambda[l]),  // power_near_one
               .k = static_cast<T>(k),
               .exact_a = a,
               .exact_offset = offset[l],
               .exact_k = k});
    }
    // k < 1: rows with a candidate at the edge of the support solved again (support_edge.h).
    if (k < 1)
      for (std::size_t l = 0; l < group; ++l)
        if (edge[l] != 0) {
          offset[l] = sparcon::detail::refine_support_edge(x + (first + l) * n, p + (first + l) * n,
                                                           n, maxima[l], a, k, offset[l]);
          lambda[l] = (1 - offset[l]) / a;
        }
    if (tau)
      for (std::size_t l = 0; l < group; ++l) tau[first + l] = sparcon::detail::entmax_tau(a, maxima[l], lambda[l]);
    if (group < std::min(G, rows - first)) return first + group;
  }
  return rows;
}

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SPARCON_DISCRETE_SIMD_KERNELS_INL_H_ (per target)
