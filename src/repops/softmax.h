// Row softmax over the last dimension.
#pragma once

#include <cstdint>

namespace trail::repops {

// y = Exp(x - Max(x)) * (1 / Sum(e)).  x, y: [rows, n].
void SoftmaxForward(const float* x, int64_t rows, int64_t n, float* y);
// dx = y * (dy - Dot(y, dy)).
void SoftmaxBackward(const float* y, const float* dy, int64_t rows, int64_t n, float* dx);

}  // namespace trail::repops
