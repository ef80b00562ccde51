// Small helpers for side-by-side benchmarks: interleaved runs, medians, ratios.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/median.h"

namespace trail::bench {

// The benchmark configuration ("config B"): GPT-2 layout, 6 layers, d 384, 6 heads, vocabulary
// 16384, T 256, GELU MLP 4d, tied head, AdamW; the logical mesh R × S (after the [mesh] header).
// quant: "" (fp32), or a [quant] section's body, e.g. "linear = \"int8-lsq\"\n".
inline std::string ConfigBRecipe(int replicas, int shards, const std::string& quant = "") {
  return (quant.empty() ? "" : "[quant]\n" + quant) +
         "[model]\nvocab_size = 16384\nd_model = 384\nn_layers = 6\nn_heads = 6\nd_ff = 1536\n"
         "max_seq_len = 256\nmlp = \"gelu\"\n"
         "[optimizer]\nlr = 1e-3\nweight_decay = 0.1\nclip_norm = 1.0\n"
         "[mesh]\nreplicas = " +
         std::to_string(replicas) + "\nshards = " + std::to_string(shards) + "\n";
}

// The gpt2-small preset (12 × 768, vocabulary 50257) at context T, with the optimizer of
// config B, on the logical mesh R × S.
inline std::string Gpt2SmallRecipe(int replicas, int shards, int64_t T,
                                   const std::string& quant = "") {
  return (quant.empty() ? "" : "[quant]\n" + quant) +
         "[model]\npreset = \"gpt2-small\"\nvocab_size = 50257\nmax_seq_len = " +
         std::to_string(T) +
         "\n"
         "[optimizer]\nlr = 1e-3\nweight_decay = 0.1\nclip_norm = 1.0\n"
         "[mesh]\nreplicas = " +
         std::to_string(replicas) + "\nshards = " + std::to_string(shards) + "\n";
}

inline double Seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using trail::Median;

// Runs a and b alternately `reps` times after one warm-up each; returns their median seconds.
inline std::pair<double, double> InterleavedMedians(const std::function<void()>& a,
                                                    const std::function<void()>& b, int reps) {
  a();
  b();
  std::vector<double> ta, tb;
  for (int r = 0; r < reps; ++r) {
    ta.push_back(Seconds(a));
    tb.push_back(Seconds(b));
  }
  return {Median(ta), Median(tb)};
}

}  // namespace trail::bench
