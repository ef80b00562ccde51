// SHA-256 (OpenSSL) of canonical bytes and tensor digests (the state hash: core/state_hash.h).
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace trail {

using Digest = std::array<uint8_t, 32>;

Digest Sha256(std::span<const uint8_t> bytes);
std::string ToHex(const Digest& d);
std::string HexOf(std::span<const uint8_t> bytes);  // lower-case, two digits per byte
// The `bytes` bytes that 2·bytes lower-case hex digits spell; throws trail::Error naming
// `where` otherwise.
std::vector<uint8_t> BytesFromHex(const std::string& hex, size_t bytes, const std::string& where);
// SHA-256 of a file's bytes, read through a small buffer (never mapped or held whole, so it
// costs no memory whatever the file's size); errors name the file.
Digest Sha256OfFile(const std::string& path);
// The digest a 64-digit hex string spells; throws trail::Error naming `where` otherwise.
Digest DigestFromHex(const std::string& hex, const std::string& where);

// Incremental SHA-256.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void Update(const void* data, size_t n);
  void UpdateU64(uint64_t v);  // little-endian
  Digest Finish();

 private:
  void* ctx_;
};

// SHA-256 of a tensor's canonical bytes: "trail.tensor.v1", name length (u64 LE), name, dtype
// code (u8), rank (u64 LE), each dimension (i64 LE), then the elements little-endian, with every
// float NaN replaced by the quiet NaN 0x7FC00000 (0x7FF8000000000000 for f64).
Digest TensorDigest(const Tensor& t);
// The same for a raw element buffer (used by kernels' golden tests without building a Tensor).
Digest BufferDigest(const std::string& name, DType dtype, std::span<const int64_t> shape,
                    const void* data);

// Feeds a tensor's header: the tag's bytes, name length (u64 LE), name, dtype code (u8), rank
// (u64 LE), each dimension (i64 LE) — shared by TensorDigest and the state hash's tensor nodes.
void HashTensorHeader(Sha256Hasher& h, std::string_view tag, const std::string& name, DType dtype,
                      std::span<const int64_t> shape);
// Feeds `count` elements to h little-endian, every float NaN replaced by the quiet NaN
// 0x7FC00000 (0x7FF8000000000000 for f64); other dtypes as stored.
void HashCanonicalElements(Sha256Hasher& h, DType dtype, const uint8_t* data, size_t count);
// The same canonical bytes handed to `feed` in pieces (in place where a piece holds no NaN), for
// any hash function.
void ForEachCanonicalPiece(DType dtype, const uint8_t* data, size_t count,
                           const std::function<void(const uint8_t*, size_t)>& feed);

}  // namespace trail
