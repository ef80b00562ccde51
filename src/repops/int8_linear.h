// int8 linear layers for quantization-aware training (docs/repops.md, "int8 linear layers").
//
//   forward:  Y = Q(X)·Q(W)                X [M,K] (tokens × inputs), W [K,N] (inputs × outputs)
//     Q(W)[p,j] = qw[p,j]·s[j]             per output channel j: s[j] = 2·mean_p |W[p,j]| / √127,
//                                          recomputed from the current weights at every call
//     Q(X)[t,p] = qx[t,p]·r[t]             per token t: r[t] = max_p |X[t,p]| / 127 (absmax)
//     Y[t,j]    = (float(Σ_p qx[t,p]·qw[p,j]) · r[t]) · s[j]     exact int32 sum, then two products
//   backward: straight-through estimator; no gradient where a weight was clipped (|W/s| > 127).
//     kFp32:  dX = dY·Q(W)ᵀ, dW = Q(X)ᵀ·dY in the fp32 GEMM's canonical order.
//     kInt8:  the scale that varies along the reduced index is folded into the gradient before
//             it is quantized, so each product is one exact int8 GEMM:
//             dX[t,p] = float(Σ_j qg[t,j]·qw[p,j]) · u[t]       g = dY·diag(s), absmax per token
//             dW[p,j] = float(Σ_t qx[t,p]·qh[t,j]) · v[j]       h = diag(r)·dY, absmax per column
//
// Every op takes the kernels it runs on (a backend's); the forms without them use the active
// SIMD target's.
//
// Rounding is to nearest, ties to even; a quantized value is clamped to [-127, 127]; a NaN
// quotient (a zero or non-finite scale) quantizes to 0. Every step is elementwise or an exact
// integer sum, except the fp32 backward's GEMMs, so results are the same on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "repops/kernels.h"

namespace trail::repops {

inline constexpr int kInt8QMax = 127;

enum class Int8Backward { kFp32, kInt8 };

// The operand structures below live in the memory of the backend whose ops fill and read them
// (constructed with its allocator; the host's by default): only those ops touch their elements.

// W [K, N] quantized for one step.
struct QuantizedWeight {
  QuantizedWeight() = default;
  explicit QuantizedWeight(Allocator& memory)
      : step(DeviceStdAllocator<float>(memory)),
        q(DeviceStdAllocator<int8_t>(memory)),
        dequant(DeviceStdAllocator<float>(memory)),
        clip_mask(DeviceStdAllocator<uint8_t>(memory)) {}
  int64_t K = 0, N = 0;
  DeviceVector<float> step;         // [N]    s
  DeviceVector<int8_t> q;           // [K, N] qw in W's layout (B of the forward, Bᵀ of dX's)
  DeviceVector<float> dequant;      // [K, N] Q(W) (fp32 backward)
  DeviceVector<uint8_t> clip_mask;  // [K, N] 1 where the weight is clipped (|W/s| > 127), else 0
};

// X [M, K] quantized per row.
struct QuantizedInput {
  QuantizedInput() = default;
  explicit QuantizedInput(Allocator& memory)
      : q(DeviceStdAllocator<int8_t>(memory)),
        scale(DeviceStdAllocator<float>(memory)),
        qt(DeviceStdAllocator<int8_t>(memory)) {}
  int64_t M = 0, K = 0;
  DeviceVector<int8_t> q;     // [M, K]
  DeviceVector<float> scale;  // [M]    r
  DeviceVector<int8_t> qt;    // [K, M] q transposed (int8 dW), made by the first backward use
  bool qt_ready = false;
};

// Buffers the GEMMs reuse across calls (they only grow).
struct Int8Scratch {
  Int8Scratch() = default;
  explicit Int8Scratch(Allocator& memory)
      : acc(DeviceStdAllocator<int32_t>(memory)),
        f(DeviceStdAllocator<float>(memory)),
        a(DeviceStdAllocator<int8_t>(memory)),
        scale(DeviceStdAllocator<float>(memory)) {}
  DeviceVector<int32_t> acc;
  DeviceVector<float> f;
  DeviceVector<int8_t> a;
  DeviceVector<float> scale;
};

// An int8 GEMM's int32 sums cannot overflow: |Σ| <= n·127² < 2^31, so a reduction over n
// terms is refused (a clear error) when n > 133 144.
void CheckInt8Reduction(int64_t n);

// s[j] = (2·m) / float(√127) with m = Sum(|W[0..K-1, j]|) / K, Sum the canonical reduction
// (docs/repops.md §2). Also the initial value of learned step sizes (model/params.cc).
void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step);
// q = clamp(RoundHalfEven(x / scale), -127, 127), 0 when x / scale is NaN.
int8_t QuantizeValue(const Kernels& kernels, float x, float scale);
inline int8_t QuantizeValue(float x, float scale) {
  return QuantizeValue(ActiveKernels(), x, scale);
}
// Per row i of x [M, K]: scale[i] = AbsMax(x[i,:]) / 127 and q[i,:] = QuantizeValue(x, scale)
// (kernels.h: abs_max, quantize_i8).
void QuantizeRowsAbsmax(const Kernels& kernels, const float* x, int64_t M, int64_t K, int8_t* q,
                        float* scale);
inline void QuantizeRowsAbsmax(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  QuantizeRowsAbsmax(ActiveKernels(), x, M, K, q, scale);
}

// With learned_step (N values), the step sizes are those instead of the formula's: learned LSQ
// step sizes, an ablation of the per-step recompute.
void QuantizeWeight(const Kernels& kernels, const float* w, int64_t K, int64_t N,
                    Int8Backward backward, QuantizedWeight& out,
                    const float* learned_step = nullptr);
inline void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                           QuantizedWeight& out, const float* learned_step = nullptr) {
  QuantizeWeight(ActiveKernels(), w, K, N, backward, out, learned_step);
}
void QuantizeInput(const Kernels& kernels, const float* x, int64_t M, int64_t K,
                   QuantizedInput& out);
inline void QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) {
  QuantizeInput(ActiveKernels(), x, M, K, out);
}

// y [M, N] = Q(X)·Q(W).
void Int8LinearForward(const Kernels& kernels, const QuantizedInput& x, const QuantizedWeight& w,
                       Int8Scratch& s, float* y);
inline void Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch& s,
                              float* y) {
  Int8LinearForward(ActiveKernels(), x, w, s, y);
}
// dx [M, K] = dY·Q(W)ᵀ, or dx + that with accumulate (the sum of several layers' shares).
void Int8LinearBackwardInput(const Kernels& kernels, const float* dy, int64_t M,
                             const QuantizedWeight& w, Int8Backward backward, Int8Scratch& s,
                             float* dx, bool accumulate);
inline void Int8LinearBackwardInput(const float* dy, int64_t M, const QuantizedWeight& w,
                                    Int8Backward backward, Int8Scratch& s, float* dx,
                                    bool accumulate) {
  Int8LinearBackwardInput(ActiveKernels(), dy, M, w, backward, s, dx, accumulate);
}
// dw [K, N] = Q(X)ᵀ·dY, +0 where W was clipped. x is not const: the int8 backward keeps its
// transpose for the next layer that reads the same input.
//
// With dstep (learned step sizes), also the LSQ gradient of each step size, from dŴ = the
// gradient before the clip mask and v = W/s: dstep[j] = (Σ_p dŴ[p,j]·e[p,j]) · (1/√(K·127)),
// e = q - v inside the range, q (= ±127) where clipped; the sum runs over p ascending, one
// rounded product and one rounded addition per term. w is the unquantized weight.
void Int8LinearBackwardWeight(const Kernels& kernels, QuantizedInput& x, const float* dy,
                              const QuantizedWeight& qw, Int8Backward backward, Int8Scratch& s,
                              float* dw, const float* w = nullptr, float* dstep = nullptr);
inline void Int8LinearBackwardWeight(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                                     Int8Backward backward, Int8Scratch& s, float* dw,
                                     const float* w = nullptr, float* dstep = nullptr) {
  Int8LinearBackwardWeight(ActiveKernels(), x, dy, qw, backward, s, dw, w, dstep);
}
// Both: the same dx and dw (and dstep) bits as the two calls above, the int8 backward taking
// one pass over dY for g's quantization and the column maxima of diag(r)·dY.
void Int8LinearBackward(const Kernels& kernels, QuantizedInput& x, const float* dy,
                        const QuantizedWeight& qw, Int8Backward backward, Int8Scratch& s, float* dx,
                        bool accumulate, float* dw, const float* w = nullptr,
                        float* dstep = nullptr);
inline void Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                               Int8Backward backward, Int8Scratch& s, float* dx, bool accumulate,
                               float* dw, const float* w = nullptr, float* dstep = nullptr) {
  Int8LinearBackward(ActiveKernels(), x, dy, qw, backward, s, dx, accumulate, dw, w, dstep);
}

}  // namespace trail::repops
