// The two 16-bit floating-point formats other tools store weights in, widened to binary32. Both
// widenings are exact (every bfloat16 and every binary16 value, subnormals included, is a
// binary32 value), so a checkpoint saved in either loads to the same bits everywhere.
//   bfloat16: the top 16 bits of a binary32 (sign, 8 exponent bits, 7 fraction bits).
//   binary16 (IEEE 754 half): sign, 5 exponent bits (bias 15), 10 fraction bits.
// NaNs keep their sign and payload bits (shifted into place); infinities stay infinities.
#pragma once

#include <bit>
#include <cstdint>

namespace trail {

inline float Bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t fraction = h & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (fraction << 13));
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (fraction << 13));
  }
  if (fraction == 0) return std::bit_cast<float>(sign);
  // A subnormal half (fraction · 2^-24) is a normal binary32: shift its leading 1 into the
  // implicit bit, lowering the exponent once per shift.
  uint32_t e = 113;  // 2^-14 = binary32 exponent 127 - 14
  while ((fraction & 0x400u) == 0) fraction <<= 1, --e;
  return std::bit_cast<float>(sign | (e << 23) | ((fraction & 0x3FFu) << 13));
}

}  // namespace trail
