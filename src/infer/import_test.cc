// Import: trail's own Hugging Face export imports to the same parameters bit for bit (float32,
// and bfloat16 / binary16 files of values those formats hold, sharded or not); what trail cannot
// represent, and damaged or hostile folders, are refused by name; a recipe continues an import
// only with its hashes and its model.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/half.h"
#include "core/safetensors.h"
#include "infer/export.h"
#include "infer/generate.h"
#include "infer/gguf_writer.h"
#include "infer/import_hf.h"
#include "infer/trained_model.h"
#include "repops/cpu_backend.h"
#include "infer/test_tokenizer.h"
#include "train/imported_base.h"

namespace trail::infer {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::json;

using Tok = TestTokenizer;

// The test tokenizer's vocabulary, which the models' must equal.
int64_t Vocab() {
  static const int64_t v = Tok().k.vocab_size;
  return v;
}

model::ModelConfig Llama(int64_t vocab) {
  model::ModelConfig c;
  c.vocab_size = vocab, c.d_model = 32, c.n_layers = 3, c.n_heads = 4, c.n_kv_heads = 2;
  c.d_ff = 48, c.max_seq_len = 64, c.init_std = 0.3f, c.init_seed = 5, c.rope_theta = 500000.0f;
  c.tied_embeddings = false, c.norm_eps = 1e-6f;
  return c;
}
model::ModelConfig Qwen3(int64_t vocab) {
  model::ModelConfig c = Llama(vocab);
  c.qk_norm = c.qk_norm_gain = true, c.n_kv_heads = 1, c.tied_embeddings = true;
  c.attention_window = 16, c.full_attention_every = 2, c.full_attention_last = false;
  return c;
}
model::ModelConfig Olmo2(int64_t vocab) {  // post-norm, QK-norm over whole projections
  model::ModelConfig c = Llama(vocab);
  c.post_norm = c.qk_norm = c.qk_norm_gain = c.qk_norm_projection = true, c.norm_eps = 1e-5f;
  c.rope_scaling = {8.0f, 1.0f, 4.0f, 16};
  return c;
}
model::ModelConfig Llama3Rope(int64_t vocab) {
  model::ModelConfig c = Llama(vocab);
  c.rope_scaling = {8.0f, 1.0f, 4.0f, 16};
  return c;
}

// A model of `c` with random weights and gains, exported to dir/hf.
struct Exported {
  TempDir dir;
  repops::CpuBackend cpu;
  std::unique_ptr<model::ParameterSet> p;
  std::string hf() const { return dir.path() + "/hf"; }
  std::string out() const { return dir.path() + "/imp"; }
  Exported(const model::ModelConfig& c, const std::function<float(float)>& round = nullptr) {
    const Tok tk;
    p = std::make_unique<model::ParameterSet>(c, cpu);
    p->InitRandom(c);
    for (DeviceTensor& t : p->tensors()) {
      float* x = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (t.rank() == 1) x[i] = 1.0f + 0.05f * std::sin(1.0f + i);
        if (round) x[i] = round(x[i]);
      }
    }
    ExportHf(c, *p, tk.k, *tk.t, hf());
  }
  std::string Hash() const { return ToHex(p->StateHash()); }
};

float ToBf16(float x) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xFFFF0000u); }
float ToHalf(float x) { return HalfToFloat(FloatToHalf(x)); }

// Rewrites every tensor of `path` in `dtype` (BF16 or F16; the values must be exact in it).
void Rewrite(const std::string& path, DType dtype) {
  const SafetensorsFile f = ReadSafetensors(path);
  std::vector<Tensor> out;
  for (const Tensor& t : f.tensors) {
    Tensor n(t.name(), dtype, t.shape());
    uint16_t* h = reinterpret_cast<uint16_t*>(n.bytes());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float x = t.data<float>()[i];
      h[i] = dtype == DType::kBF16 ? static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16)
                                   : FloatToHalf(x);
    }
    out.push_back(std::move(n));
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : out) ptrs.push_back(&t);
  WriteSafetensors(path, ptrs);
}

// Splits dir/model.safetensors into one file per tensor and an index, as save_pretrained shards.
void Shard(const std::string& dir) {
  const SafetensorsFile f = ReadSafetensors(dir + "/model.safetensors");
  Json map = Json::object();
  for (size_t i = 0; i < f.tensors.size(); ++i) {
    const std::string name = "model-" + std::to_string(i) + ".safetensors";
    const Tensor* t = &f.tensors[i];
    WriteSafetensors(dir + "/" + name, std::span<const Tensor* const>(&t, 1));
    map[t->name()] = name;
  }
  fs::remove(dir + "/model.safetensors");
  WriteFileAtomic(dir + "/model.safetensors.index.json", Json{{"weight_map", map}}.dump());
}

void ExpectSameWindows(const model::ModelConfig& a, const model::ModelConfig& b) {
  for (int64_t l = 0; l < a.n_layers; ++l) EXPECT_EQ(a.LayerWindow(l), b.LayerWindow(l)) << l;
}

TEST(Import, ExportImportsToTheSameParametersBitForBit) {
  for (const model::ModelConfig& c :
       {Llama(Vocab()), Qwen3(Vocab()), Llama3Rope(Vocab()), Olmo2(Vocab())}) {
    const Exported e(c);
    const ImportResult r = ImportHf({e.hf(), e.out(), 0});
    EXPECT_EQ(r.params_sha256, e.Hash());
    const train::ImportedBase b = train::ReadImportedBase(e.out());
    EXPECT_EQ(b.params_sha256, e.Hash());
    repops::CpuBackend cpu;  // the file reads back to parameters of that state hash
    EXPECT_EQ(train::LoadImportedParams(b, cpu).size(), e.p->tensors().size());
    ExpectSameWindows(b.model, c);
    model::ModelConfig want = c;
    want.full_attention_every = b.model.full_attention_every;  // any pattern of the same layers
    want.full_attention_last = b.model.full_attention_last;
    EXPECT_EQ(train::ModelSectionToml(b.model), train::ModelSectionToml(want));
  }
}

TEST(Import, Bfloat16AndBinary16ShardsWidenExactly) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    const Exported e(Llama(Vocab()), dtype == DType::kBF16 ? ToBf16 : ToHalf);
    Rewrite(e.hf() + "/model.safetensors", dtype);
    Shard(e.hf());
    const ImportResult r = ImportHf({e.hf(), e.out(), 0});
    EXPECT_EQ(r.params_sha256, e.Hash()) << DTypeName(dtype);
    EXPECT_GT(r.source_files.size(), 10u);  // config, index, shards, tokenizer
  }
}

TEST(Import, TheSameCheckpointImportsToTheSameRecordAnywhere) {
  const Exported e(Qwen3(Vocab()));
  const ImportResult a = ImportHf({e.hf(), e.out(), 0});
  const ImportResult b = ImportHf({e.hf(), e.dir.path() + "/elsewhere/imp", 0});
  EXPECT_EQ(ReadFileToString(e.out() + "/import.json"),
            ReadFileToString(e.dir.path() + "/elsewhere/imp/import.json"));
  EXPECT_EQ(a.import_sha256, b.import_sha256);
}

// Import after `edit` changed the exported folder must fail naming `want`.
void ExpectRefused(const model::ModelConfig& c, const std::function<void(const std::string&)>& edit,
                   const std::string& want) {
  const Exported e(c);
  edit(e.hf());
  try {
    ImportHf({e.hf(), e.out(), 0});
    ADD_FAILURE() << "imported; expected an error naming " << want;
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
  }
  EXPECT_FALSE(train::IsImportedBase(e.out()));  // nothing committed
}

void EditConfig(const std::string& hf, const std::function<void(Json&)>& f) {
  Json j = Json::parse(ReadFileToString(hf + "/config.json"));
  f(j);
  WriteFileAtomic(hf + "/config.json", j.dump());
}

TEST(Import, WhatTrailCannotRepresentIsRefusedByName) {
  const std::pair<std::function<void(Json&)>, std::string> cases[] = {
      {[](Json& j) { j["model_type"] = "olmo2"; }, "trail imports Olmo2ForCausalLM"},
      {[](Json& j) { j["model_type"] = "mistral"; }, "\"mistral\" is not one trail imports"},
      {[](Json& j) { j["architectures"] = {"LlamaForSequenceClassification"}; }, "architectures"},
      {[](Json& j) { j["head_dim"] = 7; }, "head_dim 7 is not an even width"},
      // Heads wider than the weights were saved with: the q projection's shape says so.
      {[](Json& j) { j["head_dim"] = 64; }, "q_proj.weight"},
      {[](Json& j) { j["attention_bias"] = true; }, "attention_bias"},
      {[](Json& j) { j["mlp_bias"] = true; }, "mlp_bias"},
      {[](Json& j) { j["hidden_act"] = "gelu"; }, "hidden_act \"gelu\""},
      {[](Json& j) {
         j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
       },
       "\"yarn\""},
      {[](Json& j) { j["num_key_value_heads"] = 3; }, "n_kv_heads"},
      {[](Json& j) { j.erase("hidden_size"); }, "hidden_size is missing"},
      {[](Json& j) { j["vocab_size"] = Vocab() + 1; }, "] but config.json makes it ["},
      // Sizes a hostile config could make trail allocate are bounded first.
      {[](Json& j) { j["vocab_size"] = int64_t{1} << 40; }, "vocab_size 1099511627776 is outside"},
      {[](Json& j) { j["max_position_embeddings"] = int64_t{1} << 40; }, "--max-seq-len"},
      {[](Json& j) {
         j["hidden_size"] = 1 << 18, j["num_hidden_layers"] = 4000, j.erase("head_dim");
       },
       "but config.json makes it [" + std::to_string(Vocab()) + ", 262144]"},
  };
  for (const auto& [edit, want] : cases) {
    ExpectRefused(
        Llama(Vocab()), [&](const std::string& hf) { EditConfig(hf, edit); }, want);
  }
}

TEST(Import, DamagedOrForeignFoldersAreRefusedByName) {
  const std::string st = "/model.safetensors";
  auto retensor = [&](const std::string& hf, const std::function<void(std::vector<Tensor>&)>& f) {
    SafetensorsFile file = ReadSafetensors(hf + st);
    f(file.tensors);
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : file.tensors) ptrs.push_back(&t);
    WriteSafetensors(hf + st, ptrs);
  };
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) {
        retensor(hf, [](std::vector<Tensor>& t) { t.push_back(Tensor::Of<float>("extra", {2})); });
      },
      "extra, which a LlamaForCausalLM of this config.json has no place for");
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) { retensor(hf, [](std::vector<Tensor>& t) { t.pop_back(); }); },
      "has no tensor lm_head.weight");
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) {
        retensor(hf, [](std::vector<Tensor>& t) {
          t[0] = Tensor::Of<double>(t[0].name(), t[0].shape());
        });
      },
      "is F64; trail reads F32, BF16 and F16");
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) {
        Shard(hf);
        Json j = Json::parse(ReadFileToString(hf + "/model.safetensors.index.json"));
        j["weight_map"]["model.embed_tokens.weight"] = "../model-0.safetensors";
        WriteFileAtomic(hf + "/model.safetensors.index.json", j.dump());
      },
      "which is not a file of this folder");
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) { fs::rename(hf + st, hf + "/pytorch_model.bin"); },
      "trail does not read PyTorch pickles");
  ExpectRefused(
      Llama(Vocab()), [&](const std::string& hf) { fs::remove(hf + "/tokenizer.json"); },
      "no tokenizer.json");
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) { WriteFileAtomic(hf + st, std::string(64, 'x')); },
      "model.safetensors");
  // Fewer embedding rows than the tokenizer has ids.
  ExpectRefused(
      Llama(Vocab()),
      [&](const std::string& hf) {
        const Exported smaller(Llama(Vocab() - 20));
        fs::copy_file(smaller.hf() + st, hf + st, fs::copy_options::overwrite_existing);
        EditConfig(hf, [](Json& j) { j["vocab_size"] = Vocab() - 20; });
      },
      "the embedding must have a row for every token id");
}

// In dir/model.safetensors, a head whose only non-zero rows are the first two padding rows, v
// and -v: one of them has the largest logit at every position (unless v·h is exactly 0).
void HeadOnlyOnPadding(const std::string& dir) {
  const SafetensorsFile f = ReadSafetensors(dir + "/model.safetensors");
  std::vector<Tensor> out;
  for (const Tensor& t : f.tensors) {
    Tensor n = Tensor::Of<float>(t.name(), t.shape());
    std::copy_n(t.data<float>(), t.numel(), n.data<float>());
    if (t.name() == "lm_head.weight") {  // [V, d]
      const int64_t d = t.shape()[1];
      float* w = n.data<float>();
      std::fill_n(w, Vocab() * d, 0.0f);
      for (int64_t k = 0; k < d; ++k) w[(Vocab() + 1) * d + k] = -w[Vocab() * d + k];
      std::fill(w + (Vocab() + 2) * d, w + t.numel(), 0.0f);
    }
    out.push_back(std::move(n));
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : out) ptrs.push_back(&t);
  WriteSafetensors(dir + "/model.safetensors", ptrs);
}

// A padded vocabulary (Qwen3's and OLMo 2's releases: more embedding rows than token ids) is
// imported with its rows; the model opens with its smaller tokenizer, and a padding id it draws
// is kept in the ids and has no text.
TEST(Import, APaddedVocabularyKeepsItsRows) {
  const Exported e(Olmo2(Vocab() + 20));
  const ImportResult r = ImportHf({e.hf(), e.out(), 0});
  EXPECT_EQ(r.params_sha256, e.Hash());
  EXPECT_EQ(train::ReadImportedBase(e.out()).model.vocab_size, Vocab() + 20);
  TrainedModelOptions o;
  o.run_dir = e.out();
  const TrainedModel m(o);
  EXPECT_EQ(m.config().vocab_size, Vocab() + 20);
  EXPECT_EQ(m.contract().vocab_size, Vocab());

  HeadOnlyOnPadding(e.hf());
  o.run_dir = e.dir.path() + "/padding";
  ImportHf({e.hf(), o.run_dir, 0});
  GenerateOptions g;
  g.max_tokens = 4, g.sampling.temperature = 0.0f;  // greedy
  const GenerateRun run = GenerateFromRun(o, "In the beginning", g);
  ASSERT_EQ(run.generation.ids.size(), 4u);
  for (int32_t id : run.generation.ids) EXPECT_TRUE(id == Vocab() || id == Vocab() + 1) << id;
  EXPECT_EQ(run.generation.text, "");
  EXPECT_EQ(run.generation.finish, "length");
}

TEST(Import, AnImportIsNeverOverwritten) {
  const Exported e(Llama(Vocab()));
  ImportHf({e.hf(), e.out(), 0});
  EXPECT_THROW(ImportHf({e.hf(), e.out(), 0}), Error);
  // Nor is a folder of other files written into (a run directory, say); a folder holding only
  // what an interrupted import wrote is.
  fs::create_directories(e.dir.path() + "/run");
  WriteFileAtomic(e.dir.path() + "/run/recipe.toml", "mine");
  EXPECT_THROW(ImportHf({e.hf(), e.dir.path() + "/run", 0}), Error);
  EXPECT_EQ(ReadFileToString(e.dir.path() + "/run/recipe.toml"), "mine");
  // As if stopped before its last file: the marker the import writes first is still there.
  fs::remove(e.out() + "/import.json");
  WriteFileAtomic(e.out() + "/.trail-import-incomplete", "");
  EXPECT_NO_THROW(ImportHf({e.hf(), e.out(), 0}));
  EXPECT_FALSE(fs::exists(e.out() + "/.trail-import-incomplete"));
}

TEST(Import, ARecipeContinuesAnImportOnlyWithItsHashesAndModel) {
  const Exported e(Llama3Rope(Vocab()));
  ImportHf({e.hf(), e.out(), 64});
  const train::ImportedBase b = train::ReadImportedBase(e.out());
  const std::string recipe = ReadFileToString(e.out() + "/recipe.toml");
  const train::Recipe r = train::ParseRecipe(recipe, "recipe.toml", Vocab());
  EXPECT_NO_THROW(train::CheckRecipeContinues(r, b));
  auto refused = [&](const std::string& from, const std::string& to, const std::string& want) {
    std::string text = recipe;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      train::CheckRecipeContinues(train::ParseRecipe(text, "edited.toml", Vocab()), b);
      ADD_FAILURE() << "accepted " << to;
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
    }
  };
  refused("rope_theta = 5e+05", "rope_theta = 5e+04", "the recipe has rope_theta = 5e+04");
  refused("rope_factor = 8.0", "rope_factor = 4.0", "rope_factor");
  refused("import_sha256 = \"" + b.record_sha256.substr(0, 4),
          "import_sha256 = \"" + std::string(4, b.record_sha256[0] == '0' ? '1' : '0'),
          "continues another import");
  refused("from = \"import\"", "from = \"random\"", "need from = \"import\"");
  // A longer context is allowed.
  std::string longer = recipe;
  longer.replace(longer.find("max_seq_len = 64"), 16, "max_seq_len = 256");
  EXPECT_NO_THROW(train::CheckRecipeContinues(train::ParseRecipe(longer, "l.toml", Vocab()), b));
  // Damage to a file import.json names is found when the import is read.
  WriteFileAtomic(e.out() + "/tokenizer.contract.json", "{}");
  EXPECT_THROW(train::ReadImportedBase(e.out()), Error);
}

}  // namespace
}  // namespace trail::infer
