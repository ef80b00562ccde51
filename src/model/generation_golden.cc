#include "model/generation_golden.h"

#include <algorithm>
#include <cstdint>

#include "core/hash.h"
#include "core/le_bytes.h"  // the little-endian host the digest assumes
#include "model/decoder.h"
#include "model/sampler.h"

namespace trail::model {
namespace {

struct Case {
  const char* name;
  ModelConfig config;
  SamplingParams sampling;
};

ModelConfig Base() {
  ModelConfig c;
  c.vocab_size = 97, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
  c.max_seq_len = 40, c.init_std = 0.3f, c.init_seed = 2026;
  return c;
}

std::vector<Case> Cases() {
  ModelConfig open1b = Base();
  open1b.qk_norm = true, open1b.embed_norm = true, open1b.attention_window = 6;
  open1b.full_attention_every = 2;
  ModelConfig gpt2 = Base();
  gpt2.mlp = MlpKind::kGelu, gpt2.tied_embeddings = false;
  ModelConfig int8 = open1b;
  int8.linear_quant = LinearQuant::kInt8Lsq;
  return {{"open1b_greedy", open1b, {0.0f, 0, 1.0f, 0}},
          {"gpt2_sampled", gpt2, {0.8f, 20, 0.9f, 2026}},
          {"int8_sampled", int8, {1.0f, 0, 1.0f, 7}}};
}

constexpr int64_t kPrompt = 9, kChunk = 4, kNewTokens = 24;

std::string RunCase(const Case& k, repops::Backend& be) {
  ParameterSet p(k.config, be);
  p.InitRandom(k.config);
  Decoder dec(k.config, p, be, kPrompt + kNewTokens - 1, kChunk);
  Sampler sampler(be.host_kernels(), k.sampling);
  const int64_t V = k.config.vocab_size;
  std::vector<int32_t> prompt(kPrompt);
  for (int64_t i = 0; i < kPrompt; ++i) prompt[i] = static_cast<int32_t>((i * 13 + 5) % V);
  TensorView last;
  for (int64_t t = 0; t < kPrompt; t += kChunk) {
    last = dec.Extend(prompt.data() + t, std::min(kChunk, kPrompt - t));
  }
  std::vector<float> logits(V);
  Sha256Hasher h;  // the host is little-endian (core/le_bytes.h): float bits hash as LE words
  for (int64_t i = 0; i < kNewTokens; ++i) {
    be.CopyToHost(last, logits.data());
    const SampledToken tok = sampler.Sample(logits.data(), V, kPrompt + i);
    h.Update(logits.data(), logits.size() * sizeof(float));
    h.Update(&tok.id, sizeof tok.id);
    h.Update(&tok.logprob, sizeof tok.logprob);
    if (i + 1 < kNewTokens) last = dec.Extend(&tok.id, 1);
  }
  return ToHex(h.Finish());
}

}  // namespace

std::vector<GoldenGeneration> RunGenerationGolden(repops::Backend& backend) {
  std::vector<GoldenGeneration> out;
  for (const Case& k : Cases()) out.push_back({k.name, RunCase(k, backend)});
  return out;
}

}  // namespace trail::model
