#include <atomic>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "hwy/highway.h"
#include "hwy/targets.h"
#include "repops/kernels.h"

namespace trail::repops {

const Kernels* SimdKernelsForChosenTarget();  // kernels.cc

namespace {
std::atomic<const Kernels*> g_active{nullptr};

const Kernels* KernelsForTarget(int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  const Kernels* k = SimdKernelsForChosenTarget();
  hwy::SetSupportedTargetsForTest(0);
  return k;
}
}  // namespace

const Kernels& ActiveKernels() {
  const Kernels* k = g_active.load(std::memory_order_acquire);
  if (k == nullptr) {  // nothing chosen yet: the best target, which cannot fail
    UseSimdTarget(BestSimdTarget());
    k = g_active.load(std::memory_order_acquire);
  }
  return *k;
}

SimdTarget BestSimdTarget() {
  const auto all = AvailableSimdTargets();
  return all.size() > 1 ? all[1] : all[0];  // the best supported SIMD target comes first
}

std::vector<SimdTarget> AvailableSimdTargets() {
  std::vector<SimdTarget> out{{"reference", 0}};
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) out.push_back({hwy::TargetName(t), t});
  return out;
}

std::vector<std::string> CompiledSimdTargetsNotRunnable() {
  const int64_t supported = hwy::SupportedTargets();
  std::vector<std::string> out;
  for (int64_t rest = HWY_TARGETS; rest != 0; rest &= rest - 1) {
    const int64_t bit = rest & -rest;
    if ((supported & bit) == 0) out.push_back(hwy::TargetName(bit));
  }
  return out;
}

void UseSimdTarget(const SimdTarget& b) {
  g_active.store(b.target == 0 ? &ReferenceKernels() : KernelsForTarget(b.target),
                 std::memory_order_release);
}

void UseKernels(const Kernels& k) { g_active.store(&k, std::memory_order_release); }

void UseDefaultSimdTarget() {
  // TRAIL_SIMD_TARGET; TRAIL_BACKEND is its deprecated name, still read when the new one is unset.
  const char* var = "TRAIL_SIMD_TARGET";
  const char* want = std::getenv(var);
  if (want == nullptr || *want == '\0') want = std::getenv(var = "TRAIL_BACKEND");
  const auto all = AvailableSimdTargets();
  if (want != nullptr && *want != '\0') {
    std::string names;
    for (const SimdTarget& b : all) {
      if (b.name == want) return UseSimdTarget(b);
      names += " " + b.name;
    }
    TRAIL_FAIL(var, "='", want, "' is not available here; available:", names);
  }
  UseSimdTarget(BestSimdTarget());
}

}  // namespace trail::repops
