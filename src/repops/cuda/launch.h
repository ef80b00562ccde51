// The CUDA backend's kernels, as host functions that enqueue them on the current device's
// default stream (in order: every op sees the results of the ops before it). Pointers are device
// pointers unless marked host. Each kernel computes exactly the op of repops/backend.h named
// beside it, in docs/repops.md's order; cuda_backend.cc checks arguments and launch errors.
// Plain C++ declarations, so the backend itself compiles without nvcc.
#pragma once

#include <cstdint>

#include "repops/cuda/gemm_tiling.h"

namespace trail::repops::cuda {

// A run of count floats at data (device), chunk `index` of its tensor (core/state_hash.h).
struct DeviceLeafChunk {
  const float* data;
  int64_t index, count;
};

// ---- fp32 GEMM (MatMul, MatMulBT, MatMulAT, and the attention products, batched).
void LaunchGemm(const GemmShape& g, const float* a, const float* b, float* c);

// ---- Elementwise (elementwise.cu).
void LaunchFill(float* x, int64_t n, float value);
void LaunchScale(float* x, int64_t n, float coef);
void LaunchAddInto(float* y, const float* x, int64_t n);
void LaunchAddZero(float* x, int64_t n);  // x = x + (+0): the attention products' last step
// y [groups, block] = the sum over i < group of x [groups·group, block]'s block g·group + i, in
// ascending i from the first (grouped-query attention's K/V gradient).
void LaunchSumGroups(const float* x, int64_t groups, int64_t group, int64_t block, float* y);
void LaunchSwiGluForward(const float* a, const float* b, int64_t n, float* h);
void LaunchSwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                          float* db);
void LaunchGeluForward(const float* x, int64_t n, float* y);
void LaunchGeluBackward(const float* dy, const float* x, int64_t n, float* dx);
// AdamWStep with its per-step constants computed on the host exactly as optim.cc does.
struct AdamWConstants {
  float lr, beta1, beta2, eps, bc1, bc2, decay, omb1, omb2;
};
void LaunchAdamW(float* p, const float* g, float* m, float* v, int64_t n, const AdamWConstants& k);
void LaunchFillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                      float stddev);
void LaunchRope(float* x, int64_t rows, int64_t hd, const int32_t* pos, const float* cos,
                const float* sin, bool backward);
void LaunchSplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H, int64_t hd);
// kt[c·capacity + first + i] = k[i·d + c] for i < n, c < d.
void LaunchAppendKeysTransposed(const float* k, int64_t n, int64_t d, float* kt, int64_t capacity,
                                int64_t first);
void LaunchMergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H, int64_t hd);
void LaunchEmbeddingForward(const float* table, int64_t d, const int32_t* tokens, int64_t n,
                            float* out);
void LaunchEmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t d,
                             float* dtable);
// *first_bad = min(*first_bad, i) for every i < n with ids[i] outside [lo, hi) and != except
// (first_bad starts at UINT64_MAX); *valid += the count of ids[i] != except.
void LaunchCheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi, int64_t except,
                    unsigned long long* first_bad, unsigned long long* valid);

// ---- Row ops and reductions (rows.cu): canonical reductions on half-warps.
void LaunchRmsNormForward(const float* x, const float* gain, float eps, float inv_d, int64_t rows,
                          int64_t d, float* y, float* rstd);
void LaunchRmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                           float inv_d, int64_t rows, int64_t d, float* dx);
void LaunchRmsNormGain(const float* dy, const float* x, const float* rstd, int64_t rows, int64_t d,
                       float* dgain);
// Per row: lse, and nll and lse² (+0 on ignored rows) for the sums.
void LaunchCrossEntropyRows(const float* logits, const int32_t* targets, int64_t rows,
                            int64_t vocab, int32_t ignore_index, float* lse, float* nll,
                            float* lse_sq);
void LaunchCrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                                int64_t rows, int64_t vocab, int32_t ignore_index, float grad_scale,
                                float z2, float* dlogits);
// out[0] = Sum(x[0..n)), or SumSq, in the canonical order.
void LaunchSum(const float* x, int64_t n, float* out);
void LaunchSumSq(const float* x, int64_t n, float* out);
// sums[i] = SumSq of chunk i's count floats, a half-warp a chunk.
void LaunchChunkSumSqs(const DeviceLeafChunk* chunks, int64_t n, float* sums);
void LaunchWeightStepSizes(const float* w, int64_t K, int64_t N, float sqrt_qmax, float* step);

// ---- Attention rows (attention.cu): S, P, dP, dS are [B·H, queries, T]: the queries at
// positions [first, first + queries) against keys [0, T) (training: first 0, queries T).
struct AttentionRows {
  int64_t batch, heads, seq, window;
  const int32_t* doc_ids;    // [B, T] or null
  const uint8_t* key_valid;  // [B, T] or null
  float scale;
  int64_t first, queries;
};
// P = the masked softmax of S·scale over each query's range (docs/repops.md §5).
void LaunchAttentionSoftmax(const AttentionRows& a, const float* S, float* P);
// dS (in place over dP) = (P·(dP − D))·scale on the allowed keys, +0 elsewhere.
void LaunchAttentionScoreGrad(const AttentionRows& a, const float* P, float* dP_to_dS);

// ---- int8 QAT layers (int8.cu, gemm_i8.cu; repops/int8_linear.h).
// q = Q(w, step[j]) [K, N], clip_mask = 1 where clipped, dequant = float(q)·step[j] (if given).
void LaunchQuantizeWeight(const float* w, int64_t K, int64_t N, const float* step, int8_t* q,
                          float* dequant, uint8_t* clip_mask);
// Per row t of x [M, K]: g = x[t, :] (·col_mul elementwise, if given), scale[t] =
// AbsMax(g) / 127, q[t, :] = Q(g, scale[t]).
void LaunchQuantizeRows(const float* x, int64_t M, int64_t K, const float* col_mul, int8_t* q,
                        float* scale);
// v[j] = AbsMax over t of r[t]·dy[t, j], over 127.
void LaunchColumnAbsMaxScales(const float* dy, const float* r, int64_t M, int64_t N, float* v);
// qh[t, j] = Q(dy[t, j]·r[t], v[j]).
void LaunchQuantizeScaledRows(const float* dy, const float* r, const float* v, int64_t M, int64_t N,
                              int8_t* qh);
// out[t, p] = float(q[t, p])·r[t].
void LaunchDequantizeRows(const int8_t* q, const float* r, int64_t M, int64_t K, float* out);
// The learned step sizes' gradient (int8_linear.h), g = 1/√(K·127) rounded once.
void LaunchLsqStepGradient(const float* dw, const float* w, const int8_t* q, const float* step,
                           int64_t K, int64_t N, float g, float* dstep);
void LaunchZeroMasked(float* x, const uint8_t* mask, int64_t n);  // x[i] = +0 where mask[i]
// out [M, N] (+)= (float(Σ_p A[i, p]·B[p, j])·row_scale[i])·col_scale[j], a scale left out when
// null; A(i, p) = a[i·a_rs + p·a_cs], B(p, j) = b[p·b_rs + j·b_cs].
struct GemmI8Shape {
  int64_t M = 0, N = 0, K = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0;
  const float* row_scale = nullptr;
  const float* col_scale = nullptr;
  bool accumulate = false;
};
// kCudaCores: integer multiply-adds; kTensorCores: WMMA int8 fragments (unverified on a GPU
// so far); kDefault: CUDA cores unless TRAIL_CUDA_INT8_TENSOR_CORES=1. Every kernel gives the
// same exact sums.
enum class Int8Kernel { kDefault, kCudaCores, kTensorCores };
void LaunchGemmI8(const GemmI8Shape& g, const int8_t* a, const int8_t* b, float* out,
                  Int8Kernel kernel = Int8Kernel::kDefault);

// ---- State hash leaves (blake3.cu): digests[32·i ..] = ChunkLeafDigest of chunk i.
void LaunchChunkLeaves(const DeviceLeafChunk* chunks, int64_t n, const uint32_t* key,
                       uint8_t* digests);

}  // namespace trail::repops::cuda
