// The value side of continuous attention, shared by sequences and images: with G the ridge
// matrix of an example's grid (L x N), r its expectations (N) and H its values (L x E),
//   context = H^T (G r),   dr = G^T (H dcontext),   dvalues = (G r) dcontext^T,
// and the value model of query-conditioned attention, B = G^T H (N x E), dvalues = G dB.
// Sums are taken in double; examples are spread over the threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "continuous/batch.h"
#include "continuous/value_kernels.h"
#include "parallel_rows.h"
#include "sparcon/rows.h"

namespace sparcon::detail {

/// values: batch x padded x features; example b uses its first length_of(b) rows.
struct ValueLayout {
  std::size_t batch = 0;
  std::size_t padded = 0;
  std::size_t features = 0;
};

/// The grid and the number of values of one example.
template <class Grid>
struct ExampleGrid {
  Grid grid;
  std::size_t length;
};

/// w = G r for one example (length entries).
template <class T>
void value_weights(const std::vector<T>& g, std::size_t length, const T* r, std::size_t n,
                   double* w) {
  simd::matvec(g.data(), length, n, r, w);
}

/// context[b] = sum_l (G_b r_b)_l values[b, l].  r: batch x N, context: batch x features.
template <class T, class Cache, class GridOf>
void contexts(Cache& ridge, std::span<const T> values, ValueLayout layout, const GridOf& grid_of,
              std::span<const T> r, std::span<T> context, Threads threads) {
  const std::size_t n = ridge.basis().size(), e = layout.features;
  parallel_rows(example_rows(layout.batch, n), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> w(layout.padded), sum(e);
    for (std::size_t b = begin; b < end; ++b) {
      const auto example = grid_of(b);
      value_weights(ridge.matrix(example.grid), example.length, r.data() + b * n, n, w.data());
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t l = 0; l < example.length; ++l)
        simd::axpy(w[l], values.data() + (b * layout.padded + l) * e, sum.data(), e);
      for (std::size_t f = 0; f < e; ++f) context[b * e + f] = static_cast<T>(sum[f]);
    }
  });
}

/// dr[b] = G_b^T (H_b dcontext[b]) (batch x N).
template <class T, class Cache, class GridOf>
std::vector<T> basis_gradients(Cache& ridge, std::span<const T> values, ValueLayout layout,
                               const GridOf& grid_of, std::span<const T> dcontext, Threads threads) {
  const std::size_t n = ridge.basis().size(), e = layout.features;
  std::vector<T> dr(layout.batch * n);
  parallel_rows(example_rows(layout.batch, n), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> sum(n), dw(layout.padded);
    for (std::size_t b = begin; b < end; ++b) {
      const auto example = grid_of(b);
      const T* dc = dcontext.data() + b * e;
      const std::vector<T>& g = ridge.matrix(example.grid);
      for (std::size_t l = 0; l < example.length; ++l)
        dw[l] = simd::dot(values.data() + (b * layout.padded + l) * e, dc, e);
      std::fill(sum.begin(), sum.end(), 0.0);
      simd::matvec_transposed(dw.data(), g.data(), example.length, n, sum.data());
      for (std::size_t j = 0; j < n; ++j) dr[b * n + j] = static_cast<T>(sum[j]);
    }
  });
  return dr;
}

/// dvalues[b, l] = (G_b r_b)_l dcontext[b] for the example's rows, zero for padding rows.
template <class T, class Cache, class GridOf>
void value_gradients(Cache& ridge, ValueLayout layout, const GridOf& grid_of, std::span<const T> r,
                     std::span<const T> dcontext, std::span<T> dvalues, Threads threads) {
  const std::size_t n = ridge.basis().size(), e = layout.features;
  parallel_rows(example_rows(layout.batch, n), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> w(layout.padded);
    for (std::size_t b = begin; b < end; ++b) {
      const auto example = grid_of(b);
      value_weights(ridge.matrix(example.grid), example.length, r.data() + b * n, n, w.data());
      const T* dc = dcontext.data() + b * e;
      for (std::size_t l = 0; l < layout.padded; ++l) {
        T* dh = dvalues.data() + (b * layout.padded + l) * e;
        if (l >= example.length) {
          std::fill(dh, dh + e, T(0));
          continue;
        }
        simd::scale(w[l], dc, dh, e);
      }
    }
  });
}

/// The Rows parallel_rows should see for the value model: padded * N SIMD multiply-adds of
/// length features per example, about as costly as that many entries of a discrete row.
inline Rows model_rows(ValueLayout layout, std::size_t n) {
  return {layout.batch, layout.padded * n * std::max<std::size_t>(1, layout.features / 8)};
}

/// model[b] = G_b^T H_b (batch x N x features): row j is sum_l G_b[l, j] values[b, l].
template <class T, class Cache, class GridOf>
void value_models(Cache& ridge, std::span<const T> values, ValueLayout layout, const GridOf& grid_of,
                  std::span<T> model, Threads threads) {
  const std::size_t n = ridge.basis().size(), e = layout.features;
  parallel_rows(model_rows(layout, n), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> sum(n * e);
    for (std::size_t b = begin; b < end; ++b) {
      const auto example = grid_of(b);
      const std::vector<T>& g = ridge.matrix(example.grid);
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t l = 0; l < example.length; ++l) {
        const T* h = values.data() + (b * layout.padded + l) * e;
        for (std::size_t j = 0; j < n; ++j) simd::axpy(g[l * n + j], h, sum.data() + j * e, e);
      }
      std::transform(sum.begin(), sum.end(), model.data() + b * n * e,
                     [](double v) { return static_cast<T>(v); });
    }
  });
}

/// dvalues[b, l] = sum_j G_b[l, j] dmodel[b, j] for the example's rows, zero for padding rows.
template <class T, class Cache, class GridOf>
void value_model_gradients(Cache& ridge, ValueLayout layout, const GridOf& grid_of,
                           std::span<const T> dmodel, std::span<T> dvalues, Threads threads) {
  const std::size_t n = ridge.basis().size(), e = layout.features;
  parallel_rows(model_rows(layout, n), threads, [&](std::size_t begin, std::size_t end) {
    std::vector<double> sum(e);
    for (std::size_t b = begin; b < end; ++b) {
      const auto example = grid_of(b);
      const std::vector<T>& g = ridge.matrix(example.grid);
      const T* dm = dmodel.data() + b * n * e;
      for (std::size_t l = 0; l < layout.padded; ++l) {
        T* dh = dvalues.data() + (b * layout.padded + l) * e;
        if (l >= example.length) {
          std::fill(dh, dh + e, T(0));
          continue;
        }
        std::fill(sum.begin(), sum.end(), 0.0);
        for (std::size_t j = 0; j < n; ++j) simd::axpy(g[l * n + j], dm + j * e, sum.data(), e);
        std::transform(sum.begin(), sum.end(), dh, [](double v) { return static_cast<T>(v); });
      }
    }
  });
}

}  // namespace sparcon::detail
