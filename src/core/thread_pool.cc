#include "core/thread_pool.h"

#include <chrono>
#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "core/fp_env.h"

namespace trail {

namespace {

// A spinning wait's budget: about the time of a few kernel calls, so a worker is still awake
// when the next one comes; a pool larger than the machine spins only briefly.
constexpr int64_t kSpinNs = 200'000, kOversubscribedSpinNs = 2'000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

template <class Done>
bool ThreadPool::Spin(Done done) const {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    std::this_thread::yield();  // another process's thread that is ready runs first
    if (Clock::now() - start > std::chrono::nanoseconds(spin_ns_)) return done();
  }
}

ThreadPool::ThreadPool(size_t num_threads) {
  TRAIL_CHECK(num_threads >= 1, "a thread pool needs at least one thread");
  const unsigned cpus = std::thread::hardware_concurrency();
  spin_ns_ = cpus != 0 && num_threads > cpus ? kOversubscribedSpinNs : kSpinNs;
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
    // The caller publishes the job before it bumps the generation (release), so a worker that
    // sees the new generation (acquire) sees the job.
    const auto woken = [&] {
      return stop_.load() || generation_.load(std::memory_order_acquire) != seen;
    };
    if (!Spin(woken)) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, woken);
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    RunTasks();
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == workers_.size()) {
      // Taking the lock orders this notify after a caller's check of finished_ under it.
      { std::lock_guard<std::mutex> lock(mu_); }
      done_.notify_all();
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
    finished_.store(0);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  RunTasks();
  std::exception_ptr error;
  // Every worker checks in for every generation, so none can run late into the next one.
  const auto all_done = [&] {
    return finished_.load(std::memory_order_acquire) == workers_.size();
  };
  if (!Spin(all_done)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, all_done);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
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
