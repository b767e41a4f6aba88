#include "parallel_rows.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sparcon::detail {

void parallel_rows(std::size_t rows, Threads threads,
                   const std::function<void(std::size_t, std::size_t)>& block) {
  const std::size_t workers = std::clamp<std::size_t>(threads.count, 1, std::max<std::size_t>(rows, 1));
  if (workers == 1) {
    if (rows > 0) block(0, rows);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&](std::size_t w) {
    try {
      block(rows * w / workers, rows * (w + 1) / workers);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  pool.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sparcon::detail
