// fp32 GEMM: trail's canonical-order GEMM against OpenBLAS sgemm, on transformer shapes, in the
// same process, interleaved; and int8 GEMM against trail's fp32 GEMM. Run it through
// bench/run_gemm_bench.sh, which sets OpenBLAS up at its best for this CPU.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/philox.h"
#include "core/thread_pool.h"
#include "repops/gemm.h"
#include "repops/kernels.h"

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);

using namespace trail;

namespace {

struct Shape {
  const char* what;
  int M, K, N;
  char layout;  // 'N': X·W, 'T': dY·Wᵀ, 'A': Xᵀ·dY
};

std::vector<float> Random(size_t n, uint64_t stream) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = UniformFromBits(PhiloxWord(1, stream, i)) - 0.5f;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  repops::UseDefaultSimdTarget();
  std::printf("trail backend %s, OpenBLAS core %s, %d interleaved reps, medians\n",
              repops::ActiveKernels().name, openblas_get_corename(), reps);
  const Shape shapes[] = {
      {"qkv/mlp-up  X·W   ", 2048, 384, 1536, 'N'},  {"mlp-down    X·W   ", 2048, 1536, 384, 'N'},
      {"dX          dY·Wᵀ ", 2048, 1536, 384, 'T'},  {"dW          Xᵀ·dY ", 384, 2048, 1536, 'A'},
      {"lm-head     X·W   ", 2048, 384, 16384, 'N'}, {"logits      X·Eᵀ  ", 2048, 384, 16384, 'T'},
      {"lm-head dX  dL·E  ", 2048, 16384, 384, 'N'}, {"lm-head dE  dLᵀ·X ", 16384, 2048, 384, 'A'},
  };
  std::printf("%-20s %5s %5s %6s %3s %10s %10s %7s %10s %7s\n", "shape", "M", "K", "N", "thr",
              "trail GF/s", "BLAS GF/s", "ratio", "i8 GOP/s", "i8/f32");
  for (int threads : {1, 2}) {
    SetKernelThreads(threads);
    openblas_set_num_threads(threads);
    for (const Shape& s : shapes) {
      // Operands in the layout each training GEMM sees them.
      const int M = s.M, K = s.K, N = s.N;
      std::vector<float> a = Random(size_t(M) * K, 1), b = Random(size_t(K) * N, 2);
      std::vector<float> c1(size_t(M) * N), c2(size_t(M) * N);
      auto ours = [&] {
        if (s.layout == 'N') repops::MatMul(a.data(), b.data(), c1.data(), M, K, N);
        if (s.layout == 'T') repops::MatMulBT(a.data(), b.data(), c1.data(), M, K, N);
        if (s.layout == 'A') repops::MatMulAT(a.data(), b.data(), c1.data(), M, K, N, false);
      };
      auto blas = [&] {
        // Same products as ours: 'T' stores W as [N,K], 'A' stores X as [K,M].
        if (s.layout == 'N')
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, a.data(), K,
                      b.data(), N, 0.f, c2.data(), N);
        if (s.layout == 'T')
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.f, a.data(), K, b.data(),
                      K, 0.f, c2.data(), N);
        if (s.layout == 'A')
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.f, a.data(), M, b.data(),
                      N, 0.f, c2.data(), N);
      };
      auto [t_ours, t_blas] = bench::InterleavedMedians(ours, blas, reps);
      double max_diff = 0;
      for (size_t i = 0; i < c1.size(); ++i)
        max_diff = std::max(max_diff, double(std::fabs(c1[i] - c2[i])));
      if (max_diff > 1e-3) std::printf("  WARNING: results differ by %g\n", max_diff);

      // int8 on the same shape against our fp32 time, in the form training calls it: float
      // output through the epilogue (row and column scales), B as [K, N] for 'N' and 'A' (the
      // weight, or the quantized dY; 'A' transposes X first, outside this timing) and as Bᵀ
      // [N, K] for 'T'.
      std::vector<int8_t> qa(size_t(M) * K), qb(size_t(N) * K);
      for (size_t i = 0; i < qa.size(); ++i) qa[i] = int8_t(PhiloxWord(3, 0, i) % 255 - 127);
      for (size_t i = 0; i < qb.size(); ++i) qb[i] = int8_t(PhiloxWord(3, 1, i) % 255 - 127);
      std::vector<int32_t> qc(size_t(M) * N);
      std::vector<float> row_scale = Random(M, 3), col_scale = Random(N, 4), qout(size_t(M) * N);
      auto int8 = [&] {
        repops::ActiveKernels().gemm_i8({.M = M,
                                         .N = N,
                                         .K = K,
                                         .a = qa.data(),
                                         .bt = s.layout == 'T' ? qb.data() : nullptr,
                                         .c = qc.data(),
                                         .b = s.layout == 'T' ? nullptr : qb.data(),
                                         .out = qout.data(),
                                         .row_scale = row_scale.data(),
                                         .col_scale = col_scale.data()});
      };
      auto [t_i8, t_f32] = bench::InterleavedMedians(int8, ours, reps);
      const double flop = 2.0 * M * N * K;
      std::printf("%-20s %5d %5d %6d %3d %10.1f %10.1f %7.2f %10.1f %7.2f\n", s.what, M, K, N,
                  threads, flop / t_ours * 1e-9, flop / t_blas * 1e-9, t_blas / t_ours,
                  flop / t_i8 * 1e-9, t_f32 / t_i8);
      std::fflush(stdout);
    }
  }
  return 0;
}
