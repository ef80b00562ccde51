// Splitting independent rows across the kernel pool. Chunking never changes a result: each row
// is computed by exactly one task, with the same operations whatever the chunk size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/thread_pool.h"

namespace trail::repops {

template <class F>
void ForEachRow(int64_t rows, F&& f) {
  ThreadPool& pool = KernelPool();
  const int64_t tasks = std::min<int64_t>(rows, 4 * static_cast<int64_t>(pool.num_threads()));
  if (tasks <= 1) {
    for (int64_t r = 0; r < rows; ++r) f(r);
    return;
  }
  pool.ParallelFor(static_cast<size_t>(tasks), [&](size_t t) {
    const int64_t begin = rows * static_cast<int64_t>(t) / tasks;
    const int64_t end = rows * (static_cast<int64_t>(t) + 1) / tasks;
    for (int64_t r = begin; r < end; ++r) f(r);
  });
}

}  // namespace trail::repops
