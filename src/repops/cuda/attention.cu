// The row steps of attention (docs/repops.md §5) between its GEMMs: the masked softmax of the
// scores and the score gradient. One half-warp a query row; its reductions run over the
// query's range [lo, t] in the canonical order (index j − lo), as the CPU's do.
#include "repops/cuda/device_math.cuh"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / 16;

struct QueryRow {
  int64_t b, t, lo, len;  // batch, query, first key of the window, keys in [lo, t]
};

__device__ QueryRow RowOf(const AttentionRows& a, int64_t row) {
  const int64_t t = a.first + row % a.queries, b = row / (a.queries * a.heads);
  const int64_t lo = a.window > 0 ? max(int64_t{0}, t - a.window + 1) : 0;
  return {b, t, lo, t - lo + 1};
}
__device__ bool Allowed(const AttentionRows& a, const QueryRow& q, int64_t j) {
  const int64_t base = q.b * a.seq;
  if (a.doc_ids && a.doc_ids[base + j] != a.doc_ids[base + q.t]) return false;
  if (a.key_valid && !a.key_valid[base + j]) return false;
  return true;
}
// Whether any lane of this half-warp saw `mine` true (the whole warp calls it).
__device__ bool HalfWarpAny(bool mine) {
  const unsigned ballot = __ballot_sync(0xFFFFFFFFu, mine);
  const unsigned half = (threadIdx.x & 16u) ? (ballot >> 16) : (ballot & 0xFFFFu);
  return half != 0;
}

// x[j] = +0 for j outside [lo, t]. Inside, each lane touches only the elements j − lo ≡ lane
// (mod 16) that its own reductions read, so no lane overwrites what another still reads.
__device__ void ZeroOutside(float* x, const QueryRow& q, int64_t T, unsigned lane) {
  for (int64_t j = lane; j < q.lo; j += 16) x[j] = 0.0f;
  for (int64_t j = q.t + 1 + lane; j < T; j += 16) x[j] = 0.0f;
}

__global__ void SoftmaxKernel(AttentionRows a, int64_t rows, const float* S, float* P) {
  const int64_t row = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / 16;
  const bool live = row < rows;
  const QueryRow q = RowOf(a, live ? row : 0);
  const unsigned lane = threadIdx.x & 15u;
  const int64_t T = a.seq, n = live ? q.len : 0;
  float* p = P + (live ? row : 0) * T;
  const float* s = S + (live ? row : 0) * T;
  // Scores on the row's range (masked keys -inf), into P: each lane keeps to its own j − lo
  // mod 16, the elements its reductions read.
  bool any = false;
  for (int64_t i = lane; i < n; i += 16) {
    const int64_t j = q.lo + i;
    const bool ok = Allowed(a, q, j);
    any = any || ok;
    p[j] = ok ? __fmul_rn(s[j], a.scale) : -HUGE_VALF;
  }
  any = HalfWarpAny(any);
  float* r = p + q.lo;
  const float m = HalfWarpMax(r, any ? n : 0);
  const float sum = HalfWarpReduce(
      any ? n : 0, 0.0f,
      [&](float acc, int64_t i) {
        const float e = DevExp(__fsub_rn(r[i], m));  // masked keys: Exp(-inf) = +0
        r[i] = e;
        return __fadd_rn(acc, e);
      },
      false);
  if (!live) return;
  const float inv = __fdiv_rn(1.0f, sum);
  for (int64_t i = lane; i < n; i += 16) r[i] = any ? __fmul_rn(r[i], inv) : 0.0f;
  ZeroOutside(p, q, T, lane);
}

// dP'_j = dP_j on allowed keys of [lo, t], 0 on the others; D = Dot(P[lo..t], dP'[lo..t]);
// dS_j = (P_j·(dP_j − D))·scale on allowed keys, +0 on every other j in [0, T).
__global__ void ScoreGradKernel(AttentionRows a, int64_t rows, const float* P, float* dP) {
  const int64_t row = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / 16;
  const bool live = row < rows;
  const QueryRow q = RowOf(a, live ? row : 0);
  const int64_t T = a.seq, n = live ? q.len : 0;
  const float* pr = P + (live ? row : 0) * T;
  float* d = dP + (live ? row : 0) * T;
  const float D = HalfWarpReduce(
      n, 0.0f,
      [&](float acc, int64_t i) {
        const int64_t j = q.lo + i;
        const float dp = Allowed(a, q, j) ? d[j] : 0.0f;
        return __fmaf_rn(pr[j], dp, acc);
      },
      false);
  if (!live) return;
  const unsigned lane = threadIdx.x & 15u;
  for (int64_t i = lane; i < n; i += 16) {
    const int64_t j = q.lo + i;
    d[j] = Allowed(a, q, j) ? __fmul_rn(__fmul_rn(pr[j], __fsub_rn(d[j], D)), a.scale) : 0.0f;
  }
  ZeroOutside(d, q, T, lane);
}

unsigned Blocks(int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace

void LaunchAttentionSoftmax(const AttentionRows& a, const float* S, float* P) {
  const int64_t rows = a.batch * a.heads * a.queries;
  if (rows > 0) SoftmaxKernel<<<Blocks(rows), kThreads>>>(a, rows, S, P);
}
void LaunchAttentionScoreGrad(const AttentionRows& a, const float* P, float* dP_to_dS) {
  const int64_t rows = a.batch * a.heads * a.queries;
  if (rows > 0) ScoreGradKernel<<<Blocks(rows), kThreads>>>(a, rows, P, dP_to_dS);
}

}  // namespace trail::repops::cuda
