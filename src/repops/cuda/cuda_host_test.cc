// The CUDA backend's host-side logic, run on the CPU (these run in every build, with or without a
// GPU): the GEMM kernel's tiling steps, thread by thread, against the canonical GEMM; the device
// BLAKE3 leaf against the BLAKE3 library; and what --device cuda does on a machine without one.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/device.h"
#include "core/error.h"
#include "core/state_hash.h"
#include "repops/cuda/blake3_leaf.h"
#include "repops/cuda/gemm_tiling.h"
#include "repops/devices.h"
#include "repops/gemm.h"
#include "repops/test_util.h"

namespace trail::repops::cuda {
namespace {

using testing::Bits;
using testing::Rand;

// gemm.cu's kernel on the host: every block, its steps in order, each step for every thread
// (the barriers between steps become the loop boundaries).
void EmulateGemm(const GemmShape& g, const float* a, const float* b, float* c) {
  const bool ak = AReadAlongK(g), bk = BReadAlongK(g);
  std::vector<Accumulators> acc(kGemmThreads);
  TileA As;
  TileB Bs;
  for (int64_t z = 0; z < g.batches; ++z)
    for (int64_t by = 0; by < GemmBlocksM(g); ++by)
      for (int64_t bx = 0; bx < GemmBlocksN(g); ++bx) {
        const float* az = a + z * g.a_batch;
        const float* bz = b + z * g.b_batch;
        float* cz = c + z * g.c_batch;
        const int64_t i0 = by * kTileM, j0 = bx * kTileN;
        for (int t = 0; t < kGemmThreads; ++t) LoadAccumulators(g, cz, i0, j0, t, acc[t]);
        for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
          for (int t = 0; t < kGemmThreads; ++t) {
            if (ak && bk) StageTile<true, true>(g, az, bz, i0, j0, k0, t, As, Bs);
            if (ak && !bk) StageTile<true, false>(g, az, bz, i0, j0, k0, t, As, Bs);
            if (!ak && bk) StageTile<false, true>(g, az, bz, i0, j0, k0, t, As, Bs);
            if (!ak && !bk) StageTile<false, false>(g, az, bz, i0, j0, k0, t, As, Bs);
          }
          for (int t = 0; t < kGemmThreads; ++t)
            MultiplyTile(As, Bs, TileDepth(g.K, k0), t, acc[t]);
        }
        for (int t = 0; t < kGemmThreads; ++t) StoreAccumulators(g, cz, i0, j0, t, acc[t]);
      }
}

TEST(CudaGemmTiling, SlotsCoverEachTileOnce) {
  for (const bool along_k : {true, false}) {
    std::set<std::pair<int, int>> a, b;
    for (int t = 0; t < kGemmThreads; ++t)
      for (int s = 0; s < kStagedPerThread; ++s) {
        const TileSlot sa = ASlot(along_k, t, s), sb = BSlot(along_k, t, s);
        ASSERT_TRUE(sa.k >= 0 && sa.k < kTileK && sa.mn >= 0 && sa.mn < kTileM);
        ASSERT_TRUE(sb.k >= 0 && sb.k < kTileK && sb.mn >= 0 && sb.mn < kTileN);
        a.insert({sa.k, sa.mn});
        b.insert({sb.k, sb.mn});
      }
    EXPECT_EQ(a.size(), size_t{kTileK * kTileM});
    EXPECT_EQ(b.size(), size_t{kTileK * kTileN});
  }
  std::set<std::pair<int, int>> outputs;
  for (int t = 0; t < kGemmThreads; ++t)
    for (int r = 0; r < kThreadM; ++r)
      for (int q = 0; q < kThreadN; ++q) outputs.insert({ThreadRow0(t) + r, ThreadCol0(t) + q});
  EXPECT_EQ(outputs.size(), size_t{kTileM * kTileN});
}

// The three layouts training uses, with and without accumulate, on sizes that leave partial
// tiles in every direction (K = 13 ends on a short K tile; K = 0 writes +0 or leaves C), give
// the CPU backend's GEMM bits. C starts with -0 and values, so a padded term would show.
TEST(CudaGemmTiling, EmulatedKernelGivesTheCanonicalBits) {
  const int64_t shapes[][3] = {{1, 1, 1},     {3, 5, 13}, {130, 129, 8},
                               {257, 67, 33}, {5, 7, 0},  {128, 128, 16}};
  for (const auto& sh : shapes) {
    const int64_t M = sh[0], N = sh[1], K = sh[2];
    std::vector<float> a = Rand(M * K, 1), b = Rand(K * N, 2);
    std::vector<float> c0 = Rand(M * N, 3);
    for (size_t i = 0; i < c0.size(); i += 3) c0[i] = -0.0f;
    // C[0, 0]'s chain is fma(-0, b ≥ 0, -0) = -0 throughout: a padded term would make it +0.
    for (int64_t p = 0; p < K; ++p) a[p] = -0.0f, b[p * N] = std::fabs(b[p * N]);
    for (const bool acc : {false, true})
      for (int layout = 0; layout < 3; ++layout) {
        // The same logical product a·b with its operands stored as each layout reads them.
        std::vector<float> at(K * M), bt(N * K);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t p = 0; p < K; ++p) at[p * M + i] = a[i * K + p];
        for (int64_t p = 0; p < K; ++p)
          for (int64_t j = 0; j < N; ++j) bt[j * K + p] = b[p * N + j];
        std::vector<float> want = c0, got = c0;
        GemmShape g{.M = M, .N = N, .K = K, .ldc = N, .accumulate = acc};
        const float *ga = a.data(), *gb = b.data();
        if (layout == 0) {
          MatMul(a.data(), b.data(), want.data(), M, K, N, acc);
          g.a_rs = K, g.a_cs = 1, g.b_rs = N, g.b_cs = 1;
        } else if (layout == 1) {
          MatMulBT(a.data(), bt.data(), want.data(), M, K, N, acc);
          g.a_rs = K, g.a_cs = 1, g.b_rs = 1, g.b_cs = K, gb = bt.data();
        } else {
          MatMulAT(at.data(), b.data(), want.data(), M, K, N, acc);
          g.a_rs = 1, g.a_cs = M, g.b_rs = N, g.b_cs = 1, ga = at.data();
        }
        EmulateGemm(g, ga, gb, got.data());
        for (int64_t i = 0; i < M * N; ++i)
          ASSERT_EQ(Bits(got[i]), Bits(want[i]))
              << "layout " << layout << " accumulate " << acc << " shape " << M << "x" << K << "x"
              << N << " element " << i;
      }
  }
}

// Batched heads, as attention uses them: each batch's product is its own GEMM.
TEST(CudaGemmTiling, BatchesAreIndependentProducts) {
  const int64_t B = 3, M = 9, N = 11, K = 10;
  const std::vector<float> a = Rand(B * M * K, 4), b = Rand(B * K * N, 5);
  std::vector<float> got(B * M * N, 1.0f), want(B * M * N, 1.0f);
  EmulateGemm({.M = M,
               .N = N,
               .K = K,
               .a_rs = K,
               .a_cs = 1,
               .b_rs = N,
               .b_cs = 1,
               .ldc = N,
               .a_batch = M * K,
               .b_batch = K * N,
               .c_batch = M * N,
               .batches = B},
              a.data(), b.data(), got.data());
  for (int64_t z = 0; z < B; ++z)
    MatMul(a.data() + z * M * K, b.data() + z * K * N, want.data() + z * M * N, M, K, N, false);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(Bits(got[i]), Bits(want[i])) << i;
}

// blake3.cu's kernel on the host: every BLAKE3 chunk's output, then the levels joined pairwise
// from the left with an odd last node carried up.
Digest EmulateLeaf(const std::vector<float>& x, int64_t index) {
  const Blake3Words key =
      Blake3ContextKey(kChunkContext, static_cast<int>(std::strlen(kChunkContext)));
  const auto count = static_cast<int64_t>(x.size());
  const auto* words = reinterpret_cast<const uint32_t*>(x.data());
  int64_t level = LeafBlake3Chunks(count);
  std::vector<Blake3Words> nodes;
  for (int64_t c = 0; c < level; ++c)
    nodes.push_back(LeafChunkOutput(words, count, index, key, c, level == 1));
  while (level > 1) {
    std::vector<Blake3Words> up;
    for (int64_t p = 0; p < level / 2; ++p)
      up.push_back(Blake3ParentOf(nodes[2 * p], nodes[2 * p + 1], key, level == 2));
    if (level % 2 == 1) up.push_back(nodes[level - 1]);
    nodes = up;
    level = static_cast<int64_t>(nodes.size());
  }
  Digest d{};
  for (int i = 0; i < 32; ++i) d[i] = static_cast<uint8_t>(nodes[0].w[i / 4] >> (8 * (i % 4)));
  return d;
}

TEST(CudaBlake3Leaf, MatchesTheLibraryOnEveryTreeShape) {
  // 0 to 4 elements: one chunk; 252 / 253: the tail crosses into a second chunk; 1020 and up:
  // trees of 4, 5, 6 and 7 chunks; 65536: the largest leaf (257 chunks).
  for (const int64_t count : {0, 1, 4, 252, 253, 1020, 1277, 1532, 1790, 12345, 65535, 65536}) {
    std::vector<float> x = Rand(count, 9);
    for (int64_t index : {int64_t{0}, int64_t{7}, int64_t{1} << 40})
      ASSERT_EQ(ToHex(EmulateLeaf(x, index)),
                ToHex(ChunkLeafDigest(DType::kF32, index, x.data(), count)))
          << count << " elements, index " << index;
  }
}

TEST(CudaBlake3Leaf, NaNsHashAsTheCanonicalNaN) {
  std::vector<float> x = Rand(300, 10);
  uint32_t payloads[] = {0x7FC00001u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu};
  for (int i = 0; i < 4; ++i) std::memcpy(&x[50 * i + 3], &payloads[i], 4);
  x[299] = std::numeric_limits<float>::infinity();  // not a NaN: hashed as it is
  EXPECT_EQ(ToHex(EmulateLeaf(x, 2)), ToHex(ChunkLeafDigest(DType::kF32, 2, x.data(), 300)));
}

// Without a GPU (as in CI), --device cuda is a clear error naming what is missing; with one,
// a backend on it names the device.
TEST(CudaDevice, SelectionSaysWhatIsMissing) {
  const std::vector<std::string> devices = AvailableDevices();
  const bool have_gpu =
      std::find(devices.begin(), devices.end(), std::string("cuda:0")) != devices.end();
  if (!have_gpu) {
    try {
      MakeBackend(ParseDevice("cuda"));
      FAIL() << "a backend on cuda:0 without a GPU";
    } catch (const Error& e) {
      const std::string what = e.what();
#ifdef TRAIL_HAVE_CUDA
      EXPECT_NE(what.find("no usable CUDA device"), std::string::npos) << what;
#else
      EXPECT_NE(what.find("built without CUDA"), std::string::npos) << what;
#endif
    }
    return;
  }
  EXPECT_EQ(MakeBackend(ParseDevice("cuda:0"))->device().ToString(), "cuda:0");
  try {
    MakeBackend(ParseDevice("cuda:99"));
    FAIL() << "a backend on cuda:99";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0 to cuda:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trail::repops::cuda
