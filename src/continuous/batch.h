// How the continuous core spreads a batch of examples over threads.
#pragma once

#include <cstddef>

#include "sparcon/rows.h"

namespace sparcon::detail {

/// The Rows that parallel_rows should see for a batch of examples of `pairs` (density, basis
/// function) pairs each: one pair costs about as much as 64 entries of a discrete row, so a
/// call is split once it holds a few hundred pairs per thread.
inline Rows example_rows(std::size_t batch, std::size_t pairs) { return {batch, 64 * pairs}; }

}  // namespace sparcon::detail
