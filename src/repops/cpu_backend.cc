#include "repops/cpu_backend.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/state_hash.h"
#include "core/thread_pool.h"
#include "repops/activation.h"
#include "repops/embedding.h"
#include "repops/gemm.h"
#include "repops/kernels.h"
#include "repops/norm.h"
#include "repops/parallel.h"
#include "repops/random.h"

namespace trail::repops {
namespace {

// Holds a guarded memory's access window open for one op (nothing without one).
class OpWindow {
 public:
  explicit OpWindow(GuardedAllocator* memory) : memory_(memory) {
    if (memory_ != nullptr) memory_->Open();
  }
  ~OpWindow() {
    if (memory_ != nullptr) memory_->Close();
  }
  OpWindow(const OpWindow&) = delete;
  OpWindow& operator=(const OpWindow&) = delete;

 private:
  GuardedAllocator* memory_;
};

}  // namespace

std::string CpuBackend::description() const {
  return device().ToString() + " (" + kernels_.name + ")";
}

void CpuBackend::CopyToHost(const TensorView& src, void* dst) {
  const OpWindow open(window_);
  TRAIL_CHECK(src.contiguous(), "copy to host: the source view is not contiguous");
  if (src.nbytes() > 0) std::memcpy(dst, src.data, src.nbytes());
}

void CpuBackend::CopyFromHost(const void* src, const TensorView& dst) {
  const OpWindow open(window_);
  TRAIL_CHECK(dst.contiguous(), "copy from host: the destination view is not contiguous");
  if (dst.nbytes() > 0) std::memcpy(dst.data, src, dst.nbytes());
}

void CpuBackend::Zero(const TensorView& x) {
  const OpWindow open(window_);
  TRAIL_CHECK(x.contiguous(), "zero: the view is not contiguous");
  if (x.nbytes() > 0) std::memset(x.data, 0, x.nbytes());
}

void CpuBackend::MatMul(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N,
                        bool accumulate) {
  const OpWindow open(window_);
  repops::MatMul(kernels_, a, b, c, M, K, N, accumulate);
}
void CpuBackend::MatMulBT(const float* a, const float* bt, float* c, int64_t M, int64_t K,
                          int64_t N, bool accumulate) {
  const OpWindow open(window_);
  repops::MatMulBT(kernels_, a, bt, c, M, K, N, accumulate);
}
void CpuBackend::MatMulAT(const float* at, const float* b, float* c, int64_t M, int64_t K,
                          int64_t N, bool accumulate) {
  const OpWindow open(window_);
  repops::MatMulAT(kernels_, at, b, c, M, K, N, accumulate);
}

void CpuBackend::QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                                QuantizedWeight& out, const float* learned_step) {
  const OpWindow open(window_);
  repops::QuantizeWeight(kernels_, w, K, N, backward, out, learned_step);
}
void CpuBackend::QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) {
  const OpWindow open(window_);
  repops::QuantizeInput(kernels_, x, M, K, out);
}
void CpuBackend::Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w,
                                   Int8Scratch& s, float* y) {
  const OpWindow open(window_);
  repops::Int8LinearForward(kernels_, x, w, s, y);
}
void CpuBackend::Int8LinearBackward(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                                    Int8Backward backward, Int8Scratch& s, float* dx,
                                    bool accumulate, float* dw, const float* w, float* dstep) {
  const OpWindow open(window_);
  repops::Int8LinearBackward(kernels_, x, dy, qw, backward, s, dx, accumulate, dw, w, dstep);
}

void CpuBackend::RmsNormForward(const float* x, const float* gain, float eps, int64_t rows,
                                int64_t d, float* y, float* rstd) {
  const OpWindow open(window_);
  repops::RmsNormForward(kernels_, x, gain, eps, rows, d, y, rstd);
}
void CpuBackend::RmsNormBackward(const float* dy, const float* x, const float* gain,
                                 const float* rstd, int64_t rows, int64_t d, float* dx,
                                 float* dgain) {
  const OpWindow open(window_);
  repops::RmsNormBackward(kernels_, dy, x, gain, rstd, rows, d, dx, dgain);
}
void CpuBackend::RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos,
                           const RopeTableView& table, bool backward) {
  const OpWindow open(window_);
  repops::RopeApply(x, rows, hd, pos, table, backward);
}

void CpuBackend::AttentionForward(const AttentionShape& s, const float* q, const float* k,
                                  const float* v, float* out, float* probs) {
  const OpWindow open(window_);
  repops::AttentionForward(kernels_, s, q, k, v, out, probs);
}
void CpuBackend::AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                                   const float* v, const float* probs, const float* dout, float* dq,
                                   float* dk, float* dv) {
  const OpWindow open(window_);
  repops::AttentionBackward(kernels_, s, q, k, v, probs, dout, dq, dk, dv);
}
void CpuBackend::AttentionCached(const CachedAttentionShape& s, const float* q, const float* kt,
                                 const float* v, float* out) {
  const OpWindow open(window_);
  repops::AttentionCached(kernels_, s, q, kt, v, out);
}
void CpuBackend::AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim,
                                      float* kt, int64_t capacity, int64_t first) {
  const OpWindow open(window_);
  repops::AppendKeysTransposed(k, n, heads, head_dim, kt, capacity, first);
}

void CpuBackend::SwiGluForward(const float* a, const float* b, int64_t n, float* h) {
  const OpWindow open(window_);
  repops::SwiGluForward(kernels_, a, b, n, h);
}
void CpuBackend::SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n,
                                float* da, float* db) {
  const OpWindow open(window_);
  repops::SwiGluBackward(kernels_, dh, a, b, n, da, db);
}
void CpuBackend::GeluForward(const float* x, int64_t n, float* y) {
  const OpWindow open(window_);
  repops::GeluForward(kernels_, x, n, y);
}
void CpuBackend::GeluBackward(const float* dy, const float* x, int64_t n, float* dx) {
  const OpWindow open(window_);
  repops::GeluBackward(kernels_, dy, x, n, dx);
}

void CpuBackend::EmbeddingForward(const float* table, int64_t vocab, int64_t d,
                                  const int32_t* tokens, int64_t n, float* out) {
  const OpWindow open(window_);
  repops::EmbeddingForward(table, vocab, d, tokens, n, out);
}
void CpuBackend::EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n,
                                   int64_t vocab, int64_t d, float* dtable) {
  const OpWindow open(window_);
  repops::EmbeddingBackward(dout, tokens, n, vocab, d, dtable);
}
CrossEntropySums CpuBackend::CrossEntropyForward(const float* logits, const int32_t* targets,
                                                 int64_t rows, int64_t vocab, int32_t ignore_index,
                                                 float* lse) {
  const OpWindow open(window_);
  return repops::CrossEntropyForward(kernels_, logits, targets, rows, vocab, ignore_index, lse);
}
void CpuBackend::CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                                      int64_t rows, int64_t vocab, int32_t ignore_index,
                                      float grad_scale, float z_coef, float* dlogits) {
  const OpWindow open(window_);
  repops::CrossEntropyBackward(kernels_, logits, targets, lse, rows, vocab, ignore_index,
                               grad_scale, z_coef, dlogits);
}

void CpuBackend::Fill(float* x, int64_t n, float value) {
  const OpWindow open(window_);
  std::fill(x, x + n, value);
}

void CpuBackend::FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                            float stddev) {
  const OpWindow open(window_);
  repops::FillNormal(x, n, seed, stream, mean, stddev);
}

void CpuBackend::WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  const OpWindow open(window_);
  repops::WeightStepSizes(w, K, N, step);
}

float CpuBackend::SumSq(const float* x, int64_t n) {
  const OpWindow open(window_);
  return kernels_.sum_sq(x, static_cast<size_t>(n));
}

void CpuBackend::ChunkSumSqs(std::span<const LeafChunk> chunks, float* out) {
  const OpWindow open(window_);
  KernelPool().ParallelFor(chunks.size(), [&](size_t i) {
    out[i] = kernels_.sum_sq(chunks[i].data, static_cast<size_t>(chunks[i].count));
  });
}

void CpuBackend::Scale(float* x, int64_t n, float coef) {
  const OpWindow open(window_);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * coef;
}

void CpuBackend::AdamWStep(float* p, const float* g, float* m, float* v, int64_t n,
                           const AdamWHyper& h, int64_t t) {
  const OpWindow open(window_);
  repops::AdamWStep(p, g, m, v, n, h, t);
}

void CpuBackend::ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) {
  const OpWindow open(window_);
  KernelPool().ParallelFor(chunks.size(), [&](size_t i) {
    out[i] = ChunkLeafDigest(DType::kF32, chunks[i].index, chunks[i].data, chunks[i].count);
  });
}

void CpuBackend::AddInto(float* y, const float* x, int64_t n) {
  const OpWindow open(window_);
  constexpr int64_t kChunk = 1 << 14;
  ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) y[i] = y[i] + x[i];
  });
}

void CpuBackend::SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                            int64_t hd) {
  const OpWindow open(window_);
  ForEachRow(rows * H, [&](int64_t bh) {
    const int64_t r = bh / H, h = bh % H;
    for (int64_t t = 0; t < T; ++t) {
      std::memcpy(y + (bh * T + t) * hd, x + ((r * T + t) * H + h) * hd, hd * sizeof(float));
    }
  });
}

void CpuBackend::MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                            int64_t hd) {
  const OpWindow open(window_);
  ForEachRow(rows * H, [&](int64_t bh) {
    const int64_t r = bh / H, h = bh % H;
    for (int64_t t = 0; t < T; ++t) {
      std::memcpy(x + ((r * T + t) * H + h) * hd, y + (bh * T + t) * hd, hd * sizeof(float));
    }
  });
}

}  // namespace trail::repops
