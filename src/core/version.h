// The version of trail and the architecture it was built for, as `trail --version`, the
// selftest and attestations record them.
#pragma once

namespace trail {

inline constexpr const char* kTrailVersion = "0.1.0";

// "x86_64", "aarch64", "riscv64" or "unknown": the build's target architecture.
inline constexpr const char* MachineArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv)
  return "riscv64";
#else
  return "unknown";
#endif
}

}  // namespace trail
