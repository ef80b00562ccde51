#include "repops/gemm.h"
#include "repops/gemm_i8_amx.h"
#include "repops/gemm_i8_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/philox.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::Rand;

// C = A·B in float64 for the three layouts.
std::vector<double> Ref(char layout, const std::vector<float>& a, const std::vector<float>& b,
                        int64_t M, int64_t K, int64_t N, std::vector<double>* abs_sum) {
  std::vector<double> c(M * N, 0.0);
  abs_sum->assign(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t p = 0; p < K; ++p) {
        const double av = layout == 'A' ? a[p * M + i] : a[i * K + p];
        const double bv = layout == 'T' ? b[j * K + p] : b[p * N + j];
        c[i * N + j] += av * bv;
        (*abs_sum)[i * N + j] += std::fabs(av * bv);
      }
  return c;
}

void RunLayout(char layout, const std::vector<float>& a, const std::vector<float>& b, int64_t M,
               int64_t K, int64_t N, std::vector<float>& c, bool acc = false) {
  if (layout == 'N') MatMul(a.data(), b.data(), c.data(), M, K, N, acc);
  if (layout == 'T') MatMulBT(a.data(), b.data(), c.data(), M, K, N, acc);
  if (layout == 'A') MatMulAT(a.data(), b.data(), c.data(), M, K, N, acc);
}

struct Dims {
  int64_t M, K, N;
};
const Dims kAwkward[] = {{1, 1, 1},       {3, 17, 255},   {17, 1000, 3},  {255, 3, 17},
                         {64, 255, 1000}, {1, 1000, 255}, {100, 1000, 17}};

// An FMA chain of K steps has at most K roundings, each of relative size 2^-24 of a partial sum
// bounded by Σ|a·b|; so |c - c64| <= K * 2^-24 * Σ|a·b| (the classic γ_K bound).
TEST(Gemm, MatchesFloat64OnAwkwardSizes) {
  for (char layout : {'N', 'T', 'A'})
    for (Dims d : kAwkward) {
      const auto a = Rand(d.M * d.K, 1), b = Rand(d.K * d.N, 2);
      std::vector<float> c(d.M * d.N);
      RunLayout(layout, a, b, d.M, d.K, d.N, c);
      std::vector<double> abs_sum;
      const auto ref = Ref(layout, a, b, d.M, d.K, d.N, &abs_sum);
      for (int64_t i = 0; i < d.M * d.N; ++i)
        ASSERT_LE(std::fabs(c[i] - ref[i]), d.K * 0x1p-24 * abs_sum[i] + 1e-30)
            << layout << " " << d.M << "x" << d.K << "x" << d.N << " at " << i;
    }
}

TEST(Gemm, AccumulateContinuesTheChain) {
  const int64_t M = 7, K = 900, N = 33;  // K crosses a K-block boundary
  const auto a = Rand(M * K, 3), b = Rand(K * N, 4);
  std::vector<float> full(M * N), half(M * N);
  RunLayout('N', a, b, M, K, N, full);
  // The same chain split in two calls: first 450 products, then 450 more from that state.
  std::vector<float> a1(M * 450), a2(M * 450), b1(b.begin(), b.begin() + 450 * N),
      b2(b.begin() + 450 * N, b.end());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t p = 0; p < 450; ++p)
      a1[i * 450 + p] = a[i * K + p], a2[i * 450 + p] = a[i * K + 450 + p];
  RunLayout('N', a1, b1, M, 450, N, half);
  RunLayout('N', a2, b2, M, 450, N, half, true);
  EXPECT_EQ(testing::HashOf(full), testing::HashOf(half));
}

TEST(Gemm, BitwiseAcrossBackendsAndThreads) {
  for (char layout : {'N', 'T', 'A'}) {
    const int64_t M = 50, K = 800, N = 3080;  // crosses the M, K and N blocks
    const auto a = Rand(M * K, 5), b = Rand(K * N, 6);
    const auto results = testing::OnEveryBackend<std::string>([&] {
      std::vector<float> c(M * N);
      RunLayout(layout, a, b, M, K, N, c);
      return testing::HashOf(c);
    });
    for (const auto& [label, h] : results)
      EXPECT_EQ(h, results[0].second) << layout << " " << label;
  }
}

// A few rows (a decoder's step takes its own path: fewer rows than a register tile) have the
// bits of the same rows inside a batch of 64, in every layout, accumulating or not, with K
// crossing a K block and N not a multiple of a panel, on every SIMD target.
TEST(Gemm, FewRowsHaveTheBitsOfTheSameRowsInABatch) {
  const int64_t Mbig = 64, K = 1000, N = 131;
  const auto a = Rand(Mbig * K, 17), b = Rand(K * N, 18), c0 = Rand(Mbig * N, 19);
  const SimdTarget best = BestSimdTarget();
  for (const SimdTarget& target : AvailableSimdTargets()) {
    UseSimdTarget(target);
    for (char layout : {'N', 'T', 'A'}) {
      for (bool acc : {false, true}) {
        std::vector<float> big = c0;
        RunLayout(layout, a, b, Mbig, K, N, big, acc);
        for (int64_t M = 1; M <= 6; ++M) {
          // The first M rows of A (for 'A', stored [K, M]: the first M of each depth's row).
          std::vector<float> rows(M * K);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t p = 0; p < K; ++p)
              (layout == 'A' ? rows[p * M + i] : rows[i * K + p]) =
                  layout == 'A' ? a[p * Mbig + i] : a[i * K + p];
          std::vector<float> small(c0.begin(), c0.begin() + M * N);
          RunLayout(layout, rows, b, M, K, N, small, acc);
          EXPECT_EQ(std::memcmp(small.data(), big.data(), M * N * 4), 0)
              << target.name << " " << layout << " M=" << M << " acc=" << acc;
        }
      }
    }
  }
  UseSimdTarget(best);
}

// Row i of X·W and of dY·Wᵀ is the same computed inside a batch of 64 or alone.
TEST(Gemm, RowsIndependentOfBatchComposition) {
  const int64_t M = 64, K = 300, N = 129;
  for (char layout : {'N', 'T'}) {
    const auto a = Rand(M * K, 7), b = Rand(K * N, 8);
    std::vector<float> c(M * N);
    RunLayout(layout, a, b, M, K, N, c);
    for (int64_t i : {0, 5, 63}) {
      std::vector<float> row(a.begin() + i * K, a.begin() + (i + 1) * K), ci(N);
      RunLayout(layout, row, b, 1, K, N, ci);
      EXPECT_EQ(std::memcmp(ci.data(), c.data() + i * N, N * 4), 0) << layout << " row " << i;
    }
  }
}

TEST(Gemm, BadShapesAreClearErrors) {
  std::vector<float> a(4), b(4), c(4);
  EXPECT_THROW(MatMul(a.data(), b.data(), c.data(), -1, 2, 2), Error);
  EXPECT_THROW(MatMul(nullptr, b.data(), c.data(), 2, 2, 2), Error);
  MatMul(a.data(), b.data(), c.data(), 0, 2, 2);  // empty output: nothing to do
  c.assign(4, 5.0f);
  MatMul(nullptr, nullptr, c.data(), 2, 0, 2);  // K = 0: C = 0 (the empty chain)
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST(GemmI8, ExactAgainstInt64) {
  const int64_t M = 37, K = 1000, N = 19;
  std::vector<int8_t> a(M * K), bt(N * K);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(PhiloxWord(1, 0, i));
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int8_t>(PhiloxWord(1, 1, i));
  a[0] = -128, bt[0] = -128;
  std::vector<int8_t> b(K * N);  // the same B as [K, N]
  for (int64_t j = 0; j < N; ++j)
    for (int64_t p = 0; p < K; ++p) b[p * N + j] = bt[j * K + p];
  const auto results = testing::OnEveryBackend<std::vector<int32_t>>([&] {
    std::vector<int32_t> c(M * N), cb(M * N);
    ActiveKernels().gemm_i8(
        {.M = M, .N = N, .K = K, .a = a.data(), .bt = bt.data(), .c = c.data()});
    ActiveKernels().gemm_i8({.M = M, .N = N, .K = K, .a = a.data(), .c = cb.data(), .b = b.data()});
    c.insert(c.end(), cb.begin(), cb.end());
    return c;
  });
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t ref = 0;
      for (int64_t p = 0; p < K; ++p) ref += int64_t{a[i * K + p]} * bt[j * K + p];
      for (const auto& [label, c] : results) {
        ASSERT_EQ(c[i * N + j], ref) << label;
        ASSERT_EQ(c[M * N + i * N + j], ref) << label << ", B as [K, N]";
      }
    }
}

// Every kernel against an int64 reference on the values that break shortcuts (gemm_i8_check.h),
// on every SIMD target with 1, 2 and 7 threads.
TEST(GemmI8, ExtremeValuesOnEveryShapeAndLayout) {
  for (const auto& [label, failures] : testing::OnEveryBackend<std::vector<std::string>>(
           [] { return GemmI8ExactnessFailures(ActiveKernels()); })) {
    for (const std::string& f : failures) ADD_FAILURE() << label << ": " << f;
  }
}

// The check itself finds a kernel that is wrong: one that drops the last depth.
TEST(GemmI8, ExactnessCheckCatchesAWrongKernel) {
  Kernels wrong = ActiveKernels();
  wrong.gemm_i8 = [](const GemmI8Args& g) {
    GemmI8Args shorter = g;
    shorter.K = g.K > 1 ? g.K - 1 : g.K;
    if (g.K > 1 && g.bt != nullptr) return;  // leaves C as it was: also wrong
    ActiveKernels().gemm_i8(shorter);
  };
  EXPECT_FALSE(GemmI8ExactnessFailures(wrong).empty());
}

// The AMX path against an int64 reference and the VNNI/portable path of the same backend, on
// shapes that leave every kind of edge: depths not a multiple of 4 or 64, rows not a multiple
// of 16 or 32, columns not a multiple of 16 or 32, one row, one column, one depth.
TEST(GemmI8, AmxTilesGiveTheExactSums) {
  if (!AmxInt8Available()) GTEST_SKIP() << "this CPU or OS offers no AMX-INT8";
  struct Shape {
    int64_t M, K, N;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{37, 1000, 19}, Shape{32, 64, 32}, Shape{33, 65, 33},
                        Shape{200, 130, 70}, Shape{129, 384, 1536}, Shape{5, 2048, 100}}) {
    const int64_t M = s.M, K = s.K, N = s.N;
    std::vector<int8_t> a(M * K), bt(N * K), b(K * N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(PhiloxWord(2, 0, i));
    for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int8_t>(PhiloxWord(2, 1, i));
    a[0] = -128, bt[0] = -128;
    for (int64_t j = 0; j < N; ++j)
      for (int64_t p = 0; p < K; ++p) b[p * N + j] = bt[j * K + p];
    std::vector<int32_t> amx(M * N, -1), amx_b(M * N, -1), other(M * N, -2);
    GemmI8Amx({M, N, K, a.data(), bt.data(), amx.data()});
    GemmI8Amx({M, N, K, a.data(), nullptr, amx_b.data(), b.data()});
    AllowAmx(false);
    ActiveKernels().gemm_i8(
        {.M = M, .N = N, .K = K, .a = a.data(), .bt = bt.data(), .c = other.data()});
    AllowAmx(true);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t ref = 0;
        for (int64_t p = 0; p < K; ++p) ref += int64_t{a[i * K + p]} * bt[j * K + p];
        const std::string at = "M=" + std::to_string(M) + " K=" + std::to_string(K) +
                               " N=" + std::to_string(N) + " at " + std::to_string(i) + "," +
                               std::to_string(j);
        ASSERT_EQ(amx[i * N + j], ref) << at;
        ASSERT_EQ(amx_b[i * N + j], ref) << at << ", B as [K, N]";
        ASSERT_EQ(other[i * N + j], ref) << at << ", without AMX";
      }
  }
}

// The float epilogue against the int32 sums dequantized by the formula, bit for bit: row and
// column scales, each alone, and accumulation into existing values; on every backend (with and
// without AMX where the CPU has it), including a reduction long enough to be done in slices.
TEST(GemmI8, FloatEpilogueEqualsTheDequantizedSums) {
  struct Shape {
    int64_t M, K, N;
  };
  for (const Shape sh : {Shape{37, 100, 19}, Shape{130, 2100, 70}}) {
    const int64_t M = sh.M, K = sh.K, N = sh.N;
    std::vector<int8_t> a(M * K), bt(N * K);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(PhiloxWord(4, 0, i));
    for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int8_t>(PhiloxWord(4, 1, i));
    std::vector<float> rs(M), cs(N), base(M * N);
    for (int64_t i = 0; i < M; ++i) rs[i] = 1e-3f * static_cast<float>(1 + i % 7);
    for (int64_t j = 0; j < N; ++j) cs[j] = 3e-2f / static_cast<float>(1 + j % 5);
    for (int64_t i = 0; i < M * N; ++i) base[i] = 0.25f * static_cast<float>(i % 11) - 1.0f;
    std::vector<int32_t> sums(M * N);
    ReferenceKernels().gemm_i8(
        {.M = M, .N = N, .K = K, .a = a.data(), .bt = bt.data(), .c = sums.data()});
    for (int form = 0; form < 4; ++form) {  // both scales; row only; column only; accumulate
      const float* row = form != 2 ? rs.data() : nullptr;
      const float* col = form != 1 ? cs.data() : nullptr;
      const bool acc = form == 3;
      std::vector<float> want = base;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          float v = static_cast<float>(sums[i * N + j]);
          if (row) v = v * row[i];
          if (col) v = v * col[j];
          want[i * N + j] = acc ? base[i * N + j] + v : v;
        }
      auto run = [&] {
        std::vector<float> out = base;
        ActiveKernels().gemm_i8({.M = M,
                                 .N = N,
                                 .K = K,
                                 .a = a.data(),
                                 .bt = bt.data(),
                                 .out = out.data(),
                                 .row_scale = row,
                                 .col_scale = col,
                                 .accumulate = acc});
        return out;
      };
      for (const auto& [label, out] : testing::OnEveryBackend<std::vector<float>>(run))
        ASSERT_EQ(std::memcmp(out.data(), want.data(), want.size() * 4), 0)
            << label << " form " << form << " K=" << K;
      if (AmxInt8Available()) {
        AllowAmx(false);
        const std::vector<float> vnni = run();
        AllowAmx(true);
        ASSERT_EQ(std::memcmp(vnni.data(), want.data(), want.size() * 4), 0) << "without AMX";
      }
    }
  }
}

}  // namespace
}  // namespace trail::repops
