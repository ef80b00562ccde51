// The golden suite's op cases: every op of the backend interface (repops/backend.h) that the
// model, loss and optimizer use, run through a backend on Philox inputs of awkward sizes. Each
// case is built exactly as docs/goldens.md specifies, so its digest is the committed one on
// every backend: `trail selftest --device X` checks a device op by op.
#include <cmath>

#include "core/philox.h"
#include "repops/golden_case.h"
#include "repops/math.h"

namespace trail::repops::golden {
namespace {

void GemmCases(std::vector<std::pair<std::string, OpCase>>& cases) {
  struct S {
    int64_t M, K, N;
  };
  for (S s : {S{1, 1, 1}, S{3, 17, 255}, S{17, 255, 3}, S{64, 100, 130}, S{1, 1000, 17},
              S{255, 3, 1000}, S{50, 800, 3080}}) {  // the last crosses K and N blocks
    const std::string tag =
        std::to_string(s.M) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
    cases.push_back({"gemm_nn_" + tag, [s](CaseHasher& h, Backend& be) {
                       DeviceArrays d(be);
                       float *a = d.Up(Rand(s.M * s.K, 1)), *b = d.Up(Rand(s.K * s.N, 2)),
                             *c = d.Zeros(s.M * s.N);
                       be.MatMul(a, b, c, s.M, s.K, s.N, false);
                       h.Add("c", d.Down(c, s.M * s.N));
                       be.MatMul(a, b, c, s.M, s.K, s.N, /*accumulate=*/true);
                       h.Add("c_acc", d.Down(c, s.M * s.N));
                     }});
    cases.push_back({"gemm_bt_" + tag, [s](CaseHasher& h, Backend& be) {
                       DeviceArrays d(be);
                       float *a = d.Up(Rand(s.M * s.K, 3)), *bt = d.Up(Rand(s.N * s.K, 4));
                       float* c = d.Zeros(s.M * s.N);
                       be.MatMulBT(a, bt, c, s.M, s.K, s.N, false);
                       h.Add("c", d.Down(c, s.M * s.N));
                     }});
    cases.push_back({"gemm_at_" + tag, [s](CaseHasher& h, Backend& be) {
                       DeviceArrays d(be);
                       float *at = d.Up(Rand(s.K * s.M, 5)), *b = d.Up(Rand(s.K * s.N, 6));
                       float* c = d.Zeros(s.M * s.N);
                       be.MatMulAT(at, b, c, s.M, s.K, s.N, false);
                       h.Add("c", d.Down(c, s.M * s.N));
                     }});
  }
}

void Int8LinearCase(CaseHasher& h, Backend& be) {
  // M, K, N off every tile size; a zero token row and a zero weight column (step 0).
  const int64_t M = 19, K = 70, N = 45;
  Vec x = Rand(M * K, 15), w = Rand(K * N, 16, 0.08f), dy = Rand(M * N, 17);
  for (int64_t p = 0; p < K; ++p) x[5 * K + p] = 0.0f, w[p * N + 7] = 0.0f;
  w[2 * N + 4] = 5.0f;  // clipped
  DeviceArrays d(be);
  const float *xd = d.Up(x), *wd = d.Up(w), *dyd = d.Up(dy);
  QuantizedInput qx(be.allocator());
  be.QuantizeInput(xd, M, K, qx);
  Int8Scratch s(be.allocator());
  for (Int8Backward mode : {Int8Backward::kInt8, Int8Backward::kFp32}) {
    QuantizedWeight qw(be.allocator());
    be.QuantizeWeight(wd, K, N, mode, qw, nullptr);
    float *y = d.Zeros(M * N), *dx = d.Zeros(M * K), *dw = d.Zeros(K * N);
    be.Int8LinearForward(qx, qw, s, y);
    be.Int8LinearBackward(qx, dyd, qw, mode, s, dx, false, dw, nullptr, nullptr);
    h.Add("step", d.Down(qw.step.data(), N));  // the backend's quantized operand
    h.Add("y", d.Down(y, M * N));
    h.Add("dx", d.Down(dx, M * K));
    h.Add("dw", d.Down(dw, K * N));
  }
}

void RmsNormCase(CaseHasher& h, Backend& be) {
  const int64_t R = 17, D = 255;
  DeviceArrays d(be);
  const float *x = d.Up(Rand(R * D, 40, 2.0f)), *g = d.Up(Rand(D, 41)), *dy = d.Up(Rand(R * D, 42));
  for (bool with_gain : {true, false}) {
    float *y = d.Zeros(R * D), *rstd = d.Zeros(R), *dx = d.Zeros(R * D), *dg = d.Zeros(D);
    const float* gain = with_gain ? g : nullptr;
    be.RmsNormForward(x, gain, 1e-5f, R, D, y, rstd);
    be.RmsNormBackward(dy, x, gain, rstd, R, D, dx, with_gain ? dg : nullptr);
    h.Add("y", d.Down(y, R * D));
    h.Add("rstd", d.Down(rstd, R));
    h.Add("dx", d.Down(dx, R * D));
    h.Add("dg", d.Down(dg, D));
  }
}

void ActivationsCase(CaseHasher& h, Backend& be) {
  const int64_t n = 10007;
  DeviceArrays d(be);
  const float *a = d.Up(Rand(n, 60, 6.0f)), *b = d.Up(Rand(n, 61, 2.0f)), *dh = d.Up(Rand(n, 62));
  float *o = d.Zeros(n), *da = d.Zeros(n), *db = d.Zeros(n);
  be.SwiGluForward(a, b, n, o);
  be.SwiGluBackward(dh, a, b, n, da, db);
  h.Add("swiglu", d.Down(o, n));
  h.Add("swiglu_da", d.Down(da, n));
  h.Add("swiglu_db", d.Down(db, n));
  be.GeluForward(a, n, o);
  be.GeluBackward(dh, a, n, da);
  h.Add("gelu", d.Down(o, n));
  h.Add("gelu_dx", d.Down(da, n));
}

// Hashes the 300-position, head_dim 16 table t (`cos`, `sin`; built on the host and uploaded,
// RopeTableOn), then RoPE on x = Rand(255·16, stream), row r at position (7r) mod 300: `fwd`,
// and with `backward` the inverse rotation of that: `bwd`.
void HashRope(CaseHasher& h, Backend& be, const RopeTable& t, uint64_t stream, bool backward) {
  h.Add("cos", t.cos);
  h.Add("sin", t.sin);
  const DeviceRopeTable table = RopeTableOn(be, t);
  const int64_t rows = 255;
  std::vector<int32_t> pos(rows);
  for (int64_t r = 0; r < rows; ++r) pos[r] = static_cast<int32_t>((r * 7) % 300);
  DeviceArrays d(be);
  float* x = d.Up(Rand(rows * 16, stream));
  const int32_t* p = d.UpI32(pos);
  be.RopeApply(x, rows, 16, p, table.view, false);
  h.Add("fwd", d.Down(x, rows * 16));
  if (!backward) return;
  be.RopeApply(x, rows, 16, p, table.view, true);
  h.Add("bwd", d.Down(x, rows * 16));
}

void RopeCase(CaseHasher& h, Backend& be) {
  HashRope(h, be, MakeRopeTable(300, 16, 10000.0f), 70, /*backward=*/true);
}

// Llama 3's frequency scaling: θ = 500000, factor 8, low 1, high 4, original context 1024, so
// head_dim 16's eight frequencies fall in all three bands (kept, blended, divided).
void RopeLlama3Case(CaseHasher& h, Backend& be) {
  const RopeScaling s{
      .factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f, .original_max_pos = 1024};
  h.Add("inv_freq", RopeInvFreq(16, 500000.0f, s));
  HashRope(h, be, MakeRopeTable(300, 16, 500000.0f, s), 71, /*backward=*/false);
}

void EmbeddingCase(CaseHasher& h, Backend& be) {
  const int64_t V = 255, D = 17, n = 1000;
  std::vector<int32_t> tok(n);
  for (int64_t i = 0; i < n; ++i) tok[i] = static_cast<int32_t>(PhiloxWord(12, 0, i) % 37);
  DeviceArrays d(be);
  const float *table = d.Up(Rand(V * D, 80)), *dout = d.Up(Rand(n * D, 81));
  float *out = d.Zeros(n * D), *dtable = d.Zeros(V * D);
  const int32_t* t = d.UpI32(tok);
  be.EmbeddingForward(table, V, D, t, n, out);
  be.EmbeddingBackward(dout, t, n, V, D, dtable);
  h.Add("out", d.Down(out, n * D));
  h.Add("dtable", d.Down(dtable, V * D));
}

void CrossEntropyCase(CaseHasher& h, Backend& be) {
  const int64_t R = 17, V = 1000;
  std::vector<int32_t> tgt(R);
  for (int64_t r = 0; r < R; ++r) tgt[r] = r % 5 == 3 ? -100 : static_cast<int32_t>((r * 97) % V);
  DeviceArrays d(be);
  const float* logits = d.Up(Rand(R * V, 90, 10.0f));
  float *lse = d.Zeros(R), *dl = d.Zeros(R * V);
  const int32_t* t = d.UpI32(tgt);
  const CrossEntropySums s = be.CrossEntropyForward(logits, t, R, V, -100, lse);
  be.CrossEntropyBackward(logits, t, lse, R, V, -100, 1.0f / static_cast<float>(s.valid), 1e-4f,
                          dl);
  h.AddScalar("nll_sum", s.nll_sum);
  h.AddScalar("lse_sq_sum", s.lse_sq_sum);
  h.Add("lse", d.Down(lse, R));
  h.Add("dlogits", d.Down(dl, R * V));
}

// Forward and backward of `s` (its masks already on the device in d) on q, k, v, dout =
// Rand(·, stream0 + 0, 1, 2, 3), q and dout [B·H·T·hd], k and v [B·Hkv·T·hd]; hashes out, probs,
// dq, dk, dv.
void HashAttention(CaseHasher& h, Backend& be, DeviceArrays& d, const AttentionShape& s,
                   uint64_t stream0) {
  const int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads, block = s.seq * s.head_dim;
  const int64_t nq = s.batch * s.heads * block, nkv = s.batch * kv_heads * block,
                np = s.batch * s.heads * s.seq * s.seq;
  const float *q = d.Up(Rand(nq, stream0)), *k = d.Up(Rand(nkv, stream0 + 1)),
              *v = d.Up(Rand(nkv, stream0 + 2)), *dout = d.Up(Rand(nq, stream0 + 3));
  float *out = d.Zeros(nq), *probs = d.Zeros(np), *dq = d.Zeros(nq), *dk = d.Zeros(nkv),
        *dv = d.Zeros(nkv);
  be.AttentionForward(s, q, k, v, out, probs);
  be.AttentionBackward(s, q, k, v, probs, dout, dq, dk, dv);
  h.Add("out", d.Down(out, nq));
  h.Add("probs", d.Down(probs, np));
  h.Add("dq", d.Down(dq, nq));
  h.Add("dk", d.Down(dk, nkv));
  h.Add("dv", d.Down(dv, nkv));
}

void AttentionCase(CaseHasher& h, Backend& be) {
  for (int variant = 0; variant < 3; ++variant) {
    AttentionShape s;
    s.batch = 2, s.heads = 3, s.seq = 17, s.head_dim = 16;
    std::vector<int32_t> docs(s.batch * s.seq);
    std::vector<uint8_t> valid(s.batch * s.seq, 1);
    for (int64_t i = 0; i < s.batch * s.seq; ++i) docs[i] = static_cast<int32_t>((i % s.seq) / 6);
    valid[5] = 0;
    valid[s.seq + 16] = 0;
    DeviceArrays d(be);
    if (variant >= 1) s.window = 5;
    if (variant >= 2) s.doc_ids = d.UpI32(docs), s.key_valid = d.UpU8(valid);
    HashAttention(h, be, d, s, 100);
  }
}

// Grouped-query attention: 6 query heads on 3 K/V heads (plain causal), then on 1 (multi-query,
// window 5, document masks).
void AttentionGqaCase(CaseHasher& h, Backend& be) {
  for (int64_t kv_heads : {3, 1}) {
    AttentionShape s;
    s.batch = 2, s.heads = 6, s.seq = 13, s.head_dim = 8, s.kv_heads = kv_heads;
    std::vector<int32_t> docs(s.batch * s.seq);
    for (int64_t i = 0; i < s.batch * s.seq; ++i) docs[i] = static_cast<int32_t>((i % s.seq) / 5);
    DeviceArrays d(be);
    if (kv_heads == 1) s.window = 5, s.doc_ids = d.UpI32(docs);
    HashAttention(h, be, d, s, 130);
  }
}

void OptimizerCase(CaseHasher& h, Backend& be) {
  const int64_t n = 1000;
  DeviceArrays d(be);
  float *p = d.Up(Rand(n, 110)), *m = d.Zeros(n), *v = d.Zeros(n);
  const AdamWHyper hyper{3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (int64_t t = 1; t <= 3; ++t) be.AdamWStep(p, d.Up(Rand(n, 111 + t, 0.5f)), m, v, n, hyper, t);
  h.Add("p", d.Down(p, n));
  h.Add("m", d.Down(m, n));
  h.Add("v", d.Down(v, n));
  // The global norm (GlobalGradNorm: per-tensor SumSq added in order) and clipping.
  float *g1 = d.Up(Rand(255, 120, 3.0f)), *g2 = d.Up(Rand(17, 121, 3.0f));
  const float total = 0.0f + be.SumSq(g1, 255);
  const float norm = std::sqrt(total + be.SumSq(g2, 17));
  const float coef = ClipCoefficient(norm, 1.0f);
  if (coef < 1.0f) be.Scale(g1, 255, coef), be.Scale(g2, 17, coef);
  h.AddScalar("norm", norm);
  h.AddScalar("coef", coef);
  h.Add("g1", d.Down(g1, 255));
  h.AddScalar("pow", PowInt(0.95f, 12345));
}

}  // namespace

void AddOpCases(std::vector<std::pair<std::string, OpCase>>& cases) {
  GemmCases(cases);
  cases.push_back({"int8_linear", Int8LinearCase});
  cases.push_back({"rmsnorm", RmsNormCase});
  cases.push_back({"activations", ActivationsCase});
  cases.push_back({"rope", RopeCase});
  cases.push_back({"rope_llama3", RopeLlama3Case});
  cases.push_back({"embedding", EmbeddingCase});
  cases.push_back({"cross_entropy", CrossEntropyCase});
  cases.push_back({"attention", AttentionCase});
  cases.push_back({"attention_gqa", AttentionGqaCase});
  cases.push_back({"optimizer", OptimizerCase});
}

float* DeviceArrays::Up(const Vec& host) {
  buffers_.push_back(UploadTo(be_, host.data(), static_cast<int64_t>(host.size())));
  return buffers_.back().data<float>();
}

float* DeviceArrays::Zeros(int64_t n) {
  buffers_.push_back(AllocateOn<float>(be_, n));
  return buffers_.back().data<float>();
}

int32_t* DeviceArrays::UpI32(const std::vector<int32_t>& host) {
  buffers_.push_back(UploadTo(be_, host.data(), static_cast<int64_t>(host.size())));
  return buffers_.back().data<int32_t>();
}

uint8_t* DeviceArrays::UpU8(const std::vector<uint8_t>& host) {
  std::vector<int8_t> bytes(host.begin(), host.end());
  buffers_.push_back(UploadTo(be_, bytes.data(), static_cast<int64_t>(bytes.size())));
  return reinterpret_cast<uint8_t*>(buffers_.back().data<int8_t>());
}

Vec DeviceArrays::Down(const float* device, int64_t n) const {
  Vec out(n);
  be_.CopyToHost(TensorView::Contiguous(const_cast<float*>(device), DType::kF32, be_.device(), {n}),
                 out.data());
  return out;
}

}  // namespace trail::repops::golden
