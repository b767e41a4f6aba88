// One row of a forward map, for the batch functions (forward.cc) and the losses (losses.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "check.h"
#include "sparcon/discrete.h"

namespace sparcon::detail {

/// Per-thread working memory, reused from row to row.
template <class T>
struct RowScratch {
  std::vector<T> buffer;   ///< candidates of the SIMD scan
  std::vector<double> y;   ///< shifted candidates for the threshold solver
};

/// p = map(x) for one row of length n >= 1; *tau (if tau is not null) gets its threshold.
template <class T>
void forward_row(Map map, double parameter, const T* x, T* p, std::size_t n,
                 RowScratch<T>& scratch, T* tau);

/// p = map(x) for rows [begin, end) of a batch (x, p, tau the whole batch's; tau may be null):
/// forward_row's results, sparsemax and entmax-1.5 rows that fit in L1 through the fused
/// kernel (simd::Kernels::short_rows) in runs.
template <class T>
void forward_rows(const Family<T>& family, const T* x, T* p, T* tau, Rows rows, std::size_t begin,
                  std::size_t end, RowScratch<T>& scratch);

/// Calls run(first, last) for the maximal runs [first, last) of rows in [begin, end) that share
/// one value of `parameter` (a single run when it is shared): a family's rows of one run share
/// the map's weights and solver.
template <class T, class Run>
void for_each_parameter_run(const PerRow<T>& parameter, std::size_t begin, std::size_t end, Run&& run) {
  if (parameter.shared()) {
    if (begin < end) run(begin, end);
    return;
  }
  for (std::size_t first = begin, last; first < end; first = last) {
    for (last = first + 1; last < end && parameter[last] == parameter[first];) ++last;
    run(first, last);
  }
}

/// The name of the family's parameter in messages.
inline const char* parameter_name(Map map) {
  return map == Map::budget ? "budget" : map == Map::entmax || map == Map::normmax ? "alpha" : "parameter";
}

/// Throws unless `parameter` (alpha or the budget of row `row`) is valid for `map` on rows of
/// length n.
inline void check_parameter(const char* function, Map map, double parameter, std::size_t n,
                            std::size_t row) {
  switch (map) {
    case Map::entmax:
      if (!(parameter > 0) || !std::isfinite(parameter))
        fail("sparcon::", function, ": alpha = ", parameter, " (row ", row, ") must be a finite number > 0");
      return;
    case Map::normmax:
      if (!(parameter > 1) || !std::isfinite(parameter))
        fail("sparcon::", function, ": alpha = ", parameter, " (row ", row,
             ") must be a finite number > 1 for normmax");
      return;
    case Map::budget:
      if (!(parameter > 0) || (n > 0 && !(parameter <= static_cast<double>(n))))
        fail("sparcon::", function, ": budget = ", parameter, " (row ", row,
             ") must lie in (0, rows.length = ", n, "]");
      return;
    default:
      return;
  }
}

/// Throws unless the family's parameter is one shared value or one per row, each valid.
template <class T>
void check_family(const char* function, const Family<T>& family, Rows rows) {
  check_per_row(function, parameter_name(family.map), family.parameter, rows.count);
  // A shared value is checked once (as row 0's), not once per row: on 65536 rows of 16 the
  // loop cost 7% of sparsemax's backward.
  const std::size_t checked = family.parameter.shared() ? std::min<std::size_t>(rows.count, 1) : rows.count;
  for (std::size_t r = 0; r < checked; ++r)
    check_parameter(function, family.map, static_cast<double>(family.parameter[r]), rows.length, r);
}

}  // namespace sparcon::detail
