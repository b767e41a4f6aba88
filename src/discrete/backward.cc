// Backward (vector-Jacobian products) of the discrete maps; formulas in sparcon/discrete.h.
//
// Every map but normmax has the Jacobian diag(s) - s s^T / sum(s) for a weight s_i = s(p_i), so
// its backward is two SIMD passes over (p, g): the sums sum s g and sum s, then
// dx = s (g - sum s g / sum s). Rows that fit in L1 (attention's short rows) take both passes
// of a whole run of rows in one kernel call, where a call per pass and per row would cost as
// much as the passes themselves.
#include <cmath>
#include <vector>

#include "check.h"
#include "compensated_sum.h"
#include "discrete/forward_row.h"
#include "discrete/simd_kernels.h"
#include "parallel_rows.h"
#include "sparcon/discrete.h"

namespace sparcon {
namespace detail {
namespace {

using simd::WeightKind;

template <class T>
simd::Weights<T> weights_of(Map map, double alpha) {
  switch (map) {
    case Map::softmax:
      return {WeightKind::identity};
    case Map::sparsemax:
      return {WeightKind::support};
    case Map::entmax15:
      return {WeightKind::sqrt};
    case Map::budget:
      return {WeightKind::interior};
    default:  // entmax (normmax has its own backward)
      return simd::EntmaxWeights<T>(alpha);
  }
}

// dx = s (g - sum s g / sum s), or in a row that one weight dominates the same by a second pass
// from that first shift (simd::dominated_row, simd::Centring, Kernels::dominant_centring). Weights that cost a power or two square roots per
// entry (KeepsWeightsPerRow) are computed once: the first pass keeps them in dx, unless dx is g
// itself.
template <class T>
void centered_row(const simd::Weights<T>& w, const T* p, const T* g, T* dx, std::size_t n) {
  const bool keep_weights = simd::KeepsWeightsPerRow(w.kind) && dx != g;
  const simd::WeightedSums sums =
      simd::Kernels<T>::weighted_sums(p, g, n, w, keep_weights ? dx : nullptr);
  simd::Centring<T> c{simd::centering_shift<T>(sums)};
  if (simd::dominated_row(sums.largest, sums.s))
    c = simd::Kernels<T>::dominant_centring(keep_weights ? dx : p, keep_weights, g, n, w, sums);
  if (keep_weights) {
    simd::Kernels<T>::center_weights(dx, g, dx, n, c);
  } else {
    simd::Kernels<T>::weighted_center(p, g, dx, n, w, c);
  }
}

// normmax: dx = C [s (g - A) - p B] with s = p^(2-alpha), A = p.g, B = s.g - A sum(s),
// C = ||p||_alpha^(alpha-1) / (alpha-1).
template <class T>
void normmax_row(double alpha, const T* p, const T* g, T* dx, std::size_t n) {
  CompensatedSum pg, sg, s_sum, p_alpha;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(p[i] > 0)) continue;
    const double pi = p[i], gi = g[i], si = std::pow(pi, 2 - alpha);
    pg += pi * gi;
    sg += si * gi;
    s_sum += si;
    p_alpha += std::pow(pi, alpha);
  }
  const double a = pg.value(), b = sg.value() - a * s_sum.value();
  const double c = std::pow(p_alpha.value(), (alpha - 1) / alpha) / (alpha - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double pi = p[i];
    dx[i] = pi > 0 ? static_cast<T>(c * (std::pow(pi, 2 - alpha) * (g[i] - a) - pi * b))
                   : (std::isnan(pi) ? pi : T(0));
  }
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void backward(const Family<T>& family, std::span<const T> p, std::span<const T> g,
              std::span<T> dx, Rows rows, Threads threads) {
  const char* fn = "backward";
  detail::check_size(fn, "p", p, rows.size());
  detail::check_size(fn, "g", g, rows.size());
  detail::check_size(fn, "dx", dx, rows.size());
  detail::check_no_partial_overlap(fn, "p", p, "dx", dx);
  detail::check_no_partial_overlap(fn, "g", g, "dx", dx);
  detail::check_family(fn, family, rows);
  if (rows.length == 0) return;
  const bool short_rows = family.map != Map::normmax && rows.length <= simd::kMaxCenteredRow;
  detail::parallel_rows(rows, threads, [&](std::size_t begin, std::size_t end) {
    if (short_rows) {
      detail::for_each_parameter_run(family.parameter, begin, end, [&](std::size_t first, std::size_t last) {
        const std::size_t at = first * rows.length;
        simd::Kernels<T>::centered_rows(
            p.data() + at, g.data() + at, dx.data() + at, last - first, rows.length,
            detail::weights_of<T>(family.map, static_cast<double>(family.parameter[first])));
      });
      return;
    }
    for (std::size_t r = begin; r < end; ++r) {
      const std::size_t at = r * rows.length;
      const double parameter = static_cast<double>(family.parameter[r]);
      if (family.map == Map::normmax) {
        detail::normmax_row(parameter, p.data() + at, g.data() + at, dx.data() + at, rows.length);
      } else {
        detail::centered_row(detail::weights_of<T>(family.map, parameter), p.data() + at,
                             g.data() + at, dx.data() + at, rows.length);
      }
    }
  });
}

template void backward(const Family<float>&, std::span<const float>, std::span<const float>,
                       std::span<float>, Rows, Threads);
template void backward(const Family<double>&, std::span<const double>, std::span<const double>,
                       std::span<double>, Rows, Threads);

}  // namespace sparcon
