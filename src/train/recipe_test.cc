// The recipe's TOML: what it accepts, and what it refuses by name.
#include <gtest/gtest.h>

#include <string>

#include "core/test_util.h"
#include "train/recipe.h"

namespace trail::train {
namespace {

// Two defects of Debian's toml++ 3.3.0 that core/toml_text.h contains (found by fuzzing): an
// assertion on malformed table headers and an "unreachable" point reached by the whitespace
// check of accented characters. Both are invalid TOML, refused like any other; accented text
// inside strings still parses.
TEST(Recipe, TomlParserDefectsAreContainedAsInvalidToml) {
  const std::vector<std::string> bad = {"[)", "[[[1]]]\n", "[[=\n", "\xc3\xa9 = 1\n",
                                        "a.\xc3\xbc = 1\n"};
  for (const std::string& text : bad) {
    EXPECT_NE(ErrorOf([&] { ParseRecipe(text, "r.toml", 64); }).find("r.toml: not valid TOML"),
              std::string::npos)
        << text;
  }
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\nname = \"caf\xc3\xa9\"\n", "r.toml", 64);
            }).find("unknown key 'name'"),
            std::string::npos);
}

TEST(Recipe, UnknownKeysAndInconsistentShapesAreClearErrors) {
  const std::string good = "[model]\npreset = \"tiny\"\n[train]\nsteps = 5\n";
  const Recipe r = ParseRecipe(good, "r.toml", 4096);
  EXPECT_EQ(r.model.d_model, 128);
  EXPECT_EQ(r.model.vocab_size, 4096);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe(good + "learning_rat = 3\n", "r.toml", 4096);
            }).find("unknown key 'learning_rat' in [train]"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\npreset = \"tiny\"\nd_modle = 3\n", "r.toml", 9);
            }).find("unknown key 'd_modle'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\npreset = \"tiny\"\nn_heads = 3\n", "r.toml", 9);
            }).find("multiple of n_heads"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\nvocab_size = 10\n", "r.toml", 4096);
            }).find("is below the tokenizer's 4096 ids"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\nqk_norm_projection = true\n", "r.toml", 9);
            }).find("qk_norm_projection needs qk_norm"),
            std::string::npos);
  // Above the tokenizer's: a padded embedding.
  EXPECT_EQ(ParseRecipe("[model]\nvocab_size = 4160\n", "r.toml", 4096).model.vocab_size, 4160);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe("[model]\nd_model = \"wide\"\n", "r.toml", 9);
            }).find("must be an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ParseRecipe("[model\n", "r.toml", 9); }).find("not valid TOML"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ParseRecipe("[oprimizer]\n", "r.toml", 9); }).find("unknown key"),
            std::string::npos);
}

TEST(Recipe, RecomputeIsNoneOrLayers) {
  const std::string base = "[model]\npreset = \"tiny\"\n[train]\nsteps = 5\n";
  EXPECT_EQ(ParseRecipe(base, "r.toml", 64).loop.recompute, model::Recompute::kNone);
  EXPECT_EQ(ParseRecipe(base + "recompute = \"layers\"\n", "r.toml", 64).loop.recompute,
            model::Recompute::kLayers);
  EXPECT_EQ(ParseRecipe(base + "recompute = \"none\"\n", "r.toml", 64).loop.recompute,
            model::Recompute::kNone);
  EXPECT_NE(ErrorOf([&] {
              ParseRecipe(base + "recompute = \"all\"\n", "r.toml", 64);
            }).find("recompute must be \"none\" or \"layers\", got \"all\""),
            std::string::npos);
}

// Grouped-query attention, QK-norm gains and Llama 3's RoPE scaling from the [model] section,
// and what is refused by name.
TEST(Recipe, ModelFamilyOptions) {
  const std::string base = "[model]\npreset = \"tiny\"\n";
  const Recipe r = ParseRecipe(base +
                                   "n_kv_heads = 2\nqk_norm = true\nqk_norm_gain = true\n"
                                   "rope_theta = 500000.0\nrope_scaling = \"llama3\"\n"
                                   "rope_original_max_seq_len = 1024\n",
                               "r.toml", 64);
  EXPECT_EQ(r.model.kv_heads(), 2);
  EXPECT_EQ(r.model.kv_dim(), 64);
  EXPECT_TRUE(r.model.qk_norm_gain);
  EXPECT_EQ(r.model.rope_scaling.factor, 8.0f);
  EXPECT_EQ(r.model.rope_scaling.high_freq_factor, 4.0f);
  EXPECT_EQ(r.model.rope_scaling.original_max_pos, 1024);
  EXPECT_FALSE(ParseRecipe(base, "r.toml", 64).model.rope_scaling.enabled());
  auto error = [&](const std::string& extra) {
    return ErrorOf([&] { ParseRecipe(base + extra, "r.toml", 64); });
  };
  EXPECT_NE(error("n_kv_heads = 3\n").find("n_kv_heads (3) must divide n_heads (4)"),
            std::string::npos);
  EXPECT_NE(error("qk_norm_gain = true\n").find("qk_norm_gain needs qk_norm"), std::string::npos);
  EXPECT_NE(error("rope_factor = 4.0\n").find("rope_factor needs rope_scaling = \"llama3\""),
            std::string::npos);
  EXPECT_NE(error("rope_scaling = \"yarn\"\n").find("rope_scaling must be"), std::string::npos);
  EXPECT_NE(
      error("rope_scaling = \"llama3\"\nrope_factor = 0.0\n").find("rope_factor must be >= 1"),
      std::string::npos);
  EXPECT_NE(error("rope_scaling = \"llama3\"\nrope_high_freq_factor = 0.5\n")
                .find("low_freq_factor < high_freq_factor"),
            std::string::npos);
}

TEST(Recipe, InitIsRandomOrAnImportNamedByBothHashes) {
  const std::string base = "[model]\npreset = \"tiny\"\n[init]\n";
  const std::string h1(64, 'a'), h2(64, '0');
  EXPECT_FALSE(ParseRecipe("[model]\npreset = \"tiny\"\n", "r.toml", 64).init.imported);
  const Recipe r = ParseRecipe(
      base + "from = \"import\"\nimport_sha256 = \"" + h1 + "\"\nparams_sha256 = \"" + h2 + "\"\n",
      "r.toml", 64);
  EXPECT_TRUE(r.init.imported);
  EXPECT_EQ(r.init.import_sha256, h1);
  EXPECT_EQ(r.init.params_sha256, h2);
  auto error = [&](const std::string& extra) {
    return ErrorOf([&] { ParseRecipe(base + extra, "r.toml", 64); });
  };
  EXPECT_NE(error("from = \"import\"\n").find("needs import_sha256 and params_sha256"),
            std::string::npos);
  EXPECT_NE(error("from = \"import\"\nimport_sha256 = \"" + h1.substr(1) +
                  "\"\nparams_sha256 = \"" + h2 + "\"\n")
                .find("64 lowercase hex digits"),
            std::string::npos);
  EXPECT_NE(error("import_sha256 = \"" + h1 + "\"\n").find("need from = \"import\""),
            std::string::npos);
  EXPECT_NE(error("from = \"hf\"\n").find("[init] from must be"), std::string::npos);
  EXPECT_NE(error("seed = 1\n").find("unknown key 'seed'"), std::string::npos);
}

// ModelSectionToml reads back to the same function: every key, floats to the same bits.
TEST(Recipe, ModelSectionReadsBackToTheSameModel) {
  model::ModelConfig c = model::Preset("open1b-style");
  c.vocab_size = 1000, c.n_kv_heads = 2, c.qk_norm_gain = true, c.norm_eps = 1e-6f;
  c.rope_theta = 123456.7f, c.rope_scaling = {8.0f, 1.0f, 4.0f, 8192};
  const std::string text = ModelSectionToml(c);
  const model::ModelConfig back = ParseRecipe(text, "m.toml", 1000).model;
  EXPECT_EQ(ModelSectionToml(back), text);
  EXPECT_EQ(back.norm_eps, c.norm_eps);
  EXPECT_EQ(back.rope_theta, c.rope_theta);
  for (int64_t l = 0; l < c.n_layers; ++l) EXPECT_EQ(back.LayerWindow(l), c.LayerWindow(l));
  EXPECT_EQ(text.find("head_dim"), std::string::npos);  // the heads split the width
  c.head_size = 128;  // Qwen3's heads on a width of 256 and 4 heads: written, read back
  const std::string wide = ModelSectionToml(c);
  EXPECT_NE(wide.find("head_dim = 128\n"), std::string::npos);
  EXPECT_EQ(ParseRecipe(wide, "m.toml", 1000).model.q_dim(), 512);
  EXPECT_EQ(ModelSectionToml(ParseRecipe(wide, "m.toml", 1000).model), wide);
}

// head_dim: the default spelled out is the default (one config, one recipe text); other widths
// free d_model from being a multiple of n_heads; odd widths are refused (RoPE pairs).
TEST(Recipe, HeadDimIsTheDefaultOrAnEvenWidth) {
  const auto model = [](const std::string& extra) {
    return ParseRecipe("[model]\nd_model = 48\nn_heads = 4\n" + extra, "r.toml", 64).model;
  };
  EXPECT_EQ(model("head_dim = 12\n").head_size, 0);
  EXPECT_EQ(model("head_dim = 16\n").q_dim(), 64);
  EXPECT_EQ(
      ParseRecipe("[model]\nd_model = 50\nn_heads = 4\nhead_dim = 8\n", "r.toml", 64).model.q_dim(),
      32);
  EXPECT_NE(ErrorOf([&] { model("head_dim = 7\n"); }).find("must be even"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { model("head_dim = -2\n"); }).find("head_dim must be >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::train
