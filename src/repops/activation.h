// MLP activations: SwiGLU and GELU (tanh form), forward and backward, elementwise.
#pragma once

#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

// h = (a * Sigmoid(a)) * b.
void SwiGluForward(const Kernels& kernels, const float* a, const float* b, int64_t n, float* h);
// On the active SIMD target's kernels.
inline void SwiGluForward(const float* a, const float* b, int64_t n, float* h) {
  SwiGluForward(ActiveKernels(), a, b, n, h);
}
// s = Sigmoid(a); db = dh * (a * s); da = (dh * b) * (s * (1 + a * (1 - s))).
void SwiGluBackward(const Kernels& kernels, const float* dh, const float* a, const float* b,
                    int64_t n, float* da, float* db);
// On the active SIMD target's kernels.
inline void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                           float* db) {
  SwiGluBackward(ActiveKernels(), dh, a, b, n, da, db);
}

// u = 0.7978845608 * (x + 0.044715 * ((x * x) * x)); y = (0.5 * x) * (1 + Tanh(u)).
void GeluForward(const Kernels& kernels, const float* x, int64_t n, float* y);
// On the active SIMD target's kernels.
inline void GeluForward(const float* x, int64_t n, float* y) {
  GeluForward(ActiveKernels(), x, n, y);
}
// t = Tanh(u); dx = dy * (0.5 * (1 + t) + (0.5 * x) * ((1 - t * t) *
//                   (0.7978845608 * (1 + 0.134145 * (x * x))))).
void GeluBackward(const Kernels& kernels, const float* dy, const float* x, int64_t n, float* dx);
// On the active SIMD target's kernels.
inline void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) {
  GeluBackward(ActiveKernels(), dy, x, n, dx);
}

}  // namespace trail::repops
