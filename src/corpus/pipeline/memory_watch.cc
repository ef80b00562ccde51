#include "corpus/pipeline/memory_watch.h"

#include "core/resident_memory.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace trail::corpus {

MemoryWatch::MemoryWatch() {
  Sample();
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      Sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a sample costs ~5 µs
    }
  });
}

MemoryWatch::~MemoryWatch() {
  stop_ = true;
  thread_.join();
}

void MemoryWatch::Sample() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "RssAnon:", 8) == 0) {
      std::sscanf(line + 8, "%llu", &kb);
      break;
    }
  }
  std::fclose(f);
  const uint64_t bytes = kb * 1024;
  uint64_t peak = peak_.load();
  while (bytes > peak && !peak_.compare_exchange_weak(peak, bytes)) {
  }
}

uint64_t MemoryWatch::PeakRssBytes() { return PeakResidentBytes(); }

}  // namespace trail::corpus
