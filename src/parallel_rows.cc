#include "parallel_rows.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sparcon::detail {
namespace {

constexpr std::size_t kMinEntriesPerThread = 16384;

// How long a thread that waits (a worker for the next call, the caller for the workers) polls
// before it sleeps on a condition variable. Waking a sleeping thread costs a system call on
// both sides, and on a virtual machine a halted vCPU takes tens of microseconds more to run
// again: measured, two threads were slower than one on calls of 1-2 MB, whose blocks take
// 50-100 us. Calls that follow each other closely (a training step, a benchmark loop) now
// find the worker awake; an idle pool sleeps after this long.
constexpr auto kSpin = std::chrono::microseconds(200);

// One step of a polling loop: tells the CPU that this is a spin (it yields the core's
// resources to a sibling hyperthread and saves power).
inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `done` for up to kSpin; true if it became true.
template <class Done>
bool spin_until(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      pause();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

// Threads that wait for work between calls: starting a thread costs tens of microseconds,
// as much as a whole call on a 1024 x 512 batch. One call runs at a time (callers queue on
// `run_mutex_`); blocks never call back into the pool. The waits poll for kSpin, then sleep
// on condition variables; the counters are atomics so that polling needs no lock, and every
// change a sleeper waits for is followed by a notify under `mutex_`, so that none is lost.
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
      pending_.store(workers - 1);
      generation_.fetch_add(1);
    }
    work_ready_.notify_all();
    task(0);
    if (!spin_until([&] { return pending_.load() == 0; })) {
      std::unique_lock lock(mutex_);
      work_done_.wait(lock, [&] { return pending_.load() == 0; });
    }
    const std::lock_guard lock(mutex_);
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
    for (;;) {
      auto ready = [&] { return stop.stop_requested() || generation_.load() != seen; };
      if (!spin_until(ready)) {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, ready);
      }
      if (stop.stop_requested()) return;
      const std::function<void(std::size_t)>* task;
      std::size_t participants;
      {
        const std::lock_guard lock(mutex_);  // generation_, task_ and participants_ together
        seen = generation_.load();
        task = task_;
        participants = participants_;
      }
      if (index >= participants) continue;
      (*task)(index);
      if (pending_.fetch_sub(1) == 1) {
        const std::lock_guard lock(mutex_);
        work_done_.notify_one();
      }
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable_any work_ready_;
  std::condition_variable work_done_;
  const std::function<void(std::size_t)>* task_ = nullptr;  // guarded by mutex_
  std::size_t participants_ = 0;                             // guarded by mutex_
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::size_t> generation_{0};  // written under mutex_
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
