// The CUDA backend's GEMMs against cuBLAS on the same GPU, side by side, and its state-hash
// leaves' throughput; prints one JSON object.
//   cuda_gemm_bench [reps]
// fp32: trail's canonical GEMM (one FMA chain per output, no split-K, no tensor cores) against
// cublasSgemm in its default math mode (no TF32), at 4096³ and the gpt2-small training shapes
// (8192 tokens × 768 → 3072, and 3072 → 768), in the three layouts training uses; every trail
// result is also checked bit for bit against a one-thread-per-output FMA chain on the GPU.
// int8: trail's exact int8 GEMM (CUDA cores, and the WMMA tensor-core kernel) against
// cublasGemmEx (int8 in, int32 compute), results checked equal. Times are medians of `reps` runs
// each, after warm-up, with CUDA events. Builds with the CUDA toolkit alone (scripts/check-cuda.sh
// compiles it on the GPU machine).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "repops/cuda/launch.h"

using namespace trail::repops::cuda;

namespace {

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_gemm_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cuda_gemm_bench: %s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

template <class T>
T* Alloc(size_t n) {
  void* p = nullptr;
  Check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  return static_cast<T*>(p);
}

__global__ void FillKernel(float* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = (static_cast<float>(h >> 8) * 0x1p-24f - 0.5f);  // uniform in [-0.5, 0.5)
  }
}
__global__ void FillI8Kernel(int8_t* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = static_cast<int8_t>(static_cast<int>(h % 255) - 127);
  }
}

// The canonical order written as plainly as possible: a thread an output, p ascending.
__global__ void ReferenceGemm(GemmShape g, const float* a, const float* b, float* c) {
  const int64_t n = g.M * g.N;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = e / g.N, j = e % g.N;
    float acc = 0.0f;
    for (int64_t p = 0; p < g.K; ++p)
      acc = __fmaf_rn(a[i * g.a_rs + p * g.a_cs], b[p * g.b_rs + j * g.b_cs], acc);
    c[i * g.ldc + j] = acc;
  }
}

template <class F>
double MedianMs(int reps, F f) {
  cudaEvent_t e0, e1;
  Check(cudaEventCreate(&e0), "event"), Check(cudaEventCreate(&e1), "event");
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    Check(cudaEventRecord(e0), "event");
    f();
    Check(cudaEventRecord(e1), "event");
    Check(cudaEventSynchronize(e1), "event");
    float t = 0;
    Check(cudaEventElapsedTime(&t, e0, e1), "event");
    ms.push_back(t);
  }
  Check(cudaGetLastError(), "a timed launch");
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

bool SameBits(const float* x, const float* y, size_t n) {
  std::vector<float> a(n), b(n);
  Check(cudaMemcpy(a.data(), x, n * 4, cudaMemcpyDeviceToHost), "copy");
  Check(cudaMemcpy(b.data(), y, n * 4, cudaMemcpyDeviceToHost), "copy");
  return std::memcmp(a.data(), b.data(), n * 4) == 0;
}

struct Shape {
  const char* name;
  int64_t M, K, N;
};

// One fp32 shape: trail in each layout (checked against the reference) and cuBLAS.
std::string Fp32Case(cublasHandle_t h, const Shape& s, int reps) {
  const int64_t M = s.M, K = s.K, N = s.N;
  float *a = Alloc<float>(M * K), *b = Alloc<float>(K * N), *c = Alloc<float>(M * N),
        *ref = Alloc<float>(M * N);
  FillKernel<<<1024, 256>>>(a, M * K, 1);
  FillKernel<<<1024, 256>>>(b, K * N, 2);
  // The same buffers read as each layout: X·W (b [K,N]), dY·Wᵀ (b as [N,K]), Xᵀ·dY (a as [K,M]).
  const GemmShape layouts[3] = {
      {.M = M, .N = N, .K = K, .a_rs = K, .a_cs = 1, .b_rs = N, .b_cs = 1, .ldc = N},
      {.M = M, .N = N, .K = K, .a_rs = K, .a_cs = 1, .b_rs = 1, .b_cs = K, .ldc = N},
      {.M = M, .N = N, .K = K, .a_rs = 1, .a_cs = M, .b_rs = N, .b_cs = 1, .ldc = N}};
  const char* names[3] = {"matmul", "matmul_bt", "matmul_at"};
  const double flop = 2.0 * M * N * K;
  std::string out = std::string("{\"shape\": \"") + s.name + "\", \"M\": " + std::to_string(M) +
                    ", \"K\": " + std::to_string(K) + ", \"N\": " + std::to_string(N);
  for (int l = 0; l < 3; ++l) {
    const double ms = MedianMs(reps, [&] { LaunchGemm(layouts[l], a, b, c); });
    ReferenceGemm<<<4096, 256>>>(layouts[l], a, b, ref);
    Check(cudaDeviceSynchronize(), "reference");
    out += std::string(", \"") + names[l] + "_ms\": " + std::to_string(ms) + ", \"" + names[l] +
           "_tflops\": " + std::to_string(flop / ms / 1e9) + ", \"" + names[l] +
           "_bitwise\": " + (SameBits(c, ref, M * N) ? "true" : "false");
  }
  Check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "math mode");  // no TF32
  const float one = 1.0f, zero = 0.0f;
  const double cublas_ms = MedianMs(reps, [&] {
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    Check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, N, a, K, &zero, c, N),
          "cublasSgemm");
  });
  out += ", \"cublas_ms\": " + std::to_string(cublas_ms) +
         ", \"cublas_tflops\": " + std::to_string(flop / cublas_ms / 1e9) + "}";
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref);
  return out;
}

// One int8 shape: trail (B as [K,N] and as Bᵀ [N,K]) and cublasGemmEx int8 → int32.
std::string Int8Case(cublasHandle_t h, const Shape& s, int reps) {
  const int64_t M = s.M, K = s.K, N = s.N;
  int8_t *a = Alloc<int8_t>(M * K), *b = Alloc<int8_t>(K * N);
  float* c = Alloc<float>(M * N);
  int32_t* ci = Alloc<int32_t>(M * N);
  FillI8Kernel<<<1024, 256>>>(a, M * K, 3);
  FillI8Kernel<<<1024, 256>>>(b, K * N, 4);
  const double flop = 2.0 * M * N * K;
  const GemmI8Shape bt{.M = M, .N = N, .K = K, .a_rs = K, .a_cs = 1, .b_rs = 1, .b_cs = K};
  const GemmI8Shape bn{.M = M, .N = N, .K = K, .a_rs = K, .a_cs = 1, .b_rs = N, .b_cs = 1};
  const double bn_ms = MedianMs(reps, [&] { LaunchGemmI8(bn, a, b, c, Int8Kernel::kCudaCores); });
  // The tensor-core kernel's sums must equal the CUDA-core kernel's (both exact).
  float* tc = Alloc<float>(M * N);
  const double tc_ms =
      MedianMs(reps, [&] { LaunchGemmI8(bt, a, b, tc, Int8Kernel::kTensorCores); });
  const double bt_ms = MedianMs(reps, [&] { LaunchGemmI8(bt, a, b, c, Int8Kernel::kCudaCores); });
  const bool tc_equal = SameBits(tc, c, M * N);
  cudaFree(tc);
  const int32_t one = 1, zero = 0;
  const double cublas_ms = MedianMs(reps, [&] {
    // Column-major Cᵀ [N, M] = (Bᵀ stored [N,K] read transposed)ᵀ... with b as Bᵀ [N, K].
    Check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_8I, K, a, CUDA_R_8I, K,
                       &zero, ci, CUDA_R_32I, N, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx int8");
  });
  // Exact sums: trail's float(c) equals cuBLAS's int32 rounded once.
  std::vector<int32_t> hi(M * N);
  std::vector<float> hc(M * N);
  Check(cudaMemcpy(hi.data(), ci, M * N * 4, cudaMemcpyDeviceToHost), "copy");
  Check(cudaMemcpy(hc.data(), c, M * N * 4, cudaMemcpyDeviceToHost), "copy");
  bool equal = true;
  for (int64_t i = 0; i < M * N && equal; ++i) equal = hc[i] == static_cast<float>(hi[i]);
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ci);
  return std::string("{\"shape\": \"") + s.name + "\", \"bn_ms\": " + std::to_string(bn_ms) +
         ", \"bt_ms\": " + std::to_string(bt_ms) +
         ", \"bt_tops\": " + std::to_string(flop / bt_ms / 1e9) +
         ", \"cublas_ms\": " + std::to_string(cublas_ms) +
         ", \"cublas_tops\": " + std::to_string(flop / cublas_ms / 1e9) +
         ", \"equal_to_cublas\": " + (equal ? "true" : "false") + "}";
}

// The state hash's leaves over n floats (the gpt2-small parameter count), 2^16 elements a leaf.
std::string HashCase(int64_t n, int reps) {
  float* x = Alloc<float>(n);
  FillKernel<<<1024, 256>>>(x, n, 5);
  const int64_t leaves = (n + 65535) / 65536;
  std::vector<DeviceLeafChunk> host(leaves);
  for (int64_t i = 0; i < leaves; ++i)
    host[i] = {x + i * 65536, i, std::min<int64_t>(65536, n - i * 65536)};
  DeviceLeafChunk* dev = Alloc<DeviceLeafChunk>(leaves);
  Check(cudaMemcpy(dev, host.data(), leaves * sizeof host[0], cudaMemcpyHostToDevice), "copy");
  uint8_t* digests = Alloc<uint8_t>(leaves * 32);
  const uint32_t key[8] = {1, 2, 3, 4, 5, 6, 7, 8};  // the cost does not depend on the key
  const double ms = MedianMs(reps, [&] { LaunchChunkLeaves(dev, leaves, key, digests); });
  cudaFree(x), cudaFree(dev), cudaFree(digests);
  return "{\"elements\": " + std::to_string(n) + ", \"ms\": " + std::to_string(ms) +
         ", \"gb_s\": " + std::to_string(4.0 * n / ms / 1e6) + "}";
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "device");
  cublasHandle_t h;
  Check(cublasCreate(&h), "cublasCreate");
  const Shape shapes[] = {{"4096^3", 4096, 4096, 4096},
                          {"gpt2-small 768->3072 (8192 tokens)", 8192, 768, 3072},
                          {"gpt2-small 3072->768 (8192 tokens)", 8192, 3072, 768}};
  std::string fp32 = "[", int8 = "[";
  for (const Shape& s : shapes) {
    fp32 += (fp32.size() > 1 ? ", " : "") + Fp32Case(h, s, reps);
    int8 += (int8.size() > 1 ? ", " : "") + Int8Case(h, s, reps);
    std::fprintf(stderr, "cuda_gemm_bench: %s done\n", s.name);
  }
  const std::string hash = HashCase(124439808, reps);
  std::printf("{\"device\": \"%s\", \"reps\": %d, \"fp32\": %s], \"int8\": %s], \"hash\": %s}\n",
              prop.name, reps, fp32.c_str(), int8.c_str(), hash.c_str());
  cublasDestroy(h);
  return 0;
}
