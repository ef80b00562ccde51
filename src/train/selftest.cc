#include "train/selftest.h"

#include <chrono>

#include "core/error.h"
#include "core/fp_env.h"
#include "core/thread_pool.h"
#include "core/timing.h"
#include "core/version.h"
#include "data/stream_golden.h"
#include "model/generation_golden.h"
#include "repops/gemm_i8_amx.h"
#include "repops/gemm_i8_check.h"
#include "repops/golden_suite.h"
#include "repops/devices.h"
#include "repops/kernels.h"
#include "train/train_golden.h"

namespace trail::train {
namespace {

// The RepOps suite (kernel cases on the active SIMD target, op cases on a backend of `device`)
// and the training runs on that device, with the kernel pool's thread count.
SelftestRun RunOn(const std::string& backend, int threads, const Device& device) {
  SelftestRun o;
  o.backend = backend;
  o.int8_kernel = repops::ActiveKernels().gemm_i8_kernel();
  o.threads = threads;
  const GoldenTable& golden = repops::CommittedGolden();
  const auto t0 = std::chrono::steady_clock::now();
  const std::unique_ptr<repops::Backend> ops = repops::MakeBackend(device);
  const auto results = repops::RunGoldenSuite(*ops);
  o.seconds = SecondsSince(t0);
  o.cases = results.size();
  for (const auto& r : results) {
    const auto it = golden.find(r.name);
    if (it == golden.end())
      o.missing.push_back(r.name);
    else if (it->second != r.digest)
      o.mismatched.push_back(r.name);
  }
  // The int8 GEMM against int64 sums where shortcuts break (not hashed: checked here directly).
  ++o.cases;
  for (const std::string& f : repops::GemmI8ExactnessFailures(repops::ActiveKernels()))
    o.mismatched.push_back(f);
  // A few training steps: the model, the logical-mesh reduction and AdamW, end to end.
  const GoldenTable& train_golden = CommittedTrainingGolden();
  for (const GoldenRun& r : RunTrainingGolden(device)) {
    ++o.cases;
    const auto it = train_golden.find(r.name);
    if (it == train_golden.end() || it->second != r.chain) {
      o.mismatched.push_back("train." + r.name + " (chain " + r.chain + ")");
    }
  }
  // Generation: the KV-cache decoder and the sampler on that device.
  const GoldenTable& gen_golden = CommittedGoldens("generation");
  for (const model::GoldenGeneration& g : model::RunGenerationGolden(*ops)) {
    ++o.cases;
    const auto it = gen_golden.find(g.name);
    if (it == gen_golden.end() || it->second != g.digest) {
      o.mismatched.push_back("generation." + g.name + " (digest " + g.digest + ")");
    }
  }
  return o;
}

}  // namespace

SelftestReport RunSelftest(const std::string& backend, const std::vector<int>& threads,
                           const Device& device) {
  SelftestReport rep;
  rep.device = device.ToString();
  const FpCheck fp = CheckFpContract();
  if (!fp.ok) {
    rep.fp_problems = fp.problems;
    return rep;
  }
  rep.golden_cases = repops::CommittedGolden().size();
  rep.training_runs = CommittedTrainingGolden().size();
  rep.generations = CommittedGoldens("generation").size();
  bool all_ok = rep.golden_cases > 0;
  for (const repops::SimdTarget& b : repops::AvailableSimdTargets()) {
    if (!backend.empty() && b.name != backend) continue;
    repops::UseSimdTarget(b);
    // Where the CPU has AMX, AVX3_DL runs its int8 GEMM on tiles; the VNNI path it replaces is
    // checked as well, so both stay covered on such machines.
    const bool amx = b.name == "AVX3_DL" && repops::AmxInt8InUse();
    for (const bool use_amx : amx ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
      if (amx) repops::AllowAmx(use_amx);
      for (int t : threads) {
        SetKernelThreads(static_cast<size_t>(t));
        rep.runs.push_back(RunOn(use_amx ? b.name + "+AMX" : b.name, t, device));
        all_ok = all_ok && rep.runs.back().ok();
      }
    }
    repops::AllowAmx(true);
  }
  TRAIL_CHECK(!rep.runs.empty(), "no backend named '", backend, "' here");
  if (backend.empty()) rep.not_runnable = repops::CompiledSimdTargetsNotRunnable();
  // The data stream is integer-only: one digest for every backend and thread count.
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& name : data::StreamGoldenNames()) {
    const std::string got = rep.stream_digests[name] = data::ComputeStreamGoldenDigest(name);
    if (got != data::CommittedStreamGoldenDigest(name)) rep.stream_mismatched.push_back(name);
  }
  rep.stream_seconds = SecondsSince(t0);
  rep.stream_ok = rep.stream_mismatched.empty();
  rep.reproduces = all_ok && rep.stream_ok;
  return rep;
}

nlohmann::json SelftestToJson(const SelftestReport& r) {
  nlohmann::json j;
  j["arch"] = MachineArch();
  j["reproduces"] = r.reproduces;
  j["device"] = r.device;
  j["golden_cases"] = r.golden_cases;
  for (const SelftestRun& o : r.runs) {
    j["runs"].push_back({{"backend", o.backend},
                         {"int8_kernel", o.int8_kernel},
                         {"threads", o.threads},
                         {"cases", o.cases},
                         {"mismatched", o.mismatched},
                         {"missing_from_golden", o.missing},
                         {"seconds", o.seconds}});
  }
  j["not_runnable_here"] = r.not_runnable;
  j["data_stream"] = {{"reproduces", r.stream_ok},
                      {"digests", r.stream_digests},
                      {"mismatched", r.stream_mismatched},
                      {"seconds", r.stream_seconds}};
  return j;
}

}  // namespace trail::train
