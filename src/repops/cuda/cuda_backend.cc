#include "repops/cuda/cuda_backend.h"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/state_hash.h"
#include "repops/cuda/cuda_backend_impl.h"
#include "repops/math.h"

namespace trail::repops {
namespace cuda {

namespace {

// This process's rank among its job's processes on this machine, as the launcher says it
// (Open MPI's mpirun, Slurm's srun, MPICH's Hydra); 0 outside a job.
int LocalRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}

// The ordinal "cuda" (Device::kLocalGpu) or "cuda:N" names on this machine.
int ResolveIndex(int index) {
  const int count = CudaDeviceCount();
  TRAIL_CHECK(count > 0, "--device ", Device{kCudaDevice, index}.ToString(),
              ": this machine has no usable CUDA device (no NVIDIA GPU or driver); use "
              "--device cpu");
  if (index == Device::kLocalGpu) return LocalRank() % count;
  TRAIL_CHECK(index >= 0 && index < count, "--device cuda:", index, ": this machine has ", count,
              " CUDA device", count == 1 ? "" : "s", " (cuda:0 to cuda:", count - 1, ")");
  return index;
}

}  // namespace

CudaBackend::CudaBackend(int index, const Kernels& host_kernels)
    : index_(ResolveIndex(index)), host_kernels_(host_kernels), allocator_(index_) {
  CheckCuda(cudaSetDevice(index_), "selecting the device");
  cudaDeviceProp prop{};
  CheckCuda(cudaGetDeviceProperties(&prop, index_), "reading the device's properties");
  description_ = device().ToString() + " (" + prop.name + ", sm_" + std::to_string(prop.major) +
                 std::to_string(prop.minor) + ")";
  leaf_key_ = Blake3ContextKey(kChunkContext, static_cast<int>(std::strlen(kChunkContext)));
}

IdCheck CudaBackend::CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t hi,
                              int64_t except) {
  IdCheck result;
  auto* dev = id_check_.As<unsigned long long>(2);
  CheckCuda(cudaMemcpy(dev, &result, sizeof result, cudaMemcpyHostToDevice), "id check");
  LaunchCheckIds(ids, n, lo, hi, except, dev, dev + 1);
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
  LaunchRope(x, rows, hd, pos, t.cos, t.sin, backward);
  CheckLaunch("RopeApply");
}

CrossEntropySums CudaBackend::CrossEntropyForward(const float* logits, const int32_t* targets,
                                                  int64_t rows, int64_t vocab, int32_t ignore_index,
                                                  float* lse) {
  CrossEntropySums out;
  out.valid = CheckTargets(targets, rows, vocab, ignore_index);
  float* nll = rows_a_.As<float>(rows);
  float* lse_sq = rows_b_.As<float>(rows);
  LaunchCrossEntropyRows(logits, targets, rows, vocab, ignore_index, lse, nll, lse_sq);
  CheckLaunch("CrossEntropyForward");
  float* sums = scalars_.As<float>(2);
  LaunchSum(nll, rows, sums);
  LaunchSum(lse_sq, rows, sums + 1);
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
namespace {

int64_t KvHeads(const AttentionShape& s) { return s.kv_heads > 0 ? s.kv_heads : s.heads; }

AttentionRows RowsOf(const AttentionShape& s) {
  TRAIL_CHECK(s.batch > 0 && s.heads > 0 && s.seq > 0 && s.head_dim > 0,
              "attention: every dimension must be positive");
  TRAIL_CHECK(s.kv_heads >= 0 && s.heads % KvHeads(s) == 0, "attention: ", s.kv_heads,
              " key/value heads do not divide ", s.heads, " query heads");
  TRAIL_CHECK(s.window >= 0, "attention: window must be >= 0, got ", s.window);
  return {.batch = s.batch,
          .heads = s.heads,
          .seq = s.seq,
          .window = s.window,
          .doc_ids = s.doc_ids,
          .key_valid = s.key_valid,
          .scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim)),
          .first = 0,
          .queries = s.seq};
}

// One attention product per query head: C [M, N] = A · B with A's strides a_rs, a_cs and B's
// b_rs, b_cs; `a`, `b`, `c` say which operands are per query head (kQuery: a block of
// q_block floats a head), per key/value head (kKv: kv_block a head) or per head's [T, T] scores
// (kScores). Grouped-query attention's query head b·H + g·G + i reads key/value head b·Hkv + g:
// one batched GEMM for each i, over the B·Hkv key/value heads.
enum class PerHead { kQuery, kKv, kScores };
struct HeadOperand {
  PerHead kind;
  int64_t rs, cs;
};
template <class Gemm>
void PerQueryHead(const AttentionShape& s, int64_t M, int64_t N, int64_t K, HeadOperand a,
                  HeadOperand b, PerHead c, const float* pa, const float* pb, float* pc,
                  Gemm&& gemm) {
  const int64_t group = s.heads / KvHeads(s), T = s.seq, head = T * s.head_dim;
  // A head's block, and the stride from one batch of the GEMM (a key/value head) to the next.
  auto block = [&](PerHead k) { return k == PerHead::kScores ? T * T : head; };
  auto stride = [&](PerHead k) { return k == PerHead::kKv ? head : group * block(k); };
  auto offset = [&](PerHead k, int64_t i) { return k == PerHead::kKv ? 0 : i * block(k); };
  for (int64_t i = 0; i < group; ++i) {
    gemm(GemmShape{.M = M,
                   .N = N,
                   .K = K,
                   .a_rs = a.rs,
                   .a_cs = a.cs,
                   .b_rs = b.rs,
                   .b_cs = b.cs,
                   .ldc = N,
                   .a_batch = stride(a.kind),
                   .b_batch = stride(b.kind),
                   .c_batch = stride(c),
                   .batches = s.batch * KvHeads(s)},
         pa + offset(a.kind, i), pb + offset(b.kind, i), pc + offset(c, i));
  }
}

}  // namespace

void CudaBackend::AttentionForward(const AttentionShape& s, const float* q, const float* k,
                                   const float* v, float* out, float* probs) {
  const AttentionRows rows = RowsOf(s);
  const int64_t T = s.seq, hd = s.head_dim;
  using enum PerHead;
  auto gemm = [&](const char* what) {
    return [this, what](GemmShape g, const float* a, const float* b, float* c) {
      Gemm(g, a, b, c, what);
    };
  };
  // S [T, T] = Q · Kᵀ (K stored [T, hd]), into probs.
  PerQueryHead(s, T, T, hd, {kQuery, hd, 1}, {kKv, 1, hd}, kScores, q, k, probs,
               gemm("AttentionForward (scores)"));
  LaunchAttentionSoftmax(rows, probs, probs);
  CheckLaunch("AttentionForward (softmax)");
  // out [T, hd] = P · V, then + (+0).
  PerQueryHead(s, T, hd, T, {kScores, T, 1}, {kKv, hd, 1}, kQuery, probs, v, out,
               gemm("AttentionForward (P·V)"));
  LaunchAddZero(out, s.batch * s.heads * T * hd);
  CheckLaunch("AttentionForward");
}

void CudaBackend::AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                                    const float* v, const float* probs, const float* dout,
                                    float* dq, float* dk, float* dv) {
  const AttentionRows rows = RowsOf(s);
  const int64_t T = s.seq, hd = s.head_dim, head = T * hd, BH = s.batch * s.heads;
  const int64_t group = s.heads / KvHeads(s), BHkv = s.batch * KvHeads(s);
  using enum PerHead;
  auto gemm = [&](const char* what) {
    return [this, what](GemmShape g, const float* a, const float* b, float* c) {
      Gemm(g, a, b, c, what);
    };
  };
  // With groups, each query head's dk_h, dv_h [B, H, T, hd] go to scratch and are summed after.
  float* dS = attention_.As<float>(BH * T * T + (group > 1 ? 2 * BH * head : 0));
  float* dk_h = group > 1 ? dS + BH * T * T : dk;
  float* dv_h = group > 1 ? dk_h + BH * head : dv;
  const PerHead per_dkv = group > 1 ? kQuery : kKv;  // G = 1: the two layouts coincide
  // dP [T, T] = dout · Vᵀ, then dS in place.
  PerQueryHead(s, T, T, hd, {kQuery, hd, 1}, {kKv, 1, hd}, kScores, dout, v, dS,
               gemm("AttentionBackward (dP)"));
  LaunchAttentionScoreGrad(rows, probs, dS);
  CheckLaunch("AttentionBackward (dS)");
  // dq = dS · K;  dk_h = dSᵀ · Q;  dv_h = Pᵀ · dout; each then + (+0).
  PerQueryHead(s, T, hd, T, {kScores, T, 1}, {kKv, hd, 1}, kQuery, dS, k, dq,
               gemm("AttentionBackward (dq)"));
  PerQueryHead(s, T, hd, T, {kScores, 1, T}, {kQuery, hd, 1}, per_dkv, dS, q, dk_h,
               gemm("AttentionBackward (dk)"));
  PerQueryHead(s, T, hd, T, {kScores, 1, T}, {kQuery, hd, 1}, per_dkv, probs, dout, dv_h,
               gemm("AttentionBackward (dv)"));
  for (float* x : {dq, dk_h, dv_h}) LaunchAddZero(x, BH * head);
  if (group > 1) {  // dk, dv = the group's shares summed in ascending query head
    LaunchSumGroups(dk_h, BHkv, group, head, dk);
    LaunchSumGroups(dv_h, BHkv, group, head, dv);
  }
  CheckLaunch("AttentionBackward");
}

// Against a KV cache: the same three steps on the queries [first, first + n) of one sequence,
// token-major ([n, H·hd] and [keys, H·hd]), scores [H, n, keys] in scratch.
void CudaBackend::AttentionCached(const CachedAttentionShape& s, const float* q, const float* kt,
                                  const float* v, float* out) {
  CheckCachedAttention(s);
  const int64_t H = s.heads, hd = s.head_dim, d = H * hd, n = s.queries, L = s.keys();
  const AttentionRows rows{.batch = 1,
                           .heads = H,
                           .seq = L,
                           .window = s.window,
                           .doc_ids = nullptr,
                           .key_valid = nullptr,
                           .scale = 1.0f / std::sqrt(static_cast<float>(hd)),
                           .first = s.first,
                           .queries = n};
  float* S = attention_.As<float>(H * n * L);
  // Query head g·G + i reads key/value head g: one batched GEMM for each i, over the Hkv
  // key/value heads.
  const int64_t Hkv = s.kv(), group = H / Hkv, dkv = Hkv * hd;
  for (int64_t i = 0; i < group; ++i) {
    // S [n, L] = Q · Kᵀ per head: q's column block h·hd, the head's transposed keys.
    Gemm({.M = n,
          .N = L,
          .K = hd,
          .a_rs = d,
          .a_cs = 1,
          .b_rs = s.capacity,
          .b_cs = 1,
          .ldc = L,
          .a_batch = group * hd,
          .b_batch = hd * s.capacity,
          .c_batch = group * n * L,
          .batches = Hkv},
         q + i * hd, kt, S + i * n * L, "AttentionCached (scores)");
  }
  LaunchAttentionSoftmax(rows, S, S);
  CheckLaunch("AttentionCached (softmax)");
  for (int64_t i = 0; i < group; ++i) {
    // out [n, hd] of head h = P · V, written into the token-major output, then + (+0).
    Gemm({.M = n,
          .N = hd,
          .K = L,
          .a_rs = L,
          .a_cs = 1,
          .b_rs = dkv,
          .b_cs = 1,
          .ldc = d,
          .a_batch = group * n * L,
          .b_batch = hd,
          .c_batch = group * hd,
          .batches = Hkv},
         S + i * n * L, v, out + i * hd, "AttentionCached (P·V)");
  }
  LaunchAddZero(out, n * d);
  CheckLaunch("AttentionCached");
}

void CudaBackend::AdamWStep(float* p, const float* g, float* m, float* v, int64_t n,
                            const AdamWHyper& h, int64_t t) {
  TRAIL_CHECK(t >= 1, "AdamW step count is 1-based, got ", t);
  // optim.cc's per-step constants, computed on the host exactly as there.
  const AdamWConstants k{.lr = h.lr,
                         .beta1 = h.beta1,
                         .beta2 = h.beta2,
                         .eps = h.eps,
                         .bc1 = 1.0f / (1.0f - PowInt(h.beta1, t)),
                         .bc2 = 1.0f / (1.0f - PowInt(h.beta2, t)),
                         .decay = 1.0f - h.lr * h.weight_decay,
                         .omb1 = 1.0f - h.beta1,
                         .omb2 = 1.0f - h.beta2};
  LaunchAdamW(p, g, m, v, n, k);
  CheckLaunch("AdamWStep");
}

void CudaBackend::ChunkLeaves(std::span<const LeafChunk> chunks, Digest* out) {
  if (chunks.empty()) return;
  std::vector<DeviceLeafChunk> host(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    TRAIL_CHECK(chunks[i].count >= 0 && chunks[i].count <= kStateChunkElements,
                "a state-hash chunk of ", chunks[i].count, " elements (at most ",
                kStateChunkElements, ")");
    host[i] = {chunks[i].data, chunks[i].index, chunks[i].count};
  }
  const auto n = static_cast<int64_t>(chunks.size());
  auto* dev = leaf_chunks_.As<DeviceLeafChunk>(n);
  CheckCuda(cudaMemcpy(dev, host.data(), host.size() * sizeof host[0], cudaMemcpyHostToDevice),
            "ChunkLeaves");
  auto* digests = digests_.As<uint8_t>(n * 32);
  LaunchChunkLeaves(dev, n, leaf_key_.w, digests);
  CheckLaunch("ChunkLeaves");
  static_assert(sizeof(Digest) == 32);
  CheckCuda(cudaMemcpy(out, digests, static_cast<size_t>(n) * 32, cudaMemcpyDeviceToHost),
            "ChunkLeaves");
}

void CudaBackend::ChunkSumSqs(std::span<const LeafChunk> chunks, float* out) {
  if (chunks.empty()) return;
  std::vector<DeviceLeafChunk> host(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i)
    host[i] = {chunks[i].data, chunks[i].index, chunks[i].count};
  const auto n = static_cast<int64_t>(chunks.size());
  auto* dev = sum_chunks_.As<DeviceLeafChunk>(n);
  CheckCuda(cudaMemcpy(dev, host.data(), host.size() * sizeof host[0], cudaMemcpyHostToDevice),
            "ChunkSumSqs");
  float* sums = sums_.As<float>(n);
  LaunchChunkSumSqs(dev, n, sums);
  CheckLaunch("ChunkSumSqs");
  CheckCuda(cudaMemcpy(out, sums, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToHost),
            "ChunkSumSqs");
}

}  // namespace cuda

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> MakeCudaBackend(int index, const Kernels& host_kernels) {
  return std::make_unique<cuda::CudaBackend>(index, host_kernels);
}

}  // namespace trail::repops
