// RMSNorm over the last dimension, with or without a gain.
#pragma once

#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

// x, y: [rows, d]; gain: [d] or nullptr; rstd: [rows] (saved for backward).
// rstd = 1 / sqrt(SumSq(x) * (1/d) + eps);  y = (x * rstd) * gain.
void RmsNormForward(const Kernels& kernels, const float* x, const float* gain, float eps,
                    int64_t rows, int64_t d, float* y, float* rstd);
// On the active SIMD target's kernels.
inline void RmsNormForward(const float* x, const float* gain, float eps, int64_t rows, int64_t d,
                           float* y, float* rstd) {
  RmsNormForward(ActiveKernels(), x, gain, eps, rows, d, y, rstd);
}

// dx: [rows, d] (overwritten); dgain: [d] accumulated into (nullptr when no gain).
// g = dy * gain (or dy); xhat = x * rstd; c = Dot(g, xhat) * (1/d); dx = (g - xhat * c) * rstd;
// dgain[i] = fma(dy[r,i], xhat[r,i], dgain[i]) for rows r ascending.
void RmsNormBackward(const Kernels& kernels, const float* dy, const float* x, const float* gain,
                     const float* rstd, int64_t rows, int64_t d, float* dx, float* dgain);
// On the active SIMD target's kernels.
inline void RmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                            int64_t rows, int64_t d, float* dx, float* dgain) {
  RmsNormBackward(ActiveKernels(), dy, x, gain, rstd, rows, d, dx, dgain);
}

}  // namespace trail::repops
