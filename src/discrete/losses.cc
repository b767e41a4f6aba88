// Fenchel-Young losses of the discrete family (sparcon/losses.h).
#include "sparcon/losses.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check.h"
#include "compensated_sum.h"
#include "discrete/forward_row.h"
#include "parallel_rows.h"

namespace sparcon {
namespace detail {
namespace {

// The regulariser term: H^T_alpha(p) for the entmax family, 1 - ||p||_alpha for normmax.
template <class T>
double regulariser(Map map, double alpha, const T* p, std::size_t n) {
  if (map == Map::sparsemax) alpha = 2;
  if (map == Map::entmax15) alpha = 1.5;
  CompensatedSum sum;
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 0) sum += std::pow(static_cast<double>(p[i]), alpha);
  if (map == Map::normmax) return 1 - std::pow(sum.value(), 1 / alpha);
  return (1 - sum.value()) / (alpha * (alpha - 1));
}

template <class T>
double loss_row(Map map, double alpha, const T* x, const T* p, std::size_t n, std::size_t y,
                T tau) {
  const bool softmax = map == Map::softmax || (map == Map::entmax && alpha == 1);
  if (std::isnan(tau)) return std::numeric_limits<double>::quiet_NaN();
  if (x[y] == -std::numeric_limits<T>::infinity()) return std::numeric_limits<double>::infinity();
  // Cross-entropy: logsumexp(x) - x_y, and the threshold of softmax is logsumexp(x).
  if (softmax) return std::max(0.0, static_cast<double>(tau) - static_cast<double>(x[y]));
  // <p - e_y, x> = sum_i p_i (x_i - x_y): exact for rows far from 0, and 0 * (-inf) never occurs.
  CompensatedSum inner;
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 0) inner += static_cast<double>(p[i]) * (static_cast<double>(x[i]) - x[y]);
  return std::max(0.0, regulariser(map, alpha, p, n) + inner.value());
}

bool ignored(std::int64_t target, std::int64_t ignore_index) { return target == ignore_index; }

}  // namespace
}  // namespace detail

template <std::floating_point T>
void fenchel_young_loss(const Family<T>& family, std::span<const T> x,
                        std::span<const std::int64_t> target, std::span<T> loss,
                        std::span<T> grad, Rows rows, std::int64_t ignore_index,
                        Threads threads) {
  const char* fn = "fenchel_young_loss";
  if (family.map == Map::budget)
    detail::fail("sparcon::", fn, ": map = budget has no Fenchel-Young loss (its outputs sum to b)");
  detail::check_size(fn, "x", x, rows.size());
  detail::check_size(fn, "target", target, rows.count, "rows.count");
  detail::check_size(fn, "loss", loss, rows.count, "rows.count");
  if (!grad.empty()) {
    detail::check_size(fn, "grad", grad, rows.size());
    detail::check_no_partial_overlap(fn, "x", x, "grad", grad);
  }
  detail::check_family(fn, family, rows);
  for (std::size_t r = 0; r < rows.count; ++r) {
    const std::int64_t t = target[r];
    if (!detail::ignored(t, ignore_index) &&
        (t < 0 || static_cast<std::uint64_t>(t) >= rows.length))
      detail::fail("sparcon::", fn, ": target[", r, "] = ", t, " is outside [0, rows.length = ",
                   rows.length, ") and is not ignore_index = ", ignore_index);
  }
  detail::parallel_rows(rows, threads, [&](std::size_t begin, std::size_t end) {
    detail::RowScratch<T> scratch;
    std::vector<T> own_p(grad.empty() ? rows.length : 0);
    for (std::size_t r = begin; r < end; ++r) {
      const std::size_t at = r * rows.length;
      T* p = grad.empty() ? own_p.data() : grad.data() + at;
      if (detail::ignored(target[r], ignore_index)) {
        loss[r] = 0;
        if (!grad.empty()) std::fill(p, p + rows.length, T(0));
        continue;
      }
      const double parameter = static_cast<double>(family.parameter[r]);
      const auto y = static_cast<std::size_t>(target[r]);
      T tau;
      detail::forward_row(family.map, parameter, x.data() + at, p, rows.length, scratch, &tau);
      loss[r] = static_cast<T>(
          detail::loss_row(family.map, parameter, x.data() + at, p, rows.length, y, tau));
      if (!grad.empty()) p[y] -= 1;
    }
  });
}

template <std::floating_point T>
T reduce_loss(std::span<const T> loss, std::span<const std::int64_t> target, Reduction reduction,
              std::int64_t ignore_index) {
  detail::check_size("reduce_loss", "target", target, loss.size(), "loss.size()");
  detail::CompensatedSum sum;
  std::size_t kept = 0;
  for (std::size_t r = 0; r < loss.size(); ++r) {
    if (detail::ignored(target[r], ignore_index)) continue;
    sum += static_cast<double>(loss[r]);
    ++kept;
  }
  switch (reduction) {
    case Reduction::mean:
      return kept == 0 ? T(0) : static_cast<T>(sum.value() / static_cast<double>(kept));
    case Reduction::sum:
    case Reduction::none:  // "none" keeps the per-row values; their sum is still well defined
      return static_cast<T>(sum.value());
  }
  return T(0);
}

template <std::floating_point T>
T reduction_scale(std::span<const std::int64_t> target, Reduction reduction,
                  std::int64_t ignore_index) {
  if (reduction != Reduction::mean) return T(1);
  const auto kept = static_cast<std::size_t>(std::count_if(
      target.begin(), target.end(), [&](std::int64_t t) { return !detail::ignored(t, ignore_index); }));
  return kept == 0 ? T(0) : static_cast<T>(1.0 / static_cast<double>(kept));
}

template void fenchel_young_loss(const Family<float>&, std::span<const float>,
                                 std::span<const std::int64_t>, std::span<float>, std::span<float>,
                                 Rows, std::int64_t, Threads);
template void fenchel_young_loss(const Family<double>&, std::span<const double>,
                                 std::span<const std::int64_t>, std::span<double>,
                                 std::span<double>, Rows, std::int64_t, Threads);
template float reduce_loss(std::span<const float>, std::span<const std::int64_t>, Reduction,
                           std::int64_t);
template double reduce_loss(std::span<const double>, std::span<const std::int64_t>, Reduction,
                            std::int64_t);
template float reduction_scale<float>(std::span<const std::int64_t>, Reduction, std::int64_t);
template double reduction_scale<double>(std::span<const std::int64_t>, Reduction, std::int64_t);

}  // namespace sparcon
