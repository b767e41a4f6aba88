// SIMD kernels of the value side (value_kernels.h). Float rows are promoted to double half a
// vector at a time; tails run through the scalar loop.

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "continuous/value_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "continuous/value_kernels.h"

#include "continuous/chosen_table.h"

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<double>;

// Lanes of x[i..] as doubles.
template <class T>
HWY_INLINE hn::Vec<D> LoadDouble(D d, const T* x) {
  if constexpr (sizeof(T) == sizeof(double)) {
    return hn::LoadU(d, x);
  } else {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), x));
  }
}

template <class T>
void Axpy(double w, const T* x, double* sum, std::size_t n) {
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  const auto vw = hn::Set(d, w);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::MulAdd(vw, LoadDouble(d, x + i), hn::LoadU(d, sum + i)), d, sum + i);
  for (; i < n; ++i) sum[i] += w * static_cast<double>(x[i]);
}

template <class T>
double Dot(const T* x, const T* y, std::size_t n) {
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d);
  std::size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    a0 = hn::MulAdd(LoadDouble(d, x + i), LoadDouble(d, y + i), a0);
    a1 = hn::MulAdd(LoadDouble(d, x + i + lanes), LoadDouble(d, y + i + lanes), a1);
  }
  for (; i + lanes <= n; i += lanes) a0 = hn::MulAdd(LoadDouble(d, x + i), LoadDouble(d, y + i), a0);
  double total = hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1)));
  for (; i < n; ++i) total += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return total;
}

template <class T>
void Scale(double w, const T* x, T* out, std::size_t n) {
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  const auto vw = hn::Set(d, w);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto product = hn::Mul(vw, LoadDouble(d, x + i));
    if constexpr (sizeof(T) == sizeof(double)) {
      hn::StoreU(product, d, out + i);
    } else {
      const hn::Rebind<float, D> df;
      hn::StoreU(hn::DemoteTo(df, product), df, out + i);
    }
  }
  for (; i < n; ++i) out[i] = static_cast<T>(w * static_cast<double>(x[i]));
}

template <class T>
constexpr TypedValueKernels<T> kTyped = {&Axpy<T>, &Dot<T>, &Scale<T>};

}  // namespace

// This target's kernels.
const ValueKernelTable* ValueTable() {
  static constexpr ValueKernelTable table = {kTyped<float>, kTyped<double>, HWY_TARGET};
  return &table;
}

}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparcon::simd {

HWY_EXPORT(ValueTable);

namespace {

detail::ChosenTable<ValueKernelTable> chosen([] { return HWY_DYNAMIC_DISPATCH(ValueTable)(); });

const ValueKernelTable& table() { return chosen.get(); }

}  // namespace

void axpy(double w, const float* x, double* sum, std::size_t n) { table().f.axpy(w, x, sum, n); }
void axpy(double w, const double* x, double* sum, std::size_t n) { table().d.axpy(w, x, sum, n); }
double dot(const float* x, const float* y, std::size_t n) { return table().f.dot(x, y, n); }
double dot(const double* x, const double* y, std::size_t n) { return table().d.dot(x, y, n); }
void scale(double w, const float* x, float* out, std::size_t n) { table().f.scale(w, x, out, n); }
void scale(double w, const double* x, double* out, std::size_t n) { table().d.scale(w, x, out, n); }

namespace detail {
std::int64_t reselect_value_kernels() { return chosen.choose().target; }
std::int64_t value_kernel_target() { return table().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
