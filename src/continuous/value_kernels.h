// SIMD kernels of the value side of continuous attention (value_model.h), written once with
// Google Highway and dispatched at run time like the discrete kernels. Rows are float or double;
// sums are always taken in double.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sparcon::simd {

/// sum[i] += w * x[i] for i < n.
void axpy(double w, const float* x, double* sum, std::size_t n);
void axpy(double w, const double* x, double* sum, std::size_t n);

/// sum_i x[i] y[i], accumulated in double.
double dot(const float* x, const float* y, std::size_t n);
double dot(const double* x, const double* y, std::size_t n);

/// out[i] = w * x[i], computed in double and rounded once.
void scale(double w, const float* x, float* out, std::size_t n);
void scale(double w, const double* x, double* out, std::size_t n);
/// out[l] = sum_j a[l * n + j] x[j] for l < rows (a: rows x n, row-major), accumulated in double.
void matvec(const float* a, std::size_t rows, std::size_t n, const float* x, double* out);
void matvec(const double* a, std::size_t rows, std::size_t n, const double* x, double* out);
/// out[j] += sum_l w[l] a[l * n + j] for j < n (a: rows x n, row-major): a^T w, each out[j]
/// summed over l in order.
void matvec_transposed(const double* w, const float* a, std::size_t rows, std::size_t n, double* out);
void matvec_transposed(const double* w, const double* a, std::size_t rows, std::size_t n, double* out);

/// One target's kernels for one row type, as function pointers (value_kernels.cc fills a
/// ValueKernelTable per target; the functions above call through the one chosen for the CPU).
template <class T>
struct TypedValueKernels {
  void (*axpy)(double, const T*, double*, std::size_t);
  double (*dot)(const T*, const T*, std::size_t);
  void (*scale)(double, const T*, T*, std::size_t);
  void (*matvec)(const T*, std::size_t, std::size_t, const T*, double*);
  void (*matvec_transposed)(const double*, const T*, std::size_t, std::size_t, double*);
};

struct ValueKernelTable {
  TypedValueKernels<float> f;
  TypedValueKernels<double> d;
  std::int64_t target;  ///< the Highway target these kernels were compiled for
};

namespace detail {

/// The value kernels' counterpart of simd_kernels.h's detail::reselect_kernels (same use, same
/// cost): after hwy::SetSupportedTargetsForTest(target) and
/// hwy::GetChosenTarget().Update(hwy::SupportedTargets()), makes every later call run `target`'s
/// value kernels; returns the target now in use.
std::int64_t reselect_value_kernels();
/// The target whose value kernels are in use.
std::int64_t value_kernel_target();

}  // namespace detail

}  // namespace sparcon::simd
