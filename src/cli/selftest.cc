#include "cli/selftest.h"

#include <cstdio>
#include <iostream>

#include "core/device.h"
#include "core/version.h"
#include "repops/devices.h"
#include "train/selftest.h"

namespace trail::cli {
namespace {

void PrintText(const train::SelftestReport& r) {
  std::printf(
      "trail selftest on %s: %zu golden cases + %zu training runs + %zu generations on %s, and "
      "the int8 GEMM against int64 sums\n",
      MachineArch(), r.golden_cases, r.training_runs, r.generations, r.device.c_str());
  for (const auto& o : r.runs) {
    std::printf("  %-12s threads=%d  int8 %-10s  %s  (%.2fs)\n", o.backend.c_str(), o.threads,
                o.int8_kernel.c_str(), o.ok() ? "reproduces the reference bits" : "DIFFERS",
                o.seconds);
    for (const auto& n : o.mismatched) std::printf("      differs: %s\n", n.c_str());
    for (const auto& n : o.missing) std::printf("      not in the golden file: %s\n", n.c_str());
  }
  for (const auto& n : r.not_runnable) {
    std::printf("  %-12s            not run: compiled in, but this CPU lacks its instructions\n",
                n.c_str());
  }
  std::printf("  %-12s            %s  (%.2fs)\n", "stream",
              r.stream_ok ? "reproduces the canonical data stream" : "DIFFERS", r.stream_seconds);
  for (const auto& n : r.stream_mismatched) {
    std::printf("      differs: %s (digest %s)\n", n.c_str(), r.stream_digests.at(n).c_str());
  }
  std::printf("%s%s\n",
              r.reproduces ? "this machine reproduces trail's reference bits"
                           : "this machine does NOT reproduce trail's reference bits",
              r.not_runnable.empty() ? " on every SIMD target compiled in"
                                     : " on the SIMD targets it can run");
}

}  // namespace

int RunSelftest(const SelftestOptions& opt) {
  const train::SelftestReport r =
      train::RunSelftest(opt.backend, opt.threads, repops::ParseDevice(opt.device));
  if (!r.fp_problems.empty()) {
    std::cerr << "trail selftest: the floating-point contract does not hold:\n" << r.fp_problems;
    return 1;
  }
  if (opt.json) {
    std::cout << train::SelftestToJson(r).dump(2) << "\n";
  } else {
    PrintText(r);
  }
  return r.reproduces ? 0 : 1;
}

}  // namespace trail::cli
