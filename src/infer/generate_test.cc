// Generation on a small random model: greedy tokens are the full forward's argmax with its
// log-probabilities' bits; sampled generations depend only on (seed, options), not on how the
// prompt is chunked or the SIMD target; stop strings, EOS, max tokens and the model's context
// end a generation as the header says; streamed text is final when it is emitted.
#include "infer/generate.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "repops/cross_entropy.h"
#include "tokenizer/trainer.h"

namespace trail::infer {
namespace {

const tok::Tokenizer& Tok() {
  static const std::unique_ptr<tok::Tokenizer> t = [] {
    tok::TrainOptions o;
    o.vocab_size = 300, o.pattern = tok::NamedPattern("gpt2"), o.specials = {"<|endoftext|>"};
    o.min_frequency = 1;
    return tok::TrainBpe({"the quick brown fox jumps over the lazy dog", "é ü ß naïve café",
                          "in the beginning was the word"},
                         o);
  }();
  return *t;
}

model::ModelConfig Config() {
  model::ModelConfig c;
  c.vocab_size = Tok().vocab_size(), c.d_model = 32, c.n_layers = 2, c.n_heads = 2, c.d_ff = 48;
  c.max_seq_len = 48, c.init_std = 0.5f, c.init_seed = 4, c.qk_norm = true;
  c.attention_window = 6;
  return c;
}

struct Model {
  repops::CpuBackend cpu;
  model::ModelConfig c = Config();
  model::ParameterSet p{c, cpu};
  Model() { p.InitRandom(c); }
};

std::vector<int32_t> Ids(const std::string& text) {
  std::vector<int32_t> out;
  for (uint32_t id : Tok().Encode(text)) out.push_back(static_cast<int32_t>(id));
  return out;
}

GenerateOptions Options(float temperature, int64_t max_tokens, uint64_t seed = 1) {
  GenerateOptions o;
  o.prompt = Ids("the quick brown");
  o.max_tokens = max_tokens;
  o.sampling.temperature = temperature, o.sampling.seed = seed;
  return o;
}

TEST(Generate, GreedyTokensAreTheFullForwardsArgmaxWithItsLogProbBits) {
  Model m;
  model::Decoder dec(m.c, m.p, m.cpu, m.c.max_seq_len, 4);
  const GenerateOptions o = Options(0, 20);
  const Generation g = Generate(dec, Tok(), o);
  ASSERT_EQ(g.ids.size(), 20u);
  EXPECT_EQ(g.finish, "length");
  // The whole sequence through the training forward.
  std::vector<int32_t> seq = o.prompt;
  seq.insert(seq.end(), g.ids.begin(), g.ids.end() - 1);
  const int64_t T = static_cast<int64_t>(seq.size()), V = m.c.vocab_size;
  const std::vector<int32_t> labels(T, model::kIgnoreLabel);
  model::Transformer tf(m.c, m.cpu);
  model::Activations acts(m.c, 1, T, m.cpu);
  tf.Forward(m.p, {1, T, seq.data(), labels.data()}, acts);
  std::vector<float> logits(T * V);
  m.cpu.CopyToHost(model::Transformer::Logits(acts, 1, T), logits.data());
  for (size_t i = 0; i < g.ids.size(); ++i) {
    const float* row = logits.data() + (o.prompt.size() - 1 + i) * V;
    EXPECT_EQ(g.ids[i], std::max_element(row, row + V) - row) << "token " << i;
    const int32_t none = -1;
    float lse = 0;
    repops::CrossEntropyForward(row, &none, 1, V, none, &lse);
    const float want = row[g.ids[i]] - lse;
    EXPECT_EQ(std::memcmp(&want, &g.logprobs[i], 4), 0) << "token " << i;
  }
}

TEST(Generate, SampledTokensDependOnlyOnTheSeedAndOptions) {
  Model m;
  model::Decoder whole(m.c, m.p, m.cpu, m.c.max_seq_len, 32), single(m.c, m.p, m.cpu, 40, 1);
  GenerateOptions o = Options(0.9f, 25, 11);
  o.sampling.top_k = 50, o.sampling.top_p = 0.95f;
  const Generation a = Generate(whole, Tok(), o), b = Generate(single, Tok(), o);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(std::memcmp(a.logprobs.data(), b.logprobs.data(), a.logprobs.size() * 4), 0);
  EXPECT_EQ(a.text, b.text);
  const repops::SimdTarget best = repops::BestSimdTarget();
  repops::UseSimdTarget(repops::AvailableSimdTargets().front());  // the scalar reference
  repops::CpuBackend reference;
  model::Decoder ref(m.c, m.p, reference, m.c.max_seq_len, 8);
  const Generation r = Generate(ref, Tok(), o);
  repops::UseSimdTarget(best);
  EXPECT_EQ(a.ids, r.ids);
  EXPECT_EQ(std::memcmp(a.logprobs.data(), r.logprobs.data(), a.logprobs.size() * 4), 0);
  o.sampling.seed = 12;
  EXPECT_NE(Generate(whole, Tok(), o).ids, a.ids);
}

TEST(Generate, StopStringsCutTheTextAndStreamedTextIsFinal) {
  Model m;
  model::Decoder dec(m.c, m.p, m.cpu, m.c.max_seq_len, 8);
  GenerateOptions o = Options(1.0f, 30, 3);
  const Generation free = Generate(dec, Tok(), o);
  ASSERT_GE(free.text.size(), 6u);
  // A stop string taken from the middle of the free text: the same tokens up to it.
  o.stop = {free.text.substr(free.text.size() / 2, 3), "\x01never"};
  std::string streamed;
  std::vector<std::string> pieces;
  const Generation g = Generate(dec, Tok(), o, [&](std::string_view s) {
    pieces.emplace_back(s);
    streamed += s;
  });
  EXPECT_EQ(g.finish, "stop");
  EXPECT_EQ(g.text, free.text.substr(0, free.text.find(o.stop[0])));
  EXPECT_EQ(streamed, g.text);
  EXPECT_EQ(g.ids, std::vector<int32_t>(free.ids.begin(), free.ids.begin() + g.ids.size()));
  for (const std::string& p : pieces) EXPECT_EQ(p.find(o.stop[0]), std::string::npos);
}

TEST(Generate, EndsAtEosAndAtTheModelsContext) {
  Model m;
  model::Decoder dec(m.c, m.p, m.cpu, m.c.max_seq_len, 8);
  GenerateOptions o = Options(0, 10);
  const Generation free = Generate(dec, Tok(), o);
  o.eos_id = free.ids[3];  // pretend the fourth token is EOS
  const Generation e = Generate(dec, Tok(), o);
  EXPECT_EQ(e.finish, "eos");
  EXPECT_EQ(e.ids.size(),
            static_cast<size_t>(std::find(free.ids.begin(), free.ids.end(), o.eos_id) -
                                free.ids.begin() + 1));
  // A prompt of max_seq_len - 2 tokens: tokens at positions 46, 47 and 48, then the context.
  o = Options(0, 10);
  o.prompt.assign(m.c.max_seq_len - 2, Ids("the")[0]);
  const Generation c = Generate(dec, Tok(), o);
  EXPECT_EQ(c.finish, "context");
  EXPECT_EQ(c.ids.size(), 3u);
}

TEST(Generate, RefusesBadOptionsAndPrompts) {
  Model m;
  model::Decoder dec(m.c, m.p, m.cpu, m.c.max_seq_len, 8);
  GenerateOptions o = Options(0, 5);
  o.prompt.clear();
  EXPECT_THROW(Generate(dec, Tok(), o), Error);
  o = Options(0, 0);
  EXPECT_THROW(Generate(dec, Tok(), o), Error);
  o = Options(-1, 5);
  EXPECT_THROW(Generate(dec, Tok(), o), Error);
  o = Options(0, 5);
  o.prompt.assign(m.c.max_seq_len + 1, 1);
  EXPECT_THROW(Generate(dec, Tok(), o), Error);
  o = Options(0, 5);
  o.stop = {""};
  EXPECT_THROW(Generate(dec, Tok(), o), Error);
}

}  // namespace
}  // namespace trail::infer
