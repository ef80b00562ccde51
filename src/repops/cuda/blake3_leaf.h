// A state-hash leaf (core/state_hash.h: ChunkLeafDigest of float32 elements) computed with
// BLAKE3 written out from its specification, in plain functions that compile for the GPU
// (blake3.cu) and for the host, where tests compare them with the BLAKE3 library.
//
// The leaf's message is the elements (little-endian, every NaN the canonical quiet NaN
// 0x7FC00000) ‖ index (u64 LE) ‖ count (u64 LE), hashed in derive-key mode under the key that
// the context "trail.chunk.v3" derives. BLAKE3 cuts a message into 1 KiB chunks of sixteen
// 64-byte blocks and joins the chunks' chaining values in a left-complete binary tree: pairing
// the nodes of each level from the left and carrying an odd last node up unchanged builds that
// same tree, so the levels can be joined in parallel.
#pragma once

#include <cstdint>

#include "repops/cuda/gemm_tiling.h"  // TRAIL_HOST_DEVICE

namespace trail::repops::cuda {

inline constexpr uint32_t kBlake3ChunkStart = 1, kBlake3ChunkEnd = 2, kBlake3Parent = 4,
                          kBlake3Root = 8, kBlake3DeriveKeyContext = 32,
                          kBlake3DeriveKeyMaterial = 64;
inline constexpr int64_t kBlake3ChunkBytes = 1024;
// The most BLAKE3 chunks a leaf of up to 2^16 elements spans: 2^18 element bytes + 16.
inline constexpr int kMaxLeafBlake3Chunks = 257;

struct Blake3Words {
  uint32_t w[8];
};

TRAIL_HOST_DEVICE uint32_t Rotr32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

TRAIL_HOST_DEVICE void Blake3G(uint32_t* s, int a, int b, int c, int d, uint32_t mx, uint32_t my) {
  s[a] = s[a] + s[b] + mx;
  s[d] = Rotr32(s[d] ^ s[a], 16);
  s[c] = s[c] + s[d];
  s[b] = Rotr32(s[b] ^ s[c], 12);
  s[a] = s[a] + s[b] + my;
  s[d] = Rotr32(s[d] ^ s[a], 8);
  s[c] = s[c] + s[d];
  s[b] = Rotr32(s[b] ^ s[c], 7);
}

// The compression function's first eight output words: a chaining value, or (with kBlake3Root)
// the 32-byte output.
TRAIL_HOST_DEVICE Blake3Words Blake3Compress(const Blake3Words& cv, const uint32_t* block,
                                             uint64_t counter, uint32_t block_len, uint32_t flags) {
  const uint32_t iv[4] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au};
  const int perm[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
  uint32_t s[16], m[16], t[16];
  for (int i = 0; i < 8; ++i) s[i] = cv.w[i];
  for (int i = 0; i < 4; ++i) s[8 + i] = iv[i];
  s[12] = static_cast<uint32_t>(counter);
  s[13] = static_cast<uint32_t>(counter >> 32);
  s[14] = block_len;
  s[15] = flags;
  for (int i = 0; i < 16; ++i) m[i] = block[i];
  for (int round = 0; round < 7; ++round) {
    Blake3G(s, 0, 4, 8, 12, m[0], m[1]);
    Blake3G(s, 1, 5, 9, 13, m[2], m[3]);
    Blake3G(s, 2, 6, 10, 14, m[4], m[5]);
    Blake3G(s, 3, 7, 11, 15, m[6], m[7]);
    Blake3G(s, 0, 5, 10, 15, m[8], m[9]);
    Blake3G(s, 1, 6, 11, 12, m[10], m[11]);
    Blake3G(s, 2, 7, 8, 13, m[12], m[13]);
    Blake3G(s, 3, 4, 9, 14, m[14], m[15]);
    for (int i = 0; i < 16; ++i) t[i] = m[perm[i]];
    for (int i = 0; i < 16; ++i) m[i] = t[i];
  }
  Blake3Words out;
  for (int i = 0; i < 8; ++i) out.w[i] = s[i] ^ s[i + 8];
  return out;
}

TRAIL_HOST_DEVICE Blake3Words Blake3Iv() {
  return {{0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au, 0x510E527Fu, 0x9B05688Cu,
           0x1F83D9ABu, 0x5BE0CD19u}};
}

// The key derive-key mode uses for `context` (at most 64 bytes: one block, one chunk).
inline Blake3Words Blake3ContextKey(const char* context, int length) {
  uint32_t block[16] = {};
  for (int i = 0; i < length; ++i)
    block[i / 4] |= uint32_t{static_cast<uint8_t>(context[i])} << (8 * (i % 4));
  return Blake3Compress(
      Blake3Iv(), block, 0, static_cast<uint32_t>(length),
      kBlake3ChunkStart | kBlake3ChunkEnd | kBlake3Root | kBlake3DeriveKeyContext);
}

// The leaf message's 32-bit little-endian word `w` (word w covers bytes 4w..4w+3).
TRAIL_HOST_DEVICE uint32_t LeafWord(const uint32_t* elements, int64_t count, int64_t index,
                                    int64_t w) {
  if (w < count) {
    const uint32_t e = elements[w];
    const bool nan = (e & 0x7F800000u) == 0x7F800000u && (e & 0x007FFFFFu) != 0;
    return nan ? 0x7FC00000u : e;
  }
  const int64_t tail = w - count;  // 0, 1: index; 2, 3: count
  const uint64_t v = static_cast<uint64_t>(tail < 2 ? index : count);
  return static_cast<uint32_t>((tail % 2 == 0) ? v : v >> 32);
}
// BLAKE3 chunks in a leaf of `count` elements.
TRAIL_HOST_DEVICE int64_t LeafBlake3Chunks(int64_t count) {
  return (count * 4 + 16 + kBlake3ChunkBytes - 1) / kBlake3ChunkBytes;
}
// The output of BLAKE3 chunk c of the leaf (its chaining value, or with `root` the digest when
// the leaf is one chunk).
TRAIL_HOST_DEVICE Blake3Words LeafChunkOutput(const uint32_t* elements, int64_t count,
                                              int64_t index, const Blake3Words& key, int64_t c,
                                              bool root) {
  const int64_t bytes = count * 4 + 16, begin = c * kBlake3ChunkBytes;
  const int64_t len = bytes - begin < kBlake3ChunkBytes ? bytes - begin : kBlake3ChunkBytes;
  const int64_t blocks = (len + 63) / 64;
  Blake3Words cv = key;
  for (int64_t b = 0; b < blocks; ++b) {
    uint32_t block[16];
    const int64_t block_len = len - 64 * b < 64 ? len - 64 * b : 64;
    for (int i = 0; i < 16; ++i) {
      const int64_t w = (begin + 64 * b) / 4 + i;
      block[i] = 4 * i < block_len ? LeafWord(elements, count, index, w) : 0u;
    }
    uint32_t flags = kBlake3DeriveKeyMaterial;
    if (b == 0) flags |= kBlake3ChunkStart;
    if (b == blocks - 1) flags |= kBlake3ChunkEnd | (root ? kBlake3Root : 0u);
    cv = Blake3Compress(cv, block, static_cast<uint64_t>(c), static_cast<uint32_t>(block_len),
                        flags);
  }
  return cv;
}
// A parent node of two chaining values.
TRAIL_HOST_DEVICE Blake3Words Blake3ParentOf(const Blake3Words& left, const Blake3Words& right,
                                             const Blake3Words& key, bool root) {
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) block[i] = left.w[i], block[8 + i] = right.w[i];
  return Blake3Compress(key, block, 0, 64,
                        kBlake3Parent | kBlake3DeriveKeyMaterial | (root ? kBlake3Root : 0u));
}

}  // namespace trail::repops::cuda
