// What the two benchmark programs share: the split of a baseline's work over threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace sparcon_bench {

/// Runs block(begin, end) over contiguous blocks of `count` items (rows, examples) on `threads`
/// threads, spawning std::jthreads per call exactly as the library's parallel_rows does (the
/// caller's thread takes the first block), so the baselines pay the same per-call thread cost.
inline void split_rows(std::size_t count, unsigned threads,
                       const std::function<void(std::size_t, std::size_t)>& block) {
  const std::size_t workers = std::clamp<std::size_t>(threads, 1, count);
  if (workers == 1) return block(0, count);
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back(block, count * w / workers, count * (w + 1) / workers);
  block(0, count / workers);
}

}  // namespace sparcon_bench
