#include "core/signing.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/hash.h"

namespace trail {
namespace {

EVP_PKEY* Key(void* p) { return static_cast<EVP_PKEY*>(p); }

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::vector<uint8_t> RawPublic(EVP_PKEY* k) {
  std::vector<uint8_t> raw(32);
  size_t n = raw.size();
  TRAIL_CHECK(EVP_PKEY_get_raw_public_key(k, raw.data(), &n) == 1 && n == 32,
              "OpenSSL: cannot read an Ed25519 public key");
  return raw;
}

// Creates `path` exclusively with `mode` and lets `write` fill it.
void WriteNew(const std::string& path, mode_t mode, const std::function<int(std::FILE*)>& write) {
  TRAIL_CHECK(!std::filesystem::exists(path), path, " already exists: keys are never overwritten");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  TRAIL_CHECK(fd >= 0, path, ": cannot create (", std::strerror(errno), ")");
  File f(::fdopen(fd, "w"));
  TRAIL_CHECK(f != nullptr && write(f.get()) == 1, path, ": cannot write the key");
}

}  // namespace

SigningKey::~SigningKey() { EVP_PKEY_free(Key(pkey_)); }

SigningKey& SigningKey::operator=(SigningKey&& o) noexcept {
  if (this != &o) {
    EVP_PKEY_free(Key(pkey_));
    pkey_ = o.pkey_, has_private_ = o.has_private_;
    o.pkey_ = nullptr;
  }
  return *this;
}

SigningKey SigningKey::Generate() {
  SigningKey k;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  EVP_PKEY* p = nullptr;
  const bool ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &p) == 1;
  EVP_PKEY_CTX_free(ctx);
  TRAIL_CHECK(ok, "OpenSSL: Ed25519 key generation failed");
  k.pkey_ = p, k.has_private_ = true;
  return k;
}

SigningKey SigningKey::Load(const std::string& pem_path) {
  File f(std::fopen(pem_path.c_str(), "r"));
  TRAIL_CHECK(f != nullptr, pem_path, ": cannot open (", std::strerror(errno), ")");
  SigningKey k;
  EVP_PKEY* p = PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr);
  if (p != nullptr) {
    k.has_private_ = true;
  } else {
    std::rewind(f.get());
    p = PEM_read_PUBKEY(f.get(), nullptr, nullptr, nullptr);
  }
  TRAIL_CHECK(p != nullptr, pem_path,
              ": not a PEM Ed25519 key (expected one written by `trail audit keygen`)");
  k.pkey_ = p;
  TRAIL_CHECK(EVP_PKEY_get_id(p) == EVP_PKEY_ED25519, pem_path, ": not an Ed25519 key");
  return k;
}

SigningKey SigningKey::FromPublicHex(const std::string& hex, const std::string& where) {
  const std::vector<uint8_t> raw = BytesFromHex(hex, 32, where);
  SigningKey k;
  k.pkey_ = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size());
  TRAIL_CHECK(k.pkey_ != nullptr, where, ": not an Ed25519 public key");
  return k;
}

SigningKey SigningKey::FromPrivateHex(const std::string& hex, const std::string& where) {
  const std::vector<uint8_t> raw = BytesFromHex(hex, 32, where);
  SigningKey k;
  k.pkey_ = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size());
  TRAIL_CHECK(k.pkey_ != nullptr, where, ": not an Ed25519 private key");
  k.has_private_ = true;
  return k;
}

std::string SigningKey::public_hex() const {
  TRAIL_CHECK(pkey_ != nullptr, "signing: no key");
  return HexOf(RawPublic(Key(pkey_)));
}

std::string SigningKey::fingerprint() const { return ToHex(Sha256(RawPublic(Key(pkey_)))); }

void SigningKey::Save(const std::string& base) const {
  TRAIL_CHECK(has_private_, "signing: only a private key can be saved as a key pair");
  WriteNew(base + ".key", 0600, [&](std::FILE* f) {
    return PEM_write_PrivateKey(f, Key(pkey_), nullptr, nullptr, 0, nullptr, nullptr);
  });
  WriteNew(base + ".pub", 0644, [&](std::FILE* f) { return PEM_write_PUBKEY(f, Key(pkey_)); });
}

std::string SigningKey::Sign(std::string_view message) const {
  TRAIL_CHECK(has_private_, "signing: this key has no private half (a .pub file?)");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::vector<uint8_t> sig(64);
  size_t n = sig.size();
  const bool ok =
      ctx && EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, Key(pkey_)) == 1 &&
      EVP_DigestSign(ctx, sig.data(), &n, reinterpret_cast<const uint8_t*>(message.data()),
                     message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  TRAIL_CHECK(ok && n == 64, "OpenSSL: Ed25519 signing failed");
  return HexOf(sig);
}

bool SigningKey::Verify(std::string_view message, const std::string& signature_hex) const {
  if (signature_hex.size() != 128) return false;
  std::vector<uint8_t> sig;
  try {
    sig = BytesFromHex(signature_hex, 64, "signature");
  } catch (const Error&) {
    return false;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      ctx && EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, Key(pkey_)) == 1 &&
      EVP_DigestVerify(ctx, sig.data(), sig.size(),
                       reinterpret_cast<const uint8_t*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

}  // namespace trail
