// The canonical fp32 GEMM on the GPU (gemm_tiling.h says how it is tiled and why that keeps
// docs/repops.md §3's order).
#include "repops/cuda/gemm_tiling.h"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

template <bool kAContig, bool kBContig>
__global__ void __launch_bounds__(kGemmThreads)
    GemmKernel(GemmShape g, const float* a, const float* b, float* c) {
  __shared__ __align__(16) TileA As;
  __shared__ __align__(16) TileB Bs;
  const int t = threadIdx.x;
  const int64_t bz = blockIdx.z;
  a += bz * g.a_batch;
  b += bz * g.b_batch;
  c += bz * g.c_batch;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  Accumulators acc;
  LoadAccumulators(g, c, i0, j0, t, acc);
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    StageTile<kAContig, kBContig>(g, a, b, i0, j0, k0, t, As, Bs);
    __syncthreads();
    const int depth = TileDepth(g.K, k0);
    if (depth == kTileK) {
      MultiplyTile(As, Bs, kTileK, t, acc);  // a constant trip count: fully unrolled
    } else {
      MultiplyTile(As, Bs, depth, t, acc);
    }
    __syncthreads();
  }
  StoreAccumulators(g, c, i0, j0, t, acc);
}

}  // namespace

void LaunchGemm(const GemmShape& g, const float* a, const float* b, float* c) {
  if (g.M == 0 || g.N == 0 || g.batches == 0) return;
  const dim3 grid(static_cast<unsigned>(GemmBlocksN(g)), static_cast<unsigned>(GemmBlocksM(g)),
                  static_cast<unsigned>(g.batches));
  const bool ak = AReadAlongK(g), bk = BReadAlongK(g);
  if (ak && bk) GemmKernel<true, true><<<grid, kGemmThreads>>>(g, a, b, c);
  if (ak && !bk) GemmKernel<true, false><<<grid, kGemmThreads>>>(g, a, b, c);
  if (!ak && bk) GemmKernel<false, true><<<grid, kGemmThreads>>>(g, a, b, c);
  if (!ak && !bk) GemmKernel<false, false><<<grid, kGemmThreads>>>(g, a, b, c);
}

}  // namespace trail::repops::cuda
