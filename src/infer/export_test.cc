// Export: the Hugging Face folder run by an independent float64 reference of HF's Llama and
// Qwen3 conventions (tests/model/hf_reference.py) gives trail's logits; a wrong rotary layout
// does not; what neither target represents is refused; binary16 rounding is to nearest even.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/le_bytes.h"
#include "core/safetensors.h"
#include "infer/export.h"
#include "infer/gguf_writer.h"
#include "model/transformer.h"
#include "repops/cpu_backend.h"
#include "infer/test_tokenizer.h"

namespace trail::infer {
namespace {

using Tok = TestTokenizer;

model::ModelConfig Base(int64_t vocab) {
  model::ModelConfig c;
  c.vocab_size = vocab, c.d_model = 32, c.n_layers = 3, c.n_heads = 4, c.d_ff = 48;
  c.max_seq_len = 32, c.init_std = 0.3f, c.init_seed = 12, c.rope_theta = 500.0f;
  return c;
}

// max |a - ref| / max |ref| of trail's logits against the reference run on the export.
double ReferenceError(const model::ModelConfig& c, bool interleave_qk) {
  const Tok tk;
  repops::CpuBackend cpu;
  model::ParameterSet p(c, cpu);
  p.InitRandom(c);
  // Non-trivial gains, so a norm weight in the wrong place shows.
  for (DeviceTensor& t : p.tensors()) {
    if (t.rank() != 1) continue;
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1.0f + 0.05f * std::sin(1.0f + i);
  }
  TempDir dir;
  ExportHf(c, p, tk.k, *tk.t, dir.path() + "/hf");
  const int64_t T = 20, V = c.vocab_size;
  std::vector<int32_t> ids(T), labels(T, model::kIgnoreLabel);
  std::string json = "[";
  for (int64_t i = 0; i < T; ++i) {
    ids[i] = static_cast<int32_t>((i * 37 + 3) % V);
    json += (i ? "," : "") + std::to_string(ids[i]);
  }
  WriteFileAtomic(dir.path() + "/ids.json", json + "]");
  model::Transformer tf(c, cpu);
  model::Activations acts(c, 1, T, cpu);
  tf.Forward(p, {1, T, ids.data(), labels.data()}, acts);
  std::vector<float> logits(T * V);
  cpu.CopyToHost(model::Transformer::Logits(acts, 1, T), logits.data());
  const std::string cmd = "/usr/bin/python3 " TRAIL_SOURCE_DIR "/tests/model/hf_reference.py " +
                          dir.path() + "/hf " + dir.path() + "/ids.json " + dir.path() +
                          "/out.safetensors" + (interleave_qk ? " --interleave-qk" : "");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const SafetensorsFile ref = ReadSafetensors(dir.path() + "/out.safetensors");
  const double* r = ref.Find("logits")->data<double>();
  double maxd = 0, maxr = 0;
  for (int64_t i = 0; i < T * V; ++i) {
    maxd = std::max(maxd, std::fabs(logits[i] - r[i])), maxr = std::max(maxr, std::fabs(r[i]));
  }
  return maxd / maxr;
}

// trail's float32 forward against float64: ~1e-6 relative here (model_test measures the same);
// 1e-5 is the bound the export must meet. A wrong layout or convention is off by 1e-1 or more.
constexpr double kAgree = 1e-5, kWrong = 1e-2;

TEST(ExportHf, LlamaTiedWithGains) {
  const model::ModelConfig c = Base(Tok().k.vocab_size);
  EXPECT_LT(ReferenceError(c, false), kAgree);
  EXPECT_GT(ReferenceError(c, true), kWrong);  // the wrong rotary layout must be caught
}

TEST(ExportHf, LlamaUntiedGainFree) {
  model::ModelConfig c = Base(Tok().k.vocab_size);
  c.tied_embeddings = false, c.norm_gain = false;
  EXPECT_LT(ReferenceError(c, false), kAgree);
}

TEST(ExportHf, Qwen3WithQkNormAndSlidingWindows) {
  model::ModelConfig c = Base(Tok().k.vocab_size);
  c.qk_norm = true, c.attention_window = 6, c.full_attention_every = 2;
  EXPECT_LT(ReferenceError(c, false), kAgree);
  EXPECT_GT(ReferenceError(c, true), kWrong);
}

// Grouped-query attention: num_key_value_heads 2 (Llama) and 1 (Qwen3) of 4 query heads.
TEST(ExportHf, GroupedQueryAttention) {
  model::ModelConfig c = Base(Tok().k.vocab_size);
  c.n_kv_heads = 2;
  EXPECT_LT(ReferenceError(c, false), kAgree);
  EXPECT_GT(ReferenceError(c, true), kWrong);
  c.n_kv_heads = 1, c.qk_norm = true, c.qk_norm_gain = true;  // Qwen3's q_norm, k_norm gains
  EXPECT_LT(ReferenceError(c, false), kAgree);
}

// OLMo 2: post-norm, QK-norm over whole projections with gains, untied; multi-head and
// grouped-query, and gain-free (the norms export as weights of ones).
TEST(ExportHf, Olmo2PostNormAndWholeProjectionQkNorm) {
  model::ModelConfig c = Base(Tok().k.vocab_size);
  c.post_norm = c.qk_norm = c.qk_norm_projection = c.qk_norm_gain = true;
  c.tied_embeddings = false;
  EXPECT_LT(ReferenceError(c, false), kAgree);
  c.n_kv_heads = 2;
  EXPECT_LT(ReferenceError(c, false), kAgree);
  c.norm_gain = c.qk_norm_gain = false, c.tied_embeddings = true;
  EXPECT_LT(ReferenceError(c, false), kAgree);
}

void ExpectRefused(const model::ModelConfig& c, ExportFormat f, const std::string& part) {
  try {
    ChooseArchitecture(c, f);
    ADD_FAILURE() << "exported; expected a refusal naming '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Llama 3's RoPE scaling: rope_scaling {rope_type: llama3, ...} in config.json. hd 8 at θ 500:
// the four frequencies' wavelengths 6.3, 30, 140, 664 fall in all three bands of a 160-token
// original context (kept below 40, blended up to 160, divided above).
TEST(ExportHf, Llama3RopeScaling) {
  model::ModelConfig c = Base(Tok().k.vocab_size);
  c.rope_scaling = {
      .factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f, .original_max_pos = 160};
  EXPECT_LT(ReferenceError(c, false), kAgree);
  c.qk_norm = true;  // Qwen3 with the same scaling: Hugging Face only
  EXPECT_LT(ReferenceError(c, false), kAgree);
  ExpectRefused(c, ExportFormat::kGguf, "rope_freqs");
}

TEST(Export, RefusesWhatNoTargetRepresents) {
  const model::ModelConfig base = Base(300);
  model::ModelConfig c = base;
  c.mlp = model::MlpKind::kGelu;
  ExpectRefused(c, ExportFormat::kHf, "ungated GELU");
  c = base, c.embed_norm = true;
  ExpectRefused(c, ExportFormat::kGguf, "normalizes the token embedding");
  c = base, c.linear_quant = model::LinearQuant::kInt8Lsq;
  ExpectRefused(c, ExportFormat::kHf, "int8 QAT");
  c = base, c.attention_window = 8;
  ExpectRefused(c, ExportFormat::kHf, "sliding-window layers without QK-norm");
  c.qk_norm = true;
  ExpectRefused(c, ExportFormat::kGguf, "GGUF (llama.cpp's qwen3 attends to the full context)");
  EXPECT_EQ(ChooseArchitecture(c, ExportFormat::kHf).name, "qwen3");
  c.attention_window = c.max_seq_len;  // a window as long as the context is full attention
  EXPECT_EQ(ChooseArchitecture(c, ExportFormat::kGguf).name, "qwen3");
  EXPECT_EQ(ChooseArchitecture(base, ExportFormat::kGguf).name, "llama");
  c = base, c.post_norm = true;  // OLMo 2 has both post-norm and whole-projection QK-norm
  ExpectRefused(c, ExportFormat::kHf, "post-norm without QK-norm over whole projections");
  c = base, c.qk_norm = c.qk_norm_projection = true;
  ExpectRefused(c, ExportFormat::kGguf, "without post-norm");
  c.post_norm = true;
  EXPECT_EQ(ChooseArchitecture(c, ExportFormat::kGguf).name, "olmo2");
  c.attention_window = 8;
  ExpectRefused(c, ExportFormat::kHf, "Olmo2ForCausalLM attends to the full context");
  c.attention_window = 0, c.rope_scaling = {.factor = 8.0f, .original_max_pos = 16};
  EXPECT_EQ(ChooseArchitecture(c, ExportFormat::kHf).name, "olmo2");
  ExpectRefused(c, ExportFormat::kGguf, "GGUF's olmo2");
}

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 31, mant = h & 1023;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  return sign * std::ldexp(static_cast<float>(mant + 1024), exp - 25);
}

TEST(Gguf, HalfRoundsToNearestEven) {
  // Every half's neighbourhood: the value itself, the midpoints to its neighbours and just
  // around them.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const float v = HalfToFloat(static_cast<uint16_t>(h));
    EXPECT_EQ(FloatToHalf(v), h);
    EXPECT_EQ(FloatToHalf(-v), h | 0x8000u);
    // Past the largest finite half the next step is 65536, which rounds to infinity.
    const float next = h + 1 == 0x7C00 ? 65536.0f : HalfToFloat(static_cast<uint16_t>(h + 1));
    const float mid = v + (next - v) / 2;  // exact in float32
    const uint16_t even = (h & 1u) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(FloatToHalf(mid), even) << h;
    EXPECT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h);
    EXPECT_EQ(FloatToHalf(std::nextafter(mid, INFINITY)), h + 1);
  }
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(FloatToHalf(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(FloatToHalf(NAN) & 0x3FF, 0);
  EXPECT_EQ(FloatToHalf(1e-10f), 0);
}

// The file's bytes, built here field by field from the layout gguf_writer.h states.
TEST(Gguf, FileBytesFollowTheLayout) {
  TempDir dir;
  GgufWriter g(32);
  g.AddString("general.name", "t");
  g.AddTensor("a", {3}, GgufType::kF32, {1.0f, -2.0f, 0.5f});
  g.AddTensor("b", {2, 1}, GgufType::kF16, {1.0f, -2.0f});
  g.Write(dir / "t.gguf");

  std::string want = "GGUF";
  auto u32 = [&](uint32_t v) { AppendU32(want, v); };
  auto u64 = [&](uint64_t v) { AppendU64(want, v); };
  auto str = [&](const std::string& v) { u64(v.size()), want += v; };
  u32(3), u64(2), u64(2);                             // version, tensors, metadata entries
  str("general.alignment"), u32(4), u32(32);          // first entry: u32 (type 4) 32
  str("general.name"), u32(8), str("t");              // string (type 8)
  str("a"), u32(1), u64(3), u32(0), u64(0);           // f32 [3] at offset 0
  str("b"), u32(2), u64(2), u64(1), u32(1), u64(32);  // f16 [2, 1] at 12 padded to 32
  want.append((32 - want.size() % 32) % 32, '\0');
  const float a[] = {1.0f, -2.0f, 0.5f};
  want.append(reinterpret_cast<const char*>(a), sizeof a).append(20, '\0');
  const uint16_t b[] = {0x3C00, 0xC000};  // 1 and -2 in binary16
  want.append(reinterpret_cast<const char*>(b), sizeof b).append(28, '\0');
  EXPECT_EQ(ReadFileToString(dir / "t.gguf"), want);
  EXPECT_THROW(GgufWriter(12), Error);
}

}  // namespace
}  // namespace trail::infer
