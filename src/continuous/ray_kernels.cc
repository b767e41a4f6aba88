// The ray kernel of ray_kernels-inl.h compiled for every target Highway supports; the best for
// the running CPU is chosen at the first call and kept (detail::reselect_ray_kernels chooses
// again, for the tests that run every target).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "continuous/ray_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "continuous/ray_kernels-inl.h"

#include "continuous/chosen_table.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {

// This target's kernel.
const RayKernelTable* RayTable() {
  static constexpr RayKernelTable table = {&RaySumsOf, HWY_TARGET};
  return &table;
}

}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparcon::simd {

HWY_EXPORT(RayTable);

namespace {

detail::ChosenTable<RayKernelTable> chosen([] { return HWY_DYNAMIC_DISPATCH(RayTable)(); });

}  // namespace

RaySums ray_sums(const RayPair& pair) { return chosen.get().ray_sums(pair); }

namespace detail {
std::int64_t reselect_ray_kernels() { return chosen.choose().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
