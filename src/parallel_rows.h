// Spreads the rows of one call over the threads the caller allows.
#pragma once

#include <cstddef>
#include <functional>

#include "sparcon/rows.h"

namespace sparcon::detail {

/// Calls block(begin, end) on contiguous blocks of rows [0, rows) covering every row once,
/// on min(threads.count, rows) threads (the caller's thread takes the first block). The first
/// exception thrown by any block is rethrown after all blocks have finished.
void parallel_rows(std::size_t rows, Threads threads,
                   const std::function<void(std::size_t, std::size_t)>& block);

}  // namespace sparcon::detail
