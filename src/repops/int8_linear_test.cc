// The int8 linear layer: the step-size rule on a hand-computed example, rounding and clamping,
// forward and both backward modes against a float64 PyTorch reference of the same
// quantize–dequantize math (tests/model/int8_linear_reference.py), and identical bits on every
// backend and thread count.
#include "repops/int8_linear.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/safetensors.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

TEST(Int8Quantize, StepSizeIsTwiceTheMeanMagnitudeOverRootQmax) {
  // One output channel W[:,0] = (1, -2, 3, -4): mean |w| = 2.5, s = 5/√127 = 0.443678...
  // q = round(w/s) = round(2.2539, -4.5078, 6.7617, -9.0156) = (2, -5, 7, -9).
  // Channel 1 is all zero: s = 0 and every quotient 0/0 quantizes to 0.
  const float w[8] = {1, 0, -2, 0, 3, 0, -4, 0};
  float step[2];
  WeightStepSizes(w, 4, 2, step);
  EXPECT_EQ(step[0], 5.0f / std::sqrt(127.0f));
  EXPECT_NEAR(step[0], 0.4436783, 1e-7);
  EXPECT_EQ(step[1], 0.0f);
  QuantizedWeight q;
  QuantizeWeight(w, 4, 2, Int8Backward::kInt8, q);
  // q [K, N] in W's layout: column 0 is (2, -5, 7, -9), column 1 all 0.
  EXPECT_EQ(std::vector<int8_t>(q.q.begin(), q.q.end()),
            (std::vector<int8_t>{2, 0, -5, 0, 7, 0, -9, 0}));
}

TEST(Int8Quantize, RoundsHalfToEvenClampsAndZeroesNaN) {
  EXPECT_EQ(QuantizeValue(2.5f, 1.0f), 2);
  EXPECT_EQ(QuantizeValue(3.5f, 1.0f), 4);
  EXPECT_EQ(QuantizeValue(-2.5f, 1.0f), -2);
  EXPECT_EQ(QuantizeValue(-0.4f, 1.0f), 0);
  EXPECT_EQ(QuantizeValue(300.0f, 1.0f), 127);
  EXPECT_EQ(QuantizeValue(-300.0f, 1.0f), -127);  // symmetric: -128 is never produced
  EXPECT_EQ(QuantizeValue(0.0f, 0.0f), 0);
  EXPECT_EQ(QuantizeValue(std::numeric_limits<float>::quiet_NaN(), 1.0f), 0);
  EXPECT_EQ(QuantizeValue(std::numeric_limits<float>::infinity(), 1.0f), 127);
  // Absmax per row: the largest magnitude maps to ±127 exactly.
  const float x[4] = {0.5f, -2.0f, 1.0f, 0.0f};
  int8_t q[4];
  float scale;
  QuantizeRowsAbsmax(x, 1, 4, q, &scale);
  EXPECT_EQ(scale, 2.0f / 127.0f);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], 64);  // 63.5 rounds to even
}

TEST(Int8Quantize, EdgeValuesGiveTheSameBytesOnEveryBackend) {
  // Ties at every half-integer of both signs, values beyond the clamp, ±0, ±inf, NaN, and
  // subnormals, in a buffer long enough for the vector body and an odd tail.
  std::vector<float> x;
  for (int i = -260; i <= 260; ++i) x.push_back(0.5f * static_cast<float>(i));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, 1e-40f, -1e-40f, 126.5f, 127.49f, -127.5f})
    x.push_back(v);
  std::vector<float> with_nan = x;
  with_nan[100] = std::numeric_limits<float>::quiet_NaN();
  const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
    const Kernels& k = ActiveKernels();
    std::vector<int8_t> q(x.size()), qn(x.size());
    const float one = 1.0f;
    std::vector<float> halves(x.size(), 0.5f);
    k.quantize_i8(x.data(), &one, nullptr, 0, x.size(), q.data());
    k.quantize_i8(with_nan.data(), halves.data(), nullptr, 1, with_nan.size(), qn.data());
    std::vector<float> out(q.begin(), q.end());
    out.insert(out.end(), qn.begin(), qn.end());
    out.push_back(k.abs_max(x.data(), 521));       // the half-integers: 130
    out.push_back(k.abs_max(x.data(), x.size()));  // with ±inf
    out.push_back(k.abs_max(with_nan.data(), with_nan.size()));
    out.push_back(k.abs_max(x.data(), 0));
    return out;
  });
  const std::vector<float>& ref = results[0].second;
  EXPECT_EQ(ref[ref.size() - 4], 130.0f);
  EXPECT_EQ(ref[ref.size() - 3], INFINITY);
  EXPECT_TRUE(std::isnan(ref[ref.size() - 2]));
  EXPECT_EQ(ref[ref.size() - 1], 0.0f);
  EXPECT_EQ(ref[260 + 5], 2.0f);         // 2.5 -> 2
  EXPECT_EQ(ref[260 + 7], 4.0f);         // 3.5 -> 4
  EXPECT_EQ(ref[260 - 5], -2.0f);        // -2.5 -> -2
  EXPECT_EQ(ref[x.size() + 100], 0.0f);  // NaN -> 0
  for (const auto& [label, v] : results)
    EXPECT_EQ(testing::HashOf(v), testing::HashOf(ref)) << label;
}

// The quantizer's definition divides; a kernel may decide a lane by x·(1/s) instead where that
// provably rounds the same (kernels.h). Quotients within a few ulps of every half-integer from
// -130.5 to 130.5, for scales whose reciprocal is inexact, and scales at the edges (subnormal,
// 2^±126, the largest float, ±0, ±inf, NaN, negative), by one scale and per element with and
// without reciprocals: every backend gives the quotient's bytes.
TEST(Int8Quantize, ReciprocalShortcutRoundsExactlyAsTheQuotient) {
  const float scales[] = {0.1f,
                          3.0f,
                          1.0f / 3.0f,
                          7.3e-3f,
                          0.0123f,
                          1.7e-5f,
                          -0.37f,
                          1e-40f,
                          0x1p-126f,
                          0x1p126f,
                          0x1p-127f,
                          3.4e38f,
                          0.0f,
                          -0.0f,
                          INFINITY,
                          -INFINITY,
                          std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> x, s;
  for (float sc : scales) {
    for (int h = -261; h <= 261; h += 2) {  // (h / 2)·s: the half-integers from -130.5 to 130.5
      const float at = static_cast<float>(0.5 * h * static_cast<double>(sc));
      float lo = at, hi = at;
      for (int ulp = 0; ulp < 4; ++ulp) {
        x.push_back(lo), s.push_back(sc), x.push_back(hi), s.push_back(sc);
        lo = std::nextafter(lo, -INFINITY), hi = std::nextafter(hi, INFINITY);
      }
    }
    for (float v : {0.0f, -0.0f, 1e-45f, 1.0f, -1.0f, 3e38f, INFINITY, -INFINITY})
      x.push_back(v), s.push_back(sc);
  }
  auto expected = [](float xv, float sv) {
    const float v = xv / sv;
    return v != v ? 0 : static_cast<int>(std::nearbyint(std::clamp(v, -127.0f, 127.0f)));
  };
  std::vector<float> inv(s.size());
  for (size_t i = 0; i < s.size(); ++i) inv[i] = 1.0f / s[i];
  const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
    const Kernels& k = ActiveKernels();
    const size_t n = x.size();
    std::vector<int8_t> per(n), with_inv(n), one(n);
    k.quantize_i8(x.data(), s.data(), nullptr, 1, n, per.data());
    k.quantize_i8(x.data(), s.data(), inv.data(), 1, n, with_inv.data());
    for (size_t i = 0; i < n;) {  // each scale's run by one scale
      size_t e = i;
      while (e < n && testing::Bits(s[e]) == testing::Bits(s[i])) ++e;
      k.quantize_i8(x.data() + i, &s[i], nullptr, 0, e - i, one.data() + i);
      i = e;
    }
    std::vector<float> out(per.begin(), per.end());
    out.insert(out.end(), with_inv.begin(), with_inv.end());
    out.insert(out.end(), one.begin(), one.end());
    return out;
  });
  for (const auto& [label, out] : results) {
    const size_t n = x.size();
    for (size_t i = 0; i < n; ++i) {
      const int want = expected(x[i], s[i]);
      ASSERT_EQ(out[i], want) << label << " per element: " << x[i] << " / " << s[i];
      ASSERT_EQ(out[n + i], want) << label << " with reciprocals: " << x[i] << " / " << s[i];
      ASSERT_EQ(out[2 * n + i], want) << label << " one scale: " << x[i] << " / " << s[i];
    }
  }
}

// abs_max_update, which sets the int8 dW gradient's column scales: m = |r·x| where larger, a
// NaN product taken and then kept; the same bytes on every backend, an odd tail included.
TEST(Int8Quantize, RunningColumnMaximaKeepANaNAndMatchOnEveryBackend) {
  const size_t n = 37;
  std::vector<float> rows[3] = {testing::Rand(n, 60), testing::Rand(n, 61), testing::Rand(n, 62)};
  rows[0][2] = std::numeric_limits<float>::quiet_NaN();   // column 2: NaN first, then finite
  rows[1][33] = INFINITY;                                 // column 33 (the tail): inf
  rows[2][34] = std::numeric_limits<float>::quiet_NaN();  // column 34: NaN last
  rows[1][5] = -0.0f, rows[0][5] = 0.0f, rows[2][5] = -0.0f;
  const float r[3] = {0.5f, -2.0f, 1.0f};
  const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
    std::vector<float> m(n, 0.0f);
    for (int t = 0; t < 3; ++t) ActiveKernels().abs_max_update(rows[t].data(), r[t], m.data(), n);
    return m;
  });
  const std::vector<float>& m = results[0].second;
  EXPECT_TRUE(std::isnan(m[2]));
  EXPECT_TRUE(std::isnan(m[34]));
  EXPECT_EQ(m[33], INFINITY);
  EXPECT_EQ(m[5], 0.0f);
  EXPECT_FALSE(std::signbit(m[5]));
  for (size_t j = 0; j < n; ++j) {
    if (j == 2 || j == 5 || j == 33 || j == 34) continue;
    float want = 0.0f;
    for (int t = 0; t < 3; ++t) want = std::max(want, std::fabs(r[t] * rows[t][j]));
    EXPECT_EQ(m[j], want) << "column " << j;
  }
  for (const auto& [label, v] : results) EXPECT_EQ(testing::HashOf(v), testing::HashOf(m)) << label;
}

// Inputs with the edge cases a training run meets: a heavy token row, an all-zero row, an
// all-zero weight column, and one weight so far from its column's mean that it is clipped.
struct Problem {
  int64_t M = 37, K = 70, N = 45;
  std::vector<float> x, w, dy;
  Problem() {
    x = testing::Rand(M * K, 1), w = testing::Rand(K * N, 2, 0.08f), dy = testing::Rand(M * N, 3);
    for (int64_t p = 0; p < K; ++p) x[3 * K + p] *= 100.0f, x[5 * K + p] = 0.0f;
    for (int64_t p = 0; p < K; ++p) w[p * N + 7] = 0.0f;
    w[2 * N + 4] = 5.0f;  // 127·s of its column is ~1.5: clipped
  }
};

struct Results {
  QuantizedWeight w8, w32;
  QuantizedInput x;
  std::vector<float> y, dx32, dw32, dx8, dw8, dstep32, dstep8;  // dstep: learned step sizes
  std::vector<int32_t> acc, acc_dx, acc_dw;                     // the int8 GEMMs' sums
  std::vector<int8_t> qg, qh;  // the int8 backward's quantized gradients
  std::vector<float> u, v;     // and their scales
};

// The int32 sums of an int8 product (the layer's GEMMs apply their float epilogue per tile, so
// the sums are recomputed here from the quantized operands the layer used).
std::vector<int32_t> Int32Sums(const int8_t* a, const int8_t* b, int64_t M, int64_t K, int64_t N,
                               bool b_transposed) {
  std::vector<int32_t> c(M * N);
  GemmI8Args g{.M = M, .N = N, .K = K, .a = a, .c = c.data()};
  (b_transposed ? g.bt : g.b) = b;
  ActiveKernels().gemm_i8(g);
  return c;
}

Results RunLayer(const Problem& pr) {
  const int64_t M = pr.M, K = pr.K, N = pr.N;
  Results r;
  Int8Scratch s;
  QuantizeWeight(pr.w.data(), K, N, Int8Backward::kInt8, r.w8);
  QuantizeWeight(pr.w.data(), K, N, Int8Backward::kFp32, r.w32);
  QuantizeInput(pr.x.data(), M, K, r.x);
  r.y.resize(M * N), r.dx32.resize(M * K), r.dx8.resize(M * K), r.dw32.resize(K * N),
      r.dw8.resize(K * N), r.dstep32.resize(N), r.dstep8.resize(N);
  Int8LinearForward(r.x, r.w8, s, r.y.data());
  r.acc = Int32Sums(r.x.q.data(), r.w8.q.data(), M, K, N, false);
  Int8LinearBackwardInput(pr.dy.data(), M, r.w32, Int8Backward::kFp32, s, r.dx32.data(), false);
  Int8LinearBackwardWeight(r.x, pr.dy.data(), r.w32, Int8Backward::kFp32, s, r.dw32.data(),
                           pr.w.data(), r.dstep32.data());
  Int8LinearBackwardInput(pr.dy.data(), M, r.w8, Int8Backward::kInt8, s, r.dx8.data(), false);
  r.qg.assign(s.a.begin(), s.a.begin() + M * N);
  r.acc_dx = Int32Sums(r.qg.data(), r.w8.q.data(), M, N, K, true);
  r.u.assign(s.scale.begin(), s.scale.begin() + M);
  Int8LinearBackwardWeight(r.x, pr.dy.data(), r.w8, Int8Backward::kInt8, s, r.dw8.data(),
                           pr.w.data(), r.dstep8.data());
  r.qh.assign(s.a.begin(), s.a.begin() + M * N);
  r.acc_dw = Int32Sums(r.x.qt.data(), r.qh.data(), K, M, N, false);
  r.v.assign(s.scale.begin(), s.scale.begin() + N);
  return r;
}

template <class A>
Tensor F32(const std::string& name, const std::vector<float, A>& v, std::vector<int64_t> shape) {
  Tensor t = Tensor::Of<float>(name, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

template <class T, class A>
void ExpectExact(const std::vector<T, A>& got, const Tensor* ref, const char* what) {
  ASSERT_NE(ref, nullptr) << what;
  ASSERT_EQ(static_cast<int64_t>(got.size()), ref->numel()) << what;
  const double* r = ref->data<double>();
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += static_cast<double>(got[i]) != r[i];
  EXPECT_EQ(bad, 0) << what << ": elements that differ from the reference's";
}

// max_i |got_i - ref_i| / |ref_i| (0 where both are 0; inf where only ref is).
template <class A>
double MaxElementRel(const std::vector<float, A>& got, const Tensor* ref) {
  const double* r = ref->data<double>();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - r[i]);
    if (e > 0) worst = std::max(worst, r[i] == 0 ? INFINITY : e / std::fabs(r[i]));
  }
  return worst;
}

// max |got - ref| / max |ref|.
template <class A>
double MaxRel(const std::vector<float, A>& got, const Tensor* ref) {
  const double* r = ref->data<double>();
  double e = 0, m = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    e = std::max(e, std::fabs(got[i] - r[i])), m = std::max(m, std::fabs(r[i]));
  }
  return e / m;
}

double RelL2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += std::pow(a[i] - b[i], 2), den += double(b[i]) * b[i];
  return std::sqrt(num / den);
}

TEST(Int8Linear, ForwardAndBothBackwardsMatchTheFloat64Reference) {
  const Problem pr;
  const int64_t M = pr.M, K = pr.K, N = pr.N;
  const Results r = RunLayer(pr);
  TempDir dir;
  std::vector<Tensor> in;
  in.push_back(F32("x", pr.x, {M, K}));
  in.push_back(F32("w", pr.w, {K, N}));
  in.push_back(F32("dy", pr.dy, {M, N}));
  in.push_back(F32("step", r.w8.step, {N}));
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  WriteSafetensors(dir.path() + "/in.safetensors", ptrs, {});
  const std::string cmd = "/usr/bin/python3 " TRAIL_SOURCE_DIR
                          "/tests/model/int8_linear_reference.py " +
                          dir.path() + "/in.safetensors " + dir.path() + "/out.safetensors";
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "the float64 reference failed: " << cmd << " (needs Debian's python3-torch)";
  const SafetensorsFile ref = ReadSafetensors(dir.path() + "/out.safetensors");

  // The step size is a float32 canonical sum of K = 70 magnitudes (relative error <= K·u =
  // 4.2e-6 by the standard bound), then a division: within 5e-6 of the float64 value.
  EXPECT_LT(MaxElementRel(r.w8.step, ref.Find("step64")), 5e-6);
  // The integer grids and sums are exact: every quantization decision is the same float32
  // operation in both, and int32 sums of at most 70·127² cannot overflow.
  ExpectExact(r.x.q, ref.Find("qx"), "qx");
  ExpectExact(r.x.scale, ref.Find("rx"), "rx");
  ExpectExact(r.w8.q, ref.Find("qw"), "qw");
  ExpectExact(r.acc, ref.Find("acc"), "forward int32 sums");
  ExpectExact(r.qg, ref.Find("int8.qg"), "int8 dX gradient grid");
  ExpectExact(r.u, ref.Find("int8.u"), "int8 dX gradient scales");
  ExpectExact(r.acc_dx, ref.Find("int8.acc_dx"), "int8 dX int32 sums");
  ExpectExact(r.qh, ref.Find("int8.qh"), "int8 dW gradient grid");
  ExpectExact(r.v, ref.Find("int8.v"), "int8 dW gradient scales");
  ExpectExact(r.acc_dw, ref.Find("int8.acc_dw"), "int8 dW int32 sums");
  // After the integers, y = (float(acc)·r)·s and the int8 gradients float(acc)·scale: the sums
  // are below 2^24 (exact as floats), so each element carries at most two float32 roundings,
  // 2u = 1.2e-7 relative.
  EXPECT_LE(MaxElementRel(r.y, ref.Find("y")), 1.2e-7);
  EXPECT_LE(MaxElementRel(r.dx8, ref.Find("int8.dx")), 1.2e-7);
  EXPECT_LE(MaxElementRel(r.dw8, ref.Find("int8.dw")), 1.2e-7);
  // The fp32 backward is a float32 GEMM over N = 45 (dX) or M = 37 (dW) products: the standard
  // bound n·u·Σ|terms| is ~3e-6 of the largest output; 1e-5 leaves margin while a wrong operand
  // (the unquantized W or X, a missing scale) is off by 1e-3 or more.
  EXPECT_LT(MaxRel(r.dx32, ref.Find("fp32.dx")), 1e-5);
  EXPECT_LT(MaxRel(r.dw32, ref.Find("fp32.dw")), 1e-5);
  // Learned step sizes' LSQ gradient: a float32 sum of K = 70 products of the above: 1e-5 of
  // the largest, as for the GEMMs; it includes the clipped weight's q·dŴ term, which the
  // masked dW no longer holds (a gradient taken after the mask is off by far more).
  EXPECT_LT(MaxRel(r.dstep32, ref.Find("fp32.dstep")), 1e-5);
  EXPECT_LT(MaxRel(r.dstep8, ref.Find("int8.dstep")), 1e-5);
  // The clipped weight gets no gradient in either mode.
  EXPECT_EQ(r.dw32[2 * N + 4], 0.0f);
  EXPECT_EQ(r.dw8[2 * N + 4], 0.0f);
  // Quantizing the gradient to 8 bits costs about 1/127 of each row's (column's) largest value
  // per element: relative to the fp32 backward, measured 0.5% (dX) and 1.4% (dW) here; 3% bounds
  // it.
  EXPECT_LT(RelL2(r.dx8, r.dx32), 0.03);
  EXPECT_LT(RelL2(r.dw8, r.dw32), 0.03);
  RecordProperty("int8_dx_rel_l2", std::to_string(RelL2(r.dx8, r.dx32)));
  RecordProperty("int8_dw_rel_l2", std::to_string(RelL2(r.dw8, r.dw32)));
}

TEST(Int8Linear, SameBitsOnEveryBackendAndThreadCount) {
  const Problem pr;
  const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
    const Results r = RunLayer(pr);
    std::vector<float> all(r.w8.step.begin(), r.w8.step.end());
    for (const auto* v : {&r.y, &r.dx32, &r.dw32, &r.dx8, &r.dw8, &r.dstep32, &r.dstep8})
      all.insert(all.end(), v->begin(), v->end());
    return all;
  });
  for (const auto& [label, v] : results)
    EXPECT_EQ(testing::HashOf(v), testing::HashOf(results[0].second)) << label;
}

// Int8LinearBackward (one pass over dY for both gradients) gives the two separate calls' bits:
// dx added to what it held, dw and the learned step sizes' gradient, both backward modes, on
// every backend and thread count.
TEST(Int8Linear, BothGradientsAtOnceEqualTheSeparateCalls) {
  const Problem pr;
  const int64_t M = pr.M, K = pr.K, N = pr.N;
  const std::vector<float> dx0 = testing::Rand(M * K, 9);
  for (Int8Backward mode : {Int8Backward::kInt8, Int8Backward::kFp32}) {
    const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
      QuantizedWeight qw;
      QuantizedInput x_sep, x_both;
      QuantizeWeight(pr.w.data(), K, N, mode, qw);
      QuantizeInput(pr.x.data(), M, K, x_sep);
      QuantizeInput(pr.x.data(), M, K, x_both);
      Int8Scratch s;
      std::vector<float> dx_sep = dx0, dx_both = dx0, dw_sep(K * N), dw_both(K * N), dstep_sep(N),
                         dstep_both(N);
      Int8LinearBackwardInput(pr.dy.data(), M, qw, mode, s, dx_sep.data(), true);
      Int8LinearBackwardWeight(x_sep, pr.dy.data(), qw, mode, s, dw_sep.data(), pr.w.data(),
                               dstep_sep.data());
      Int8LinearBackward(x_both, pr.dy.data(), qw, mode, s, dx_both.data(), true, dw_both.data(),
                         pr.w.data(), dstep_both.data());
      EXPECT_EQ(testing::HashOf(dx_both), testing::HashOf(dx_sep)) << "dx";
      EXPECT_EQ(testing::HashOf(dw_both), testing::HashOf(dw_sep)) << "dw";
      EXPECT_EQ(testing::HashOf(dstep_both), testing::HashOf(dstep_sep)) << "dstep";
      std::vector<float> all = dx_both;
      all.insert(all.end(), dw_both.begin(), dw_both.end());
      all.insert(all.end(), dstep_both.begin(), dstep_both.end());
      return all;
    });
    for (const auto& [label, v] : results)
      EXPECT_EQ(testing::HashOf(v), testing::HashOf(results[0].second)) << label;
  }
}

TEST(Int8Linear, AReductionThatCouldOverflowIsRefused) {
  QuantizedInput x;
  x.M = 1, x.K = 140000, x.q.assign(x.K, 1), x.scale = {1.0f};
  QuantizedWeight w;
  w.K = x.K, w.N = 1, w.q.assign(x.K, 1), w.step = {1.0f};
  Int8Scratch s;
  float y;
  EXPECT_THROW(Int8LinearForward(x, w, s, &y), Error);
}

}  // namespace
}  // namespace trail::repops
