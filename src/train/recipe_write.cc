// ModelSectionToml (recipe.h): a model config written as the recipe's [model] section.
#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "train/recipe.h"

namespace trail::train {
namespace {

// The shortest "%.Ng" that strtod and a cast to float read back to `x` (at most 17 digits, the
// exact double of the float, which always does).
std::string FloatText(float x) {
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (static_cast<float>(std::strtod(buf, nullptr)) == x) break;
  }
  std::string s = buf;
  // TOML floats need a fraction or an exponent.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string Line(const char* key, int64_t v) { return StrCat(key, " = ", v, "\n"); }
std::string Line(const char* key, bool v) { return StrCat(key, " = ", v ? "true" : "false", "\n"); }
std::string Line(const char* key, float v) { return StrCat(key, " = ", FloatText(v), "\n"); }
std::string Line(const char* key, const char* v) { return StrCat(key, " = \"", v, "\"\n"); }

}  // namespace

std::string ModelSectionToml(const model::ModelConfig& c) {
  std::string s = "[model]\n";
  s += Line("vocab_size", c.vocab_size);
  s += Line("d_model", c.d_model);
  s += Line("n_layers", c.n_layers);
  s += Line("n_heads", c.n_heads);
  s += Line("n_kv_heads", c.kv_heads());
  if (c.head_dim_decoupled()) s += Line("head_dim", c.head_dim());  // Qwen3's wider heads
  s += Line("d_ff", c.d_ff);
  s += Line("max_seq_len", c.max_seq_len);
  s += Line("mlp", model::MlpName(c.mlp));
  s += Line("norm_gain", c.norm_gain);
  s += Line("embed_norm", c.embed_norm);
  s += Line("qk_norm", c.qk_norm);
  s += Line("qk_norm_gain", c.qk_norm_gain);
  // OLMo 2's options only when on, so the sections of the other families read as before.
  if (c.qk_norm_projection) s += Line("qk_norm_projection", true);
  if (c.post_norm) s += Line("post_norm", true);
  s += Line("tied_embeddings", c.tied_embeddings);
  s += Line("norm_eps", c.norm_eps);
  s += Line("rope_theta", c.rope_theta);
  if (c.rope_scaling.enabled()) {
    const repops::RopeScaling& r = c.rope_scaling;
    s += Line("rope_scaling", "llama3");
    s += Line("rope_factor", r.factor);
    s += Line("rope_low_freq_factor", r.low_freq_factor);
    s += Line("rope_high_freq_factor", r.high_freq_factor);
    s += Line("rope_original_max_seq_len", r.original_max_pos);
  }
  s += Line("attention_window", c.attention_window);
  s += Line("full_attention_every", c.full_attention_every);
  s += Line("full_attention_last", c.full_attention_last);
  return s;
}

}  // namespace trail::train
