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

// out[l] = sum_j a[l n + j] x[j]: four rows at a time, sharing the loads of x (a row's sum: its
// lanes' partial sums, then the scalar tail).
template <class T>
void MatVec(const T* a, std::size_t rows, std::size_t n, const T* x, double* out) {
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t l = 0;
  for (; l + 4 <= rows; l += 4) {
    const T* row[4] = {a + l * n, a + (l + 1) * n, a + (l + 2) * n, a + (l + 3) * n};
    hn::Vec<D> sum[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const auto xi = LoadDouble(d, x + i);
      for (int r = 0; r < 4; ++r) sum[r] = hn::MulAdd(LoadDouble(d, row[r] + i), xi, sum[r]);
    }
    for (int r = 0; r < 4; ++r) {
      double total = hn::GetLane(hn::SumOfLanes(d, sum[r]));
      for (std::size_t j = i; j < n; ++j) total += static_cast<double>(row[r][j]) * static_cast<double>(x[j]);
      out[l + r] = total;
    }
  }
  for (; l < rows; ++l) out[l] = Dot(a + l * n, x, n);
}

// out[j] += sum_l w[l] a[l n + j]: up to four vectors of out held in registers while the rows go
// by (each out[j] sums over l in order, as axpy row after row would).
template <class T>
void MatVecTransposed(const double* w, const T* a, std::size_t rows, std::size_t n, double* out) {
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    hn::Vec<D> sum[4];
    for (std::size_t c = 0; c < 4; ++c) sum[c] = hn::LoadU(d, out + i + c * lanes);
    for (std::size_t l = 0; l < rows; ++l) {
      const auto wl = hn::Set(d, w[l]);
      const T* row = a + l * n + i;
      for (std::size_t c = 0; c < 4; ++c) sum[c] = hn::MulAdd(wl, LoadDouble(d, row + c * lanes), sum[c]);
    }
    for (std::size_t c = 0; c < 4; ++c) hn::StoreU(sum[c], d, out + i + c * lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    auto sum = hn::LoadU(d, out + i);
    for (std::size_t l = 0; l < rows; ++l) sum = hn::MulAdd(hn::Set(d, w[l]), LoadDouble(d, a + l * n + i), sum);
    hn::StoreU(sum, d, out + i);
  }
  for (; i < n; ++i) {
    double sum = out[i];
    for (std::size_t l = 0; l < rows; ++l) sum += w[l] * static_cast<double>(a[l * n + i]);
    out[i] = sum;
  }
}

template <class T>
constexpr TypedValueKernels<T> kTyped = {&Axpy<T>, &Dot<T>, &Scale<T>, &MatVec<T>, &MatVecTransposed<T>};

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
void matvec(const float* a, std::size_t rows, std::size_t n, const float* x, double* out) {
  table().f.matvec(a, rows, n, x, out);
}
void matvec(const double* a, std::size_t rows, std::size_t n, const double* x, double* out) {
  table().d.matvec(a, rows, n, x, out);
}
void matvec_transposed(const double* w, const float* a, std::size_t rows, std::size_t n, double* out) {
  table().f.matvec_transposed(w, a, rows, n, out);
}
void matvec_transposed(const double* w, const double* a, std::size_t rows, std::size_t n, double* out) {
  table().d.matvec_transposed(w, a, rows, n, out);
}

namespace detail {
std::int64_t reselect_value_kernels() { return chosen.choose().target; }
std::int64_t value_kernel_target() { return table().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
