// hn::Compress without Highway 1.0.3's per-call table copy, shared by the discrete row kernels
// (discrete/simd_kernels-inl.h) and the 2D ray and chord kernels (continuous/ray_kernels-inl.h,
// chord_kernels-inl.h), and KeptLanes, which those 2D kernels build on it. Included once per
// target from those headers, inside no namespace.

// Per-target include guard, toggled by foreach_target.h (Highway's convention).
#if defined(SPARCON_COMPRESS_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARCON_COMPRESS_LANES_INL_H_
#undef SPARCON_COMPRESS_LANES_INL_H_
#else
#define SPARCON_COMPRESS_LANES_INL_H_
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

// For every mask of up to 8 lanes, the lanes it selects in order, one 4-bit lane index per
// nibble (lane j of the result takes the lane in nibble j; unused nibbles are 0).
constexpr std::array<std::uint32_t, 256> MakeCompressIndices() {
  std::array<std::uint32_t, 256> table{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    unsigned out = 0;
    for (unsigned lane = 0; lane < 8; ++lane)
      if (mask >> lane & 1) table[mask] |= lane << (4 * out++);
  }
  return table;
}
// At namespace scope, so that it lives in read-only data: Highway's own Compress keeps such
// tables as local constexpr arrays, which GCC 12 copies onto the stack at every call (1-2 KiB,
// about as long as a whole short row's work), where the CPU has no compress instruction for
// the lane type (AVX2 and SSE4, and 64-bit lanes on AVX-512).
constexpr std::array<std::uint32_t, 256> kCompressIndices = MakeCompressIndices();

// hn::Compress(v, keep): the lanes of v where keep is true, first; the other lanes undefined.
template <class D, class M>
HWY_INLINE hwy::HWY_NAMESPACE::Vec<D> CompressLanes(D d, hwy::HWY_NAMESPACE::Vec<D> v, M keep) {
  namespace hn = hwy::HWY_NAMESPACE;
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  using T = hn::TFromD<D>;
  constexpr std::size_t kLanes = hn::MaxLanes(D());
  constexpr bool kNative = HWY_TARGET <= HWY_AVX3 && sizeof(T) == 4;  // vcompressps
  if constexpr (!kNative && kLanes >= 2 && kLanes <= 8 && sizeof(T) >= 4) {
    const hn::RebindToUnsigned<D> du;
    std::uint8_t bits[8] = {};
    hn::StoreMaskBits(d, keep, bits);
    const auto packed = hn::Set(du, static_cast<hn::TFromD<decltype(du)>>(kCompressIndices[bits[0]]));
    const auto shifts = hn::ShiftLeft<2>(hn::Iota(du, 0));
    const auto lanes = hn::And(hn::Shr(packed, shifts), hn::Set(du, 7));
    return hn::TableLookupLanes(v, hn::IndicesFromVec(d, lanes));
  }
#endif
  (void)d;
  return hn::Compress(v, keep);
}

// Lanes kept aside from the vectors they come from, N values each, so that a method that costs as
// much for one lane as for a whole vector runs on whole vectors afterwards (the 2D kernels keep
// the rays and chords of their costlier methods so).
template <class D, std::size_t N>
class KeptLanes {
 public:
  using V = hwy::HWY_NAMESPACE::Vec<D>;
  using M = hwy::HWY_NAMESPACE::Mask<D>;
  using T = hwy::HWY_NAMESPACE::TFromD<D>;

  // Empties the list and makes room for `capacity` lanes (and a whole compressed vector beyond).
  void Reset(D d, std::size_t capacity) {
    count_ = 0;
    const std::size_t size = capacity + hwy::HWY_NAMESPACE::Lanes(d);
    for (std::vector<T>& v : values_)
      if (v.size() < size) v.resize(size);
  }

  // Appends the lanes `which` of `values` (value j of a lane in values[j]), in lane order.
  HWY_INLINE void Keep(D d, M which, const std::array<V, N>& values) {
    namespace hn = hwy::HWY_NAMESPACE;
    for (std::size_t j = 0; j < N; ++j) hn::StoreU(CompressLanes(d, values[j], which), d, values_[j].data() + count_);
    count_ += hn::CountTrue(d, which);
  }

  // Calls f(lanes, values) on the kept lanes, a vector at a time in the order they were kept; in
  // the last vector the lanes past the end (lanes false) hold `fill`, so that f computes nothing
  // harmful from them.
  template <class F>
  HWY_INLINE void ForEach(D d, const std::array<T, N>& fill, F&& f) const {
    namespace hn = hwy::HWY_NAMESPACE;
    for (std::size_t i = 0; i < count_; i += hn::Lanes(d)) {
      const M lanes = hn::FirstN(d, count_ - i);
      std::array<V, N> values;
      for (std::size_t j = 0; j < N; ++j)
        values[j] = hn::IfThenElse(lanes, hn::LoadU(d, values_[j].data() + i), hn::Set(d, fill[j]));
      f(lanes, values);
    }
  }

 private:
  std::array<std::vector<T>, N> values_;
  std::size_t count_ = 0;
};

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
