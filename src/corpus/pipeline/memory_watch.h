// The build's memory as the budget means it: anonymous resident memory (heap, stacks) — not
// the mapped files (the binary, ICU's data) that the kernel can drop and reread. Linux keeps a
// high-water mark only for the total (ru_maxrss), so a thread samples /proc/self/status every
// millisecond while the build runs (a sample costs about 5 µs; at 5 ms a short build's peak,
// such as one large document's, was often missed).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace trail::corpus {

class MemoryWatch {
 public:
  MemoryWatch();
  ~MemoryWatch();
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  uint64_t peak_anon_bytes() const { return peak_.load(); }  // 0 where /proc is missing
  static uint64_t PeakRssBytes();                            // ru_maxrss, everything counted

 private:
  void Sample();
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace trail::corpus
