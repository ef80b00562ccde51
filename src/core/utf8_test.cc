#include "core/utf8.h"

#include <gtest/gtest.h>

namespace trail {
namespace {

TEST(Utf8, ValidPrefixStopsAtTheFirstInvalidSequence) {
  EXPECT_EQ(ValidUtf8Prefix("plain ascii"), 11u);
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x8c\x8d"));  // é 中 🌍
  EXPECT_EQ(ValidUtf8Prefix("ab\xc0\xafz"), 2u);                     // overlong '/'
  EXPECT_EQ(ValidUtf8Prefix("ab\xed\xa0\x80z"), 2u);                 // surrogate U+D800
  EXPECT_EQ(ValidUtf8Prefix("ab\xf4\x90\x80\x80z"), 2u);             // past U+10FFFF
  EXPECT_EQ(ValidUtf8Prefix("ab\xe4\xb8"), 2u);                      // truncated
  EXPECT_EQ(ValidUtf8Prefix("ab\x80"), 2u);                          // lone continuation byte
  EXPECT_EQ(ValidUtf8Prefix(std::string_view("a\0b", 3)), 3u);       // NUL is valid UTF-8
  // The 8-byte ASCII fast path hands over to the slow path mid-word.
  EXPECT_EQ(ValidUtf8Prefix("0123456789abcde\xff"), 15u);
}

// Every scalar value encodes to valid UTF-8 of the expected length and decodes back.
TEST(Utf8, EncodeDecodeRoundTripEveryScalarValue) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    AppendUtf8(cp, s);
    ASSERT_TRUE(IsValidUtf8(s)) << unsigned(cp);
    ASSERT_EQ(s.size(), cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u) << unsigned(cp);
    size_t len = 0;
    ASSERT_EQ(DecodeValidUtf8(s.data(), len), cp);
    ASSERT_EQ(len, s.size());
  }
  std::string euro;
  AppendUtf8(0x20AC, euro);
  EXPECT_EQ(euro, "\xE2\x82\xAC");
}

}  // namespace
}  // namespace trail
