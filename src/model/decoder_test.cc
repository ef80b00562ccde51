// The KV-cache decoder against the training forward: the logits of every position, however the
// sequence is split into a prefill and decode steps, must have the bits of one full forward
// over the sequence, for every feature set, int8 QAT, each SIMD target and the guarded device.
#include "model/decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/golden.h"
#include "model/generation_golden.h"
#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "repops/guarded_backend.h"
#include "repops/kernels.h"

namespace trail::model {
namespace {

ModelConfig Small() {
  ModelConfig c;
  c.vocab_size = 41, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.d_ff = 24;
  c.max_seq_len = 80, c.init_std = 0.3f, c.init_seed = 9;
  return c;
}

std::vector<std::pair<std::string, ModelConfig>> Configs() {
  std::vector<std::pair<std::string, ModelConfig>> out;
  ModelConfig open1b = Small();
  open1b.qk_norm = true, open1b.embed_norm = true;
  open1b.attention_window = 5, open1b.full_attention_every = 2, open1b.tied_embeddings = true;
  out.push_back({"open1b_features", open1b});
  ModelConfig gpt2 = Small();
  gpt2.mlp = MlpKind::kGelu, gpt2.tied_embeddings = false;
  out.push_back({"gpt2_features", gpt2});
  ModelConfig gainless = Small();
  gainless.norm_gain = false, gainless.attention_window = 3, gainless.full_attention_last = false;
  out.push_back({"gainless_window", gainless});
  ModelConfig q = open1b;
  q.linear_quant = LinearQuant::kInt8Lsq;
  out.push_back({"int8", q});
  ModelConfig learned = q;
  learned.quant_step_learned = true;
  out.push_back({"int8_learned_steps", learned});
  ModelConfig gqa = open1b;  // 4 query heads on 2 K/V heads: the cache is 2 heads wide
  gqa.n_heads = 4, gqa.n_kv_heads = 2;
  out.push_back({"gqa", gqa});
  ModelConfig qwen3 = gqa;  // QK-norm with learned gains (CheckConfig sets gains away from 1)
  qwen3.qk_norm_gain = true;
  out.push_back({"qwen3_qk_gains", qwen3});
  ModelConfig wide_heads = qwen3;  // heads of 6 (q_dim 24 > d_model 16), int8 products
  wide_heads.head_size = 6, wide_heads.linear_quant = LinearQuant::kInt8Lsq;
  out.push_back({"qwen3_wide_heads_int8", wide_heads});
  ModelConfig mqa = gpt2;  // 4 query heads on one K/V head, int8 products
  mqa.n_heads = 4, mqa.n_kv_heads = 1, mqa.linear_quant = LinearQuant::kInt8Lsq;
  out.push_back({"mqa_int8", mqa});
  // OLMo 2: post-norm, QK-norm over whole projections with gains, untied; and the same with
  // int8 products on one K/V head.
  ModelConfig olmo2 = gqa;
  olmo2.post_norm = olmo2.qk_norm_projection = olmo2.qk_norm_gain = true;
  olmo2.tied_embeddings = false, olmo2.embed_norm = false;
  out.push_back({"olmo2", olmo2});
  ModelConfig olmo2_int8 = olmo2;
  olmo2_int8.n_kv_heads = 1, olmo2_int8.linear_quant = LinearQuant::kInt8Lsq;
  out.push_back({"olmo2_mqa_int8", olmo2_int8});
  return out;
}

std::vector<int32_t> Tokens(int64_t T, int64_t vocab) {
  std::vector<int32_t> t(T);
  for (int64_t i = 0; i < T; ++i) t[i] = static_cast<int32_t>((i * 29 + 7) % vocab);
  return t;
}

// Transformer::Forward's logits [T, V] over one row of the tokens.
// Every gain away from 1, each tensor its own (through the backend: p may live on a device), so
// a gain applied in the wrong place shows.
void SpreadGains(ParameterSet& p, repops::Backend& be) {
  for (DeviceTensor& t : p.tensors()) {
    if (t.rank() != 1) continue;
    std::vector<float> g(static_cast<size_t>(t.numel()));
    const float phase = float(t.numel() + t.name().size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = 1.0f + 0.2f * std::sin(phase + float(i));
    be.CopyFromHost(g.data(), t.view());
  }
}

std::vector<float> FullForward(const ModelConfig& c, const ParameterSet& p, repops::Backend& be,
                               const std::vector<int32_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  const std::vector<int32_t> labels(T, kIgnoreLabel);
  Transformer model(c, be);
  Activations acts(c, 1, T, be);
  model.Forward(p, {1, T, tokens.data(), labels.data()}, acts);
  std::vector<float> out(T * c.vocab_size);
  be.CopyToHost(Transformer::Logits(acts, 1, T), out.data());
  return out;
}

// The logits [T, V] a decoder returned, and which positions it returned them for.
struct Returned {
  std::vector<float> logits;
  std::vector<bool> has;
};

// Extends by the chunk sizes in `split` (repeating the last), asking in turn for every row's
// logits, the last row's and the last three rows'.
Returned Decoded(Decoder& dec, repops::Backend& be, const std::vector<int32_t>& tokens,
                 const std::vector<int64_t>& split, int64_t V) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  Returned out{std::vector<float>(T * V), std::vector<bool>(T)};
  size_t s = 0;
  for (int64_t t = 0; t < T;) {
    const int64_t n = std::min(split[std::min(s++, split.size() - 1)], T - t);
    const int64_t rows = s % 3 == 1 ? n : s % 3 == 2 ? 1 : std::min<int64_t>(n, 3);
    const TensorView logits = dec.Extend(tokens.data() + t, n, rows);
    const int64_t first = t + n - rows;
    be.CopyToHost(logits, out.logits.data() + first * V);
    for (int64_t r = first; r < t + n; ++r) out.has[r] = true;
    t += n;
  }
  return out;
}

void ExpectSameBits(const std::vector<float>& full, const Returned& dec, int64_t V,
                    const std::string& what) {
  ASSERT_EQ(full.size(), dec.logits.size());
  int64_t checked = 0;
  for (size_t r = 0; r < dec.has.size(); ++r) {
    if (!dec.has[r]) continue;
    ++checked;
    ASSERT_EQ(std::memcmp(full.data() + r * V, dec.logits.data() + r * V, V * 4), 0)
        << what << ": position " << r;
  }
  EXPECT_GT(checked, 0) << what;
}

void CheckConfig(const std::string& name, const ModelConfig& c, repops::Backend& be) {
  ParameterSet p(c, be);
  p.InitRandom(c);
  SpreadGains(p, be);
  const int64_t T = 75, V = c.vocab_size;  // 75 > 64: the attention's query blocks split
  const std::vector<int32_t> tokens = Tokens(T, V);
  const std::vector<float> full = FullForward(c, p, be, tokens);
  Decoder dec(c, p, be, T, 70);
  // The cache: keys and values of every layer, Hkv·hd floats a position (a quarter of
  // multi-head's for 4 query heads on one key/value head).
  EXPECT_EQ(dec.cache_bytes(), 2 * c.n_layers * T * c.kv_dim() * 4) << name;
  const std::vector<std::vector<int64_t>> splits = {{1}, {70, 1}, {9, 1, 3, 64}, {2, 65, 8}};
  for (const auto& split : splits) {
    dec.Truncate(0);
    const std::string what = name + " split " + std::to_string(split[0]) + "...";
    ExpectSameBits(full, Decoded(dec, be, tokens, split, V), V, what);
  }
  // A kept prefix: the cache's first 40 positions, then the rest again.
  dec.Truncate(40);
  Returned tail{std::vector<float>(T * V), std::vector<bool>(T)};
  const TensorView logits = dec.Extend(tokens.data() + 40, T - 40, T - 40);
  be.CopyToHost(logits, tail.logits.data() + 40 * V);
  for (int64_t r = 40; r < T; ++r) tail.has[r] = true;
  ExpectSameBits(full, tail, V, name + " after Truncate(40)");
}

TEST(Decoder, EveryChunkingGivesTheFullForwardsBits) {
  for (const auto& [name, c] : Configs()) {
    repops::CpuBackend cpu;
    CheckConfig(name, c, cpu);
  }
}

TEST(Decoder, OnEverySimdTargetAndTheGuardedDevice) {
  const repops::SimdTarget best = repops::BestSimdTarget();
  for (const repops::SimdTarget& target : repops::AvailableSimdTargets()) {
    repops::UseSimdTarget(target);
    repops::CpuBackend cpu;
    CheckConfig(target.name + " open1b", Configs()[0].second, cpu);
  }
  repops::UseSimdTarget(best);
  repops::GuardedBackend guarded;
  CheckConfig("guarded int8", Configs()[3].second, guarded);
  CheckConfig("guarded gqa", Configs()[5].second, guarded);
  EXPECT_FALSE(guarded.memory().is_open());
}

TEST(Decoder, RefusesWhatDoesNotFitAndKeepsItsCache) {
  const ModelConfig c = Configs()[0].second;
  repops::CpuBackend cpu;
  ParameterSet p(c, cpu);
  p.InitRandom(c);
  Decoder dec(c, p, cpu, 10, 4);
  const std::vector<int32_t> tokens = Tokens(10, c.vocab_size);
  EXPECT_THROW(dec.Extend(tokens.data(), 5), Error);     // more than a chunk
  EXPECT_THROW(dec.Extend(tokens.data(), 2, 3), Error);  // more logit rows than tokens
  dec.Extend(tokens.data(), 4);
  dec.Extend(tokens.data() + 4, 4);
  EXPECT_THROW(dec.Extend(tokens.data(), 3), Error);  // past the capacity
  const int32_t bad[2] = {3, static_cast<int32_t>(c.vocab_size)};
  EXPECT_THROW(dec.Extend(bad, 2), Error);
  EXPECT_EQ(dec.length(), 8);
  EXPECT_THROW(dec.Truncate(9), Error);
  EXPECT_THROW(Decoder(c, p, cpu, c.max_seq_len + 1, 4), Error);
  EXPECT_GT(dec.bytes(), 2 * 2 * 10 * 16 * 4);
}

// The committed golden generations (goldens/generation.txt) on the active SIMD target and on
// the scalar reference.
TEST(GenerationGolden, ReproducesTheCommittedDigests) {
  const GoldenTable& golden = CommittedGoldens("generation");
  ASSERT_EQ(golden.size(), 3u);
  const repops::SimdTarget best = repops::BestSimdTarget();
  for (const repops::SimdTarget& target : {repops::AvailableSimdTargets().front(), best}) {
    repops::UseSimdTarget(target);
    repops::CpuBackend cpu;
    for (const GoldenGeneration& g : RunGenerationGolden(cpu)) {
      ASSERT_TRUE(golden.count(g.name)) << g.name;
      EXPECT_EQ(golden.at(g.name), g.digest) << target.name << " " << g.name;
    }
  }
  repops::UseSimdTarget(best);
}

}  // namespace
}  // namespace trail::model
