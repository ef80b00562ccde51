// A fixed pool of worker threads for kernels. Each worker sets the contract's floating-point
// mode when it starts. Work is split into independent tasks; which thread runs a task never
// changes a result, because every kernel gives each output to exactly one task.
//
// A training step makes hundreds of ParallelFor calls a few hundred microseconds apart. Waking a
// sleeping thread costs a system call and a reschedule (tens of microseconds in a VM), so an idle
// worker first spins for a short while watching for the next call, and the caller spins while
// waiting for the workers, before either sleeps on a condition variable. A spinning thread yields
// between rounds, so a ready thread of another process is not held off. The spin is shorter when
// the pool has more threads than the machine has CPUs (a spinning thread would hold a CPU that a
// descheduled one needs).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trail {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 means no workers.
  explicit ThreadPool(size_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t num_threads() const { return workers_.size() + 1; }

  // Runs fn(i) for i in [0, num_tasks), on the workers and the caller; returns when all are done.
  // The first exception thrown by a task is rethrown here. Calls from several threads are
  // serialized; a call from inside a task runs its tasks inline on that thread.
  void ParallelFor(size_t num_tasks, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();
  void RunTasks();
  // Spins until done() or the spin budget is spent; returns done().
  template <class Done>
  bool Spin(Done done) const;

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // one ParallelFor at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t num_tasks_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> finished_{0};  // workers done with the current generation
  std::atomic<uint64_t> generation_{0};
  int64_t spin_ns_ = 0;  // how long Spin may spin
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

// The pool kernels use. Its size is TRAIL_NUM_THREADS, else the number of online CPUs.
ThreadPool& KernelPool();
// Replaces the kernel pool with one of n threads (n >= 1). Not safe while kernels run.
void SetKernelThreads(size_t n);
// Joins the kernel pool's workers now rather than in a static destructor after main returns
// (qemu-user can hang joining threads during exit). The pool is recreated on next use.
void ShutdownKernelPool();

}  // namespace trail
