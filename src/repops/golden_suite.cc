// The golden suite's kernel cases (the primitives below the backend interface: reductions,
// elementwise math, Philox fills, the raw int8 GEMM, softmax, subnormal edges) on the CPU kernels
// of the active SIMD target, and the runner over these and the op cases (golden_ops.cc).
#include "repops/golden_suite.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "core/hash.h"
#include "core/philox.h"
#include "repops/cpu_backend.h"
#include "repops/gemm.h"
#include "repops/golden_case.h"
#include "repops/kernels.h"
#include "repops/math.h"
#include "repops/quantize.h"
#include "repops/random.h"
#include "repops/softmax.h"

namespace trail::repops {
namespace golden {

Vec Rand(int64_t n, uint64_t stream, float scale) {
  Vec v(n);
  FillUniform(v.data(), n, 2024, stream, -scale, scale);
  return v;
}

void CaseHasher::Record(const std::string& name, bool i32, const void* data, int64_t n,
                        const Digest& d) {
  h_.Update(d.data(), d.size());
  GoldenBuffer b{name, i32, n, ToHex(d), {}};
  for (int64_t i = 0; i < std::min<int64_t>(n, 4); ++i) {
    uint32_t u;
    std::memcpy(&u, static_cast<const char*>(data) + 4 * i, 4);
    b.first_bits.push_back(u);
  }
  buffers_.push_back(std::move(b));
}

void CaseHasher::Add(const std::string& name, const float* data, int64_t n) {
  const int64_t shape[] = {n};
  Record(name, false, data, n, BufferDigest(name, DType::kF32, shape, data));
}

void CaseHasher::AddI32(const std::string& name, const int32_t* data, int64_t n) {
  const int64_t shape[] = {n};
  Record(name, true, data, n, BufferDigest(name, DType::kI32, shape, data));
}

namespace {

void GemmI8Case(std::vector<std::pair<std::string, KernelCase>>& cases) {
  cases.push_back({"gemm_i8", [](CaseHasher& h) {
                     const int64_t M = 17, K = 255, N = 33;
                     std::vector<int8_t> a(M * K), bt(N * K);
                     for (size_t i = 0; i < a.size(); ++i)
                       a[i] = static_cast<int8_t>(PhiloxWord(9, 0, i));
                     for (size_t i = 0; i < bt.size(); ++i)
                       bt[i] = static_cast<int8_t>(PhiloxWord(9, 1, i));
                     std::vector<int32_t> c(M * N);
                     ActiveKernels().gemm_i8(
                         {.M = M, .N = N, .K = K, .a = a.data(), .bt = bt.data(), .c = c.data()});
                     h.AddI32("c", c.data(), c.size());
                     Vec sa = Rand(M, 13, 0.01f), sb = Rand(N, 14, 0.01f), y(M * N);
                     DequantizeI32(c.data(), sa.data(), sb.data(), M, N, y.data());
                     h.Add("dequantized", y);
                     std::vector<int32_t> am(M);
                     ArgmaxRows(y.data(), M, N, am.data());
                     h.AddI32("argmax", am.data(), M);
                   }});
}

void ReductionAndMathCases(std::vector<std::pair<std::string, KernelCase>>& cases) {
  cases.push_back({"reductions", [](CaseHasher& h) {
                     for (int64_t n : {0, 1, 3, 17, 255, 1000, 4097}) {
                       Vec x = Rand(n, 10 + n, 3.0f), y = Rand(n, 20 + n);
                       const Kernels& k = ActiveKernels();
                       h.AddScalar("sum", k.sum(x.data(), n));
                       h.AddScalar("sum_sq", k.sum_sq(x.data(), n));
                       h.AddScalar("dot", k.dot(x.data(), y.data(), n));
                       h.AddScalar("max", k.max(x.data(), n));
                       Vec z = y;
                       k.axpy(0.37f, x.data(), z.data(), n);
                       h.Add("axpy", z);
                     }
                   }});
  cases.push_back({"math_functions", [](CaseHasher& h) {
                     Vec x = Rand(1000, 30, 100.0f);
                     const float specials[] = {0.0f,
                                               -0.0f,
                                               1.0f,
                                               -1.0f,
                                               88.72f,
                                               89.0f,
                                               -87.3f,
                                               -104.0f,
                                               1e-30f,
                                               1e-45f,
                                               HUGE_VALF,
                                               -HUGE_VALF,
                                               NAN,
                                               0.5625f,
                                               1048576.0f,
                                               2e6f,
                                               3.14159265f,
                                               1.17549435e-38f,
                                               0x1.17cc5p+12f,
                                               0x1.17cc5p+11f};  // near multiples of pi/2
                     x.insert(x.end(), std::begin(specials), std::end(specials));
                     Vec y(x.size());
                     for (MathFn fn : {MathFn::kExp, MathFn::kLog, MathFn::kTanh, MathFn::kSigmoid,
                                       MathFn::kSin, MathFn::kCos}) {
                       Map(fn, x.data(), y.data(), x.size());
                       h.Add("y" + std::to_string(static_cast<int>(fn)), y);
                       for (auto& v : y) v = 0;
                       ActiveKernels().exp_sub(x.data(), 1.5f, y.data(), x.size());
                       h.Add("exp_sub", y);
                     }
                   }});
  cases.push_back({"random_fills", [](CaseHasher& h) {
                     Vec u(1000), g(1000);
                     FillUniform(u.data(), 1000, 7, 1, -2.0f, 3.0f);
                     FillNormal(g.data(), 1000, 7, 2, 0.5f, 0.02f);
                     h.Add("uniform", u);
                     h.Add("normal", g);
                   }});
  cases.push_back({"subnormal_edge", [](CaseHasher& h) {
                     // Products and FMA chains landing at and below FLT_MIN, where flush-to-zero
                     // hardware disagrees across ISAs; the contract keeps gradual underflow so
                     // every backend agrees.
                     const int64_t n = 4096;
                     Vec a(n), b(n), prod(n), chain(n, 0.0f);
                     for (int64_t i = 0; i < n; ++i) {
                       uint32_t ua = 0x00800000u + (PhiloxWord(11, 0, i) & 0x3F);
                       uint32_t ub = 0x3F800000u - (PhiloxWord(11, 1, i) & 0x7F);
                       std::memcpy(&a[i], &ua, 4);
                       std::memcpy(&b[i], &ub, 4);
                       prod[i] = a[i] * b[i];
                     }
                     ActiveKernels().axpy(0.75f, a.data(), chain.data(), n);
                     Vec c(16 * 16);
                     MatMul(a.data(), b.data(), c.data(), 16, 16, 16);
                     h.Add("prod", prod);
                     h.Add("axpy", chain);
                     h.Add("gemm", c);
                   }});
}

void SoftmaxCase(std::vector<std::pair<std::string, KernelCase>>& cases) {
  cases.push_back({"softmax", [](CaseHasher& h) {
                     const int64_t R = 17, N = 1000;
                     Vec x = Rand(R * N, 50, 8.0f), dy = Rand(R * N, 51), y(R * N), dx(R * N);
                     SoftmaxForward(x.data(), R, N, y.data());
                     SoftmaxBackward(y.data(), dy.data(), R, N, dx.data());
                     h.Add("y", y);
                     h.Add("dx", dx);
                   }});
}

}  // namespace

void AddKernelCases(std::vector<std::pair<std::string, KernelCase>>& cases) {
  GemmI8Case(cases);
  ReductionAndMathCases(cases);
  SoftmaxCase(cases);
}

}  // namespace golden

namespace {

std::vector<GoldenResult> RunOpCases(Backend& ops) {
  std::vector<std::pair<std::string, golden::OpCase>> cases;
  golden::AddOpCases(cases);
  std::vector<GoldenResult> out;
  for (const auto& [name, fn] : cases) {
    golden::CaseHasher h;
    fn(h, ops);
    out.push_back({name, h.Finish(), h.TakeBuffers()});
  }
  return out;
}

}  // namespace

std::vector<GoldenResult> RunGoldenSuite(Backend& ops) {
  std::vector<std::pair<std::string, golden::KernelCase>> cases;
  golden::AddKernelCases(cases);
  std::vector<GoldenResult> out;
  for (const auto& [name, fn] : cases) {
    golden::CaseHasher h;
    fn(h);
    out.push_back({name, h.Finish(), h.TakeBuffers()});
  }
  for (GoldenResult& r : RunOpCases(ops)) out.push_back(std::move(r));
  return out;
}

std::vector<GoldenResult> RunGoldenSuite() {
  CpuBackend cpu;
  return RunGoldenSuite(cpu);
}

const GoldenTable& CommittedGolden() { return CommittedGoldens("repops"); }

}  // namespace trail::repops
