#include "core/thread_pool.h"

#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "core/fp_env.h"

namespace trail {

ThreadPool::ThreadPool(size_t num_threads) {
  TRAIL_CHECK(num_threads >= 1, "a thread pool needs at least one thread");
  SetContractFpMode();
  for (size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
// True while this thread runs a pool task: a ParallelFor from inside a task runs inline.
thread_local bool tl_in_task = false;
}  // namespace

void ThreadPool::RunTasks() {
  const bool was_in_task = tl_in_task;
  tl_in_task = true;
  for (;;) {
    const size_t i = next_.fetch_add(1);
    if (i >= num_tasks_) break;
    try {
      (*fn_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }
  tl_in_task = was_in_task;
}

void ThreadPool::WorkerLoop() {
  SetContractFpMode();
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (++finished_ == workers_.size()) done_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(size_t num_tasks, const std::function<void(size_t)>& fn) {
  if (num_tasks == 0) return;
  // Nested calls run inline: every output still belongs to one task, so results are unchanged.
  if (workers_.empty() || num_tasks == 1 || tl_in_task) {
    for (size_t i = 0; i < num_tasks; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> one_job_at_a_time(run_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    num_tasks_ = num_tasks;
    next_.store(0);
    error_ = nullptr;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  RunTasks();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Every worker checks in for every generation, so none can run late into the next one.
    done_.wait(lock, [&] { return finished_ == workers_.size(); });
    fn_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

namespace {
std::unique_ptr<ThreadPool>& PoolSlot() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}
size_t DefaultThreads() {
  if (const char* env = std::getenv("TRAIL_NUM_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    TRAIL_CHECK(n >= 1 && n <= 1024, "TRAIL_NUM_THREADS must be 1..1024, got '", env, "'");
    return static_cast<size_t>(n);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}
}  // namespace

ThreadPool& KernelPool() {
  // Two threads' first kernels must not both create the pool (one lock per kernel call).
  static std::mutex create_mu;
  std::lock_guard<std::mutex> lock(create_mu);
  auto& slot = PoolSlot();
  if (!slot) slot = std::make_unique<ThreadPool>(DefaultThreads());
  return *slot;
}

void SetKernelThreads(size_t n) {
  auto& slot = PoolSlot();
  slot.reset();
  slot = std::make_unique<ThreadPool>(n);
}

void ShutdownKernelPool() { PoolSlot().reset(); }

}  // namespace trail
