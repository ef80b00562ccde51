#include "repops/quantize.h"

#include <vector>

#include "core/error.h"
#include "repops/kernels.h"
#include "repops/parallel.h"

namespace trail::repops {

void ApplyI8Epilogue(const GemmI8Args& g, const int32_t* c, int64_t ldc, int64_t i0, int64_t rows,
                     int64_t j0, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* cr = c + r * ldc;
    float* out = g.out + (i0 + r) * g.N + j0;
    const float rs = g.row_scale ? g.row_scale[i0 + r] : 1.0f;
    const float* cs = g.col_scale ? g.col_scale + j0 : nullptr;
    // Four loop forms with no branch inside, so each vectorizes; the operations are the spec's.
    if (cs && g.accumulate) {
      for (int64_t j = 0; j < cols; ++j) out[j] = out[j] + (static_cast<float>(cr[j]) * rs) * cs[j];
    } else if (cs) {
      for (int64_t j = 0; j < cols; ++j) out[j] = (static_cast<float>(cr[j]) * rs) * cs[j];
    } else if (g.accumulate) {
      for (int64_t j = 0; j < cols; ++j) out[j] = out[j] + static_cast<float>(cr[j]) * rs;
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = static_cast<float>(cr[j]) * rs;
    }
  }
}

void GemmI8ThroughScratch(const GemmI8Args& g, void (*gemm)(const GemmI8Args&)) {
  std::vector<int32_t> own;
  int32_t* c = g.c;  // the caller's int32 buffer when it gave one
  if (c == nullptr) {
    own.resize(static_cast<size_t>(g.M * g.N));
    c = own.data();
  }
  GemmI8Args plain = g;
  plain.c = c, plain.out = nullptr;
  gemm(plain);
  ForEachRow(g.M, [&](int64_t i) { ApplyI8Epilogue(g, c + i * g.N, g.N, i, 1, 0, g.N); });
}

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
