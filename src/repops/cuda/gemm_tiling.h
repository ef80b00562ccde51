// The fp32 GEMM's tiling on the GPU (gemm.cu), as plain functions that host code can call too,
// so tests run the kernel's index arithmetic on the CPU and check it against the canonical order
// (docs/repops.md §3): every output is one FMA chain over p = 0..K-1 in ascending order, carried
// by one thread in a register from C (accumulate) or +0. No split-K: a block owns whole outputs
// and walks K in tiles of kTileK; the last tile is walked only to K, never padded (a padded term
// fma(0, 0, acc) would turn a -0 accumulator into +0).
//
// A block computes a kTileM × kTileN tile of C with kGemmThreads threads; thread t owns the
// kThreadM × kThreadN outputs at rows ThreadRow0(t) + r, columns ThreadCol0(t) + c of the tile.
// Each K tile is staged in shared memory as As[k][i] and Bs[k][j]; thread t stages four
// elements of each, at slots ASlot(t, s) and BSlot(t, s) for s < 4, chosen so that consecutive
// threads read consecutive addresses of whichever index is contiguous in memory.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TRAIL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TRAIL_HOST_DEVICE inline
#endif

namespace trail::repops::cuda {

inline constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
inline constexpr int kThreadM = 8, kThreadN = 8, kGemmThreads = 256;
inline constexpr int kStagedPerThread = kTileM * kTileK / kGemmThreads;  // 4, also for B
static_assert(kTileM / kThreadM * (kTileN / kThreadN) == kGemmThreads);
static_assert(kTileN * kTileK / kGemmThreads == kStagedPerThread);

// C[b][i, j] (+)= Σ_p A[b][i, p]·B[b][p, j] with
//   A[b][i, p] = a[b·a_batch + i·a_rs + p·a_cs],  B[b][p, j] = b[b·b_batch + p·b_rs + j·b_cs],
//   C[b][i, j] = c[b·c_batch + i·ldc + j].
struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, ldc = 0;
  int64_t a_batch = 0, b_batch = 0, c_batch = 0;
  int64_t batches = 1;
  bool accumulate = false;
};

TRAIL_HOST_DEVICE int ThreadRow0(int t) { return (t / (kTileN / kThreadN)) * kThreadM; }
TRAIL_HOST_DEVICE int ThreadCol0(int t) { return (t % (kTileN / kThreadN)) * kThreadN; }

// A staged element: depth k inside the K tile, row (of A) or column (of B) mn inside the tile.
struct TileSlot {
  int k, mn;
};
// A's slot s of thread t. k_contiguous: A[i, p] and A[i, p+1] are adjacent (a_cs == 1), so
// threads pair up along a row; otherwise (A given transposed) a warp reads along i.
TRAIL_HOST_DEVICE TileSlot ASlot(bool k_contiguous, int t, int s) {
  if (k_contiguous) return {(t % 2) * kStagedPerThread + s, t / 2};
  return {t / (kTileM / kStagedPerThread),
          (t % (kTileM / kStagedPerThread)) * kStagedPerThread + s};
}
// B's slot s of thread t. k_contiguous: B[p, j] and B[p+1, j] adjacent (B given as Bᵀ).
TRAIL_HOST_DEVICE TileSlot BSlot(bool k_contiguous, int t, int s) {
  if (k_contiguous) return {(t % 2) * kStagedPerThread + s, t / 2};
  return {t / (kTileN / kStagedPerThread),
          (t % (kTileN / kStagedPerThread)) * kStagedPerThread + s};
}
// How many of the K tile starting at k0 are real (the last tile is shorter).
TRAIL_HOST_DEVICE int TileDepth(int64_t K, int64_t k0) {
  return K - k0 < kTileK ? static_cast<int>(K - k0) : kTileK;
}
// fma(a, b, c), one rounding: the GPU's instruction on the device, std::fma on the host.
TRAIL_HOST_DEVICE float FusedMulAdd(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// x[0..8) = p[0..8): two 16-byte shared-memory loads on the device (p is 16-byte aligned: rows
// of 132 floats, offsets multiples of 8), a plain copy on the host.
TRAIL_HOST_DEVICE void Load8(const float* p, float* x) {
#if defined(__CUDA_ARCH__)
  const float4 lo = reinterpret_cast<const float4*>(p)[0],
               hi = reinterpret_cast<const float4*>(p)[1];
  x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w, x[4] = hi.x, x[5] = hi.y, x[6] = hi.z,
  x[7] = hi.w;
#else
  for (int i = 0; i < 8; ++i) x[i] = p[i];
#endif
}
static_assert(kThreadM == 8 && kThreadN == 8 && (kTileM + 4) % 4 == 0 && (kTileN + 4) % 4 == 0);

// The block's steps, each run by every thread t of the block between barriers; gemm.cu's kernel
// is these in order, and tests run them on the host thread by thread.
using TileA = float[kTileK][kTileM + 4];  // +4: rows start on different banks, 16-byte aligned
using TileB = float[kTileK][kTileN + 4];
using Accumulators = float[kThreadM][kThreadN];

// acc = C's values (accumulate) or +0, for the block at (i0, j0) of C.
TRAIL_HOST_DEVICE void LoadAccumulators(const GemmShape& g, const float* c, int64_t i0, int64_t j0,
                                        int t, Accumulators& acc) {
  const int r0 = ThreadRow0(t), c0 = ThreadCol0(t);
  for (int r = 0; r < kThreadM; ++r)
    for (int q = 0; q < kThreadN; ++q) {
      const int64_t i = i0 + r0 + r, j = j0 + c0 + q;
      acc[r][q] = (g.accumulate && i < g.M && j < g.N) ? c[i * g.ldc + j] : 0.0f;
    }
}
// Thread t's share of staging the K tile at k0 (+0 outside the matrices: never used).
template <bool kAContig, bool kBContig>
TRAIL_HOST_DEVICE void StageTile(const GemmShape& g, const float* a, const float* b, int64_t i0,
                                 int64_t j0, int64_t k0, int t, TileA& As, TileB& Bs) {
  for (int s = 0; s < kStagedPerThread; ++s) {
    const TileSlot sa = ASlot(kAContig, t, s);
    const int64_t ai = i0 + sa.mn, ap = k0 + sa.k;
    As[sa.k][sa.mn] = (ai < g.M && ap < g.K) ? a[ai * g.a_rs + ap * g.a_cs] : 0.0f;
    const TileSlot sb = BSlot(kBContig, t, s);
    const int64_t bj = j0 + sb.mn, bp = k0 + sb.k;
    Bs[sb.k][sb.mn] = (bj < g.N && bp < g.K) ? b[bp * g.b_rs + bj * g.b_cs] : 0.0f;
  }
}
// One step of every chain thread t owns: acc = fma(A[i, k0 + k], B[k0 + k, j], acc) for
// k = 0 .. depth-1 in ascending order.
TRAIL_HOST_DEVICE void MultiplyTile(const TileA& As, const TileB& Bs, int depth, int t,
                                    Accumulators& acc) {
  const int r0 = ThreadRow0(t), c0 = ThreadCol0(t);
  for (int k = 0; k < depth; ++k) {
    float av[kThreadM], bv[kThreadN];
    Load8(&As[k][r0], av);
    Load8(&Bs[k][c0], bv);
    for (int r = 0; r < kThreadM; ++r)
      for (int q = 0; q < kThreadN; ++q) acc[r][q] = FusedMulAdd(av[r], bv[q], acc[r][q]);
  }
}
// C = acc inside the matrix.
TRAIL_HOST_DEVICE void StoreAccumulators(const GemmShape& g, float* c, int64_t i0, int64_t j0,
                                         int t, const Accumulators& acc) {
  const int r0 = ThreadRow0(t), c0 = ThreadCol0(t);
  for (int r = 0; r < kThreadM; ++r)
    for (int q = 0; q < kThreadN; ++q) {
      const int64_t i = i0 + r0 + r, j = j0 + c0 + q;
      if (i < g.M && j < g.N) c[i * g.ldc + j] = acc[r][q];
    }
}
// Which layout's kernel a shape takes: A read along k, B read along k.
inline bool AReadAlongK(const GemmShape& g) { return g.a_cs == 1; }
inline bool BReadAlongK(const GemmShape& g) { return g.b_rs == 1 && g.b_cs != 1; }

// Blocks along N and M.
inline int64_t GemmBlocksN(const GemmShape& g) { return (g.N + kTileN - 1) / kTileN; }
inline int64_t GemmBlocksM(const GemmShape& g) { return (g.M + kTileM - 1) / kTileM; }

}  // namespace trail::repops::cuda
