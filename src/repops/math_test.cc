// Accuracy of trail's elementary functions over 2^25 inputs spread over all binary32 bit
// patterns, against a float64 reference (glibc's double functions, accurate to well under one
// double ULP, so the error of a float result is measured to ~2^-29 of a float ULP).
#include "repops/math.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "repops/test_util.h"

namespace trail::repops {
namespace {

// |f - ref| in units of the float ULP at ref (ref a normal float magnitude).
double UlpError(float f, double ref) {
  if (std::isnan(ref)) return std::isnan(f) ? 0 : 1e9;
  if (std::isinf(ref)) return f == ref ? 0 : 1e9;
  const double a = std::fabs(ref);
  if (a < FLT_MIN) return std::fabs(f - ref) / std::ldexp(1.0, -149);
  int e;
  std::frexp(a, &e);
  const double ulp = std::ldexp(1.0, e - 24);
  return std::fabs(double(f) - ref) / ulp;
}

const char* Name(MathFn fn) {
  switch (fn) {
    case MathFn::kExp:
      return "exp";
    case MathFn::kLog:
      return "log";
    case MathFn::kTanh:
      return "tanh";
    case MathFn::kSigmoid:
      return "sigmoid";
    case MathFn::kSin:
      return "sin";
    case MathFn::kCos:
      return "cos";
  }
  return "?";
}

struct Sweep {
  double max_ulp = 0;
  float worst_x = 0;
  size_t count = 0;
};

// Every 128th bit pattern (2^25 inputs), keeping those inside [lo, hi];
// TRAIL_MATH_SWEEP_STRIDE=1 sweeps all 2^32 (make test-exhaustive).
Sweep Measure(MathFn fn, double (*ref)(double), float lo, float hi) {
  Sweep s;
  const char* env = std::getenv("TRAIL_MATH_SWEEP_STRIDE");
  const uint64_t stride = env ? std::max(1L, std::strtol(env, nullptr, 10)) : 128;
  std::vector<float> x, y;
  x.reserve(1 << 20);
  auto flush = [&] {
    y.resize(x.size());
    Map(fn, x.data(), y.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double r = ref(x[i]);
      if (std::fabs(r) < FLT_MIN && r != 0) continue;  // subnormal results: checked separately
      const double e = UlpError(y[i], r);
      if (e > s.max_ulp) s.max_ulp = e, s.worst_x = x[i];
    }
    s.count += x.size();
    x.clear();
  };
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += stride) {
    float f;
    const uint32_t u =
        static_cast<uint32_t>(b) | (stride > 1 ? 0x5A & (stride - 1) : 0);  // low bits vary too
    std::memcpy(&f, &u, 4);
    if (!(f >= lo && f <= hi)) continue;
    x.push_back(f);
    if (x.size() == (1 << 20)) flush();
  }
  flush();
  std::printf("  %-8s max error %.3f ULP at x=%a over %zu inputs\n", Name(fn), s.max_ulp, s.worst_x,
              s.count);
  return s;
}

double RefSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double RefExp(double x) { return std::exp(x); }
double RefLog(double x) { return std::log(x); }
double RefTanh(double x) { return std::tanh(x); }
double RefSin(double x) { return std::sin(x); }
double RefCos(double x) { return std::cos(x); }

// The bounds below are the measured maxima rounded up to the next half ULP; docs/repops.md states
// them. Exp's range stops where its result would be subnormal (it returns +0 there instead).
TEST(MathAccuracy, Exp) {
  const Sweep s = Measure(MathFn::kExp, RefExp, -87.33654f, 88.7228f);
  EXPECT_GT(s.count, 1000000u);
  EXPECT_LE(s.max_ulp, 1.5) << "worst x=" << s.worst_x;
}
TEST(MathAccuracy, Log) {
  const Sweep s = Measure(MathFn::kLog, RefLog, 0.0f, FLT_MAX);
  EXPECT_GT(s.count, 8000000u);
  EXPECT_LE(s.max_ulp, 1.5) << "worst x=" << s.worst_x;
}
TEST(MathAccuracy, Tanh) {
  const Sweep s = Measure(MathFn::kTanh, RefTanh, -FLT_MAX, FLT_MAX);
  EXPECT_GT(s.count, 16000000u);
  EXPECT_LE(s.max_ulp, 2.5) << "worst x=" << s.worst_x;
}
TEST(MathAccuracy, Sigmoid) {
  const Sweep s = Measure(MathFn::kSigmoid, RefSigmoid, -87.0f, FLT_MAX);
  EXPECT_LE(s.max_ulp, 2.5) << "worst x=" << s.worst_x;
}
TEST(MathAccuracy, SinCos) {
  const Sweep s = Measure(MathFn::kSin, RefSin, -8192.0f, 8192.0f);
  const Sweep c = Measure(MathFn::kCos, RefCos, -8192.0f, 8192.0f);
  EXPECT_GT(s.count, 4000000u);
  EXPECT_LE(s.max_ulp, 2.5) << "worst x=" << s.worst_x;
  EXPECT_LE(c.max_ulp, 2.5) << "worst x=" << c.worst_x;
}

// Near large multiples of pi/2 the result is tiny and the reduction must carry pi/2 to ~70 bits
// (found by the exhaustive sweep: a three-part pi/2 gave 688 ULP here).
TEST(MathSpecialValues, SinCosNearMultiplesOfHalfPi) {
  for (float x : {0x1.17cc5p+12f, 0x1.17cc5p+11f, 0x1.921fb6p+12f, 0x1.921fb6p+0f}) {
    EXPECT_LE(UlpError(Sin(x), std::sin(double(x))), 2.0) << x;
    EXPECT_LE(UlpError(Cos(x), std::cos(double(x))), 2.0) << x;
  }
}

TEST(MathSpecialValues, Edges) {
  EXPECT_EQ(Exp(0.0f), 1.0f);
  EXPECT_EQ(Exp(-100.0f), 0.0f);  // below the normal range: +0, never a subnormal
  EXPECT_EQ(Exp(-HUGE_VALF), 0.0f);
  EXPECT_EQ(Exp(100.0f), HUGE_VALF);
  EXPECT_TRUE(std::isnan(Exp(NAN)));
  EXPECT_GE(Exp(-87.33654f), FLT_MIN);
  EXPECT_EQ(Log(1.0f), 0.0f);
  EXPECT_EQ(Log(0.0f), -HUGE_VALF);
  EXPECT_TRUE(std::isnan(Log(-1.0f)));
  EXPECT_EQ(Log(HUGE_VALF), HUGE_VALF);
  EXPECT_NEAR(Log(1e-45f), std::log(1.401298464e-45), 1e-5);  // subnormal input
  EXPECT_EQ(Tanh(0.0f), 0.0f);
  EXPECT_EQ(Tanh(30.0f), 1.0f);
  EXPECT_EQ(Tanh(-30.0f), -1.0f);
  EXPECT_EQ(Sigmoid(-200.0f), 0.0f);
  EXPECT_EQ(Sigmoid(200.0f), 1.0f);
  EXPECT_TRUE(std::isnan(Sin(3e6f)));  // outside the supported range: NaN, loudly
  EXPECT_EQ(PowInt(0.5f, 3), 0.125f);
  EXPECT_EQ(PowInt(0.9f, 0), 1.0f);
}

// Every result of Exp over its whole finite range is either +0 or a normal number.
TEST(MathSpecialValues, ExpNeverReturnsSubnormals) {
  std::vector<float> x, y;
  for (float v = -110.0f; v < -80.0f; v += 1.0f / 1024) x.push_back(v);
  y.resize(x.size());
  Map(MathFn::kExp, x.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(y[i] == 0.0f || y[i] >= FLT_MIN) << x[i];
}

}  // namespace
}  // namespace trail::repops
