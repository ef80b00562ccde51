// The self-test behind `trail selftest`: does this machine reproduce trail's reference bits?
// Every RepOps golden case, the golden training runs and the golden generations on each
// backend (or one) with each thread count, and the canonical data stream's digest once (it is
// integer-only), all compared with the golden registry (core/golden.h).
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/device.h"

namespace trail::train {

struct SelftestRun {
  std::string backend;      // the SIMD target (JSON "backend", the name it has always had there)
  std::string int8_kernel;  // the instructions its int8 GEMM ran on (Kernels::gemm_i8_kernel)
  int threads = 0;
  size_t cases = 0;  // RepOps cases + training runs + generations executed
  // "case", "train.<run> (chain <hex>)" or "generation.<case> (digest <hex>)"
  std::vector<std::string> mismatched;
  std::vector<std::string> missing;  // cases the golden registry does not list
  double seconds = 0;                // the RepOps suite's time
  bool ok() const { return mismatched.empty() && missing.empty(); }
};

struct SelftestReport {
  std::string fp_problems;  // non-empty: the floating-point contract fails here
  std::string device;       // where the training runs ran ("cpu", ...)
  std::vector<SelftestRun> runs;
  std::vector<std::string> not_runnable;  // SIMD targets compiled in that this CPU cannot run
  size_t golden_cases = 0, training_runs = 0, generations = 0;
  bool stream_ok = false;
  std::map<std::string, std::string> stream_digests;  // computed, by stream golden case
  std::vector<std::string> stream_mismatched;         // the cases whose digest differs
  double stream_seconds = 0;
  bool reproduces = false;  // everything above matched
};

// What `trail selftest --json` prints: arch (core/version.h), reproduces, device, golden_cases,
// runs[] {backend, int8_kernel, threads, cases, mismatched, missing_from_golden, seconds},
// not_runnable_here, data_stream {reproduces, digests, mismatched, seconds}.
nlohmann::json SelftestToJson(const SelftestReport& r);

// backend: "" for every SIMD target available here, else that one (throws trail::Error when
// this machine has no target of that name). The RepOps op cases and the golden training runs
// run on a backend of `device`; the kernel cases on the CPU kernels of each SIMD target.
SelftestReport RunSelftest(const std::string& backend, const std::vector<int>& threads,
                           const Device& device = {});

}  // namespace trail::train
