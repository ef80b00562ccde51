#include "core/signing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"

namespace trail {
namespace {

// RFC 8032 §7.1, TEST 1 and TEST 2: the standard's own vectors, so the keys and signatures
// trail writes are checkable by any Ed25519 implementation.
TEST(Signing, Rfc8032Vectors) {
  const SigningKey k1 = SigningKey::FromPrivateHex(
      "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "test");
  EXPECT_EQ(k1.public_hex(), "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  EXPECT_EQ(k1.Sign(""),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  const SigningKey k2 = SigningKey::FromPrivateHex(
      "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "test");
  EXPECT_EQ(k2.public_hex(), "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
  EXPECT_EQ(k2.Sign("\x72"),
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
            "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
}

TEST(Signing, VerifyRejectsAlteredMessagesSignaturesAndOtherKeys) {
  const SigningKey a = SigningKey::Generate(), b = SigningKey::Generate();
  const std::string sig = a.Sign("statement");
  EXPECT_TRUE(a.Verify("statement", sig));
  EXPECT_FALSE(a.Verify("statemenT", sig));
  EXPECT_FALSE(b.Verify("statement", sig));
  std::string bad = sig;
  bad[10] = bad[10] == '0' ? '1' : '0';
  EXPECT_FALSE(a.Verify("statement", bad));
  EXPECT_FALSE(a.Verify("statement", "zz"));
  EXPECT_FALSE(a.Verify("statement", std::string(128, 'g')));
  const SigningKey pub = SigningKey::FromPublicHex(a.public_hex(), "test");
  EXPECT_FALSE(pub.has_private());
  EXPECT_TRUE(pub.Verify("statement", sig));
  EXPECT_THROW(pub.Sign("x"), Error);
  EXPECT_THROW(SigningKey::FromPublicHex("abcd", "test"), Error);
}

TEST(Signing, SaveLoadRoundTripNeverOverwrites) {
  const std::string dir = testing::TempDir() + "/signing-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const SigningKey k = SigningKey::Generate();
  k.Save(dir + "/alice");
  EXPECT_EQ(std::filesystem::status(dir + "/alice.key").permissions() &
                std::filesystem::perms::group_read,
            std::filesystem::perms::none);
  const SigningKey priv = SigningKey::Load(dir + "/alice.key");
  const SigningKey pub = SigningKey::Load(dir + "/alice.pub");
  EXPECT_TRUE(priv.has_private());
  EXPECT_FALSE(pub.has_private());
  EXPECT_EQ(priv.fingerprint(), k.fingerprint());
  EXPECT_TRUE(pub.Verify("m", priv.Sign("m")));
  EXPECT_THROW(k.Save(dir + "/alice"), Error);
  EXPECT_THROW(SigningKey::Load(dir + "/missing.key"), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trail
