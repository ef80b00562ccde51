#include "repops/quantize.h"

#include "core/error.h"
#include "repops/parallel.h"

namespace trail::repops {

void DequantizeI32(const int32_t* c, const float* scale_a, const float* scale_b, int64_t M,
                   int64_t N, float* y) {
  ForEachRow(M, [&](int64_t i) {
    for (int64_t j = 0; j < N; ++j)
      y[i * N + j] = (static_cast<float>(c[i * N + j]) * scale_a[i]) * scale_b[j];
  });
}

void ArgmaxRows(const float* x, int64_t rows, int64_t n, int32_t* out) {
  TRAIL_CHECK(n > 0, "argmax over an empty row");
  ForEachRow(rows, [&](int64_t r) {
    const float* xr = x + r * n;
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j) {
      const bool best_nan = xr[best] != xr[best];
      if (!best_nan && (xr[j] > xr[best] || xr[j] != xr[j])) best = j;
    }
    out[r] = static_cast<int32_t>(best);
  });
}

}  // namespace trail::repops
