// Helpers shared by the RepOps tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/thread_pool.h"
#include "repops/kernels.h"
#include "repops/random.h"

namespace trail::repops::testing {

inline std::vector<float> Rand(int64_t n, uint64_t stream, float scale = 1.0f) {
  std::vector<float> v(n);
  FillUniform(v.data(), n, 77, stream, -scale, scale);
  return v;
}

inline std::vector<double> ToDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

inline std::string HashOf(const std::vector<float>& v) {
  const int64_t shape[] = {static_cast<int64_t>(v.size())};
  return ToHex(BufferDigest("t", DType::kF32, shape, v.data()));
}

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Runs f on every backend × thread count {1, 2, 7}; returns the labels and f's results.
template <class R>
std::vector<std::pair<std::string, R>> OnEveryBackend(const std::function<R()>& f) {
  std::vector<std::pair<std::string, R>> out;
  const size_t threads_before = KernelPool().num_threads();
  for (const SimdTarget& b : AvailableSimdTargets()) {
    UseSimdTarget(b);
    for (int t : {1, 2, 7}) {
      SetKernelThreads(t);
      out.push_back({b.name + "/t" + std::to_string(t), f()});
    }
  }
  UseDefaultSimdTarget();
  SetKernelThreads(threads_before);
  return out;
}

inline double Norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace trail::repops::testing
