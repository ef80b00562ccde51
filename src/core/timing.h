// Wall time for progress lines and reports (never for anything that decides a result).
#pragma once

#include <chrono>

namespace trail {

// Seconds of the steady clock since t.
inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace trail
