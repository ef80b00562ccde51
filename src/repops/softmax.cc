#include "repops/softmax.h"

#include "repops/kernels.h"
#include "repops/parallel.h"

namespace trail::repops {

void SoftmaxForward(const float* x, int64_t rows, int64_t n, float* y) {
  const Kernels& k = ActiveKernels();
  ForEachRow(rows, [&](int64_t r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    k.exp_sub(xr, k.max(xr, n), yr, n);
    const float inv = 1.0f / k.sum(yr, n);
    for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] * inv;
  });
}

void SoftmaxBackward(const float* y, const float* dy, int64_t rows, int64_t n, float* dx) {
  const Kernels& k = ActiveKernels();
  ForEachRow(rows, [&](int64_t r) {
    const float* yr = y + r * n;
    const float* dyr = dy + r * n;
    const float dot = k.dot(yr, dyr, n);
    float* dxr = dx + r * n;
    for (int64_t i = 0; i < n; ++i) dxr[i] = yr[i] * (dyr[i] - dot);
  });
}

}  // namespace trail::repops
