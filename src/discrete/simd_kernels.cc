// The SIMD row kernels of simd_kernels-inl.h compiled for every target Highway supports, one
// table of them per target; the best for the running CPU is chosen at the first call and kept
// (detail::reselect_kernels chooses again, for the tests that run every target).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "discrete/simd_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "discrete/simd_kernels-inl.h"

#include <atomic>

HWY_BEFORE_NAMESPACE();
namespace sparcon::simd::HWY_NAMESPACE {

namespace {

template <class T>
constexpr TypedKernels<T> kTyped = {&Scan<T>,
                                    &CollectSkipping<T>,
                                    &Max<T>,
                                    &ShiftedToDouble<T>,
                                    &ShortRows<T>,
                                    &PowerRows<T>,
                                    &SoftmaxRows<T>,
                                    &Write<T>,
                                    &Sum<T>,
                                    &Scale<T>,
                                    &SumWeighted<T>,
                                    &CenterWeights<T>,
                                    &WeightedCenter<T>,
                                    &DominantCentringOf<T>,
                                    &CenteredRows<T>,
                                    &SumAlphaTerms<T>,
                                    &SumNearOneTerms<T>};

}  // namespace

// This target's kernels.
const KernelTable* Table() {
  static constexpr KernelTable table = {kTyped<float>,           kTyped<double>,
                                        &SumPowers,              &DropAtOrBelow,
                                        &MichelotOffset,
                                        &SparsemaxOffsetPairwise, &QuadraticOffsetPairwise,
                                        HWY_TARGET};
  return &table;
}

}  // namespace sparcon::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparcon::simd {

HWY_EXPORT(Table);

namespace {

// The chosen table: null until the first call resolves it. The tables are constants, so a
// relaxed load suffices; two threads resolving at once store the same pointer.
std::atomic<const KernelTable*> chosen{nullptr};

HWY_NOINLINE const KernelTable& resolve() {
  const KernelTable* t = HWY_DYNAMIC_DISPATCH(Table)();
  chosen.store(t, std::memory_order_relaxed);
  return *t;
}

HWY_INLINE const KernelTable& table() {
  const KernelTable* t = chosen.load(std::memory_order_relaxed);
  return HWY_LIKELY(t != nullptr) ? *t : resolve();
}

template <class T>
const TypedKernels<T>& typed() {
  if constexpr (std::is_same_v<T, float>) {
    return table().float_kernels;
  } else {
    return table().double_kernels;
  }
}

}  // namespace

PowerSums power_sums(const double* y, std::size_t n, const PowerSumParams& params) {
  return table().power_sums(y, n, params);
}

std::size_t drop_at_or_below(double* y, std::size_t n, double bound) {
  return table().drop_at_or_below(y, n, bound);
}

double michelot_offset(const double* y, std::size_t n, double a) {
  return table().michelot_offset(y, n, a);
}

double sparsemax_offset_pairwise(const double* y, std::size_t n, double a) {
  return table().sparsemax_offset_pairwise(y, n, a);
}

double quadratic_offset_pairwise(const double* y, std::size_t n, double a) {
  return table().quadratic_offset_pairwise(y, n, a);
}

template <class T>
void Kernels<T>::scan(CandidateScan<T>& s) {
  typed<T>().scan(s);
}
template <class T>
std::size_t Kernels<T>::collect(const T* x, std::size_t n, T threshold, T* out) {
  return typed<T>().collect(x, n, threshold, out);
}
template <class T>
T Kernels<T>::max(const T* x, std::size_t n) {
  return typed<T>().max(x, n);
}
template <class T>
void Kernels<T>::shifted_to_double(const T* x, std::size_t n, T shift, double* y) {
  typed<T>().shifted_to_double(x, n, shift, y);
}
template <class T>
std::size_t Kernels<T>::short_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n,
                                   int k, T* buffer) {
  return typed<T>().short_rows(x, p, tau, rows, n, k, buffer);
}
template <class T>
std::size_t Kernels<T>::power_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n,
                                   double a, double k) {
  return typed<T>().power_rows(x, p, tau, rows, n, a, k);
}
template <class T>
std::size_t Kernels<T>::softmax_rows(const T* x, T* p, T* tau, std::size_t rows, std::size_t n) {
  return typed<T>().softmax_rows(x, p, tau, rows, n);
}
template <class T>
void Kernels<T>::write(const T* x, T* p, std::size_t n, const WriteParams<T>& params) {
  typed<T>().write(x, p, n, params);
}
template <class T>
double Kernels<T>::sum(const T* p, std::size_t n) {
  return typed<T>().sum(p, n);
}
template <class T>
void Kernels<T>::scale(T* p, std::size_t n, T factor) {
  typed<T>().scale(p, n, factor);
}
template <class T>
WeightedSums Kernels<T>::weighted_sums(const T* p, const T* g, std::size_t n, const Weights<T>& w,
                                       T* s_out) {
  return typed<T>().weighted_sums(p, g, n, w, s_out);
}
template <class T>
void Kernels<T>::center_weights(const T* s, const T* g, T* dx, std::size_t n,
                                const Centring<T>& c) {
  typed<T>().center_weights(s, g, dx, n, c);
}
template <class T>
void Kernels<T>::weighted_center(const T* p, const T* g, T* dx, std::size_t n, const Weights<T>& w,
                                 const Centring<T>& c) {
  typed<T>().weighted_center(p, g, dx, n, w, c);
}
template <class T>
Centring<T> Kernels<T>::dominant_centring(const T* source, bool weights, const T* g, std::size_t n,
                                          const Weights<T>& w, const WeightedSums& sums) {
  return typed<T>().dominant_centring(source, weights, g, n, w, sums);
}

template <class T>
void Kernels<T>::centered_rows(const T* p, const T* g, T* dx, std::size_t rows, std::size_t n,
                               const Weights<T>& w) {
  typed<T>().centered_rows(p, g, dx, rows, n, w);
}

template <class T>
AlphaSums Kernels<T>::alpha_sums(const T* p, const T* g, std::size_t n, const Weights<double>& w) {
  return typed<T>().alpha_sums(p, g, n, w);
}

template <class T>
NearOneSums Kernels<T>::near_one_sums(const T* p, const T* g, std::size_t n, double delta) {
  return typed<T>().near_one_sums(p, g, n, delta);
}

template struct Kernels<float>;
template struct Kernels<double>;

namespace detail {
std::int64_t reselect_kernels() { return resolve().target; }
std::int64_t kernel_target() { return table().target; }
}  // namespace detail

}  // namespace sparcon::simd
#endif  // HWY_ONCE
