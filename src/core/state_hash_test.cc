#include "core/state_hash.h"

#include <blake3.h>

#include <bit>
#include <cstring>

#include <gtest/gtest.h>

#include "core/error.h"

namespace trail {
namespace {

TEST(StateDigest, IndependentOfOrderAndSensitiveToEveryTensor) {
  Tensor a = Tensor::Of<float>("a", {4}), b = Tensor::Of<float>("b", {4}),
         c = Tensor::Of<float>("c", {4});
  const Tensor* abc[] = {&a, &b, &c};
  const Tensor* cab[] = {&c, &a, &b};
  const Digest root = StateDigest(abc);
  EXPECT_EQ(root, StateDigest(cab));
  b.data<float>()[3] = 1.0f;
  EXPECT_NE(root, StateDigest(abc));
  const Tensor* dup[] = {&a, &a};
  EXPECT_THROW(StateDigest(dup), Error);
}

TEST(StateDigest, IsTheWrittenFormatOverFixedChunks) {
  // A tensor of 2.5 chunks and a small one: the root by hand from the spec in state_hash.h.
  const int64_t n = kStateChunkElements * 5 / 2;
  Tensor big = Tensor::Of<float>("w", {n / 2, 2}), small = Tensor::Of<float>("g", {3});
  for (int64_t i = 0; i < n; ++i) big.data<float>()[i] = static_cast<float>(i % 1000) * 0.5f;
  small.data<float>()[1] = -2.0f;
  const Tensor* both[] = {&big, &small};
  std::vector<Digest> leaves;
  for (int64_t off = 0, i = 0; off < n; off += kStateChunkElements, ++i) {
    leaves.push_back(ChunkLeafDigest(DType::kF32, i, big.data<float>() + off,
                                     std::min(kStateChunkElements, n - off)));
  }
  ASSERT_EQ(leaves.size(), 3u);
  const Digest w = TensorNodeDigest("w", DType::kF32, big.shape(), leaves);
  const Digest g = TensorNodeDigest(
      "g", DType::kF32, small.shape(),
      std::vector<Digest>{ChunkLeafDigest(DType::kF32, 0, small.data<float>(), 3)});
  // Sorted by name: g before w; one level: SHA-256(0x01 ‖ g ‖ w).
  Sha256Hasher h;
  const uint8_t tag = 1;
  h.Update(&tag, 1);
  h.Update(g.data(), 32);
  h.Update(w.data(), 32);
  EXPECT_EQ(StateDigest(both), h.Finish());
  // A changed element moves exactly its chunk's leaf.
  big.data<float>()[kStateChunkElements + 7] = 9.0f;
  EXPECT_NE(StateDigest(both), h.Finish());
}

// The BLAKE3 build (run-time dispatch: AVX-512, AVX2, NEON, portable) against the standard's
// digest of the empty input, and a leaf's definition spelled out: derive-key mode, context
// "trail.chunk.v3", the elements (NaN canonical), then index and count as u64 LE.
TEST(StateHash, LeavesAreBlake3DeriveKeyOverIndexCountAndElements) {
  blake3_hasher h;
  blake3_hasher_init(&h);
  Digest empty{};
  blake3_hasher_finalize(&h, empty.data(), 32);
  EXPECT_EQ(ToHex(empty), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  std::vector<float> x(3 * kStateChunkElements / 2);  // several SIMD batches of 1 KiB chunks
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f;
  x[5] = std::bit_cast<float>(0x7FC01234u);  // a NaN with a payload hashes as 0x7FC00000
  std::vector<uint8_t> bytes(4 * x.size() + 16);
  const uint64_t index = 3, count = x.size();
  std::memcpy(bytes.data(), x.data(), 4 * x.size());
  const uint32_t canonical = 0x7FC00000u;
  std::memcpy(bytes.data() + 4 * 5, &canonical, 4);
  std::memcpy(bytes.data() + 4 * x.size(), &index, 8);
  std::memcpy(bytes.data() + 4 * x.size() + 8, &count, 8);
  blake3_hasher_init_derive_key(&h, "trail.chunk.v3");
  blake3_hasher_update(&h, bytes.data(), bytes.size());
  Digest want{};
  blake3_hasher_finalize(&h, want.data(), 32);
  EXPECT_EQ(ChunkLeafDigest(DType::kF32, 3, x.data(), static_cast<int64_t>(x.size())), want);
}

TEST(ChunkLayout, ChunksTensorsAndSplitsOnChunkBoundaries) {
  const int64_t C = kStateChunkElements;
  const int64_t sizes[] = {3 * C + 5, 7, 2 * C};
  const ChunkLayout layout(sizes);
  ASSERT_EQ(layout.size(), 4 + 1 + 2);
  EXPECT_EQ(layout.elements(), 5 * C + 12);
  EXPECT_EQ(layout.chunks()[3].count, 5);
  EXPECT_EQ(layout.chunks()[4].tensor, 1);
  EXPECT_EQ(layout.chunks()[5].flat, 3 * C + 12);
  for (int64_t parts = 1; parts <= 9; ++parts) {
    const std::vector<int64_t> b = layout.Split(parts);
    ASSERT_EQ(static_cast<int64_t>(b.size()), parts + 1);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(b.back(), layout.size());
    for (int64_t q = 0; q < parts; ++q) EXPECT_LE(b[q], b[q + 1]);
  }
  // Two parts: the boundary is the first chunk starting at or after half the elements.
  EXPECT_EQ(layout.Split(2)[1], 3);
}

}  // namespace
}  // namespace trail
