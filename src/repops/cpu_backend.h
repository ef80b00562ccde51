// The CPU backend: RepOps' host kernels (the scalar reference or one Highway SIMD target: a
// `Kernels` table, fixed when the backend is made) behind the op-level interface of
// repops/backend.h, on host memory.
#pragma once

#include "core/guarded_memory.h"
#include "repops/backend.h"
#include "repops/kernels.h"

namespace trail::repops {

class CpuBackend : public Backend {
 public:
  // Runs every op on `kernels` (which must outlive it: the tables of kernels.h are static), on
  // `allocator` (host-addressable memory). With `window` (the guarded test device,
  // repops/guarded_backend.h), every op holds that memory's access window open while it runs.
  CpuBackend(const Kernels& kernels, Allocator& allocator, GuardedAllocator* window = nullptr)
      : kernels_(kernels), allocator_(allocator), window_(window) {}
  // On the SIMD target active now (ActiveKernels()) and the process's cpu allocator.
  CpuBackend() : CpuBackend(ActiveKernels(), HostAllocator()) {}

  Device device() const override { return allocator_.device(); }
  Allocator& allocator() override { return allocator_; }
  std::string description() const override;
  const Kernels& host_kernels() const override { return kernels_; }
  bool concurrent_ops() const override { return window_ == nullptr; }

  void CopyToHost(const TensorView& src, void* dst) override;
  void CopyFromHost(const void* src, const TensorView& dst) override;
  void Zero(const TensorView& x) override;

  void MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
              bool accumulate) override;
  void MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K, int64_t N,
                bool accumulate) override;
  void MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                bool accumulate) override;

  void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                      QuantizedWeight& out, const float* learned_step) override;
  void QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) override;
  void Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch& s,
                         float* y) override;
  void Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                          Int8Backward backward, Int8Scratch& s, float* dx, bool accumulate,
                          float* dw, const float* w, float* dstep) override;

  void RmsNormForward(const float* x, const float* gain, float eps, int64_t rows, int64_t d,
                      float* y, float* rstd) override;
  void RmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                       int64_t rows, int64_t d, float* dx, float* dgain) override;
  void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos, const RopeTableView& table,
                 bool backward) override;

  void AttentionForward(const AttentionShape& s, const float* q, const float* k, const float* v,
                        float* out, float* probs) override;
  void AttentionBackward(const AttentionShape& s, const float* q, const float* k, const float* v,
                         const float* probs, const float* dout, float* dq, float* dk,
                         float* dv) override;
  void AttentionCached(const CachedAttentionShape& s, const float* q, const float* kt,
                       const float* v, float* out) override;
  void AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim, float* kt,
                            int64_t capacity, int64_t first) override;

  void SwiGluForward(const float* a, const float* b, int64_t n, float* h) override;
  void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                      float* db) override;
  void GeluForward(const float* x, int64_t n, float* y) override;
  void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) override;

  void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                        int64_t n, float* out) override;
  void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                         int64_t d, float* dtable) override;
  CrossEntropySums CrossEntropyForward(const float* logits, const int32_t* targets, int64_t rows,
                                       int64_t vocab, int32_t ignore_index, float* lse) override;
  void CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                            int64_t rows, int64_t vocab, int32_t ignore_index, float grad_scale,
                            float z_coef, float* dlogits) override;

  void Fill(float* x, int64_t n, float value) override;
  void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                  float stddev) override;
  void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) override;
  float SumSq(const float* x, int64_t n) override;
  void ChunkSumSqs(std::span<const LeafChunk> chunks, float* out) override;
  void Scale(float* x, int64_t n, float coef) override;
  void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
                 int64_t t) override;
  void ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) override;

  void AddInto(float* y, const float* x, int64_t n) override;
  void SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override;
  void MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override;

 private:
  const Kernels& kernels_;
  Allocator& allocator_;
  GuardedAllocator* window_;
};

}  // namespace trail::repops
