#include "core/hash.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/error.h"
#include "core/file_util.h"

namespace trail {
namespace {

TEST(Sha256, KnownAnswer) {
  const std::string abc = "abc";
  EXPECT_EQ(ToHex(Sha256({reinterpret_cast<const uint8_t*>(abc.data()), abc.size()})),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256({})), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256OfFile, EqualsTheHashOfTheBytesAcrossBufferBoundariesAndNamesAMissingFile) {
  TempDir dir;
  for (size_t n : {size_t{0}, size_t{1}, size_t{65536}, size_t{200001}}) {
    std::string bytes(n, '\0');
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 131 + (i >> 9));
    WriteFileAtomic(dir / "f", bytes);
    EXPECT_EQ(Sha256OfFile(dir / "f"),
              Sha256({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}))
        << n;
  }
  try {
    Sha256OfFile(dir / "missing");
    FAIL() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

TEST(TensorDigest, CoversNameShapeDtypeAndData) {
  Tensor a = Tensor::Of<float>("w", {2, 3});
  Tensor b = Tensor::Of<float>("w", {3, 2});
  Tensor c = Tensor::Of<float>("v", {2, 3});
  Tensor d = Tensor::Of<int32_t>("w", {2, 3});
  EXPECT_NE(TensorDigest(a), TensorDigest(b));
  EXPECT_NE(TensorDigest(a), TensorDigest(c));
  EXPECT_NE(TensorDigest(a), TensorDigest(d));
  Tensor a2 = Tensor::Of<float>("w", {2, 3});
  EXPECT_EQ(TensorDigest(a), TensorDigest(a2));
  a2.data<float>()[5] = -0.0f;  // -0 and +0 differ in bits, so in the hash
  EXPECT_NE(TensorDigest(a), TensorDigest(a2));
}

TEST(TensorDigest, CanonicalizesNaNPayloads) {
  Tensor a = Tensor::Of<float>("x", {2});
  Tensor b = Tensor::Of<float>("x", {2});
  const uint32_t nan1 = 0x7FC00000u, nan2 = 0xFFA12345u;
  std::memcpy(a.data<float>(), &nan1, 4);
  std::memcpy(b.data<float>(), &nan2, 4);
  EXPECT_EQ(TensorDigest(a), TensorDigest(b));
  const uint32_t inf = 0x7F800000u;  // infinity is not a NaN and is kept
  std::memcpy(b.data<float>(), &inf, 4);
  EXPECT_NE(TensorDigest(a), TensorDigest(b));
}

}  // namespace
}  // namespace trail
