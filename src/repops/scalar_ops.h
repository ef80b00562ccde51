// The arithmetic policy for the scalar reference path: one binary32 lane, every operation a
// single correctly rounded IEEE operation (std::fma is the fused multiply-add).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace trail::repops {

struct ScalarOps {
  using V = float;
  using I = int32_t;
  using M = bool;
  V Set(float c) const { return c; }
  I SetI(int32_t c) const { return c; }
  V Add(V a, V b) const { return a + b; }
  V Sub(V a, V b) const { return a - b; }
  V Mul(V a, V b) const { return a * b; }
  V Div(V a, V b) const { return a / b; }
  V Fma(V a, V b, V c) const { return std::fma(a, b, c); }
  V Sqrt(V a) const { return std::sqrt(a); }
  V Abs(V a) const { return std::fabs(a); }
  V Neg(V a) const { return -a; }
  M Lt(V a, V b) const { return a < b; }
  M Gt(V a, V b) const { return a > b; }
  M Eq(V a, V b) const { return a == b; }
  M IsNaN(V a) const { return a != a; }
  M Or(M a, M b) const { return a || b; }
  V Select(M m, V a, V b) const { return m ? a : b; }
  I SelectI(M m, I a, I b) const { return m ? a : b; }
  V CopySignFrom(V magnitude, V sign) const { return std::copysign(magnitude, sign); }
  // Float holding an integer value (|v| < 2^31) to int32, exactly.
  I ToInt(V a) const { return static_cast<I>(a); }
  V ToFloat(I a) const { return static_cast<float>(a); }
  I AsInt(V a) const {
    I i;
    std::memcpy(&i, &a, 4);
    return i;
  }
  V AsFloat(I i) const {
    V a;
    std::memcpy(&a, &i, 4);
    return a;
  }
  I AddI(I a, I b) const {
    return static_cast<I>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  }
  I SubI(I a, I b) const {
    return static_cast<I>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
  }
  I AndI(I a, I b) const { return a & b; }
  template <int kBits>
  I ShlI(I a) const {
    return static_cast<I>(static_cast<uint32_t>(a) << kBits);
  }
  template <int kBits>
  I SarI(I a) const {
    return a >> kBits;
  }  // arithmetic (C++20)
  M EqI(I a, I b) const { return a == b; }
};

}  // namespace trail::repops
