// Small helpers for side-by-side benchmarks: interleaved runs, medians, ratios.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace trail::bench {

inline double Seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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
