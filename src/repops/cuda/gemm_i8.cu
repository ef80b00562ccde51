// The int8 GEMM on the GPU: C[i, j] = Σ_p int32(A[i, p])·int32(B[p, j]), exact in int32 (the
// caller checks K·127² < 2^31), so any order and grouping gives the same sum; then the float
// epilogue of docs/repops.md §3, each operation rounded on its own.
#include <mma.h>

#include <cstdlib>

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

// out[i, j] (+)= (float(c)·row_scale[i])·col_scale[j], each operation rounded on its own.
__device__ __forceinline__ void Epilogue(const GemmI8Shape& g, int32_t c, int64_t i, int64_t j,
                                         float* out) {
  float v = __int2float_rn(c);
  if (g.row_scale) v = __fmul_rn(v, g.row_scale[i]);
  if (g.col_scale) v = __fmul_rn(v, g.col_scale[j]);
  float* o = out + i * g.N + j;
  *o = g.accumulate ? __fadd_rn(*o, v) : v;
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
      if (i < g.M && j < g.N) Epilogue(g, acc[r][q], i, j, out);
    }
}

// The same product on tensor cores, through WMMA's 16 × 16 × 16 signed-int8 fragments (int32
// accumulators: still exact). A block computes a 128 × 128 tile with 8 warps of 32 × 64 each;
// K advances in steps of 32, staged as two 16-wide halves with k contiguous for both operands
// (A as matrix_a row-major, B as matrix_b column-major), every fragment pointer 32-byte
// aligned as WMMA requires. Finished accumulators pass through shared memory for the epilogue.
constexpr int kWarpsM = 4, kWarpsN = 2, kFragsM = 2, kFragsN = 4;  // warp tile 32 × 64
static_assert(kWarpsM * kWarpsN * 32 == kThreads8 && kWarpsM * kFragsM * 16 == kTileM8 &&
              kWarpsN * kFragsN * 16 == kTileN8);

__global__ void __launch_bounds__(kThreads8)
    GemmI8WmmaKernel(GemmI8Shape g, const int8_t* a, const int8_t* b, float* out) {
  using namespace nvcuda;
  __shared__ __align__(32) int8_t As[2][kTileM8][16];
  __shared__ __align__(32) int8_t Bs[2][kTileN8][16];
  __shared__ __align__(32) int32_t Cs[kThreads8 / 32][16][16];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTileM8;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kTileN8;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int32_t> acc[kFragsM][kFragsN];
  for (int r = 0; r < kFragsM; ++r)
    for (int q = 0; q < kFragsN; ++q) wmma::fill_fragment(acc[r][q], 0);
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK8) {
    // 128 rows × 32 k of each operand: 16 bytes a thread each, zero outside the matrices.
    for (int e = t; e < kTileM8 * kTileK8; e += kThreads8) {
      const int mn = e / kTileK8, k = e % kTileK8;
      const int64_t ai = i0 + mn, bj = j0 + mn, p = k0 + k;
      As[k / 16][mn][k % 16] = (ai < g.M && p < g.K) ? a[ai * g.a_rs + p * g.a_cs] : int8_t{0};
      Bs[k / 16][mn][k % 16] = (bj < g.N && p < g.K) ? b[p * g.b_rs + bj * g.b_cs] : int8_t{0};
    }
    __syncthreads();
    for (int h = 0; h < 2; ++h) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb[kFragsN];
      for (int r = 0; r < kFragsM; ++r)
        wmma::load_matrix_sync(
            fa[r], reinterpret_cast<const signed char*>(&As[h][wm * 32 + r * 16][0]), 16);
      for (int q = 0; q < kFragsN; ++q)
        wmma::load_matrix_sync(
            fb[q], reinterpret_cast<const signed char*>(&Bs[h][wn * 64 + q * 16][0]), 16);
      for (int r = 0; r < kFragsM; ++r)
        for (int q = 0; q < kFragsN; ++q) wmma::mma_sync(acc[r][q], fa[r], fb[q], acc[r][q]);
    }
    __syncthreads();
  }
  for (int r = 0; r < kFragsM; ++r)
    for (int q = 0; q < kFragsN; ++q) {
      wmma::store_matrix_sync(&Cs[warp][0][0], acc[r][q], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int64_t i = i0 + wm * 32 + r * 16 + e / 16, j = j0 + wn * 64 + q * 16 + e % 16;
        if (i < g.M && j < g.N) Epilogue(g, Cs[warp][e / 16][e % 16], i, j, out);
      }
      __syncwarp();
    }
}

}  // namespace

bool Int8TensorCores() {
  static const bool on = [] {
    const char* v = std::getenv("TRAIL_CUDA_INT8_TENSOR_CORES");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

void LaunchGemmI8(const GemmI8Shape& g, const int8_t* a, const int8_t* b, float* out,
                  Int8Kernel kernel) {
  if (g.M == 0 || g.N == 0) return;
  const dim3 grid(static_cast<unsigned>((g.N + kTileN8 - 1) / kTileN8),
                  static_cast<unsigned>((g.M + kTileM8 - 1) / kTileM8));
  if (kernel == Int8Kernel::kTensorCores || (kernel == Int8Kernel::kDefault && Int8TensorCores())) {
    GemmI8WmmaKernel<<<grid, kThreads8>>>(g, a, b, out);
    return;
  }
  const bool ak = g.a_cs == 1, bk = g.b_rs == 1 && g.b_cs != 1;
  if (ak && bk) GemmI8Kernel<true, true><<<grid, kThreads8>>>(g, a, b, out);
  if (ak && !bk) GemmI8Kernel<true, false><<<grid, kThreads8>>>(g, a, b, out);
  if (!ak && bk) GemmI8Kernel<false, true><<<grid, kThreads8>>>(g, a, b, out);
  if (!ak && !bk) GemmI8Kernel<false, false><<<grid, kThreads8>>>(g, a, b, out);
}

}  // namespace trail::repops::cuda
