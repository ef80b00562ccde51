#include "core/hash.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <bit>
#include <cstring>
#include <functional>

#include "core/error.h"

namespace trail {

namespace {

// SHA-256 fetched from OpenSSL's default provider once per process: EVP_sha256() in an init
// looks the implementation up again each time, which costs more than hashing a short document.
const EVP_MD* Sha256Md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  TRAIL_CHECK(md != nullptr, "OpenSSL: SHA-256 is not available");
  return md;
}

}  // namespace

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  TRAIL_CHECK(ctx_ != nullptr, "OpenSSL: cannot allocate a digest context");
  TRAIL_CHECK(EVP_DigestInit_ex2(static_cast<EVP_MD_CTX*>(ctx_), Sha256Md(), nullptr) == 1,
              "OpenSSL: SHA-256 init failed");
}
Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Hasher::Update(const void* data, size_t n) {
  if (n == 0) return;
  TRAIL_CHECK(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n) == 1,
              "OpenSSL: SHA-256 update failed");
}

void Sha256Hasher::UpdateU64(uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  Update(b, 8);
}

Digest Sha256Hasher::Finish() {
  Digest d{};
  unsigned len = 0;
  TRAIL_CHECK(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d.data(), &len) == 1 && len == 32,
              "OpenSSL: SHA-256 final failed");
  return d;
}

Digest Sha256OfFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  TRAIL_CHECK(f != nullptr, path, ": cannot open: ", std::strerror(errno));
  Sha256Hasher h;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) h.Update(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  TRAIL_CHECK(!failed, path, ": read failed");
  return h.Finish();
}

Digest Sha256(std::span<const uint8_t> bytes) {
  Sha256Hasher h;
  h.Update(bytes.data(), bytes.size());
  return h.Finish();
}

std::string HexOf(std::span<const uint8_t> bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string s(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    s[2 * i] = kHex[bytes[i] >> 4];
    s[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return s;
}

std::string ToHex(const Digest& d) { return HexOf(d); }

std::vector<uint8_t> BytesFromHex(const std::string& hex, size_t bytes, const std::string& where) {
  TRAIL_CHECK(hex.size() == 2 * bytes, where, ": expected ", 2 * bytes, " hex digits, got '",
              hex.size() > 200 ? hex.substr(0, 200) + "..." : hex, "'");
  std::vector<uint8_t> out(bytes, 0);
  for (size_t i = 0; i < hex.size(); ++i) {
    const char c = hex[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    TRAIL_CHECK(v >= 0, where, ": '", hex.size() > 200 ? hex.substr(0, 200) + "..." : hex,
                "' is not lower-case hex");
    out[i / 2] = static_cast<uint8_t>(out[i / 2] | (v << (i % 2 ? 0 : 4)));
  }
  return out;
}

Digest DigestFromHex(const std::string& hex, const std::string& where) {
  const std::vector<uint8_t> b = BytesFromHex(hex, 32, where);
  Digest d{};
  std::copy(b.begin(), b.end(), d.begin());
  return d;
}

// Elements are hashed in chunks, converted to little-endian canonical form on the way.
namespace {

// GCC leaves these OR-reductions scalar at -O2 (clang vectorizes them): vectorized they cost
// about a tenth of hashing the same bytes, scalar nearly as much.
#if defined(__GNUC__) && !defined(__clang__)
#define TRAIL_VECTORIZE __attribute__((optimize("tree-vectorize")))
#else
#define TRAIL_VECTORIZE
#endif

// |x| > +inf as an integer, i.e. a NaN: (x & 0x7FFFFFFF) + 0x007FFFFF carries into bit 31.
TRAIL_VECTORIZE bool HasNan32(const uint32_t* u, size_t n) {
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) acc |= (u[i] & 0x7FFFFFFFu) + 0x007FFFFFu;
  return (acc >> 31) != 0;
}

TRAIL_VECTORIZE bool HasNan64(const uint64_t* u, size_t n) {
  uint64_t acc = 0;
  for (size_t i = 0; i < n; ++i) acc |= (u[i] & 0x7FFFFFFFFFFFFFFFull) + 0x000FFFFFFFFFFFFFull;
  return (acc >> 63) != 0;
}

}  // namespace

void ForEachCanonicalPiece(DType dtype, const uint8_t* data, size_t count,
                           const std::function<void(const uint8_t*, size_t)>& feed) {
  static_assert(std::endian::native == std::endian::little, "trail assumes a little-endian host");
  const size_t esize = DTypeSize(dtype);
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    feed(data, count * esize);
    return;
  }
  // The common case, no NaN anywhere: one piece, the whole buffer in place.
  if (!(dtype == DType::kF32 ? HasNan32(reinterpret_cast<const uint32_t*>(data), count)
                             : HasNan64(reinterpret_cast<const uint64_t*>(data), count))) {
    feed(data, count * esize);
    return;
  }
  constexpr size_t kChunk = 1 << 14;
  std::vector<uint8_t> buf;
  for (size_t start = 0; start < count; start += kChunk) {
    const size_t n = std::min(kChunk, count - start);
    const uint8_t* src = data + start * esize;
    // Most chunks hold no NaN: hash them in place.
    const bool has_nan = dtype == DType::kF32 ? HasNan32(reinterpret_cast<const uint32_t*>(src), n)
                                              : HasNan64(reinterpret_cast<const uint64_t*>(src), n);
    if (!has_nan) {
      feed(src, n * esize);
      continue;
    }
    buf.assign(src, src + n * esize);
    if (dtype == DType::kF32) {
      auto* u = reinterpret_cast<uint32_t*>(buf.data());
      for (size_t i = 0; i < n; ++i)
        if ((u[i] & 0x7F800000u) == 0x7F800000u && (u[i] & 0x007FFFFFu)) u[i] = 0x7FC00000u;
    } else {
      auto* u = reinterpret_cast<uint64_t*>(buf.data());
      for (size_t i = 0; i < n; ++i)
        if ((u[i] & 0x7FF0000000000000ull) == 0x7FF0000000000000ull &&
            (u[i] & 0x000FFFFFFFFFFFFFull))
          u[i] = 0x7FF8000000000000ull;
    }
    feed(buf.data(), n * esize);
  }
}

void HashCanonicalElements(Sha256Hasher& h, DType dtype, const uint8_t* data, size_t count) {
  ForEachCanonicalPiece(dtype, data, count, [&](const uint8_t* p, size_t n) { h.Update(p, n); });
}

void HashTensorHeader(Sha256Hasher& h, std::string_view tag, const std::string& name, DType dtype,
                      std::span<const int64_t> shape) {
  h.Update(tag.data(), tag.size());
  h.UpdateU64(name.size());
  h.Update(name.data(), name.size());
  const uint8_t code = static_cast<uint8_t>(dtype);
  h.Update(&code, 1);
  h.UpdateU64(shape.size());
  for (int64_t d : shape) h.UpdateU64(static_cast<uint64_t>(d));
}

Digest BufferDigest(const std::string& name, DType dtype, std::span<const int64_t> shape,
                    const void* data) {
  Sha256Hasher h;
  HashTensorHeader(h, "trail.tensor.v1", name, dtype, shape);
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  HashCanonicalElements(h, dtype, static_cast<const uint8_t*>(data), count);
  return h.Finish();
}

Digest TensorDigest(const Tensor& t) {
  return BufferDigest(t.name(), t.dtype(), t.shape(), t.bytes());
}

}  // namespace trail
