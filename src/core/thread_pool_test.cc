#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/fp_env.h"

namespace trail {
namespace {

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (size_t threads : {1, 2, 7}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> hits(97);
      pool.ParallelFor(hits.size(), [&](size_t i) { hits[i]++; });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, RethrowsTaskErrors) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.ParallelFor(10, [](size_t i) { TRAIL_CHECK(i != 4, "task ", i); }), Error);
  std::atomic<int> n{0};
  pool.ParallelFor(10, [&](size_t) { n++; });  // still usable afterwards
  EXPECT_EQ(n.load(), 10);
}

TEST(ThreadPool, NestedAndConcurrentCallsComplete) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(8 * 16);
  pool.ParallelFor(8,
                   [&](size_t i) { pool.ParallelFor(16, [&](size_t j) { hits[i * 16 + j]++; }); });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  std::atomic<int> n{0};
  std::thread other([&] {
    for (int r = 0; r < 200; ++r) pool.ParallelFor(5, [&](size_t) { n++; });
  });
  for (int r = 0; r < 200; ++r) pool.ParallelFor(5, [&](size_t) { n++; });
  other.join();
  EXPECT_EQ(n.load(), 2000);
}

// Workers spin for a while after a call, then sleep: calls that come at once (a spinning worker
// takes them) and calls that come after a pause longer than the spin (a sleeping worker must be
// woken) both run every task. 64 threads is more than the machine's CPUs: the short spin.
TEST(ThreadPool, CallsReachSpinningAndSleepingWorkers) {
  for (size_t threads : {2, 7, 64}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 12; ++round) {
      if (round % 3 == 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::vector<std::atomic<int>> hits(4 * threads);
      pool.ParallelFor(hits.size(), [&](size_t i) {
        if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        hits[i]++;
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1) << threads << " threads, round " << round;
    }
  }
}

// A pool destroyed right after a call, while its workers still spin, joins them.
TEST(ThreadPool, DestroyedWhileWorkersSpin) {
  std::atomic<int> n{0};
  for (int round = 0; round < 100; ++round) {
    ThreadPool pool(3);
    pool.ParallelFor(3, [&](size_t) { n++; });
  }
  EXPECT_EQ(n.load(), 300);
}

TEST(ThreadPool, WorkersRunUnderTheFpContract) {
  ThreadPool pool(4);
  std::vector<int> ok(64, 0);
  pool.ParallelFor(ok.size(), [&](size_t i) { ok[i] = CheckFpContract().ok ? 1 : 0; });
  for (int v : ok) EXPECT_EQ(v, 1);
}

}  // namespace
}  // namespace trail
