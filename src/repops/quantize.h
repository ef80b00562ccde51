// The float side of int8 GEMMs, and argmax.
#pragma once

#include <cstdint>

namespace trail::repops {

// Dequantize epilogue of an int8 GEMM: y[i,j] = (float(c[i,j]) * scale_a[i]) * scale_b[j],
// float(c) rounded to nearest-even (exact for |c| <= 2^24).
void DequantizeI32(const int32_t* c, const float* scale_a, const float* scale_b, int64_t M,
                   int64_t N, float* y);

// Per row, the index of the first maximum: scanning j ascending, j replaces the best when
// x[j] > best or x[j] is NaN and best is not (the first NaN wins). Exact, so order-free.
void ArgmaxRows(const float* x, int64_t rows, int64_t n, int32_t* out);

}  // namespace trail::repops
