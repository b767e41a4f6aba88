// The chord kernel of chord_kernels-inl.h compiled for every target Highway supports; the best for
// the running CPU is chosen at the first call and kept (detail::reselect_chord_kernels chooses
// again, for the tests that run every target).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "continuous/chord_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "continuous/chord_kernels-inl.h"

#include "continuous/chosen_table.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {

// This target's kernel.
const ChordKernelTable* ChordTable() {
  static constexpr ChordKernelTable table = {&ChordSumsOf, HWY_TARGET};
  return &table;
}

}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparcon::simd {

HWY_EXPORT(ChordTable);

namespace {

detail::ChosenTable<ChordKernelTable> chosen([] { return HWY_DYNAMIC_DISPATCH(ChordTable)(); });

}  // namespace

ChordSums chord_sums(const ChordPair& pair) { return chosen.get().chord_sums(pair); }

namespace detail {
std::int64_t reselect_chord_kernels() { return chosen.choose().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
