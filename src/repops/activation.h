// MLP activations: SwiGLU and GELU (tanh form), forward and backward, elementwise.
#pragma once

#include <cstdint>

namespace trail::repops {

// h = (a * Sigmoid(a)) * b.
void SwiGluForward(const float* a, const float* b, int64_t n, float* h);
// s = Sigmoid(a); db = dh * (a * s); da = (dh * b) * (s * (1 + a * (1 - s))).
void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                    float* db);

// u = 0.7978845608 * (x + 0.044715 * ((x * x) * x)); y = (0.5 * x) * (1 + Tanh(u)).
void GeluForward(const float* x, int64_t n, float* y);
// t = Tanh(u); dx = dy * (0.5 * (1 + t) + (0.5 * x) * ((1 - t * t) *
//                   (0.7978845608 * (1 + 0.134145 * (x * x))))).
void GeluBackward(const float* dy, const float* x, int64_t n, float* dx);

}  // namespace trail::repops
