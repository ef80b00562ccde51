// The process's memory use as the kernel counts it, for reports (never for anything that
// decides a result).
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace trail {

// The peak resident set of this process so far, in bytes (getrusage's ru_maxrss: every page
// the process ever had resident at once, its libraries included).
inline uint64_t PeakResidentBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

}  // namespace trail
