// hn::Compress without Highway 1.0.3's per-call table copy, shared by the discrete row kernels
// (discrete/simd_kernels-inl.h) and the 2D ray kernel (continuous/ray_kernels-inl.h). Included
// once per target from those headers, inside no namespace.

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

}  // namespace
}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
