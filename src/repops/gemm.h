// The three GEMM layouts training uses, on the active backend. Output C is [M,N] row-major and
// every element is one FMA chain over the reduction index p = 0..K-1 (kernels.h, GemmArgs).
// With accumulate, the chain starts from C's current value instead of +0.
#pragma once

#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

// C = A·B: A [M,K], B [K,N]. (Forward: Y = X·W.)
inline void MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                   bool accumulate = false) {
  ActiveKernels().gemm({M, N, K, a, K, 1, b, N, 1, c, N, accumulate});
}

// C = A·Bᵀ: A [M,K], B [N,K]. (Backward to the input: dX = dY·Wᵀ with W stored [N,K].)
inline void MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K, int64_t N,
                     bool accumulate = false) {
  ActiveKernels().gemm({M, N, K, a, K, 1, bt, 1, K, c, N, accumulate});
}

// C = Aᵀ·B: A [K,M], B [K,N]. (Backward to the weight: dW = Xᵀ·dY, reducing over tokens.)
inline void MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                     bool accumulate = false) {
  ActiveKernels().gemm({M, N, K, at, 1, M, b, N, 1, c, N, accumulate});
}

}  // namespace trail::repops
