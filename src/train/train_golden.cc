#include "train/train_golden.h"

#include "core/error.h"
#include "data/synthetic_corpus.h"
#include "train/trajectory.h"

namespace trail::train {
namespace {

struct CaseSpec {
  const char* name;
  int64_t windows_per_step, micro_batch_windows, steps;
  bool lifecycle = false;  // the stream's phases below
};

// mesh_1x1x2: the Open-1B feature set (QK-norm, embedding norm, sliding window with full
// attention every 2nd and the last layer, SwiGLU, tied head, z-loss), 1 replica × 1 shard ×
// 2 micro-batches, clipping active. mesh_3x2x2: GELU, untied head, 3 replicas × 2 shards ×
// 2 micro-batches (TreeFold over a non-power-of-two count), the spike protocol armed.
// lifecycle_2x1x1: mesh_1x1x2's model on 2 replicas, and a stream that crosses a mixture phase
// (only source "b" from step 2) and a length switch (L = 16 → 24 from step 3, the batch 4 → 3
// windows, so one replica's micro-batch holds a padding row).
// int8_1x1x2 and int8_fp32bw_3x2x2: those two recipes with int8 QAT of the block matrices,
// the backward GEMMs in int8 and in fp32 respectively; int8_learned_1x1x2 the first with learned
// LSQ step sizes (the drift ablation). gqa_1x1x2: mesh_1x1x2 with grouped-query attention (4
// query heads on 2 key/value heads); mqa_3x2x2: mesh_3x2x2 with multi-query attention (4 query
// heads on 1), its K/V matrices sharded; qk_gain_1x1x2: gqa_1x1x2 with QK-norm's learned gains
// (Qwen3's q_norm, k_norm); olmo2_1x1x2: qk_gain_1x1x2 in OLMo 2's layout (post-norm, QK-norm
// over whole projections) with an untied head and no embedding norm.
const CaseSpec kCases[] = {
    {"mesh_1x1x2", 4, 2, 4},  {"mesh_3x2x2", 12, 1, 3},        {"lifecycle_2x1x1", 4, 2, 5, true},
    {"int8_1x1x2", 4, 2, 4},  {"int8_fp32bw_3x2x2", 12, 1, 3}, {"int8_learned_1x1x2", 4, 2, 4},
    {"gqa_1x1x2", 4, 2, 4},   {"mqa_3x2x2", 12, 1, 3},         {"qk_gain_1x1x2", 4, 2, 4},
    {"olmo2_1x1x2", 4, 2, 4}, {"qwen3_1x1x2", 4, 2, 4}};

// `text` with its line `line` (which it must hold) replaced by `with`.
std::string ReplaceLine(std::string text, const std::string& line, const std::string& with) {
  const size_t at = text.find(line + "\n");
  TRAIL_CHECK(at != std::string::npos, "golden recipe without the line '", line, "'");
  return text.replace(at, line.size() + 1, with + "\n");
}

// `base`'s recipe text with its 2 attention heads replaced by `heads` query heads on `kv_heads`
// key/value heads.
std::string WithKvHeads(const std::string& base, int heads, int kv_heads) {
  return ReplaceLine(
      base, "n_heads = 2",
      "n_heads = " + std::to_string(heads) + "\nn_kv_heads = " + std::to_string(kv_heads));
}

const CaseSpec& Spec(const std::string& name) {
  for (const CaseSpec& c : kCases) {
    if (name == c.name) return c;
  }
  TRAIL_FAIL("no golden training case '", name, "'");
  return kCases[0];
}

}  // namespace

std::string GoldenRecipeText(const std::string& name) {
  if (name == "int8_1x1x2") {
    return GoldenRecipeText("mesh_1x1x2") + "[quant]\nlinear = \"int8-lsq\"\n";
  }
  if (name == "int8_learned_1x1x2") {
    return GoldenRecipeText("int8_1x1x2") + "step_size = \"learned\"\n";
  }
  if (name == "gqa_1x1x2") return WithKvHeads(GoldenRecipeText("mesh_1x1x2"), 4, 2);
  if (name == "mqa_3x2x2") return WithKvHeads(GoldenRecipeText("mesh_3x2x2"), 4, 1);
  if (name == "qk_gain_1x1x2") {
    return ReplaceLine(GoldenRecipeText("gqa_1x1x2"), "qk_norm = true",
                       "qk_norm = true\nqk_norm_gain = true");
  }
  if (name == "qwen3_1x1x2") {  // heads of 12, not d_model / n_heads = 8: q is [32, 48]
    return ReplaceLine(GoldenRecipeText("qk_gain_1x1x2"), "n_kv_heads = 2",
                       "n_kv_heads = 2\nhead_dim = 12");
  }
  if (name == "olmo2_1x1x2") {
    const std::string text =
        ReplaceLine(GoldenRecipeText("qk_gain_1x1x2"), "qk_norm_gain = true",
                    "qk_norm_gain = true\nqk_norm_projection = true\npost_norm = true");
    return ReplaceLine(text, "embed_norm = true", "tied_embeddings = false");
  }
  if (name == "int8_fp32bw_3x2x2") {
    return GoldenRecipeText("mesh_3x2x2") + "[quant]\nlinear = \"int8-lsq\"\nbackward = \"fp32\"\n";
  }
  const CaseSpec& c = Spec(name);
  const std::string common = R"(
d_model = 32
n_layers = 3
n_heads = 2
d_ff = 48
max_seq_len = 32
init_seed = 7
)";
  if (name == "mesh_1x1x2" || name == "lifecycle_2x1x1") {
    const int64_t replicas = name == "mesh_1x1x2" ? 1 : 2;
    return "[model]\n" + common + R"(qk_norm = true
embed_norm = true
attention_window = 6
full_attention_every = 2
z_loss = 1e-3
[optimizer]
lr = 1e-2
clip_norm = 0.5
[schedule]
decay = "cosine"
warmup_tokens = 64
total_tokens = 512
[mesh]
replicas = )" +
           std::to_string(replicas) + R"(
shards = 1
micro_batches = )" +
           (replicas == 1 ? "2" : "1") + R"(
[train]
steps = )" +
           std::to_string(c.steps) + "\n";
  }
  return "[model]\n" + common + R"(mlp = "gelu"
tied_embeddings = false
[optimizer]
lr = 5e-3
weight_decay = 0.05
spike_skip_factor = 3.0
spike_window = 4
spike_min_history = 2
[schedule]
decay = "wsd"
warmup_tokens = 100
total_tokens = 1000
wsd_decay_tokens = 400
[mesh]
replicas = 3
shards = 2
micro_batches = 2
[train]
steps = )" +
         std::to_string(c.steps) + "\n";
}

GoldenCase::GoldenCase(const std::string& name, const Device& device)
    : name_(name), recipe_text_(GoldenRecipeText(name)), steps_(Spec(name).steps) {
  const CaseSpec& c = Spec(name);
  data::StreamConfig sc;
  sc.seed = 99;
  sc.seq_len = 16;
  sc.schedule = {{0, c.windows_per_step}};
  sc.micro_batch_windows = c.micro_batch_windows;
  sc.chunking.max_tokens = 24;  // document positions stay below max_seq_len
  if (c.lifecycle) {
    sc.schedule = {{0, c.windows_per_step}, {3, 3}};
    sc.mixture_phases = {{2, {{"b", 1.0}}}};
    sc.seq_len_phases = {{3, 24}};
  }
  stream_ = std::make_unique<data::CanonicalStream>(data::synthetic::MakeCorpus(
      dir_.path(), {{"a", 0.6, 2, 12, 3, 40}, {"b", 0.4, 1, 10, 5, 30}}, sc, 2, 96));
  recipe_ = ParseRecipe(recipe_text_, name, 96);
  engine_ = std::make_unique<StepEngine>(recipe_, *stream_, collectives::SingleProcess(), device);
  state_ = std::make_unique<TrainState>(recipe_.model, engine_->backend());
  state_->params.InitRandom(recipe_.model);
  genesis_ = GenesisHash(recipe_.sha256, "golden", state_->params.StateHash());
  state_->chain = genesis_;
}

std::vector<std::string> GoldenCaseNames() {
  std::vector<std::string> out;
  for (const CaseSpec& c : kCases) out.push_back(c.name);
  return out;
}

std::vector<GoldenRun> RunTrainingGolden(const Device& device) {
  std::vector<GoldenRun> out;
  for (const std::string& name : GoldenCaseNames()) {
    GoldenCase gc(name, device);
    StepResult r;
    for (int64_t s = 0; s < gc.steps(); ++s) StepAndChain(gc.engine(), gc.state(), r);
    out.push_back({name, ToHex(gc.state().chain)});
  }
  return out;
}

const GoldenTable& CommittedTrainingGolden() { return CommittedGoldens("training"); }

}  // namespace trail::train
