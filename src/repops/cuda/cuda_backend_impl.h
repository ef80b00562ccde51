// The CUDA backend's class, shared by the files that define its ops (cuda_backend.cc: memory,
// fp32 ops, attention, hashing; cuda_int8.cc: the int8 QAT layers). Made only through
// MakeCudaBackend (cuda_backend.h).
#pragma once

#include <climits>
#include <cmath>
#include <string>
#include <span>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "repops/backend.h"
#include "repops/kernels.h"
#include "repops/cuda/blake3_leaf.h"
#include "repops/cuda/cuda_memory.h"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {

// After a launch: a bad launch (geometry, arguments) is reported here, naming the op; a fault
// while a kernel runs is reported by the next call that waits for the device.
inline void CheckLaunch(const char* op) { CheckCuda(cudaGetLastError(), op); }

// A token, target or position id outside its range, found on the device: the first bad
// position and its value, reported as the CPU backend words it.
struct IdCheck {
  unsigned long long first_bad = ULLONG_MAX, valid = 0;
};

class CudaBackend final : public Backend {
 public:
  // On CUDA device `index`; `host_kernels`: the CPU kernels host work on its results runs.
  CudaBackend(int index, const Kernels& host_kernels);

  Device device() const override { return {kCudaDevice, index_}; }
  Allocator& allocator() override { return allocator_; }
  std::string description() const override { return description_; }
  const Kernels& host_kernels() const override { return host_kernels_; }

  void CopyToHost(const TensorView& src, void* dst) override {
    TRAIL_CHECK(src.contiguous(), "copy to host: the source view is not contiguous");
    if (src.nbytes() > 0)
      CheckCuda(cudaMemcpy(dst, src.data, src.nbytes(), cudaMemcpyDeviceToHost), "copy to host");
  }
  void CopyFromHost(const void* src, const TensorView& dst) override {
    TRAIL_CHECK(dst.contiguous(), "copy from host: the destination view is not contiguous");
    if (dst.nbytes() > 0)
      CheckCuda(cudaMemcpy(dst.data, src, dst.nbytes(), cudaMemcpyHostToDevice), "copy from host");
  }
  void Zero(const TensorView& x) override {
    TRAIL_CHECK(x.contiguous(), "zero: the view is not contiguous");
    if (x.nbytes() > 0) CheckCuda(cudaMemset(x.data, 0, x.nbytes()), "zero");
  }

  void MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
              bool accumulate) override {
    Gemm({.M = M,
          .N = N,
          .K = K,
          .a_rs = K,
          .a_cs = 1,
          .b_rs = N,
          .b_cs = 1,
          .ldc = N,
          .accumulate = accumulate},
         a, b, c, "MatMul");
  }
  void MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K, int64_t N,
                bool accumulate) override {
    Gemm({.M = M,
          .N = N,
          .K = K,
          .a_rs = K,
          .a_cs = 1,
          .b_rs = 1,
          .b_cs = K,
          .ldc = N,
          .accumulate = accumulate},
         a, bt, c, "MatMulBT");
  }
  void MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                bool accumulate) override {
    Gemm({.M = M,
          .N = N,
          .K = K,
          .a_rs = 1,
          .a_cs = M,
          .b_rs = N,
          .b_cs = 1,
          .ldc = N,
          .accumulate = accumulate},
         at, b, c, "MatMulAT");
  }

  // cuda_int8.cc
  void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                      QuantizedWeight& out, const float* learned_step) override;
  void QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) override;
  void Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch& s,
                         float* y) override;
  void Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                          Int8Backward backward, Int8Scratch& s, float* dx, bool accumulate,
                          float* dw, const float* w, float* dstep) override;

  void RmsNormForward(const float* x, const float* gain, float eps, int64_t rows, int64_t d,
                      float* y, float* rstd) override {
    LaunchRmsNormForward(x, gain, eps, 1.0f / static_cast<float>(d), rows, d, y, rstd);
    CheckLaunch("RmsNormForward");
  }
  void RmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                       int64_t rows, int64_t d, float* dx, float* dgain) override {
    LaunchRmsNormBackward(dy, x, gain, rstd, 1.0f / static_cast<float>(d), rows, d, dx);
    CheckLaunch("RmsNormBackward");
    if (dgain != nullptr) {
      LaunchRmsNormGain(dy, x, rstd, rows, d, dgain);
      CheckLaunch("RmsNormBackward (gain)");
    }
  }
  void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos, const RopeTableView& t,
                 bool backward) override;

  void AttentionForward(const AttentionShape& s, const float* q, const float* k, const float* v,
                        float* out, float* probs) override;
  void AttentionBackward(const AttentionShape& s, const float* q, const float* k, const float* v,
                         const float* probs, const float* dout, float* dq, float* dk,
                         float* dv) override;
  void AttentionCached(const CachedAttentionShape& s, const float* q, const float* kt,
                       const float* v, float* out) override;
  void AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim, float* kt,
                            int64_t capacity, int64_t first) override {
    TRAIL_CHECK(n >= 0 && first >= 0 && first + n <= capacity, "cached keys: ", first, " + ", n,
                " do not fit a cache of ", capacity);
    LaunchAppendKeysTransposed(k, n, heads * head_dim, kt, capacity, first);
    CheckLaunch("AppendKeysTransposed");
  }

  void SwiGluForward(const float* a, const float* b, int64_t n, float* h) override {
    LaunchSwiGluForward(a, b, n, h);
    CheckLaunch("SwiGluForward");
  }
  void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                      float* db) override {
    LaunchSwiGluBackward(dh, a, b, n, da, db);
    CheckLaunch("SwiGluBackward");
  }
  void GeluForward(const float* x, int64_t n, float* y) override {
    LaunchGeluForward(x, n, y);
    CheckLaunch("GeluForward");
  }
  void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) override {
    LaunchGeluBackward(dy, x, n, dx);
    CheckLaunch("GeluBackward");
  }

  void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                        int64_t n, float* out) override {
    CheckTokens(tokens, n, vocab);
    LaunchEmbeddingForward(table, d, tokens, n, out);
    CheckLaunch("EmbeddingForward");
  }
  void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                         int64_t d, float* dtable) override {
    CheckTokens(tokens, n, vocab);
    LaunchEmbeddingBackward(dout, tokens, n, d, dtable);
    CheckLaunch("EmbeddingBackward");
  }
  CrossEntropySums CrossEntropyForward(const float* logits, const int32_t* targets, int64_t rows,
                                       int64_t vocab, int32_t ignore_index, float* lse) override;
  void CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                            int64_t rows, int64_t vocab, int32_t ignore_index, float grad_scale,
                            float z_coef, float* dlogits) override {
    CheckTargets(targets, rows, vocab, ignore_index);
    LaunchCrossEntropyBackward(logits, targets, lse, rows, vocab, ignore_index, grad_scale,
                               2.0f * z_coef, dlogits);
    CheckLaunch("CrossEntropyBackward");
  }

  void Fill(float* x, int64_t n, float value) override {
    LaunchFill(x, n, value);
    CheckLaunch("Fill");
  }
  void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                  float stddev) override {
    LaunchFillNormal(x, n, seed, stream, mean, stddev);
    CheckLaunch("FillNormal");
  }
  void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) override {
    TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
    // int8_linear.cc's divisor: float(√127), rounded once.
    const float sqrt_qmax = static_cast<float>(std::sqrt(static_cast<double>(kInt8QMax)));
    LaunchWeightStepSizes(w, K, N, sqrt_qmax, step);
    CheckLaunch("WeightStepSizes");
  }
  float SumSq(const float* x, int64_t n) override {
    float* out = scalars_.As<float>(1);
    LaunchSumSq(x, n, out);
    CheckLaunch("SumSq");
    float host = 0;
    CheckCuda(cudaMemcpy(&host, out, sizeof host, cudaMemcpyDeviceToHost), "SumSq");
    return host;
  }
  void ChunkSumSqs(std::span<const LeafChunk> chunks, float* out) override;
  void Scale(float* x, int64_t n, float coef) override {
    LaunchScale(x, n, coef);
    CheckLaunch("Scale");
  }
  void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
                 int64_t t) override;
  void ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) override;

  void AddInto(float* y, const float* x, int64_t n) override {
    LaunchAddInto(y, x, n);
    CheckLaunch("AddInto");
  }
  void SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override {
    LaunchSplitHeads(x, y, rows, T, H, hd);
    CheckLaunch("SplitHeads");
  }
  void MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override {
    LaunchMergeHeads(y, x, rows, T, H, hd);
    CheckLaunch("MergeHeads");
  }

 private:
  void Gemm(GemmShape g, const float* a, const float* b, float* c, const char* op) {
    LaunchGemm(g, a, b, c);
    CheckLaunch(op);
  }
  // The int8 backward's parts (cuda_int8.cc).
  void Int8BackwardInput(const float* dy, int64_t M, const QuantizedWeight& w,
                         Int8Backward backward, float* dx, bool accumulate);
  void Int8BackwardWeight(const QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                          Int8Backward backward, float* dw, const float* w, float* dstep);
  // Runs LaunchCheckIds and returns what it found (waits for the device).
  IdCheck CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi, int64_t except);
  // The value at device position i of ids.
  int32_t IdAt(const int32_t* ids, unsigned long long i);
  void CheckTokens(const int32_t* tokens, int64_t n, int64_t vocab);
  int64_t CheckTargets(const int32_t* targets, int64_t rows, int64_t vocab, int32_t ignore_index);

  int index_;
  std::string description_;
  const Kernels& host_kernels_;
  CudaAllocator allocator_;
  Blake3Words leaf_key_;
  Scratch scalars_, id_check_, rows_a_, rows_b_, attention_, leaf_chunks_, digests_;
  Scratch sum_chunks_, sums_;
  Scratch i8_a_, i8_u_, i8_v_, i8_float_;  // the int8 backward's operands
};

}  // namespace trail::repops::cuda
