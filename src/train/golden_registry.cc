#include "train/golden_registry.h"

#include "core/file_util.h"
#include "core/thread_pool.h"
#include "data/stream_golden.h"
#include "model/generation_golden.h"
#include "repops/cpu_backend.h"
#include "repops/golden_suite.h"
#include "repops/kernels.h"
#include "train/train_golden.h"

namespace trail::train {
namespace {

std::map<std::string, GoldenTable> ComputeAll() {
  repops::UseSimdTarget(repops::AvailableSimdTargets().front());  // the scalar reference
  SetKernelThreads(1);
  std::map<std::string, GoldenTable> out;
  for (const repops::GoldenResult& r : repops::RunGoldenSuite()) out["repops"][r.name] = r.digest;
  for (const std::string& name : data::StreamGoldenNames()) {
    out["stream"][name] = data::ComputeStreamGoldenDigest(name);
  }
  for (const GoldenRun& r : RunTrainingGolden()) out["training"][r.name] = r.chain;
  repops::CpuBackend cpu;
  for (const model::GoldenGeneration& g : model::RunGenerationGolden(cpu)) {
    out["generation"][g.name] = g.digest;
  }
  return out;
}

void Compare(const std::string& set, const GoldenTable& committed, const GoldenTable& computed,
             std::vector<GoldenChange>& changes) {
  for (const auto& [name, digest] : computed) {
    const auto it = committed.find(name);
    const std::string old = it == committed.end() ? "" : it->second;
    if (old != digest) changes.push_back({set, name, old, digest});
  }
  for (const auto& [name, digest] : committed) {
    if (!computed.count(name)) changes.push_back({set, name, digest, ""});
  }
}

}  // namespace

GoldenRegeneration RegenerateGoldens(const std::string& dir, bool write) {
  GoldenRegeneration g;
  g.computed = ComputeAll();
  for (std::string_view set : kGoldenSets) {
    const std::string s(set);
    Compare(s, CommittedGoldens(set), g.computed[s], g.changes);
  }
  if (write && !g.changes.empty()) {
    // Only the sets that changed are rewritten, so an unchanged file keeps its bytes.
    for (std::string_view set : kGoldenSets) {
      const std::string s(set);
      bool changed = false;
      for (const GoldenChange& c : g.changes) changed |= c.set == s;
      if (changed) WriteFileAtomic(dir + "/" + s + ".txt", GoldenFileText(set, g.computed[s]));
    }
    g.written = true;
  }
  return g;
}

}  // namespace trail::train
