// The transformer against a float64 PyTorch reference (tests/model/model_reference.py, run with
// Debian's python3-torch): logits, loss and every parameter's gradient, for each feature set the
// presets use.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/safetensors.h"
#include "model/float64_reference.h"
#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "repops/kernels.h"

namespace trail::model {
namespace {

repops::Backend& Cpu() {
  static repops::CpuBackend cpu;
  return cpu;
}

struct Case {
  const char* name;
  ModelConfig config;
};

ModelConfig Small() {
  ModelConfig c;
  c.vocab_size = 53, c.d_model = 16, c.n_layers = 3, c.n_heads = 2, c.d_ff = 24;
  c.max_seq_len = 32;
  c.init_std = 0.3f;  // large enough that every path carries signal at this width
  c.init_seed = 11;
  return c;
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  ModelConfig open1b = Small();  // the Open-1B feature set
  open1b.qk_norm = true, open1b.embed_norm = true, open1b.mlp = MlpKind::kSwiGlu;
  open1b.attention_window = 4, open1b.full_attention_every = 2, open1b.full_attention_last = true;
  open1b.z_loss = 1e-2f, open1b.tied_embeddings = true;
  out.push_back({"open1b_features", open1b});
  ModelConfig gpt2 = Small();  // GPT-2's: GELU, untied head, gains, full attention
  gpt2.mlp = MlpKind::kGelu, gpt2.tied_embeddings = false;
  out.push_back({"gpt2_features", gpt2});
  ModelConfig gainless = Small();  // gain-free norms, sliding window everywhere, untied SwiGLU
  gainless.norm_gain = false, gainless.attention_window = 3, gainless.full_attention_last = false;
  gainless.tied_embeddings = false, gainless.embed_norm = true;
  out.push_back({"gainless_window", gainless});
  ModelConfig gqa = open1b;  // grouped-query attention: 4 query heads on 2 K/V heads
  gqa.n_heads = 4, gqa.n_kv_heads = 2;
  out.push_back({"gqa", gqa});
  ModelConfig qwen3 = gqa;  // Qwen3's QK-norm with learned gains, on grouped-query attention
  qwen3.qk_norm_gain = true;
  out.push_back({"qwen3_qk_gains", qwen3});
  ModelConfig wide_heads = qwen3;  // Qwen3's head_dim: 4 heads of 6, q [16, 24], o [24, 16]
  wide_heads.head_size = 6;
  out.push_back({"qwen3_wide_heads", wide_heads});
  ModelConfig narrow = wide_heads;  // post-norm, QK-norm over q_dim 8 < d_model 16 (2 heads of 4)
  narrow.qk_norm_projection = narrow.post_norm = true;
  narrow.n_heads = 2, narrow.n_kv_heads = 0, narrow.head_size = 4;
  out.push_back({"olmo2_narrow_heads", narrow});
  ModelConfig llama3 = gpt2;  // Llama 3's RoPE scaling: hd 8's frequencies in all three bands
  llama3.rope_scaling = {
      .factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f, .original_max_pos = 64};
  out.push_back({"llama3_rope", llama3});
  ModelConfig mqa = gpt2;  // multi-query attention: 4 query heads on one K/V head
  mqa.n_heads = 4, mqa.n_kv_heads = 1;
  out.push_back({"mqa", mqa});
  // OLMo 2: post-norm, QK-norm over the whole projections with gains [d], [kv_dim], untied
  // head, grouped-query attention.
  ModelConfig olmo2 = gpt2;
  olmo2.mlp = MlpKind::kSwiGlu, olmo2.n_heads = 4, olmo2.n_kv_heads = 2, olmo2.post_norm = true;
  olmo2.qk_norm = olmo2.qk_norm_gain = olmo2.qk_norm_projection = true;
  out.push_back({"olmo2", olmo2});
  // The same layout without gains, with a tied head, windows and the embedding norm.
  ModelConfig post_gainless = olmo2;
  post_gainless.norm_gain = false, post_gainless.qk_norm_gain = false;
  post_gainless.tied_embeddings = true, post_gainless.embed_norm = true;
  post_gainless.attention_window = 4, post_gainless.n_kv_heads = 1;
  out.push_back({"post_norm_gainless", post_gainless});
  return out;
}

// Three rows of 12: one document; two documents (positions restart); a document then padding.
struct Batch {
  int64_t rows = 3, T = 12;
  std::vector<int32_t> inputs, labels, doc_ids, positions, key_valid;
  std::vector<uint8_t> valid_u8;
  BatchView View() const {
    return {rows,           T, inputs.data(), labels.data(), doc_ids.data(), positions.data(),
            valid_u8.data()};
  }
};

Batch MakeBatch(int64_t vocab) {
  Batch b;
  const int64_t n = b.rows * b.T;
  b.inputs.resize(n), b.labels.resize(n), b.doc_ids.resize(n), b.positions.resize(n);
  b.key_valid.assign(n, 1);
  for (int64_t i = 0; i < n; ++i) b.inputs[i] = static_cast<int32_t>((i * 37 + 11) % vocab);
  for (int64_t t = 0; t < b.T; ++t) {
    b.doc_ids[b.T + t] = t < 5 ? 0 : 1;
    b.positions[t] = int32_t(t);
    b.positions[b.T + t] = int32_t(t < 5 ? t : t - 5);
    b.positions[2 * b.T + t] = int32_t(t < 8 ? t : 7);
    if (t >= 8) b.key_valid[2 * b.T + t] = 0;
  }
  for (int64_t r = 0; r < b.rows; ++r) {
    for (int64_t t = 0; t < b.T; ++t) {
      const int64_t i = r * b.T + t;
      const bool ok = t + 1 < b.T && b.doc_ids[i] == b.doc_ids[i + 1] && b.key_valid[i + 1];
      b.labels[i] = ok ? b.inputs[i + 1] : kIgnoreLabel;
    }
  }
  b.valid_u8.assign(b.key_valid.begin(), b.key_valid.end());
  return b;
}

// ||a - ref|| / ||ref|| and max |a - ref| / max |ref| over one tensor.
struct Err {
  double rel_l2 = 0, rel_max = 0;
};
Err Compare(const float* a, const double* ref, int64_t n) {
  double num = 0, den = 0, maxd = 0, maxr = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = double(a[i]) - ref[i];
    num += e * e, den += ref[i] * ref[i];
    maxd = std::max(maxd, std::fabs(e)), maxr = std::max(maxr, std::fabs(ref[i]));
  }
  return {std::sqrt(num / std::max(den, 1e-300)), maxd / std::max(maxr, 1e-300)};
}

class ModelVsTorch : public ::testing::TestWithParam<Case> {};

TEST_P(ModelVsTorch, LogitsLossAndEveryGradientMatchFloat64) {
  const ModelConfig c = GetParam().config;
  ParameterSet params(c, Cpu()), grads(c, Cpu());
  params.InitRandom(c);
  // Gains away from 1, each tensor its own, so a gain applied in the wrong place shows.
  for (DeviceTensor& t : params.tensors()) {
    if (t.rank() != 1) continue;
    const float phase = float(t.numel() + t.name().size());
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1.0f + 0.2f * std::sin(phase + i);
  }
  const Batch b = MakeBatch(c.vocab_size);
  int64_t valid = 0;
  for (int32_t l : b.labels) valid += l != kIgnoreLabel;
  Transformer model(c, Cpu());
  Activations acts(c, b.rows, b.T, Cpu());
  const float scale = 1.0f / float(valid);
  const repops::CrossEntropySums sums = model.Forward(params, b.View(), acts);
  std::vector<float> logits(b.rows * b.T * c.vocab_size);
  Cpu().CopyToHost(Transformer::Logits(acts, b.rows, b.T), logits.data());
  model.ForwardBackward(params, b.View(), scale, acts, grads);
  const float loss = (sums.nll_sum + c.z_loss * sums.lse_sq_sum) * scale;

  TempDir dir;
  std::vector<Tensor> batch_t;
  batch_t.push_back(ReferenceI32("inputs", b.inputs, b.rows, b.T));
  batch_t.push_back(ReferenceI32("labels", b.labels, b.rows, b.T));
  batch_t.push_back(ReferenceI32("doc_ids", b.doc_ids, b.rows, b.T));
  batch_t.push_back(ReferenceI32("positions", b.positions, b.rows, b.T));
  batch_t.push_back(ReferenceI32("key_valid", b.key_valid, b.rows, b.T));
  const SafetensorsFile ref = RunFloat64Reference(c, params, batch_t, dir.path(), TRAIL_SOURCE_DIR);

  // Tolerances. Every op is fp32 with unit roundoff u = 6e-8; dot products here run over at
  // most 53 terms, trail's Exp/Log/Tanh/Sin/Cos are within 2.5 ULP, and errors pass through 3
  // layers of norms and attention. Measured errors are ~1e-6 relative; the bounds leave 10-50×
  // margin, while a wrong formula (a missing term, a wrong mask or scale) gives errors of
  // order 1e-2 to 1.
  const Err le = Compare(logits.data(), ref.Find("logits")->data<double>(),
                         static_cast<int64_t>(logits.size()));
  EXPECT_LT(le.rel_max, 2e-5) << "logits";
  const double ref_loss = ref.Find("loss")->data<double>()[0];
  EXPECT_NEAR(loss, ref_loss, 2e-6 * std::fabs(ref_loss)) << "loss";
  for (const DeviceTensor& g : grads.tensors()) {  // on the cpu device: host-readable
    const Tensor* r = ref.Find("grad." + g.name());
    ASSERT_NE(r, nullptr) << g.name();
    const Err e = Compare(g.data<float>(), r->data<double>(), g.numel());
    EXPECT_LT(e.rel_l2, 5e-5) << g.name();
    EXPECT_LT(e.rel_max, 1e-4) << g.name();
    RecordProperty(g.name(), std::to_string(e.rel_l2));
  }
}

INSTANTIATE_TEST_SUITE_P(Features, ModelVsTorch, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// Cosine similarity of two tensors.
double Cosine(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i)
    ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

// int8 QAT of the block matrices: the model's loss and every gradient stay close to the fp32
// model's on the same parameters (the op itself is checked exactly against float64 in
// repops/int8_linear_test.cc; this checks that every product of the model is wired through it,
// forward and backward, in both backward modes).
TEST_P(ModelVsTorch, Int8QatFollowsTheFp32Model) {
  const ModelConfig c32 = GetParam().config;
  ParameterSet params(c32, Cpu()), g32(c32, Cpu());
  params.InitRandom(c32);
  const Batch b = MakeBatch(c32.vocab_size);
  Transformer m32(c32, Cpu());
  Activations a32(c32, b.rows, b.T, Cpu());
  const double loss32 = m32.ForwardBackward(params, b.View(), 1.0f, a32, g32).nll_sum;
  for (repops::Int8Backward mode : {repops::Int8Backward::kInt8, repops::Int8Backward::kFp32}) {
    ModelConfig c8 = c32;
    c8.linear_quant = LinearQuant::kInt8Lsq, c8.quant_backward = mode;
    ParameterSet g8(c8, Cpu());
    Transformer m8(c8, Cpu());
    Activations a8(c8, b.rows, b.T, Cpu());
    const double loss8 = m8.ForwardBackward(params, b.View(), 1.0f, a8, g8).nll_sum;
    const char* label = QuantBackwardName(mode);
    // 8-bit operands perturb each product by ~0.5% (1/127 of a row's or channel's largest
    // value per element, over 16-24 terms): the summed NLL moves by well under 1%. Gradient
    // directions move by a few percent, most for Wq and Wk, whose gradient passes through the
    // softmax derivative (measured minimum cosine 0.956, in both backward modes alike, so it is
    // the forward's perturbation). 0.93 leaves margin; a gradient that skipped a product, took
    // a wrong transpose or scale, or lost its clip mask entirely is far below it.
    // Post-norm (OLMo 2) normalizes each block's perturbed output to the residual stream's own
    // scale instead of adding a small update to it, so the same per-product perturbation moves
    // the loss and the gradients several times more here (measured: loss 1.4%; minimum cosine
    // 0.83 with gains, 0.73 for layer 0's Wk of the gain-free multi-query case, whose one
    // 8-wide key head sums the perturbation of every query head; both backward modes alike,
    // so again the forward's). Bounds 3% and 0.6 keep the margin; a wrong wiring is near 0.
    const bool post = c32.post_norm;
    EXPECT_NEAR(loss8, loss32, (post ? 0.03 : 0.01) * std::fabs(loss32)) << label;
    EXPECT_NE(loss8, loss32) << label << ": the int8 path was not taken";
    for (size_t i = 0; i < g8.tensors().size(); ++i) {
      const DeviceTensor& t8 = g8.tensors()[i];
      const double cos = Cosine(t8.data<float>(), g32.tensors()[i].data<float>(), t8.numel());
      // QK-norm's gains have hd = 4 elements here, each a sum over every (token, head) row of
      // a product that passes through the softmax derivative: the perturbation does not
      // average out over 4 directions (measured 0.90 in layer 2, both modes); still far from
      // a wrong wiring's cosine near 0.
      const bool qk_gain = t8.name().find("_norm.gain") != std::string::npos &&
                           t8.name().find("attn.") != std::string::npos;
      EXPECT_GT(cos, post ? 0.6 : qk_gain ? 0.8 : 0.93) << label << " " << t8.name();
      RecordProperty(std::string(label) + "." + t8.name(), std::to_string(cos));
    }
  }
}

// Held weights are quantized by the first forward and reused until released (a step's
// micro-batches); shown here by changing the weights while held, which the contract forbids.
TEST(Int8Qat, HeldWeightsAreQuantizedOnceUntilReleased) {
  ModelConfig c = Small();
  c.linear_quant = LinearQuant::kInt8Lsq;
  ParameterSet params(c, Cpu());
  params.InitRandom(c);
  const Batch b = MakeBatch(c.vocab_size);
  Transformer model(c, Cpu());
  Activations acts(c, b.rows, b.T, Cpu());
  const double fresh = model.Forward(params, b.View(), acts).nll_sum;
  acts.HoldQuantizedWeights(true);
  EXPECT_EQ(model.Forward(params, b.View(), acts).nll_sum, fresh);
  float* wq = params.layers[0].wq->data<float>();
  for (int64_t i = 0; i < params.layers[0].wq->numel(); ++i) wq[i] = -wq[i];
  EXPECT_EQ(model.Forward(params, b.View(), acts).nll_sum, fresh) << "held: not re-quantized";
  acts.HoldQuantizedWeights(false);
  EXPECT_NE(model.Forward(params, b.View(), acts).nll_sum, fresh) << "released: re-quantized";
}

// Every op output, in order, as (op, layer, tensor, SHA-256 of the bytes): what a trace records.
class Recorder : public OpObserver {
 public:
  void Output(const char* op, int64_t layer, const char* tensor, const OpOutput& out) override {
    const std::vector<float> x = out.ToHost();
    std::string bytes(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
    seen.push_back(std::string(op) + "/" + std::to_string(layer) + "/" + tensor + "/" + bytes);
  }
  std::vector<std::string> seen;
};

// With Recompute::kLayers the loss, every gradient and every observed op output are the bits
// of the run that keeps its activations, for each feature set, fp32 and both int8 backwards;
// and a second step on the same activations too (nothing stale carries over).
TEST(Recompute, LayersGiveTheSameBitsAndTheSameObservedOps) {
  for (const Case& base : Cases()) {
    for (int arith = 0; arith < 3; ++arith) {  // fp32; int8 with int8 backward; fp32 backward
      ModelConfig c = base.config;
      if (arith > 0) c.linear_quant = LinearQuant::kInt8Lsq;
      if (arith == 2) c.quant_backward = repops::Int8Backward::kFp32;
      ParameterSet params(c, Cpu());
      params.InitRandom(c);
      const Batch b = MakeBatch(c.vocab_size);
      std::vector<std::vector<Tensor>> grads_of[2];
      std::vector<std::string> ops_of[2];
      double loss_of[2][2];
      for (Recompute r : {Recompute::kNone, Recompute::kLayers}) {
        const int i = r == Recompute::kLayers;
        Transformer model(c, Cpu());
        Recorder rec;
        model.set_observer(&rec);
        Activations acts(c, b.rows, b.T, Cpu(), r);
        ParameterSet grads(c, Cpu());
        for (int step = 0; step < 2; ++step) {
          loss_of[i][step] = model.ForwardBackward(params, b.View(), 0.01f, acts, grads).nll_sum;
          grads_of[i].push_back(grads.ToHost());
        }
        ops_of[i] = rec.seen;
      }
      const std::string what = std::string(base.name) + " arithmetic " + std::to_string(arith);
      EXPECT_EQ(loss_of[0][0], loss_of[1][0]) << what;
      EXPECT_EQ(loss_of[0][1], loss_of[1][1]) << what;
      EXPECT_EQ(ops_of[0], ops_of[1]) << what;
      ASSERT_EQ(grads_of[0].size(), grads_of[1].size());
      for (size_t k = 0; k < grads_of[0].size(); ++k) {
        ASSERT_EQ(grads_of[0][k].size(), grads_of[1][k].size());
        for (size_t t = 0; t < grads_of[0][k].size(); ++t) {
          const Tensor &x = grads_of[0][k][t], &y = grads_of[1][k][t];
          ASSERT_EQ(x.nbytes(), y.nbytes());
          EXPECT_EQ(std::memcmp(x.data<float>(), y.data<float>(), x.nbytes()), 0)
              << what << " tensor " << t;
        }
      }
    }
  }
}

// Recomputation keeps one layer's activations (and one layer's quantized inputs) instead of
// every layer's: the planned bytes shrink by (layers - 1) layers' worth.
TEST(Recompute, KeepsEveryLayerInputAndOneLayerOfTheRest) {
  ModelConfig c = Preset("gpt2-small");
  c.vocab_size = 1000, c.max_seq_len = 64;
  const int64_t keep = Activations::PlannedBytes(c, 2, 64);
  const int64_t recompute = Activations::PlannedBytes(c, 2, 64, Recompute::kLayers);
  EXPECT_LT(recompute, keep / 3) << "12 layers: roughly a tenth of the layers' bytes remain";
  c.linear_quant = LinearQuant::kInt8Lsq;
  EXPECT_LT(Activations::PlannedBytes(c, 2, 64, Recompute::kLayers),
            Activations::PlannedBytes(c, 2, 64));
}

TEST(ModelPresets, EachRunsAForwardAndBackwardWithTheLossOfAnUntrainedModel) {
  for (const std::string& name : PresetNames()) {
    ModelConfig c = Preset(name);
    c.vocab_size = 512;
    ParameterSet params(c, Cpu()), grads(c, Cpu());
    params.InitRandom(c);
    Transformer model(c, Cpu());
    const int64_t T = 32;
    Activations acts(c, 1, T, Cpu());
    std::vector<int32_t> in(T), labels(T);
    for (int64_t t = 0; t < T; ++t)
      in[t] = int32_t((t * 131 + 7) % 512), labels[t] = in[(t + 1) % T];
    labels[T - 1] = kIgnoreLabel;
    const BatchView b{1, T, in.data(), labels.data(), nullptr, nullptr, nullptr};
    const repops::CrossEntropySums s =
        model.ForwardBackward(params, b, 1.0f / (T - 1), acts, grads);
    const double loss = s.nll_sum / double(T - 1);
    // At initialization the logits are small: the loss is near ln(512) = 6.24.
    EXPECT_NEAR(loss, std::log(512.0), 0.5) << name;
    double sq = 0;
    for (const Tensor& g : grads.ToHost()) {
      for (float x : g.span<float>()) sq += double(x) * x;
    }
    EXPECT_TRUE(std::isfinite(sq) && sq > 0) << name;
  }
}

TEST(Activations, PlannedBytesAreWhatTheConstructorAllocates) {
  for (const std::string& name : PresetNames()) {
    for (bool flip : {false, true}) {
      ModelConfig c = Preset(name);
      c.vocab_size = 300;
      c.max_seq_len = 48;
      if (flip) c.qk_norm = !c.qk_norm, c.embed_norm = !c.embed_norm, c.n_kv_heads = 1;
      if (flip) c.post_norm = true, c.qk_norm_projection = c.qk_norm;
      c.mlp = flip != (c.mlp == MlpKind::kSwiGlu) ? MlpKind::kSwiGlu : MlpKind::kGelu;
      EXPECT_EQ(Activations::PlannedBytes(c, 3, 40), Activations(c, 3, 40, Cpu()).bytes())
          << name << flip;
      c.linear_quant = LinearQuant::kInt8Lsq;
      c.quant_backward = flip ? repops::Int8Backward::kFp32 : repops::Int8Backward::kInt8;
      EXPECT_EQ(Activations::PlannedBytes(c, 3, 40), Activations(c, 3, 40, Cpu()).bytes())
          << name << flip << " int8";
      for (LinearQuant q : {LinearQuant::kNone, LinearQuant::kInt8Lsq}) {
        c.linear_quant = q;
        EXPECT_EQ(Activations::PlannedBytes(c, 3, 40, Recompute::kLayers),
                  Activations(c, 3, 40, Cpu(), Recompute::kLayers).bytes())
            << name << flip << " recompute " << LinearQuantName(q);
      }
    }
  }
}

// Heads wider and narrower than d_model / n_heads (head_dim): the buffers the plan counts are
// the ones allocated, in fp32 and int8, with and without recomputation and QK-norm.
TEST(Activations, PlannedBytesFollowTheHeadWidth) {
  for (const std::string& name : PresetNames()) {
    for (int64_t scale : {2, -2}) {  // heads twice and half d_model / n_heads wide
      ModelConfig c = Preset(name);
      c.vocab_size = 300, c.max_seq_len = 48;
      const int64_t hd = c.d_model / c.n_heads;
      c.head_size = scale > 0 ? hd * scale : hd / -scale;
      c.qk_norm = scale > 0, c.qk_norm_projection = scale > 0, c.n_kv_heads = 1;
      ASSERT_NE(c.q_dim(), c.d_model) << name;
      for (LinearQuant q : {LinearQuant::kNone, LinearQuant::kInt8Lsq}) {
        c.linear_quant = q;
        for (Recompute r : {Recompute::kNone, Recompute::kLayers}) {
          EXPECT_EQ(Activations::PlannedBytes(c, 3, 40, r), Activations(c, 3, 40, Cpu(), r).bytes())
              << name << " head_dim " << c.head_size << " " << LinearQuantName(q) << " "
              << RecomputeName(r);
        }
      }
    }
  }
}

// Cost's parameter count is the parameter set's, whatever the head width, gains and head.
TEST(ModelConfig, CostCountsTheParameterSet) {
  for (const std::string& name : PresetNames()) {
    for (int64_t head_size : {0, 16, 96}) {
      ModelConfig c = Preset(name);
      c.vocab_size = 300, c.head_size = head_size, c.n_kv_heads = 1;
      c.qk_norm = c.qk_norm_gain = true, c.qk_norm_projection = head_size == 96;
      c.tied_embeddings = head_size != 16;
      c.linear_quant = LinearQuant::kInt8Lsq, c.quant_step_learned = head_size != 0;
      const ParameterSet p(c, Cpu(), "", Memory::kUnbound);
      int64_t count = 0;
      for (const DeviceTensor& t : p.tensors()) count += t.numel();
      EXPECT_EQ(Cost(c, 64).parameters, count) << name << " head_dim " << head_size;
    }
  }
}

TEST(ModelConfig, PresetsAreValidAndCosted) {
  for (const std::string& name : PresetNames()) {
    ModelConfig c = Preset(name);
    c.vocab_size = 16384;
    EXPECT_NO_THROW(c.Validate()) << name;
    const ModelCost cost = Cost(c, 256);
    EXPECT_GT(cost.flops_per_token, 6.0 * double(cost.matmul_parameters)) << name;
  }
  ModelConfig o = Preset("open1b-style");
  o.vocab_size = 100;
  // Every fifth layer and the last attend fully; the rest within 512 keys.
  EXPECT_EQ(o.LayerWindow(0), 512);
  EXPECT_EQ(o.LayerWindow(4), 0);
  EXPECT_EQ(o.LayerWindow(8), 512);
  EXPECT_EQ(o.LayerWindow(9), 0);
  ModelConfig g = Preset("gpt2-small");
  g.vocab_size = 50257;
  // GPT-2 small's 124M parameters (tied head; RoPE instead of its 0.8M position embeddings).
  const ModelCost gc = Cost(g, 1024);
  EXPECT_NEAR(double(gc.parameters), 124e6, 2e6);
  ModelConfig bad = Preset("tiny");
  bad.vocab_size = 10, bad.n_heads = 3;
  EXPECT_THROW(bad.Validate(), Error);
  EXPECT_THROW(Preset("huge"), Error);
}

}  // namespace
}  // namespace trail::model
