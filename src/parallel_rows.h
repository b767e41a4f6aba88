// Spreads the rows of one call over the threads the caller allows.
#pragma once

#include <cstddef>
#include <functional>

#include "sparcon/rows.h"

namespace sparcon::detail {

/// Calls block(begin, end) on contiguous blocks of rows [0, rows.count) covering every row
/// once, on up to threads.count threads: the caller's thread takes the first block, threads of
/// a process-wide pool (started on first use, kept for later calls) take the others. Calls too
/// small to gain from a second thread (fewer than 16384 entries per thread) run on the caller's
/// thread alone. The first exception thrown by any block is rethrown after all have finished.
void parallel_rows(Rows rows, Threads threads,
                   const std::function<void(std::size_t, std::size_t)>& block);

}  // namespace sparcon::detail
