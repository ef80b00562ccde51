// The int8 GEMM on the GPU: C[i, j] = Σ_p int32(A[i, p])·int32(B[p, j]), exact in int32 (the
// caller checks K·127² < 2^31), so any order and grouping gives the same sum; then the float
// epilogue of docs/repops.md §3, each operation rounded on its own.
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

constexpr int kTileM8 = 128, kTileN8 = 128, kTileK8 = 32, kThreads8 = 256;
constexpr int kThreadM8 = 8, kThreadN8 = 8, kStaged8 = kTileM8 * kTileK8 / kThreads8;  // 16

// Stages element s of thread t: along k when the operand's k index is contiguous.
__device__ __forceinline__ void Slot(bool along_k, int t, int s, int& k, int& mn) {
  if (along_k) {
    k = (t % 2) * kStaged8 + s, mn = t / 2;
  } else {
    k = t / (kTileM8 / kStaged8), mn = (t % (kTileM8 / kStaged8)) * kStaged8 + s;
  }
}

template <bool kAK, bool kBK>
__global__ void __launch_bounds__(kThreads8)
    GemmI8Kernel(GemmI8Shape g, const int8_t* a, const int8_t* b, float* out) {
  __shared__ int8_t As[kTileK8][kTileM8 + 4];
  __shared__ int8_t Bs[kTileK8][kTileN8 + 4];
  const int t = threadIdx.x;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTileM8;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kTileN8;
  const int r0 = (t / (kTileN8 / kThreadN8)) * kThreadM8,
            c0 = (t % (kTileN8 / kThreadN8)) * kThreadN8;
  int32_t acc[kThreadM8][kThreadN8] = {};
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK8) {
    for (int s = 0; s < kStaged8; ++s) {
      int k, mn;
      Slot(kAK, t, s, k, mn);
      const int64_t ai = i0 + mn, ap = k0 + k;
      As[k][mn] = (ai < g.M && ap < g.K) ? a[ai * g.a_rs + ap * g.a_cs] : int8_t{0};
      Slot(kBK, t, s, k, mn);
      const int64_t bj = j0 + mn, bp = k0 + k;
      Bs[k][mn] = (bj < g.N && bp < g.K) ? b[bp * g.b_rs + bj * g.b_cs] : int8_t{0};
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < kTileK8; ++k) {  // zero padding adds exact zeros: harmless for integers
      int32_t av[kThreadM8], bv[kThreadN8];
#pragma unroll
      for (int r = 0; r < kThreadM8; ++r) av[r] = As[k][r0 + r];
#pragma unroll
      for (int q = 0; q < kThreadN8; ++q) bv[q] = Bs[k][c0 + q];
#pragma unroll
      for (int r = 0; r < kThreadM8; ++r)
#pragma unroll
        for (int q = 0; q < kThreadN8; ++q) acc[r][q] += av[r] * bv[q];
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kThreadM8; ++r)
#pragma unroll
    for (int q = 0; q < kThreadN8; ++q) {
      const int64_t i = i0 + r0 + r, j = j0 + c0 + q;
      if (i >= g.M || j >= g.N) continue;
      float v = __int2float_rn(acc[r][q]);
      if (g.row_scale) v = __fmul_rn(v, g.row_scale[i]);
      if (g.col_scale) v = __fmul_rn(v, g.col_scale[j]);
      float* o = out + i * g.N + j;
      *o = g.accumulate ? __fadd_rn(*o, v) : v;
    }
}

}  // namespace

void LaunchGemmI8(const GemmI8Shape& g, const int8_t* a, const int8_t* b, float* out) {
  if (g.M == 0 || g.N == 0) return;
  const dim3 grid(static_cast<unsigned>((g.N + kTileN8 - 1) / kTileN8),
                  static_cast<unsigned>((g.M + kTileM8 - 1) / kTileM8));
  const bool ak = g.a_cs == 1, bk = g.b_rs == 1 && g.b_cs != 1;
  if (ak && bk) GemmI8Kernel<true, true><<<grid, kThreads8>>>(g, a, b, out);
  if (ak && !bk) GemmI8Kernel<true, false><<<grid, kThreads8>>>(g, a, b, out);
  if (!ak && bk) GemmI8Kernel<false, true><<<grid, kThreads8>>>(g, a, b, out);
  if (!ak && !bk) GemmI8Kernel<false, false><<<grid, kThreads8>>>(g, a, b, out);
}

}  // namespace trail::repops::cuda
