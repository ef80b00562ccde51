#include "cli/selftest.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/fp_env.h"
#include "core/thread_pool.h"
#include "data/stream_golden.h"
#include "repops/golden_suite.h"
#include "repops/kernels.h"
#include "train/train_golden.h"

namespace trail::cli {

namespace {

struct RunOutcome {
  std::string backend;
  int threads = 0;
  std::vector<std::string> mismatched, missing;
  size_t cases = 0;
  double seconds = 0;
};

const char* Arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

}  // namespace

int RunSelftest(const SelftestOptions& opt) {
  const FpCheck fp = CheckFpContract();
  if (!fp.ok) {
    std::cerr << "trail selftest: the floating-point contract does not hold:\n" << fp.problems;
    return 1;
  }
  const auto backends = repops::AvailableBackends();

  if (!opt.write_golden.empty()) {
    repops::UseBackend(backends.front());  // the scalar reference defines the bits
    SetKernelThreads(1);
    // Written beside the target and renamed over it, so an interrupted run leaves the old file.
    std::ostringstream out;
    out << "# RepOps golden hashes: case name, SHA-256 of its outputs. Regenerate only when an "
           "op spec changes\n# (trail selftest --write-golden src/repops/golden_hashes.txt), and "
           "say why in the commit.\n";
    for (const auto& r : repops::RunGoldenSuite()) out << r.name << " " << r.digest << "\n";
    WriteFileAtomic(opt.write_golden, out.str());
    std::cerr << "wrote " << opt.write_golden << "\n";
    return 0;
  }

  const auto& golden = repops::CommittedGolden();
  const auto& train_golden = train::CommittedTrainingGolden();
  std::vector<RunOutcome> outcomes;
  bool all_ok = !golden.empty();
  for (const repops::Backend& b : backends) {
    if (!opt.backend.empty() && b.name != opt.backend) continue;
    repops::UseBackend(b);
    for (int t : opt.threads) {
      SetKernelThreads(t);
      RunOutcome o{b.name, t, {}, {}, 0, 0};
      const auto t0 = std::chrono::steady_clock::now();
      const auto results = repops::RunGoldenSuite();
      o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      o.cases = results.size();
      for (const auto& r : results) {
        auto it = golden.find(r.name);
        if (it == golden.end()) o.missing.push_back(r.name);
        else if (it->second != r.digest) o.mismatched.push_back(r.name);
      }
      // A few training steps: the model, the logical-mesh reduction and AdamW, end to end.
      for (const auto& r : train::RunTrainingGolden()) {
        ++o.cases;
        auto it = train_golden.find(r.name);
        if (it == train_golden.end() || it->second != r.chain) {
          o.mismatched.push_back("train." + r.name + " (chain " + r.chain + ")");
        }
      }
      all_ok = all_ok && o.mismatched.empty() && o.missing.empty();
      outcomes.push_back(std::move(o));
    }
  }
  TRAIL_CHECK(!outcomes.empty(), "no backend named '", opt.backend, "' here");

  // The data stream is integer-only: one digest for every backend and thread count.
  const auto t0 = std::chrono::steady_clock::now();
  const std::string stream_digest = data::ComputeStreamGoldenDigest();
  const double stream_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool stream_ok = stream_digest == data::kStreamGoldenDigest;
  all_ok = all_ok && stream_ok;

  if (opt.json) {
    nlohmann::json j;
    j["arch"] = Arch();
    j["reproduces"] = all_ok;
    j["golden_cases"] = golden.size();
    for (const auto& o : outcomes)
      j["runs"].push_back({{"backend", o.backend}, {"threads", o.threads}, {"cases", o.cases},
                           {"mismatched", o.mismatched}, {"missing_from_golden", o.missing},
                           {"seconds", o.seconds}});
    j["data_stream"] = {{"reproduces", stream_ok}, {"digest", stream_digest},
                        {"seconds", stream_seconds}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("trail selftest on %s: %zu golden cases + %zu training runs\n", Arch(),
                golden.size(), train_golden.size());
    for (const auto& o : outcomes) {
      const bool ok = o.mismatched.empty() && o.missing.empty();
      std::printf("  %-10s threads=%d  %s  (%.2fs)\n", o.backend.c_str(), o.threads,
                  ok ? "reproduces the reference bits" : "DIFFERS", o.seconds);
      for (const auto& n : o.mismatched) std::printf("      differs: %s\n", n.c_str());
      for (const auto& n : o.missing) std::printf("      not in the golden file: %s\n", n.c_str());
    }
    std::printf("  %-10s            %s  (%.2fs)\n", "stream",
                stream_ok ? "reproduces the canonical data stream" : "DIFFERS", stream_seconds);
    if (!stream_ok) std::printf("      stream digest %s\n", stream_digest.c_str());
    std::printf("%s\n", all_ok ? "this machine reproduces trail's reference bits"
                               : "this machine does NOT reproduce trail's reference bits");
  }
  return all_ok ? 0 : 1;
}

}  // namespace trail::cli
