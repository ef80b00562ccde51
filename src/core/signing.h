// Ed25519 signatures (RFC 8032, through OpenSSL's EVP interface) for the statements a run and
// its auditors publish. Keys live in PEM files: a private key as PKCS#8 ("PRIVATE KEY", written
// with mode 0600), a public key as SubjectPublicKeyInfo ("PUBLIC KEY"). Inside statements a
// public key is its 32 raw bytes in hex, and a key's fingerprint is the SHA-256 of those bytes.
#pragma once

#include <string>
#include <string_view>

namespace trail {

// A key pair in memory (the private half may be absent for a key loaded from a .pub file).
class SigningKey {
 public:
  SigningKey() = default;
  ~SigningKey();
  SigningKey(SigningKey&& o) noexcept : pkey_(o.pkey_), has_private_(o.has_private_) {
    o.pkey_ = nullptr;
  }
  SigningKey& operator=(SigningKey&& o) noexcept;
  SigningKey(const SigningKey&) = delete;
  SigningKey& operator=(const SigningKey&) = delete;

  static SigningKey Generate();
  // A private key (PKCS#8 PEM) or a public key (SubjectPublicKeyInfo PEM); errors name the file.
  static SigningKey Load(const std::string& pem_path);
  // A public key from its 32 raw bytes in hex; throws trail::Error naming `where` otherwise.
  static SigningKey FromPublicHex(const std::string& hex, const std::string& where);
  // A private key from its 32-byte seed in hex (RFC 8032's "secret key"), to import a key made
  // by another tool.
  static SigningKey FromPrivateHex(const std::string& hex, const std::string& where);

  bool has_private() const { return has_private_; }
  std::string public_hex() const;   // 64 hex digits
  std::string fingerprint() const;  // SHA-256 of the raw public key, hex

  // Writes <base>.key (private, 0600) and <base>.pub; refuses to overwrite an existing file.
  void Save(const std::string& base) const;

  std::string Sign(std::string_view message) const;  // 128 hex digits
  bool Verify(std::string_view message, const std::string& signature_hex) const;

 private:
  void* pkey_ = nullptr;  // EVP_PKEY*
  bool has_private_ = false;
};

}  // namespace trail
