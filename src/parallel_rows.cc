#include "parallel_rows.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sparcon::detail {
namespace {

constexpr std::size_t kMinEntriesPerThread = 16384;

// Threads that wait for work between calls: starting a thread costs tens of microseconds,
// as much as a whole call on a 1024 x 512 batch. One call runs at a time (callers queue on
// `run_mutex_`); blocks never call back into the pool.
class WorkerPool {
 public:
  static WorkerPool& instance() {
    static WorkerPool pool;
    return pool;
  }

  // Runs task(0) on the calling thread and task(1..workers-1) on pool threads; returns when
  // all are done.
  void run(std::size_t workers, const std::function<void(std::size_t)>& task) {
    const std::lock_guard run_lock(run_mutex_);
    {
      const std::lock_guard lock(mutex_);
      while (threads_.size() + 1 < workers) {
        const std::size_t index = threads_.size() + 1;
        threads_.emplace_back([this, index](std::stop_token stop) { serve(index, stop); });
      }
      task_ = &task;
      participants_ = workers;
      pending_ = workers - 1;
      ++generation_;
    }
    work_ready_.notify_all();
    task(0);
    std::unique_lock lock(mutex_);
    work_done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
  }

  ~WorkerPool() {
    {
      const std::lock_guard lock(mutex_);
      for (auto& t : threads_) t.request_stop();
    }
    work_ready_.notify_all();
  }

 private:
  void serve(std::size_t index, const std::stop_token& stop) {
    std::size_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return stop.stop_requested() || generation_ != seen; });
      if (stop.stop_requested()) return;
      seen = generation_;
      if (index >= participants_) continue;
      const auto* task = task_;
      lock.unlock();
      (*task)(index);
      lock.lock();
      if (--pending_ == 0) work_done_.notify_one();
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable_any work_ready_;
  std::condition_variable work_done_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t participants_ = 0;
  std::size_t pending_ = 0;
  std::size_t generation_ = 0;
  std::vector<std::jthread> threads_;
};

}  // namespace

void parallel_rows(Rows rows, Threads threads,
                   const std::function<void(std::size_t, std::size_t)>& block) {
  const std::size_t by_work = std::max<std::size_t>(1, rows.size() / kMinEntriesPerThread);
  const std::size_t workers =
      std::min({static_cast<std::size_t>(std::max(threads.count, 1u)), rows.count, by_work});
  if (workers <= 1) {
    if (rows.count > 0) block(0, rows.count);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  WorkerPool::instance().run(workers, [&](std::size_t w) {
    try {
      block(rows.count * w / workers, rows.count * (w + 1) / workers);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sparcon::detail
