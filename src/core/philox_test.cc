#include "core/philox.h"

#include <gtest/gtest.h>

namespace trail {
namespace {

uint64_t Join(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

// Known-answer vectors of Random123's philox4x32_10 (counter c0..c3, key k0..k1).
TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(Philox4x32(0, 0, 0), (PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(Philox4x32(~0ull, ~0ull, ~0ull),
            (PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(Philox4x32(Join(0xa4093822u, 0x299f31d0u), Join(0x13198a2eu, 0x03707344u),
                       Join(0x243f6a88u, 0x85a308d3u)),
            (PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, WordsComeFromTheirBlock) {
  const PhiloxBlock b = Philox4x32(7, 3, 5);
  for (uint64_t lane = 0; lane < 4; ++lane) EXPECT_EQ(PhiloxWord(7, 3, 20 + lane), b[lane]);
}

TEST(Philox, UniformRanges) {
  EXPECT_EQ(UniformFromBits(0), 0.0f);
  EXPECT_LT(UniformFromBits(0xFFFFFFFFu), 1.0f);
  EXPECT_GT(UniformOpenZeroFromBits(0), 0.0f);
  EXPECT_EQ(UniformOpenZeroFromBits(0xFFFFFFFFu), 1.0f);
}

TEST(Philox, StreamIdsDifferByName) {
  EXPECT_NE(StreamIdForName("wte"), StreamIdForName("wpe"));
  EXPECT_EQ(StreamIdForName("blocks.0.attn.qkv"), StreamIdForName("blocks.0.attn.qkv"));
}

}  // namespace
}  // namespace trail
