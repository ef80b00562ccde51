// The primitive kernels every RepOps op is built from, and the backend that runs them: the
// portable scalar reference path, or one Highway SIMD target chosen at run time. Every backend
// computes bit-identical results; docs/repops.md defines each primitive's canonical order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trail::repops {

enum class MathFn { kExp, kLog, kTanh, kSigmoid, kSin, kCos };

// C[M,N] = (accumulate ? C : 0) + A·B with A(i,p) = a[i*a_rs + p*a_cs], B(p,j) = b[p*b_rs +
// j*b_cs], C(i,j) = c[i*ldc + j]. Canonical order: for each (i,j), acc = C(i,j) or +0, then acc =
// fma(A(i,p), B(p,j), acc) for p = 0, 1, ..., K-1.
struct GemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const float* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const float* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
};

// int8 GEMM with exact int32 accumulation: C[M,N] = Σ_p A[i,p]·B[p,j]; A row-major [M,K];
// B given either transposed, row-major [N,K] (bt), or as is, row-major [K,N] (b): exactly one
// of the two is set.
struct GemmI8Args {
  int64_t M = 0, N = 0, K = 0;
  const int8_t* a = nullptr;   // [M, K]
  const int8_t* bt = nullptr;  // [N, K]
  int32_t* c = nullptr;        // [M, N]; with out, optional int32 scratch
  const int8_t* b = nullptr;   // [K, N], instead of bt
  // Optional float epilogue instead of the int32 output: out[i, j] = (float(c)·row_scale[i])·
  // col_scale[j], float(c) rounded to nearest-even, a null scale leaving its multiply out (the
  // same bits as multiplying by 1); with accumulate, out[i, j] + that value. Elementwise IEEE
  // operations in this written order, so a kernel may apply it per tile.
  float* out = nullptr;  // [M, N]
  const float* row_scale = nullptr;
  const float* col_scale = nullptr;
  bool accumulate = false;
  int8_t B(int64_t p, int64_t j) const { return bt ? bt[j * K + p] : b[p * N + j]; }
};

// The epilogue of GemmI8Args for the block c[rows, cols] (row stride ldc) of output rows
// [i0, i0 + rows) and columns [j0, j0 + cols).
void ApplyI8Epilogue(const GemmI8Args& g, const int32_t* c, int64_t ldc, int64_t i0, int64_t rows,
                     int64_t j0, int64_t cols);
// For kernels without a fused epilogue: runs gemm into g.c (or, when null, a temporary int32
// buffer), then the epilogue.
void GemmI8ThroughScratch(const GemmI8Args& g, void (*gemm)(const GemmI8Args&));

struct Kernels {
  const char* name;
  // Canonical reductions: 16 lane-strided partials (element i goes to partial i mod 16, added in
  // ascending i), then combined by the fixed tree p[l] ⊕= p[l+8], p[l+4], p[l+2], p[l+1].
  float (*sum)(const float* x, size_t n);
  float (*sum_sq)(const float* x, size_t n);                  // partials: fma(x, x, p)
  float (*dot)(const float* x, const float* y, size_t n);     // partials: fma(x, y, p)
  float (*max)(const float* x, size_t n);                     // ⊕ = Max2; -inf for n = 0
  void (*axpy)(float a, const float* x, float* y, size_t n);  // y = fma(a, x, y)
  void (*map)(MathFn fn, const float* x, float* y, size_t n);
  void (*exp_sub)(const float* x, float shift, float* y, size_t n);  // y = Exp(x - shift)
  void (*gemm)(const GemmArgs& args);       // multi-threaded over output tiles
  void (*gemm_i8)(const GemmI8Args& args);  // multi-threaded over output tiles
  // The instructions gemm_i8 runs on this CPU ("amx", "vnni", "pmaddwd", "sdot", "mul+sadalp",
  // "scalar"): several targets choose among kernels at run time, every one exact.
  const char* (*gemm_i8_kernel)();
  // The largest |x[i]| (+0 for n = 0; exact, so order-free); the default quiet NaN when any
  // x[i] is NaN.
  float (*abs_max)(const float* x, size_t n);
  // q[i] = clamp(RoundHalfEven(x[i] / s_i), -127, 127) with the float32 quotient, 0 where the
  // quotient is NaN; s_i = scale[0] when scale_step is 0 (one scale), scale[i] when it is 1.
  // inv_scale (optional, for scale_step 1): inv_scale[i] = 1 / scale[i] rounded to float. It
  // changes no result: a kernel may decide most lanes by x·(1/s), which rounds to the same
  // integer as the quotient except within 2^-12 of a half-integer, and divides the rest.
  void (*quantize_i8)(const float* x, const float* scale, const float* inv_scale, size_t scale_step,
                      size_t n, int8_t* q);
  // GELU (tanh form) and its backward, elementwise: y = Gelu(x), dx = dy · GeluGrad(x), as
  // math-inl.h writes them (GeluT, GeluGradT).
  void (*gelu)(const float* x, float* y, size_t n);
  void (*gelu_backward)(const float* dy, const float* x, float* dx, size_t n);
  void (*mul_add)(const float* a, const float* b, float* y, size_t n);  // y = fma(a, b, y)
  // m[j] = a when a > m[j] or a is NaN, a = |r·x[j]| (the rounded product): a running maximum
  // in which a NaN, once taken, stays.
  void (*abs_max_update)(const float* x, float r, float* m, size_t n);
  // y[i] = a[i]·b_i, one rounded product; b_i = b[0] when b_step is 0, b[i] when it is 1.
  void (*mul)(const float* a, const float* b, size_t b_step, float* y, size_t n);
};

// Max2(a, b) = (b > a or b is NaN) ? b : a — NaN propagates, ties keep the left operand.
inline float Max2(float a, float b) { return (b > a || b != b) ? b : a; }

const Kernels& ActiveKernels();  // the active SIMD target's kernels

struct SimdTarget {
  std::string name;    // "reference" or a Highway target name ("AVX2", "AVX3", "NEON", ...)
  int64_t target = 0;  // Highway target bit; 0 for the scalar reference
};
// The scalar reference first, then every Highway target compiled in and supported by this CPU.
std::vector<SimdTarget> AvailableSimdTargets();
// Highway targets compiled into this binary that this CPU cannot run (it lacks their
// instructions): a selftest here does not cover them, and says so.
std::vector<std::string> CompiledSimdTargetsNotRunnable();
void UseSimdTarget(const SimdTarget& b);
// The best SIMD target this CPU runs; ActiveKernels() starts with it.
SimdTarget BestSimdTarget();
// The best SIMD target, or the one named by the TRAIL_SIMD_TARGET environment variable
// (TRAIL_BACKEND, its deprecated name, when that is unset; an error
// naming the available ones when it is not here). The environment is read only here: the
// commands call it once before their first op, so no op can fail on a bad variable.
void UseDefaultSimdTarget();
const Kernels& ReferenceKernels();
// Makes `k` the active kernel table (the one backends made without a table take): one of the
// above (to restore a saved ActiveKernels()), or a table a test builds to deviate on purpose.
// `k` must outlive its use. Library code never swaps it: code that needs other kernels hands
// them to MakeBackend (repops/devices.h).
void UseKernels(const Kernels& k);

}  // namespace trail::repops
