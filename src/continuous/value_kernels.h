// SIMD kernels of the value side of continuous attention (value_model.h), written once with
// Google Highway and dispatched at run time like the discrete kernels. Rows are float or double;
// sums are always taken in double.
#pragma once

#include <cstddef>

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

}  // namespace sparcon::simd
