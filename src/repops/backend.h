// The op-level backend: every operation the model does to training state, on one device.
//
// A Backend owns a device's allocator and runs RepOps ops on buffers allocated from it. Every
// pointer passed to an op is a device pointer of this backend (host code never dereferences
// one unless the device is the host's), except where a parameter is marked "host". Every op
// computes exactly the canonical order of docs/repops.md, the same as the free functions of
// the op's header (named beside each method), so every backend gives the same bits; the
// golden suite checks that. Shapes are row-major, written [rows, cols].
//
// The interface is passed explicitly: whoever runs a model (the step engine, a loaded run, a
// test) owns a Backend and hands it down; no global selects one. The CPU backend
// (repops/cpu_backend.h) is today's kernels, with `Kernels` its internal SIMD dispatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <span>

#include "core/device.h"
#include "core/hash.h"
#include "repops/attention.h"
#include "repops/cross_entropy.h"
#include "repops/int8_linear.h"
#include "repops/optim.h"
#include "repops/rope.h"

namespace trail::repops {

struct Kernels;  // repops/kernels.h

// One chunk of the state hash (core/state_hash.h): `count` floats at `data` (on the device),
// chunk number `index` inside its tensor.
struct LeafChunk {
  const float* data = nullptr;
  int64_t index = 0, count = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;
  // What runs the ops, for reports: e.g. "cpu (AVX3_DL)".
  virtual std::string description() const = 0;
  // The SIMD kernels for host work on this backend's results copied to the host (sampling a
  // row of logits, scoring it): the CPU backend's own target; a device backend's, the table
  // MakeBackend was given (repops/devices.h). Callers take them here, never from process-wide
  // state; every target gives those ops the same bits.
  virtual const Kernels& host_kernels() const = 0;
  // Whether several threads may call ops at once, each on its own buffers (the CPU backend's
  // ops are reentrant; a GPU's run in order on one stream, the guarded device shares one access
  // window): callers above the backend ask this rather than which device it is.
  virtual bool concurrent_ops() const { return false; }

  // ---- Memory: the only ways bytes cross between host and device.
  // dst (host) = src's elements; src contiguous.
  virtual void CopyToHost(const TensorView& src, void* dst) = 0;
  // dst's elements = src (host, dst.nbytes() bytes); dst contiguous.
  virtual void CopyFromHost(const void* src, const TensorView& dst) = 0;
  virtual void Zero(const TensorView& x) = 0;  // every element +0 (all bits zero)

  // ---- fp32 GEMM (gemm.h): every output one FMA chain over p = 0..K-1, from C (accumulate)
  // or +0.
  // c [M,N] (+)= a [M,K] · b [K,N]
  virtual void MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                      bool accumulate) = 0;
  // c [M,N] (+)= a [M,K] · bt [N,K]ᵀ
  virtual void MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K, int64_t N,
                        bool accumulate) = 0;
  // c [M,N] (+)= at [K,M]ᵀ · b [K,N]
  virtual void MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                        bool accumulate) = 0;

  // ---- int8 QAT linear layers (int8_linear.h). The quantized operands are the backend's.
  virtual void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                              QuantizedWeight& out, const float* learned_step) = 0;
  virtual void QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) = 0;
  // y [M,N] = Q(X)·Q(W)
  virtual void Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch& s,
                                 float* y) = 0;
  // dx [M,K] (+)= dY·Q(W)ᵀ, dw [K,N] = Q(X)ᵀ·dY (and dstep with learned step sizes).
  virtual void Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                                  Int8Backward backward, Int8Scratch& s, float* dx, bool accumulate,
                                  float* dw, const float* w, float* dstep) = 0;

  // ---- Normalization and position (norm.h, rope.h).
  // x, y [rows, d]; gain [d] or null; rstd [rows].
  virtual void RmsNormForward(const float* x, const float* gain, float eps, int64_t rows, int64_t d,
                              float* y, float* rstd) = 0;
  // dx [rows, d] overwritten; dgain [d] accumulated into (null without gain).
  virtual void RmsNormBackward(const float* dy, const float* x, const float* gain,
                               const float* rstd, int64_t rows, int64_t d, float* dx,
                               float* dgain) = 0;
  // In place on x [rows, hd]; row r at position pos[r]; `table` on this device (RopeTableOf).
  virtual void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos,
                         const RopeTableView& table, bool backward) = 0;

  // ---- Attention (attention.h): q, k, v, out [B,H,T,hd]; probs [B,H,T,T]; the shape's masks
  // (doc_ids, key_valid [B,T]) on this device.
  virtual void AttentionForward(const AttentionShape& s, const float* q, const float* k,
                                const float* v, float* out, float* probs) = 0;
  virtual void AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                                 const float* v, const float* probs, const float* dout, float* dq,
                                 float* dk, float* dv) = 0;
  // Inference against a KV cache (AttentionCached): q, out [queries, H·hd] and v
  // [first + queries, H·hd] token-major, the keys transposed, kt [H, hd, capacity]; one sequence.
  virtual void AttentionCached(const CachedAttentionShape& s, const float* q, const float* kt,
                               const float* v, float* out) = 0;
  // kt (that layout) gets the n new keys k [n, H·hd] at positions [first, first + n).
  virtual void AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim,
                                    float* kt, int64_t capacity, int64_t first) = 0;

  // ---- MLP activations (activation.h), elementwise over n.
  virtual void SwiGluForward(const float* a, const float* b, int64_t n, float* h) = 0;
  virtual void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                              float* db) = 0;
  virtual void GeluForward(const float* x, int64_t n, float* y) = 0;
  virtual void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) = 0;

  // ---- Embedding and loss (embedding.h, cross_entropy.h).
  // out [n, d] = table [vocab, d] rows tokens [n] (each checked < vocab).
  virtual void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                                int64_t n, float* out) = 0;
  // dtable[tokens[t], :] += dout[t, :] for t ascending.
  virtual void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                                 int64_t d, float* dtable) = 0;
  // logits [rows, vocab], targets [rows], lse [rows] written; the sums come back to the host.
  virtual CrossEntropySums CrossEntropyForward(const float* logits, const int32_t* targets,
                                               int64_t rows, int64_t vocab, int32_t ignore_index,
                                               float* lse) = 0;
  virtual void CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                                    int64_t rows, int64_t vocab, int32_t ignore_index,
                                    float grad_scale, float z_coef, float* dlogits) = 0;

  // ---- Initialization (random.h, int8_linear.h), optimizer (optim.h) and state hashes.
  // x[i] = value for i < n.
  virtual void Fill(float* x, int64_t n, float value) = 0;
  // x [n] ~ N(mean, stddev) from Philox counters (seed, stream, i): FillNormal's bits.
  virtual void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                          float stddev) = 0;
  // step [N] = the per-channel step sizes of w [K, N] (WeightStepSizes).
  virtual void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) = 0;
  // SumSq(x [n]) in the canonical reduction order, returned to the host.
  virtual float SumSq(const float* x, int64_t n) = 0;
  // out[i] (host) = SumSq of chunks[i]'s count floats: the gradient norm's partial sums, all
  // chunks in one op (one round trip on a GPU).
  virtual void ChunkSumSqs(std::span<const LeafChunk> chunks, float* out) = 0;
  // x[i] = x[i] · coef for i < n (gradient clipping: one rounded product each).
  virtual void Scale(float* x, int64_t n, float coef) = 0;
  // One AdamW update of p, m, v [n] from g [n] at step t (AdamWStep).
  virtual void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n,
                         const AdamWHyper& h, int64_t t) = 0;
  // out[i] = the leaf of chunks[i] (ChunkLeafDigest of its float32 elements): only the
  // digests cross to the host.
  virtual void ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) = 0;

  // ---- Model glue.
  // y[i] = y[i] + x[i] for i < n (one rounded IEEE addition each; commutative, so also x + y).
  virtual void AddInto(float* y, const float* x, int64_t n) = 0;
  // x [rows, T, H, hd] -> y [rows, H, T, hd], and back (exact copies).
  virtual void SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                          int64_t hd) = 0;
  virtual void MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                          int64_t hd) = 0;
};

// A buffer of `numel` elements of T on the backend's device.
template <class T>
Buffer AllocateOn(Backend& b, int64_t numel) {
  return Buffer::Of<T>(b.allocator(), numel);
}
// A host array copied into a new buffer on the backend's device.
template <class T>
Buffer UploadTo(Backend& b, const T* host, int64_t numel) {
  Buffer out = AllocateOn<T>(b, numel);
  if (numel > 0) b.CopyFromHost(host, out.view());
  return out;
}

// A RoPE table's values on a backend's device, and the view its RopeApply reads.
struct DeviceRopeTable {
  Buffer cos, sin;
  RopeTableView view;
};
DeviceRopeTable RopeTableOn(Backend& b, const RopeTable& t);

}  // namespace trail::repops
