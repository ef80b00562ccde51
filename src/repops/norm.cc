#include "repops/norm.h"

#include <cmath>
#include <vector>

#include "repops/kernels.h"
#include "repops/parallel.h"

namespace trail::repops {

void RmsNormForward(const Kernels& kernels, const float* x, const float* gain, float eps,
                    int64_t rows, int64_t d, float* y, float* rstd) {
  const float inv_d = 1.0f / static_cast<float>(d);
  const Kernels& k = kernels;
  ForEachRow(rows, [&](int64_t r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float s = 1.0f / std::sqrt(k.sum_sq(xr, d) * inv_d + eps);
    rstd[r] = s;
    if (gain) {
      for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] * s) * gain[i];
    } else {
      for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * s;
    }
  });
}

void RmsNormBackward(const Kernels& kernels, const float* dy, const float* x, const float* gain,
                     const float* rstd, int64_t rows, int64_t d, float* dx, float* dgain) {
  const float inv_d = 1.0f / static_cast<float>(d);
  const Kernels& k = kernels;
  ForEachRow(rows, [&](int64_t r) {
    thread_local std::vector<float> g, xhat;
    g.resize(d), xhat.resize(d);
    const float* dyr = dy + r * d;
    const float* xr = x + r * d;
    const float s = rstd[r];
    for (int64_t i = 0; i < d; ++i) {
      g[i] = gain ? dyr[i] * gain[i] : dyr[i];
      xhat[i] = xr[i] * s;
    }
    const float c = k.dot(g.data(), xhat.data(), d) * inv_d;
    float* dxr = dx + r * d;
    for (int64_t i = 0; i < d; ++i) dxr[i] = (g[i] - xhat[i] * c) * s;
  });
  if (dgain) {
    // Columns are independent; each column's chain runs over rows in ascending order.
    constexpr int64_t kChunk = 64;
    ForEachRow((d + kChunk - 1) / kChunk, [&](int64_t cb) {
      const int64_t i0 = cb * kChunk, n = std::min(d, i0 + kChunk) - i0;
      float xhat[kChunk];
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < n; ++i) xhat[i] = x[r * d + i0 + i] * rstd[r];
        k.mul_add(dy + r * d + i0, xhat, dgain + i0, n);  // fma(dy, x·rstd, dgain)
      }
    });
  }
}

}  // namespace trail::repops
