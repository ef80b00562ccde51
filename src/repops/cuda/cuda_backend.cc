#include "repops/cuda/cuda_backend.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/state_hash.h"
#include "repops/cuda/blake3_leaf.h"
#include "repops/cuda/cuda_memory.h"
#include "repops/cuda/launch.h"
#include "repops/math.h"

namespace trail::repops {
namespace {

using cuda::CheckCuda;
using cuda::GemmShape;

// After a launch: a bad launch (geometry, arguments) is reported here, naming the op; a fault
// while a kernel runs is reported by the next call that waits for the device.
void CheckLaunch(const char* op) { CheckCuda(cudaGetLastError(), op); }

// A token, target or position id outside its range, found on the device: the first bad
// position and its value, reported as the CPU backend words it.
struct IdCheck {
  unsigned long long first_bad = ULLONG_MAX, valid = 0;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index);

  Device device() const override { return {DeviceKind::kCuda, index_}; }
  Allocator& allocator() override { return allocator_; }
  std::string description() const override { return description_; }

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

  void QuantizeWeight(const float*, int64_t, int64_t, Int8Backward, QuantizedWeight&,
                      const float*) override {
    Int8NotYet();
  }
  void QuantizeInput(const float*, int64_t, int64_t, QuantizedInput&) override { Int8NotYet(); }
  void Int8LinearForward(const QuantizedInput&, const QuantizedWeight&, Int8Scratch&,
                         float*) override {
    Int8NotYet();
  }
  void Int8LinearBackward(QuantizedInput&, const float*, const QuantizedWeight&, Int8Backward,
                          Int8Scratch&, float*, bool, float*, const float*, float*) override {
    Int8NotYet();
  }

  void RmsNormForward(const float* x, const float* gain, float eps, int64_t rows, int64_t d,
                      float* y, float* rstd) override {
    cuda::LaunchRmsNormForward(x, gain, eps, 1.0f / static_cast<float>(d), rows, d, y, rstd);
    CheckLaunch("RmsNormForward");
  }
  void RmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                       int64_t rows, int64_t d, float* dx, float* dgain) override {
    cuda::LaunchRmsNormBackward(dy, x, gain, rstd, 1.0f / static_cast<float>(d), rows, d, dx);
    CheckLaunch("RmsNormBackward");
    if (dgain != nullptr) {
      cuda::LaunchRmsNormGain(dy, x, rstd, rows, d, dgain);
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

  void SwiGluForward(const float* a, const float* b, int64_t n, float* h) override {
    cuda::LaunchSwiGluForward(a, b, n, h);
    CheckLaunch("SwiGluForward");
  }
  void SwiGluBackward(const float* dh, const float* a, const float* b, int64_t n, float* da,
                      float* db) override {
    cuda::LaunchSwiGluBackward(dh, a, b, n, da, db);
    CheckLaunch("SwiGluBackward");
  }
  void GeluForward(const float* x, int64_t n, float* y) override {
    cuda::LaunchGeluForward(x, n, y);
    CheckLaunch("GeluForward");
  }
  void GeluBackward(const float* dy, const float* x, int64_t n, float* dx) override {
    cuda::LaunchGeluBackward(dy, x, n, dx);
    CheckLaunch("GeluBackward");
  }

  void EmbeddingForward(const float* table, int64_t vocab, int64_t d, const int32_t* tokens,
                        int64_t n, float* out) override {
    CheckTokens(tokens, n, vocab);
    cuda::LaunchEmbeddingForward(table, d, tokens, n, out);
    CheckLaunch("EmbeddingForward");
  }
  void EmbeddingBackward(const float* dout, const int32_t* tokens, int64_t n, int64_t vocab,
                         int64_t d, float* dtable) override {
    CheckTokens(tokens, n, vocab);
    cuda::LaunchEmbeddingBackward(dout, tokens, n, d, dtable);
    CheckLaunch("EmbeddingBackward");
  }
  CrossEntropySums CrossEntropyForward(const float* logits, const int32_t* targets, int64_t rows,
                                       int64_t vocab, int32_t ignore_index, float* lse) override;
  void CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                            int64_t rows, int64_t vocab, int32_t ignore_index, float grad_scale,
                            float z_coef, float* dlogits) override {
    CheckTargets(targets, rows, vocab, ignore_index);
    cuda::LaunchCrossEntropyBackward(logits, targets, lse, rows, vocab, ignore_index, grad_scale,
                                     2.0f * z_coef, dlogits);
    CheckLaunch("CrossEntropyBackward");
  }

  void Fill(float* x, int64_t n, float value) override {
    cuda::LaunchFill(x, n, value);
    CheckLaunch("Fill");
  }
  void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                  float stddev) override {
    cuda::LaunchFillNormal(x, n, seed, stream, mean, stddev);
    CheckLaunch("FillNormal");
  }
  void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) override {
    TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
    // int8_linear.cc's divisor: float(√127), rounded once.
    const float sqrt_qmax = static_cast<float>(std::sqrt(static_cast<double>(kInt8QMax)));
    cuda::LaunchWeightStepSizes(w, K, N, sqrt_qmax, step);
    CheckLaunch("WeightStepSizes");
  }
  float SumSq(const float* x, int64_t n) override {
    float* out = scalars_.As<float>(1);
    cuda::LaunchSumSq(x, n, out);
    CheckLaunch("SumSq");
    float host = 0;
    CheckCuda(cudaMemcpy(&host, out, sizeof host, cudaMemcpyDeviceToHost), "SumSq");
    return host;
  }
  void Scale(float* x, int64_t n, float coef) override {
    cuda::LaunchScale(x, n, coef);
    CheckLaunch("Scale");
  }
  void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
                 int64_t t) override;
  void ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) override;

  void AddInto(float* y, const float* x, int64_t n) override {
    cuda::LaunchAddInto(y, x, n);
    CheckLaunch("AddInto");
  }
  void SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override {
    cuda::LaunchSplitHeads(x, y, rows, T, H, hd);
    CheckLaunch("SplitHeads");
  }
  void MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H,
                  int64_t hd) override {
    cuda::LaunchMergeHeads(y, x, rows, T, H, hd);
    CheckLaunch("MergeHeads");
  }

 private:
  void Gemm(GemmShape g, const float* a, const float* b, float* c, const char* op) {
    cuda::LaunchGemm(g, a, b, c);
    CheckLaunch(op);
  }
  [[noreturn]] void Int8NotYet() const {
    TRAIL_FAIL("int8 QAT layers do not run on ", device().ToString(),
               " yet; train int8 recipes on the cpu device");
  }
  // Runs LaunchCheckIds and returns what it found (waits for the device).
  IdCheck CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi, int64_t except);
  // The value at device position i of ids.
  int32_t IdAt(const int32_t* ids, unsigned long long i);
  void CheckTokens(const int32_t* tokens, int64_t n, int64_t vocab);
  int64_t CheckTargets(const int32_t* targets, int64_t rows, int64_t vocab, int32_t ignore_index);

  int index_;
  std::string description_;
  cuda::CudaAllocator allocator_;
  cuda::Blake3Words leaf_key_;
  cuda::Scratch scalars_, id_check_, rows_a_, rows_b_, attention_, leaf_chunks_, digests_;
};

CudaBackend::CudaBackend(int index) : index_(index), allocator_(index) {
  const int count = CudaDeviceCount();
  TRAIL_CHECK(count > 0, "--device cuda:", index,
              ": this machine has no usable CUDA device (no NVIDIA GPU or driver); use "
              "--device cpu");
  TRAIL_CHECK(index >= 0 && index < count, "--device cuda:", index, ": this machine has ", count,
              " CUDA device", count == 1 ? "" : "s", " (cuda:0 to cuda:", count - 1, ")");
  CheckCuda(cudaSetDevice(index), "selecting the device");
  cudaDeviceProp prop{};
  CheckCuda(cudaGetDeviceProperties(&prop, index), "reading the device's properties");
  description_ = device().ToString() + " (" + prop.name + ", sm_" + std::to_string(prop.major) +
                 std::to_string(prop.minor) + ")";
  leaf_key_ = cuda::Blake3ContextKey(kChunkContext, static_cast<int>(std::strlen(kChunkContext)));
}

IdCheck CudaBackend::CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi,
                              int64_t except) {
  IdCheck result;
  auto* dev = id_check_.As<unsigned long long>(2);
  CheckCuda(cudaMemcpy(dev, &result, sizeof result, cudaMemcpyHostToDevice), "id check");
  cuda::LaunchCheckIds(ids, n, lo, hi, except, dev, dev + 1);
  CheckLaunch("id check");
  CheckCuda(cudaMemcpy(&result, dev, sizeof result, cudaMemcpyDeviceToHost), "id check");
  return result;
}

int32_t CudaBackend::IdAt(const int32_t* ids, unsigned long long i) {
  int32_t v = 0;
  CheckCuda(cudaMemcpy(&v, ids + i, sizeof v, cudaMemcpyDeviceToHost), "id check");
  return v;
}

void CudaBackend::CheckTokens(const int32_t* tokens, int64_t n, int64_t vocab) {
  const IdCheck c = CheckIds(tokens, n, 0, vocab, int64_t{INT32_MIN} - 1);
  TRAIL_CHECK(c.first_bad == ULLONG_MAX, "token id ", IdAt(tokens, c.first_bad), " at position ",
              c.first_bad, " is outside the vocabulary [0, ", vocab, ")");
}

int64_t CudaBackend::CheckTargets(const int32_t* targets, int64_t rows, int64_t vocab,
                                  int32_t ignore_index) {
  const IdCheck c = CheckIds(targets, rows, 0, vocab, ignore_index);
  TRAIL_CHECK(c.first_bad == ULLONG_MAX, "target ", IdAt(targets, c.first_bad), " in row ",
              c.first_bad, " is outside [0, ", vocab, ") and is not the ignore index ",
              ignore_index);
  return static_cast<int64_t>(c.valid);
}

void CudaBackend::RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos,
                            const RopeTableView& t, bool backward) {
  TRAIL_CHECK(hd == 2 * t.half, "RoPE table built for head dimension ", 2 * t.half, ", used with ",
              hd);
  const IdCheck c = CheckIds(pos, rows, 0, t.max_pos, int64_t{INT32_MIN} - 1);
  TRAIL_CHECK(c.first_bad == ULLONG_MAX, "RoPE position ", IdAt(pos, c.first_bad), " outside [0, ",
              t.max_pos, ")");
  cuda::LaunchRope(x, rows, hd, pos, t.cos, t.sin, backward);
  CheckLaunch("RopeApply");
}

CrossEntropySums CudaBackend::CrossEntropyForward(const float* logits, const int32_t* targets,
                                                  int64_t rows, int64_t vocab, int32_t ignore_index,
                                                  float* lse) {
  CrossEntropySums out;
  out.valid = CheckTargets(targets, rows, vocab, ignore_index);
  float* nll = rows_a_.As<float>(rows);
  float* lse_sq = rows_b_.As<float>(rows);
  cuda::LaunchCrossEntropyRows(logits, targets, rows, vocab, ignore_index, lse, nll, lse_sq);
  CheckLaunch("CrossEntropyForward");
  float* sums = scalars_.As<float>(2);
  cuda::LaunchSum(nll, rows, sums);
  cuda::LaunchSum(lse_sq, rows, sums + 1);
  CheckLaunch("CrossEntropyForward (sums)");
  float host[2];
  CheckCuda(cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost), "CrossEntropyForward");
  out.nll_sum = host[0];
  out.lse_sq_sum = host[1];
  return out;
}

// Attention (docs/repops.md §5) as the spec writes it: the scores a batched GEMM per head, the
// masked softmax a row kernel, and every product a full-length chain (GEMM) plus +0. The
// scores are computed into `probs` and turned into probabilities in place.
cuda::AttentionRows RowsOf(const AttentionShape& s) {
  TRAIL_CHECK(s.batch > 0 && s.heads > 0 && s.seq > 0 && s.head_dim > 0,
              "attention: every dimension must be positive");
  TRAIL_CHECK(s.window >= 0, "attention: window must be >= 0, got ", s.window);
  return {.batch = s.batch,
          .heads = s.heads,
          .seq = s.seq,
          .window = s.window,
          .doc_ids = s.doc_ids,
          .key_valid = s.key_valid,
          .scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim))};
}

// Per head: C [T, n] = A [T, K]-like · B, batched over B·H heads. x_rs/x_cs are A's strides.
GemmShape HeadGemm(const AttentionShape& s, int64_t M, int64_t N, int64_t K, int64_t a_rs,
                   int64_t a_cs, int64_t a_batch, int64_t b_rs, int64_t b_cs, int64_t b_batch) {
  return {.M = M,
          .N = N,
          .K = K,
          .a_rs = a_rs,
          .a_cs = a_cs,
          .b_rs = b_rs,
          .b_cs = b_cs,
          .ldc = N,
          .a_batch = a_batch,
          .b_batch = b_batch,
          .c_batch = M * N,
          .batches = s.batch * s.heads};
}

void CudaBackend::AttentionForward(const AttentionShape& s, const float* q, const float* k,
                                   const float* v, float* out, float* probs) {
  const cuda::AttentionRows rows = RowsOf(s);
  const int64_t T = s.seq, hd = s.head_dim, head = T * hd;
  // S [T, T] = Q · Kᵀ (K stored [T, hd]), into probs.
  Gemm(HeadGemm(s, T, T, hd, hd, 1, head, 1, hd, head), q, k, probs, "AttentionForward (scores)");
  cuda::LaunchAttentionSoftmax(rows, probs, probs);
  CheckLaunch("AttentionForward (softmax)");
  // out [T, hd] = P · V, then + (+0).
  Gemm(HeadGemm(s, T, hd, T, T, 1, T * T, hd, 1, head), probs, v, out, "AttentionForward (P·V)");
  cuda::LaunchAddZero(out, s.batch * s.heads * head);
  CheckLaunch("AttentionForward");
}

void CudaBackend::AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                                    const float* v, const float* probs, const float* dout,
                                    float* dq, float* dk, float* dv) {
  const cuda::AttentionRows rows = RowsOf(s);
  const int64_t T = s.seq, hd = s.head_dim, head = T * hd, BH = s.batch * s.heads;
  float* dS = attention_.As<float>(BH * T * T);
  // dP [T, T] = dout · Vᵀ, then dS in place.
  Gemm(HeadGemm(s, T, T, hd, hd, 1, head, 1, hd, head), dout, v, dS, "AttentionBackward (dP)");
  cuda::LaunchAttentionScoreGrad(rows, probs, dS);
  CheckLaunch("AttentionBackward (dS)");
  // dq = dS · K;  dk = dSᵀ · Q;  dv = Pᵀ · dout; each then + (+0).
  Gemm(HeadGemm(s, T, hd, T, T, 1, T * T, hd, 1, head), dS, k, dq, "AttentionBackward (dq)");
  Gemm(HeadGemm(s, T, hd, T, 1, T, T * T, hd, 1, head), dS, q, dk, "AttentionBackward (dk)");
  Gemm(HeadGemm(s, T, hd, T, 1, T, T * T, hd, 1, head), probs, dout, dv, "AttentionBackward (dv)");
  for (float* x : {dq, dk, dv}) cuda::LaunchAddZero(x, BH * head);
  CheckLaunch("AttentionBackward");
}

void CudaBackend::AdamWStep(float* p, const float* g, float* m, float* v, int64_t n,
                            const AdamWHyper& h, int64_t t) {
  TRAIL_CHECK(t >= 1, "AdamW step count is 1-based, got ", t);
  // optim.cc's per-step constants, computed on the host exactly as there.
  const cuda::AdamWConstants k{.lr = h.lr,
                               .beta1 = h.beta1,
                               .beta2 = h.beta2,
                               .eps = h.eps,
                               .bc1 = 1.0f / (1.0f - PowInt(h.beta1, t)),
                               .bc2 = 1.0f / (1.0f - PowInt(h.beta2, t)),
                               .decay = 1.0f - h.lr * h.weight_decay,
                               .omb1 = 1.0f - h.beta1,
                               .omb2 = 1.0f - h.beta2};
  cuda::LaunchAdamW(p, g, m, v, n, k);
  CheckLaunch("AdamWStep");
}

void CudaBackend::ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) {
  if (chunks.empty()) return;
  std::vector<cuda::DeviceLeafChunk> host(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    TRAIL_CHECK(chunks[i].count >= 0 && chunks[i].count <= kStateChunkElements,
                "a state-hash chunk of ", chunks[i].count, " elements (at most ",
                kStateChunkElements, ")");
    host[i] = {chunks[i].data, chunks[i].index, chunks[i].count};
  }
  const auto n = static_cast<int64_t>(chunks.size());
  auto* dev = leaf_chunks_.As<cuda::DeviceLeafChunk>(n);
  CheckCuda(cudaMemcpy(dev, host.data(), host.size() * sizeof host[0], cudaMemcpyHostToDevice),
            "ChunkLeaves");
  auto* digests = digests_.As<uint8_t>(n * 32);
  cuda::LaunchChunkLeaves(dev, n, leaf_key_.w, digests);
  CheckLaunch("ChunkLeaves");
  static_assert(sizeof(Digest) == 32);
  CheckCuda(cudaMemcpy(out, digests, static_cast<size_t>(n) * 32, cudaMemcpyDeviceToHost),
            "ChunkLeaves");
}

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> MakeCudaBackend(int index) { return std::make_unique<CudaBackend>(index); }

}  // namespace trail::repops
