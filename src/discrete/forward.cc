// Forward maps of the discrete family (sparcon/discrete.h), one row at a time:
//
// - sparse power maps (entmax with alpha > 1, sparsemax, entmax-1.5, normmax): one SIMD read
//   pass finds the maximum and collects the entries that can be in the support, the threshold
//   is solved exactly on those few candidates (threshold.cc), one SIMD pass writes p; for
//   sparsemax and entmax-1.5 on rows in L1 one kernel call (simd::Kernels::short_rows) does
//   all of it for a whole run of rows, the rows with many candidates handed back;
// - dense maps (softmax, entmax with alpha < 1) and budget: a max pass, the threshold on the
//   whole row, a write pass; softmax rows of up to simd::kMaxSoftmaxRow entries a run of rows
//   per kernel call (simd::Kernels::softmax_rows), which on short rows saves a call per pass.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check.h"
#include "compensated_sum.h"
#include "discrete/forward_row.h"
#include "discrete/newton_threshold.h"
#include "discrete/simd_kernels.h"
#include "discrete/support_edge.h"
#include "discrete/threshold.h"
#include "parallel_rows.h"
#include "sparcon/discrete.h"

namespace sparcon {
namespace detail {
namespace {

using simd::Kernels;
using simd::WriteKind;
using simd::WriteParams;

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();
template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();

// Initial capacity of the candidate buffer of a scan: small, so that the first pruning comes
// early in the row and raises the floor for the rest of it (the buffer grows when pruning frees
// too little).
constexpr std::size_t kInitialCapacity = 256;
// Rows up to this length (16 KiB of floats, in L1) get a max pass first and are then scanned
// against the final maximum; longer rows are read once, finding the maximum on the way
// (measured faster from 32k entries on).
constexpr std::size_t kCachedRow = 4096;

// The maximum of a row and the threshold of its power map, p_i = [1 + a (y_i - lambda)]_+^k,
// y = x - max (normalised by Z for normmax); or a row without a distribution (max = -inf: all
// entries masked; not_finite: a NaN or +inf entry).
template <class T>
struct PowerSolution {
  T max;
  PowerThreshold threshold;
  bool not_finite = false;
};

// y = values - max, in double, for the threshold solver.
template <class T>
void load_shifted(const T* values, std::size_t count, T max, std::vector<double>& y) {
  y.resize(count);
  Kernels<T>::shifted_to_double(values, count, max, y.data());
}

// Room in the scratch buffer for the candidates of a row of length n that fits in L1.
template <class T>
T* collect_buffer(std::size_t n, RowScratch<T>& scratch) {
  if (scratch.buffer.size() < n + simd::kMaxLanes) scratch.buffer.resize(n + simd::kMaxLanes);
  return scratch.buffer.data();
}

// A short row whose maximum is known: one pass collects every entry within the gap of the
// maximum (measured faster than pruning as a scan goes, for every alpha).
template <class T>
PowerThreshold collected_threshold(const T* x, std::size_t n, T max, double a, double k,
                                   RowScratch<T>& scratch) {
  T* buffer = collect_buffer(n, scratch);
  const std::size_t count =
      Kernels<T>::collect(x, n, candidate_threshold(max, 1 / a, -kInf<T>), buffer);
  load_shifted(buffer, count, max, scratch.y);
  return solve_power_threshold(scratch.y, a, k, n);
}

// A long row, read once: the SIMD scan keeps the entries above max(running max - 1/a, floor)
// in a buffer, the running maximum seeded with a lower bound of the row's. When the buffer
// fills, the threshold of the candidates so far (a lower bound of the row's) raises the floor
// and the buffer is compacted; it grows only when compaction frees too little. Its capacity
// starts anew for every row, so that results never depend on earlier rows.
template <class T>
PowerSolution<T> scanned_threshold(const T* x, std::size_t n, T max_seed, double a, double k,
                                   RowScratch<T>& scratch) {
  const double gap = 1 / a;
  if (scratch.buffer.size() < kInitialCapacity) scratch.buffer.resize(kInitialCapacity);
  simd::CandidateScan<T> scan{.x = x,
                              .length = n,
                              .running_max = max_seed,
                              .gap = gap,
                              .floor = -kInf<T>,
                              .buffer = scratch.buffer.data(),
                              .capacity = kInitialCapacity};
  // A lower bound of lambda relative to `max`, from the floor (an absolute lower bound of the
  // threshold max + lambda - 1/a).
  auto lambda_floor = [&](T max) {
    return std::max(0.0, static_cast<double>(scan.floor) + gap - static_cast<double>(max));
  };
  for (;;) {
    Kernels<T>::scan(scan);
    if (scan.not_finite) return {kNaN<T>, {}, true};
    if (scan.position == n) break;
    load_shifted(scan.buffer, scan.count, scan.running_max, scratch.y);
    const PowerThreshold bound =
        solve_power_threshold(scratch.y, a, k, n, lambda_floor(scan.running_max));
    const double floor = static_cast<double>(scan.running_max) + bound.lambda - gap;
    const double margin = 4 * std::numeric_limits<double>::epsilon() * (std::abs(floor) + gap);
    scan.floor = std::max(scan.floor, round_down<T>(floor - margin));
    scan.count = static_cast<std::size_t>(
        std::remove_if(scan.buffer, scan.buffer + scan.count, [&](T v) { return v <= scan.floor; }) -
        scan.buffer);
    if (scan.count > scan.capacity / 2) {
      scan.capacity *= 2;
      if (scratch.buffer.size() < scan.capacity) scratch.buffer.resize(scan.capacity);
      scan.buffer = scratch.buffer.data();
    }
  }
  if (scan.running_max == -kInf<T>) return {-kInf<T>, {}, false};  // every entry is -inf
  load_shifted(scan.buffer, scan.count, scan.running_max, scratch.y);
  return {scan.running_max,
          solve_power_threshold(scratch.y, a, k, n, lambda_floor(scan.running_max)), false};
}

// The threshold of a sparse power map (a > 0). Entries with y <= lambda - 1/a are outside the
// support for any lower bound lambda >= 0 of the threshold, so only entries within 1/a of the
// maximum are candidates. Rows that fit in L1 get their maximum first and their candidates
// collected in one pass; longer rows are read once by the pruning scan.
template <class T>
PowerSolution<T> sparse_power_threshold(const T* x, std::size_t n, double a, double k,
                                        RowScratch<T>& scratch) {
  if (n > kCachedRow) {
    // Seeded with the maximum of the first block, the scan skips most of the candidates a
    // running maximum that starts at -inf would collect early in the row.
    const T seed = Kernels<T>::max(x, kCachedRow);
    if (std::isnan(seed) || seed == kInf<T>) return {kNaN<T>, {}, true};
    return scanned_threshold(x, n, seed, a, k, scratch);
  }
  const T max = Kernels<T>::max(x, n);
  if (std::isnan(max) || max == kInf<T>) return {kNaN<T>, {}, true};
  if (max == -kInf<T>) return {max, {}, false};
  return {max, collected_threshold(x, n, max, a, k, scratch), false};
}

// The same for a < 0 (entmax with alpha < 1): every entry is in the support.
template <class T>
PowerSolution<T> dense_power_threshold(const T* x, std::size_t n, double a, double k,
                                       RowScratch<T>& scratch) {
  const T max = Kernels<T>::max(x, n);
  if (std::isnan(max) || max == kInf<T>) return {kNaN<T>, {}, true};
  if (max == -kInf<T>) return {max, {}, false};
  scratch.y.clear();
  for (std::size_t i = 0; i < n; ++i)  // masked entries (-inf) have p = 0
    if (x[i] != -kInf<T>) scratch.y.push_back(static_cast<double>(x[i]) - static_cast<double>(max));
  return {max, solve_power_threshold(scratch.y, a, k, n), false};
}

// Fills a row that has no distribution: NaN for a NaN/+inf row, 0 for an all -inf row.
template <class T>
void write_degenerate(T* p, std::size_t n, bool not_finite, T* tau) {
  std::fill(p, p + n, not_finite ? kNaN<T> : T(0));
  if (tau) *tau = not_finite ? kNaN<T> : kInf<T>;
}

// The power k = 1 (sparsemax) or 2 (entmax-1.5) of alpha-entmax whose rows of length n go to
// the fused kernel (Kernels::short_rows: rows in L1, the common case of attention, where a
// fixed cost per row, not per entry, is what they pay), or 0.
int fused_power(double alpha, std::size_t n) {
  if (n > kCachedRow) return 0;
  return alpha == 2 ? 1 : alpha == 1.5 ? 2 : 0;
}

// Whether entmax rows of length n take Kernels::power_rows: alpha >= 1 + kMinPowerRowsA but 1.5
// and 2 (their fused kernel), and n <= kMaxPowerRow.
bool takes_power_rows(double alpha, std::size_t n) {
  return n <= simd::kMaxPowerRow && alpha - 1 >= simd::kMinPowerRowsA && alpha != 1.5 && alpha != 2;
}

// alpha-entmax for alpha != 1. `fused`: sparsemax and entmax-1.5 rows in L1 try the fused
// kernel first, which finishes every row but those without a finite maximum or with many
// candidates (a caller whose kernel call stopped at this row passes false).
template <class T>
void entmax_row(const T* x, T* p, std::size_t n, double alpha, RowScratch<T>& scratch, T* tau,
                bool fused = true) {
  const double a = alpha - 1, k = 1 / a;
  if (const int power = fused_power(alpha, n);
      fused && power != 0 && Kernels<T>::short_rows(x, p, tau, 1, n, power, collect_buffer(n, scratch)) == 1)
    return;
  const PowerSolution<T> s =
      a > 0 ? sparse_power_threshold(x, n, a, k, scratch) : dense_power_threshold(x, n, a, k, scratch);
  if (s.not_finite || s.max == -kInf<T>) return write_degenerate(p, n, s.not_finite, tau);
  Kernels<T>::write(x, p, n,
                    {.kind = simd::EntmaxWriteKind<T>(a, k),
                     .shift = s.max,
                     .a = static_cast<T>(a),
                     .c = static_cast<T>(s.threshold.offset),
                     .lambda = static_cast<T>(s.threshold.lambda),
                     .k = static_cast<T>(k),
                     .exact_a = a,
                     .exact_offset = s.threshold.offset,
                     .exact_k = k});
  double lambda = s.threshold.lambda;
  // alpha > 2: a row with a candidate at the edge of the support solved again (support_edge.h).
  if (k > 0 && k < 1 &&
      near_support_edge(scratch.y.data(), scratch.y.size(), 1, a, s.threshold.offset,
                        support_edge_window(k)))
    lambda = (1 - refine_support_edge(x, p, n, s.max, a, k, s.threshold.offset)) / a;
  if (tau) *tau = entmax_tau(a, s.max, lambda);
}

// alpha-normmax: p_i = [y_i - t]_+^(1/(alpha-1)) / Z with sum_i [y_i - t]_+^(alpha/(alpha-1)) = 1,
// i.e. the power equation with a = 1, k = alpha/(alpha-1), lambda = t + 1.
template <class T>
void normmax_row(const T* x, T* p, std::size_t n, double alpha, RowScratch<T>& scratch, T* tau) {
  const double r = 1 / (alpha - 1), q = alpha * r;
  const PowerSolution<T> s = sparse_power_threshold(x, n, 1.0, q, scratch);
  if (s.not_finite || s.max == -kInf<T>) return write_degenerate(p, n, s.not_finite, tau);
  const double t = s.threshold.lambda - 1;
  CompensatedSum z;  // scratch.y still holds every support entry
  for (double v : scratch.y)
    if (v > t) z += std::pow(v - t, r);
  Kernels<T>::write(x, p, n,
                    {.kind = WriteKind::power,
                     .shift = s.max,
                     .exact_a = 1,
                     .exact_offset = s.threshold.offset,
                     .exact_k = r,
                     .scale = 1 / z.value()});
  if (tau) *tau = static_cast<T>(static_cast<double>(s.max) + t);
}

template <class T>
void softmax_row(const T* x, T* p, std::size_t n, T* tau) {
  const T max = Kernels<T>::max(x, n);
  if (std::isnan(max) || max == kInf<T> || max == -kInf<T>)
    return write_degenerate(p, n, max != -kInf<T>, tau);
  Kernels<T>::write(x, p, n, {.kind = WriteKind::exponential, .shift = max});
  const double sum = Kernels<T>::sum(p, n);
  Kernels<T>::scale(p, n, static_cast<T>(1 / sum));
  if (tau) *tau = static_cast<T>(static_cast<double>(max) + std::log(sum));
}

// Budget: p = clip(x - tau, 0, 1) with sum b; entries -inf get 0, so the budget is capped at
// the number of finite entries (documented in discrete.h).
template <class T>
void budget_row(const T* x, T* p, std::size_t n, double b, RowScratch<T>& scratch, T* tau) {
  const T max = Kernels<T>::max(x, n);
  if (std::isnan(max) || max == kInf<T> || max == -kInf<T>)
    return write_degenerate(p, n, max != -kInf<T>, tau);
  // Solve once in the row's coordinates, then again relative to a pivot next to the threshold
  // (the entry closest to it): the active entries lie within 1 of t, so they are exact
  // relative to the pivot, however far they are from the maximum.
  scratch.y.resize(n);
  std::size_t finite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    scratch.y[i] = static_cast<double>(x[i]);
    finite += x[i] != -kInf<T>;
  }
  const double budget = std::min(b, static_cast<double>(finite));
  const double rough = solve_budget(scratch.y, budget);
  double pivot = static_cast<double>(max);
  for (double v : scratch.y)
    if (std::abs(v - rough) < std::abs(pivot - rough)) pivot = v;
  for (double& v : scratch.y) v -= pivot;
  const double t = solve_budget(scratch.y, budget);
  Kernels<T>::write(x, p, n, {.kind = WriteKind::clip, .shift = static_cast<T>(pivot),
                              .lambda = static_cast<T>(t)});
  if (tau) *tau = static_cast<T>(pivot + t);
}

}  // namespace

template <class T>
void forward_rows(const Family<T>& family, const T* x, T* p, T* tau, Rows rows, std::size_t begin,
                  std::size_t end, RowScratch<T>& scratch) {
  const std::size_t n = rows.length;
  for_each_parameter_run(family.parameter, begin, end, [&](std::size_t first, std::size_t last) {
    const double parameter = static_cast<double>(family.parameter[first]);
    const double alpha = family.map == Map::sparsemax ? 2.0
                         : family.map == Map::entmax15 ? 1.5
                         : family.map == Map::entmax   ? parameter
                                                       : 0.0;
    if ((family.map == Map::softmax || (family.map == Map::entmax && parameter == 1)) && n <= simd::kMaxSoftmaxRow) {
      // Rows in one kernel call; the one it stops at (no finite maximum) goes alone.
      for (std::size_t r = first; r < last; ++r) {
        r += Kernels<T>::softmax_rows(x + r * n, p + r * n, tau ? tau + r : nullptr, last - r, n);
        if (r < last) softmax_row(x + r * n, p + r * n, n, tau ? tau + r : nullptr);
      }
      return;
    }
    if (family.map == Map::entmax && takes_power_rows(alpha, n)) {
      // Rows side by side in lanes; the one the kernel stops at (no finite maximum) goes alone.
      const double a = alpha - 1;
      for (std::size_t r = first; r < last; ++r) {
        r += Kernels<T>::power_rows(x + r * n, p + r * n, tau ? tau + r : nullptr, last - r, n, a,
                                    1 / a);
        if (r < last) entmax_row(x + r * n, p + r * n, n, alpha, scratch, tau ? tau + r : nullptr);
      }
      return;
    }
    const int k = fused_power(alpha, n);
    if (k == 0) {
      for (std::size_t r = first; r < last; ++r)
        forward_row(family.map, parameter, x + r * n, p + r * n, n, scratch, tau ? tau + r : nullptr);
      return;
    }
    // The fused kernel does every row it can; the one it stops at (a row without a finite
    // maximum, or with many candidates) takes the general solvers, and the kernel goes on after.
    for (std::size_t r = first; r < last; ++r) {
      r += Kernels<T>::short_rows(x + r * n, p + r * n, tau ? tau + r : nullptr, last - r, n, k,
                                  collect_buffer(n, scratch));
      if (r < last) entmax_row(x + r * n, p + r * n, n, alpha, scratch, tau ? tau + r : nullptr, false);
    }
  });
}

template <class T>
void forward_row(Map map, double parameter, const T* x, T* p, std::size_t n,
                 RowScratch<T>& scratch, T* tau) {
  switch (map) {
    case Map::softmax:
      return softmax_row(x, p, n, tau);
    case Map::sparsemax:
      return entmax_row(x, p, n, 2.0, scratch, tau);
    case Map::entmax15:
      return entmax_row(x, p, n, 1.5, scratch, tau);
    case Map::entmax:
      if (parameter == 1) return softmax_row(x, p, n, tau);
      return entmax_row(x, p, n, parameter, scratch, tau);
    case Map::normmax:
      return normmax_row(x, p, n, parameter, scratch, tau);
    case Map::budget:
      return budget_row(x, p, n, parameter, scratch, tau);
  }
}

template void forward_rows(const Family<float>&, const float*, float*, float*, Rows, std::size_t,
                           std::size_t, RowScratch<float>&);
template void forward_rows(const Family<double>&, const double*, double*, double*, Rows, std::size_t,
                           std::size_t, RowScratch<double>&);
template void forward_row(Map, double, const float*, float*, std::size_t, RowScratch<float>&, float*);
template void forward_row(Map, double, const double*, double*, std::size_t, RowScratch<double>&,
                          double*);

}  // namespace detail

template <std::floating_point T>
void forward(const Family<T>& family, std::span<const T> x, std::span<T> p, Rows rows,
             Threads threads, std::span<T> tau) {
  const char* fn = "forward";
  detail::check_size(fn, "x", x, rows.size());
  detail::check_size(fn, "p", p, rows.size());
  if (!tau.empty()) detail::check_size(fn, "tau", tau, rows.count, "rows.count");
  detail::check_no_partial_overlap(fn, "x", x, "p", p);
  detail::check_family(fn, family, rows);
  if (rows.length == 0) return;
  detail::parallel_rows(rows, threads, [&](std::size_t begin, std::size_t end) {
    detail::RowScratch<T> scratch;
    detail::forward_rows(family, x.data(), p.data(), tau.empty() ? nullptr : tau.data(), rows, begin,
                         end, scratch);
  });
}

template void forward(const Family<float>&, std::span<const float>, std::span<float>, Rows, Threads,
                      std::span<float>);
template void forward(const Family<double>&, std::span<const double>, std::span<double>, Rows,
                      Threads, std::span<double>);

}  // namespace sparcon
