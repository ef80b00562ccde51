#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trail {
namespace {

// The value a 16-bit pattern encodes, computed in float64 from the format's definition:
// (-1)^s · 2^(e - bias) · (1 + f / 2^m) for normal numbers, 2^(1 - bias) · f / 2^m for
// subnormals. Every such value is exactly representable in float64.
double Decode(uint16_t h, int exponent_bits, int fraction_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t f = h & ((1u << fraction_bits) - 1);
  const uint32_t e = (h >> fraction_bits) & ((1u << exponent_bits) - 1);
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == (1u << exponent_bits) - 1) return f == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * std::ldexp(double(f), 1 - bias - fraction_bits);
  return sign * std::ldexp(1.0 + std::ldexp(double(f), -fraction_bits), int(e) - bias);
}

TEST(Half, EveryBinary16ValueWidensExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const double want = Decode(static_cast<uint16_t>(h), 5, 10);
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000u) != 0) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000u) != 0) << h;  // -0 stays -0
    }
  }
}

TEST(Half, EveryBfloat16ValueWidensExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const double want = Decode(static_cast<uint16_t>(h), 8, 7);
    const float got = Bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000u) != 0) << h;
    }
  }
}

}  // namespace
}  // namespace trail
