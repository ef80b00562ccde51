// The machine's measured fp32 FMA peak: the denominator of the model-FLOPs utilization (MFU)
// that bench/run_train_bench.sh reports for trail and PyTorch, so their step times can be read
// across machines. Each thread runs 24 independent chains of vector FMAs (enough to cover the
// FMA latency times the FMA units of any x86 or Arm core) on the widest Highway target here,
// for a fixed count; an FMA is 2 FLOPs per lane. Best of 5 runs.
//   fma_peak [THREADS]   (default 2)   prints {"threads", "target", "lanes", "gflops"}
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/fma_peak.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hwy/highway.h"

#ifndef FMA_PEAK_CHAINS
#define FMA_PEAK_CHAINS
namespace fma_peak {
constexpr int kChains = 24;
}
#endif

HWY_BEFORE_NAMESPACE();
namespace fma_peak::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `iters` rounds of kChains FMAs; returns a sum so nothing is optimized away.
float FmaChains(long iters) {
  const hn::ScalableTag<float> d;
  const auto a = hn::Set(d, 0.999999f), b = hn::Set(d, 1e-7f);
  hn::Vec<decltype(d)> acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = hn::Set(d, 1.0f + c);
  for (long i = 0; i < iters; ++i) {
    // Unrolled, so the accumulators live in registers rather than in memory.
#pragma GCC unroll 24
    for (int c = 0; c < kChains; ++c) acc[c] = hn::MulAdd(acc[c], a, b);
  }
  for (int c = 1; c < kChains; ++c) acc[0] = hn::Add(acc[0], acc[c]);
  return hn::GetLane(hn::SumOfLanes(d, acc[0]));
}
size_t Lanes() { return hn::Lanes(hn::ScalableTag<float>()); }
const char* Target() { return hwy::TargetName(HWY_TARGET); }

}  // namespace fma_peak::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fma_peak {
HWY_EXPORT(FmaChains);
HWY_EXPORT(Lanes);
HWY_EXPORT(Target);

int Main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const long iters = 20'000'000;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { sink[t] = HWY_DYNAMIC_DISPATCH(FmaChains)(iters); });
    }
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops = 2.0 * kChains * HWY_DYNAMIC_DISPATCH(Lanes)() * iters * threads;
    if (sink[0] != 0) best = std::max(best, flops / s);  // sink read: the work is kept
  }
  std::printf("{\"threads\": %d, \"target\": \"%s\", \"lanes\": %zu, \"gflops\": %.1f}\n", threads,
              HWY_DYNAMIC_DISPATCH(Target)(), HWY_DYNAMIC_DISPATCH(Lanes)(), best / 1e9);
  return 0;
}
}  // namespace fma_peak

int main(int argc, char** argv) { return fma_peak::Main(argc, argv); }
#endif  // HWY_ONCE
