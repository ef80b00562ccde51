// Elementwise launches: f(i) for every i < n over a grid-stride loop of 256-thread blocks (at
// most 2^20 blocks). Each element's value depends on i alone, so the geometry changes no bit.
#pragma once

#include <cstdint>

namespace trail::repops::cuda {

template <class F>
__global__ void ForEachKernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    f(i);
}

template <class F>
void LaunchForEach(int64_t n, F f) {
  if (n <= 0) return;
  const int64_t blocks = (n + 255) / 256;
  ForEachKernel<<<static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20)), 256>>>(n, f);
}

}  // namespace trail::repops::cuda
