// The kernel of pair_frames-inl.h compiled for every target Highway supports; the best for
// the running CPU is chosen at the first call and kept (detail::reselect_pair_frames chooses
// again, for the tests that run every target).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "continuous/pair_frames.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "continuous/pair_frames-inl.h"

#include "continuous/chosen_table.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {

// This target's kernel.
const PairFramesTable* PairFramesTableOf() {
  static constexpr PairFramesTable table = {&PairFramesOf, HWY_TARGET};
  return &table;
}

}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparcon::simd {

HWY_EXPORT(PairFramesTableOf);

namespace {

detail::ChosenTable<PairFramesTable> chosen([] { return HWY_DYNAMIC_DISPATCH(PairFramesTableOf)(); });

}  // namespace

void pair_frames(const DensityFrame& density, const BasisArrays& basis, const PairFrames& out) {
  chosen.get().pair_frames(density, basis, out);
}

namespace detail {
std::int64_t reselect_pair_frames() { return chosen.choose().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
