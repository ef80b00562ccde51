// trail's elementary functions (docs/repops.md, "Elementary functions"): the scalar forms and
// the array form on the active backend. Both give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

float Exp(float x);
float Log(float x);
float Tanh(float x);
float Sigmoid(float x);
float Sin(float x);
float Cos(float x);
// GELU, tanh form, and its derivative (math-inl.h: GeluT, GeluGradT).
float Gelu(float x);
float GeluGrad(float x);

inline void Map(MathFn fn, const float* x, float* y, size_t n) { ActiveKernels().map(fn, x, y, n); }

// b^n for n >= 0 by square-and-multiply on the bits of n from the lowest: r *= b when the bit is
// set, then b *= b. (Used for Adam's bias corrections.)
float PowInt(float b, int64_t n);

}  // namespace trail::repops
