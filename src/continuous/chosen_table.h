// The kernel table of the running CPU for the continuous core's Highway kernels
// (value_kernels.cc, ray_kernels.cc, chord_kernels.cc), chosen at the first call and kept, as simd_kernels.cc
// does for the discrete ones.
#pragma once

#include <atomic>

namespace sparcon::simd::detail {

/// Holds the table `choose` (HWY_DYNAMIC_DISPATCH of the exported table) returns. The tables are
/// constants, so a relaxed load suffices; two threads choosing at once store the same pointer.
template <class Table>
class ChosenTable {
 public:
  using Choose = const Table* (*)();
  explicit constexpr ChosenTable(Choose choose) : choose_(choose) {}

  const Table& get() {
    const Table* t = chosen_.load(std::memory_order_relaxed);
    return t != nullptr ? *t : choose();
  }

  /// Chooses again (for the tests that select each target in turn).
  const Table& choose() {
    const Table* t = choose_();
    chosen_.store(t, std::memory_order_relaxed);
    return *t;
  }

 private:
  Choose choose_;
  std::atomic<const Table*> chosen_{nullptr};
};

}  // namespace sparcon::simd::detail
