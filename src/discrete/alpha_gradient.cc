// Gradient of <g, entmax_alpha(x)> with respect to alpha (sparcon/discrete.h), per row.
#include <cmath>

#include "check.h"
#include "discrete/forward_row.h"
#include "discrete/simd_kernels.h"
#include "parallel_rows.h"
#include "sparcon/discrete.h"

namespace sparcon {
namespace detail {
namespace {

// sum_i g_i [(p_i - s^_i)/a^2 - (h_i - s^_i H)/a],  a = alpha - 1, s = p^(2-alpha), s^ = s/sum s,
// h = p log p, H = sum h. Expanded into row sums (simd::Kernels::alpha_sums) so that one pass
// suffices.
template <class T>
double entmax_alpha_gradient(double alpha, const T* p, const T* g, std::size_t n) {
  const double a = alpha - 1;
  const simd::AlphaSums sums =
      simd::Kernels<T>::alpha_sums(p, g, n, simd::EntmaxWeights<double>(alpha));
  if (!(sums.s > 0)) return 0;  // an all -inf row
  const double gs_hat = sums.gs / sums.s;
  return (sums.gp - gs_hat) / (a * a) - (sums.gh - gs_hat * sums.h) / a;
}

// The same gradient for alpha near 1, d = alpha - 1 small, where the form above cancels (its
// two terms grow like 1/d^2 and 1/d). With l = log p, q_i = e^(-d l_i) - 1 + d l_i = O(d^2)
// and r_i = q_i / d^2 = l_i^2 phi(d l_i), s_i = p_i (1 - d l_i + q_i), and the sum becomes
//   [R Gp - GR + d (L GR - R GL)] / (1 - d L + d^2 R)
// with L = sum p l, R = sum p r, Gp = sum g p, GR = sum g p r, GL = sum g p l: no term grows as
// d -> 0, and at d = 0 (phi(0) = 1/2) it is the alpha = 1 limit (1/2) sum_i g_i p_i
// (sum_j p_j l_j^2 - l_i^2). The sums by simd::Kernels::near_one_sums.
template <class T>
double near_one_alpha_gradient(double d, const T* p, const T* g, std::size_t n) {
  const simd::NearOneSums sums = simd::Kernels<T>::near_one_sums(p, g, n, d);
  const double L = sums.l, R = sums.r;
  return (R * sums.gp - sums.gr + d * (L * sums.gr - R * sums.gl)) / (1 - d * L + d * d * R);
}

}  // namespace
}  // namespace detail

template <std::floating_point T>
void entmax_alpha_backward(std::span<const T> p, std::span<const T> g, std::span<T> dalpha,
                           Rows rows, std::type_identity_t<PerRow<T>> alpha, Threads threads) {
  const char* fn = "entmax_alpha_backward";
  detail::check_size(fn, "p", p, rows.size());
  detail::check_size(fn, "g", g, rows.size());
  detail::check_size(fn, "dalpha", dalpha, rows.count, "rows.count");
  detail::check_per_row(fn, "alpha", alpha, rows.count);
  for (std::size_t r = 0; r < rows.count; ++r)
    detail::check_parameter(fn, Map::entmax, static_cast<double>(alpha[r]), rows.length, r);
  detail::parallel_rows(rows, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const T* pr = p.data() + r * rows.length;
      const T* gr = g.data() + r * rows.length;
      const double a = static_cast<double>(alpha[r]);
      // |alpha - 1| < 1/4, alpha = 1 included: the expansion about alpha = 1 (exact, not a
      // truncation); beyond, the direct form, whose cancellation is then below 16 ulp.
      dalpha[r] = static_cast<T>(std::abs(a - 1) < 0.25
                                     ? detail::near_one_alpha_gradient(a - 1, pr, gr, rows.length)
                                     : detail::entmax_alpha_gradient(a, pr, gr, rows.length));
    }
  });
}

template void entmax_alpha_backward(std::span<const float>, std::span<const float>,
                                    std::span<float>, Rows, PerRow<float>, Threads);
template void entmax_alpha_backward(std::span<const double>, std::span<const double>,
                                    std::span<double>, Rows, PerRow<double>, Threads);

}  // namespace sparcon
