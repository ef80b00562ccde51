#include "repops/golden_suite.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include "core/error.h"
#include "core/hash.h"
#include "core/philox.h"
#include "repops/activation.h"
#include "repops/attention.h"
#include "repops/cross_entropy.h"
#include "repops/embedding.h"
#include "repops/gemm.h"
#include "repops/int8_linear.h"
#include "repops/kernels.h"
#include "repops/math.h"
#include "repops/norm.h"
#include "repops/optim.h"
#include "repops/quantize.h"
#include "repops/random.h"
#include "repops/rope.h"
#include "repops/softmax.h"

namespace trail::repops {

namespace {

using Vec = std::vector<float>;

// Inputs: uniform in [-scale, scale) from stream `stream` of seed 2024.
Vec Rand(int64_t n, uint64_t stream, float scale = 1.0f) {
  Vec v(n);
  FillUniform(v.data(), n, 2024, stream, -scale, scale);
  return v;
}

class CaseHasher {
 public:
  void Add(const std::string& name, const float* data, int64_t n) {
    const int64_t shape[] = {n};
    const Digest d = BufferDigest(name, DType::kF32, shape, data);
    h_.Update(d.data(), d.size());
  }
  void Add(const std::string& name, const Vec& v) { Add(name, v.data(), v.size()); }
  void AddScalar(const std::string& name, float f) { Add(name, &f, 1); }
  void AddI32(const std::string& name, const int32_t* data, int64_t n) {
    const int64_t shape[] = {n};
    const Digest d = BufferDigest(name, DType::kI32, shape, data);
    h_.Update(d.data(), d.size());
  }
  std::string Finish() { return ToHex(h_.Finish()); }

 private:
  Sha256Hasher h_;
};

using CaseFn = std::function<void(CaseHasher&)>;

void GemmCases(std::vector<std::pair<std::string, CaseFn>>& cases) {
  struct S { int64_t M, K, N; };
  for (S s : {S{1, 1, 1}, S{3, 17, 255}, S{17, 255, 3}, S{64, 100, 130}, S{1, 1000, 17},
              S{255, 3, 1000}, S{50, 800, 3080}}) {  // the last crosses K and N blocks
    const std::string tag = std::to_string(s.M) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
    cases.push_back({"gemm_nn_" + tag, [s](CaseHasher& h) {
      Vec a = Rand(s.M * s.K, 1), b = Rand(s.K * s.N, 2), c(s.M * s.N);
      MatMul(a.data(), b.data(), c.data(), s.M, s.K, s.N);
      h.Add("c", c);
      MatMul(a.data(), b.data(), c.data(), s.M, s.K, s.N, /*accumulate=*/true);
      h.Add("c_acc", c);
    }});
    cases.push_back({"gemm_bt_" + tag, [s](CaseHasher& h) {
      Vec a = Rand(s.M * s.K, 3), bt = Rand(s.N * s.K, 4), c(s.M * s.N);
      MatMulBT(a.data(), bt.data(), c.data(), s.M, s.K, s.N);
      h.Add("c", c);
    }});
    cases.push_back({"gemm_at_" + tag, [s](CaseHasher& h) {
      Vec at = Rand(s.K * s.M, 5), b = Rand(s.K * s.N, 6), c(s.M * s.N);
      MatMulAT(at.data(), b.data(), c.data(), s.M, s.K, s.N);
      h.Add("c", c);
    }});
  }
  cases.push_back({"gemm_i8", [](CaseHasher& h) {
    const int64_t M = 17, K = 255, N = 33;
    std::vector<int8_t> a(M * K), bt(N * K);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(PhiloxWord(9, 0, i));
    for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int8_t>(PhiloxWord(9, 1, i));
    std::vector<int32_t> c(M * N);
    ActiveKernels().gemm_i8({M, N, K, a.data(), bt.data(), c.data()});
    h.AddI32("c", c.data(), c.size());
    Vec sa = Rand(M, 13, 0.01f), sb = Rand(N, 14, 0.01f), y(M * N);
    DequantizeI32(c.data(), sa.data(), sb.data(), M, N, y.data());
    h.Add("dequantized", y);
    std::vector<int32_t> am(M);
    ArgmaxRows(y.data(), M, N, am.data());
    h.AddI32("argmax", am.data(), M);
  }});
  cases.push_back({"int8_linear", [](CaseHasher& h) {
    // M, K, N off every tile size; a zero token row and a zero weight column (step 0).
    const int64_t M = 19, K = 70, N = 45;
    Vec x = Rand(M * K, 15), w = Rand(K * N, 16, 0.08f), dy = Rand(M * N, 17);
    for (int64_t p = 0; p < K; ++p) x[5 * K + p] = 0.0f, w[p * N + 7] = 0.0f;
    w[2 * N + 4] = 5.0f;  // clipped
    QuantizedInput qx;
    QuantizeInput(x.data(), M, K, qx);
    Int8Scratch s;
    for (Int8Backward mode : {Int8Backward::kInt8, Int8Backward::kFp32}) {
      QuantizedWeight qw;
      QuantizeWeight(w.data(), K, N, mode, qw);
      Vec y(M * N), dx(M * K), dw(K * N);
      Int8LinearForward(qx, qw, s, y.data());
      Int8LinearBackwardInput(dy.data(), M, qw, mode, s, dx.data(), false);
      Int8LinearBackwardWeight(qx, dy.data(), qw, mode, s, dw.data());
      h.Add("step", qw.step);
      h.Add("y", y);
      h.Add("dx", dx);
      h.Add("dw", dw);
    }
  }});
}

void ReductionAndMathCases(std::vector<std::pair<std::string, CaseFn>>& cases) {
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
    const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.72f, 89.0f, -87.3f, -104.0f,
                              1e-30f, 1e-45f, HUGE_VALF, -HUGE_VALF, NAN, 0.5625f, 1048576.0f,
                              2e6f, 3.14159265f, 1.17549435e-38f,
                              0x1.17cc5p+12f, 0x1.17cc5p+11f};  // near multiples of pi/2
    x.insert(x.end(), std::begin(specials), std::end(specials));
    Vec y(x.size());
    for (MathFn fn : {MathFn::kExp, MathFn::kLog, MathFn::kTanh, MathFn::kSigmoid, MathFn::kSin,
                      MathFn::kCos}) {
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
    // Products and FMA chains landing at and below FLT_MIN, where flush-to-zero hardware
    // disagrees across ISAs; the contract keeps gradual underflow so every backend agrees.
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

void LayerCases(std::vector<std::pair<std::string, CaseFn>>& cases) {
  cases.push_back({"rmsnorm", [](CaseHasher& h) {
    const int64_t R = 17, D = 255;
    Vec x = Rand(R * D, 40, 2.0f), g = Rand(D, 41), dy = Rand(R * D, 42);
    for (bool with_gain : {true, false}) {
      Vec y(R * D), rstd(R), dx(R * D), dg(D, 0.0f);
      const float* gain = with_gain ? g.data() : nullptr;
      RmsNormForward(x.data(), gain, 1e-5f, R, D, y.data(), rstd.data());
      RmsNormBackward(dy.data(), x.data(), gain, rstd.data(), R, D, dx.data(),
                      with_gain ? dg.data() : nullptr);
      h.Add("y", y);
      h.Add("rstd", rstd);
      h.Add("dx", dx);
      h.Add("dg", dg);
    }
  }});
  cases.push_back({"softmax", [](CaseHasher& h) {
    const int64_t R = 17, N = 1000;
    Vec x = Rand(R * N, 50, 8.0f), dy = Rand(R * N, 51), y(R * N), dx(R * N);
    SoftmaxForward(x.data(), R, N, y.data());
    SoftmaxBackward(y.data(), dy.data(), R, N, dx.data());
    h.Add("y", y);
    h.Add("dx", dx);
  }});
  cases.push_back({"activations", [](CaseHasher& h) {
    const int64_t n = 10007;
    Vec a = Rand(n, 60, 6.0f), b = Rand(n, 61, 2.0f), dh = Rand(n, 62);
    Vec o(n), da(n), db(n);
    SwiGluForward(a.data(), b.data(), n, o.data());
    SwiGluBackward(dh.data(), a.data(), b.data(), n, da.data(), db.data());
    h.Add("swiglu", o);
    h.Add("swiglu_da", da);
    h.Add("swiglu_db", db);
    GeluForward(a.data(), n, o.data());
    GeluBackward(dh.data(), a.data(), n, da.data());
    h.Add("gelu", o);
    h.Add("gelu_dx", da);
  }});
  cases.push_back({"rope", [](CaseHasher& h) {
    const RopeTable t = MakeRopeTable(300, 16, 10000.0f);
    h.Add("cos", t.cos);
    h.Add("sin", t.sin);
    const int64_t rows = 255;
    Vec x = Rand(rows * 16, 70);
    std::vector<int32_t> pos(rows);
    for (int64_t r = 0; r < rows; ++r) pos[r] = static_cast<int32_t>((r * 7) % 300);
    RopeApply(x.data(), rows, 16, pos.data(), t, false);
    h.Add("fwd", x);
    RopeApply(x.data(), rows, 16, pos.data(), t, true);
    h.Add("bwd", x);
  }});
  cases.push_back({"embedding", [](CaseHasher& h) {
    const int64_t V = 255, D = 17, n = 1000;
    Vec table = Rand(V * D, 80), dout = Rand(n * D, 81), out(n * D), dtable(V * D, 0.0f);
    std::vector<int32_t> tok(n);
    for (int64_t i = 0; i < n; ++i) tok[i] = static_cast<int32_t>(PhiloxWord(12, 0, i) % 37);
    EmbeddingForward(table.data(), V, D, tok.data(), n, out.data());
    EmbeddingBackward(dout.data(), tok.data(), n, V, D, dtable.data());
    h.Add("out", out);
    h.Add("dtable", dtable);
  }});
  cases.push_back({"cross_entropy", [](CaseHasher& h) {
    const int64_t R = 17, V = 1000;
    Vec logits = Rand(R * V, 90, 10.0f), lse(R), d(R * V);
    std::vector<int32_t> tgt(R);
    for (int64_t r = 0; r < R; ++r) tgt[r] = r % 5 == 3 ? -100 : static_cast<int32_t>((r * 97) % V);
    const CrossEntropySums s = CrossEntropyForward(logits.data(), tgt.data(), R, V, -100, lse.data());
    CrossEntropyBackward(logits.data(), tgt.data(), lse.data(), R, V, -100,
                         1.0f / static_cast<float>(s.valid), 1e-4f, d.data());
    h.AddScalar("nll_sum", s.nll_sum);
    h.AddScalar("lse_sq_sum", s.lse_sq_sum);
    h.Add("lse", lse);
    h.Add("dlogits", d);
  }});
  cases.push_back({"attention", [](CaseHasher& h) {
    for (int variant = 0; variant < 3; ++variant) {
      AttentionShape s;
      s.batch = 2, s.heads = 3, s.seq = 17, s.head_dim = 16;
      std::vector<int32_t> docs(s.batch * s.seq);
      std::vector<uint8_t> valid(s.batch * s.seq, 1);
      for (int64_t i = 0; i < s.batch * s.seq; ++i) docs[i] = static_cast<int32_t>((i % s.seq) / 6);
      valid[5] = 0;
      valid[s.seq + 16] = 0;
      if (variant >= 1) s.window = 5;
      if (variant >= 2) s.doc_ids = docs.data(), s.key_valid = valid.data();
      const int64_t n = s.batch * s.heads * s.seq * s.head_dim;
      Vec q = Rand(n, 100), k = Rand(n, 101), v = Rand(n, 102), dout = Rand(n, 103);
      Vec out(n), probs(s.batch * s.heads * s.seq * s.seq), dq(n), dk(n), dv(n);
      AttentionForward(s, q.data(), k.data(), v.data(), out.data(), probs.data());
      AttentionBackward(s, q.data(), k.data(), v.data(), probs.data(), dout.data(), dq.data(),
                        dk.data(), dv.data());
      for (const auto& [name, t] : {std::pair<const char*, Vec*>{"out", &out}, {"probs", &probs},
                                    {"dq", &dq}, {"dk", &dk}, {"dv", &dv}})
        h.Add(name, *t);
    }
  }});
  cases.push_back({"optimizer", [](CaseHasher& h) {
    const int64_t n = 1000;
    Vec p = Rand(n, 110), m(n, 0.0f), v(n, 0.0f);
    AdamWHyper hyper{3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
    for (int64_t t = 1; t <= 3; ++t) {
      Vec g = Rand(n, 111 + t, 0.5f);
      AdamWStep(p.data(), g.data(), m.data(), v.data(), n, hyper, t);
    }
    h.Add("p", p);
    h.Add("m", m);
    h.Add("v", v);
    Vec g1 = Rand(255, 120, 3.0f), g2 = Rand(17, 121, 3.0f);
    const GradSpan spans[] = {{g1.data(), 255}, {g2.data(), 17}};
    const float norm = GlobalGradNorm(spans);
    float* ptrs[] = {g1.data(), g2.data()};
    const int64_t sizes[] = {255, 17};
    h.AddScalar("norm", norm);
    h.AddScalar("coef", ClipGradNorm(ptrs, sizes, norm, 1.0f));
    h.Add("g1", g1);
    h.AddScalar("pow", PowInt(0.95f, 12345));
  }});
}

const std::vector<std::pair<std::string, CaseFn>>& AllCases() {
  static const std::vector<std::pair<std::string, CaseFn>> cases = [] {
    std::vector<std::pair<std::string, CaseFn>> c;
    GemmCases(c);
    ReductionAndMathCases(c);
    LayerCases(c);
    return c;
  }();
  return cases;
}

}  // namespace

std::vector<GoldenResult> RunGoldenSuite() {
  std::vector<GoldenResult> out;
  for (const auto& [name, fn] : AllCases()) {
    CaseHasher h;
    fn(h);
    out.push_back({name, h.Finish()});
  }
  return out;
}

const GoldenTable& CommittedGolden() { return CommittedGoldens("repops"); }

}  // namespace trail::repops
