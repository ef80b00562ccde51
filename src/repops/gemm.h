// The three GEMM layouts training uses, on the active backend. Output C is [M,N] row-major and
// every element is one FMA chain over the reduction index p = 0..K-1 (kernels.h, GemmArgs).
// With accumulate, the chain starts from C's current value instead of +0.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "repops/kernels.h"

namespace trail::repops {

inline void CheckGemmShape(const void* a, const void* b, const float* c, int64_t M, int64_t K,
                           int64_t N) {
  TRAIL_CHECK(M >= 0 && K >= 0 && N >= 0, "GEMM dimensions must be >= 0, got M=", M, " K=", K,
              " N=", N);
  TRAIL_CHECK((M == 0 || N == 0) || (c != nullptr && (K == 0 || (a != nullptr && b != nullptr))),
              "GEMM of ", M, "x", K, "x", N, " given a null operand");
}

// C = A·B: A [M,K], B [K,N]. (Forward: Y = X·W.)
inline void MatMul(const Kernels& kernels, const float* a, const float* b, float* c, int64_t M,
                   int64_t K, int64_t N, bool accumulate = false) {
  CheckGemmShape(a, b, c, M, K, N);
  kernels.gemm({.M = M,
                .N = N,
                .K = K,
                .a = a,
                .a_rs = K,
                .a_cs = 1,  // A row-major
                .b = b,
                .b_rs = N,
                .b_cs = 1,  // B row-major
                .c = c,
                .ldc = N,
                .accumulate = accumulate});
}

// C = A·Bᵀ: A [M,K], B [N,K]. (Backward to the input: dX = dY·Wᵀ with W stored [N,K].)
inline void MatMulBT(const Kernels& kernels, const float* a, const float* bt, float* c, int64_t M,
                     int64_t K, int64_t N, bool accumulate = false) {
  CheckGemmShape(a, bt, c, M, K, N);
  kernels.gemm({.M = M,
                .N = N,
                .K = K,
                .a = a,
                .a_rs = K,
                .a_cs = 1,  // A row-major
                .b = bt,
                .b_rs = 1,
                .b_cs = K,  // B read from Bᵀ
                .c = c,
                .ldc = N,
                .accumulate = accumulate});
}

// C = Aᵀ·B: A [K,M], B [K,N]. (Backward to the weight: dW = Xᵀ·dY, reducing over tokens.)
inline void MatMulAT(const Kernels& kernels, const float* at, const float* b, float* c, int64_t M,
                     int64_t K, int64_t N, bool accumulate = false) {
  CheckGemmShape(at, b, c, M, K, N);
  kernels.gemm({.M = M,
                .N = N,
                .K = K,
                .a = at,
                .a_rs = 1,
                .a_cs = M,  // A read from Aᵀ
                .b = b,
                .b_rs = N,
                .b_cs = 1,  // B row-major
                .c = c,
                .ldc = N,
                .accumulate = accumulate});
}

// The same on the active SIMD target's kernels.
inline void MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                   bool accumulate = false) {
  MatMul(ActiveKernels(), a, b, c, M, K, N, accumulate);
}
inline void MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K, int64_t N,
                     bool accumulate = false) {
  MatMulBT(ActiveKernels(), a, bt, c, M, K, N, accumulate);
}
inline void MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                     bool accumulate = false) {
  MatMulAT(ActiveKernels(), at, b, c, M, K, N, accumulate);
}

}  // namespace trail::repops
