#include "train/recipe.h"

#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/toml_text.h"

namespace trail::train {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const toml::table* Section(const toml::table& root, const char* name) const {
    const toml::node* n = root.get(name);
    if (n == nullptr) return nullptr;
    TRAIL_CHECK(n->is_table(), file_, ": [", name, "] must be a table");
    return n->as_table();
  }
  void AllowOnly(const toml::table* t, std::initializer_list<const char*> keys,
                 const std::string& where) const {
    if (t == nullptr) return;
    const std::set<std::string> ok(keys.begin(), keys.end());
    for (const auto& [k, v] : *t) {
      TRAIL_CHECK(ok.count(std::string(k.str())) == 1, file_, ": unknown key '", k.str(), "' in ",
                  where);
    }
  }
  template <class T>
  void Get(const toml::table* t, const char* key, const char* where, T& out) const {
    if (t == nullptr) return;
    const toml::node* n = t->get(key);
    if (n == nullptr) return;
    if constexpr (std::is_same_v<T, float>) {
      std::optional<double> v = n->value<double>();
      TRAIL_CHECK(v.has_value(), file_, ": [", where, "] ", key, " must be a number");
      out = static_cast<float>(*v);
    } else if constexpr (std::is_same_v<T, double>) {
      std::optional<double> v = n->value<double>();
      TRAIL_CHECK(v.has_value(), file_, ": [", where, "] ", key, " must be a number");
      out = *v;
    } else if constexpr (std::is_same_v<T, bool>) {
      TRAIL_CHECK(n->is_boolean(), file_, ": [", where, "] ", key, " must be true or false");
      out = *n->value<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      TRAIL_CHECK(n->is_string(), file_, ": [", where, "] ", key, " must be a string");
      out = *n->value<std::string>();
    } else {
      TRAIL_CHECK(n->is_integer(), file_, ": [", where, "] ", key, " must be an integer");
      out = static_cast<T>(*n->value<int64_t>());
    }
  }

 private:
  std::string file_;
};

// rope_scaling = "none" (default) or "llama3" with rope_factor (8), rope_low_freq_factor (1),
// rope_high_freq_factor (4) and rope_original_max_seq_len (8192): Llama 3.1's defaults.
void ReadRopeScaling(const Reader& rd, const toml::table* m, const std::string& path,
                     repops::RopeScaling& out) {
  std::string type = "none";
  rd.Get(m, "rope_scaling", "model", type);
  TRAIL_CHECK(type == "none" || type == "llama3", path,
              ": [model] rope_scaling must be \"none\" or", " \"llama3\", got \"", type, "\"");
  repops::RopeScaling s{
      .factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f, .original_max_pos = 8192};
  rd.Get(m, "rope_factor", "model", s.factor);
  rd.Get(m, "rope_low_freq_factor", "model", s.low_freq_factor);
  rd.Get(m, "rope_high_freq_factor", "model", s.high_freq_factor);
  rd.Get(m, "rope_original_max_seq_len", "model", s.original_max_pos);
  if (type == "llama3") {
    // Checked here: a factor of 0 would read as "no scaling" (RopeScaling::enabled).
    TRAIL_CHECK(s.factor >= 1.0f, path, ": [model] rope_factor must be >= 1, got ", s.factor);
    out = s;
    return;
  }
  for (const char* key : {"rope_factor", "rope_low_freq_factor", "rope_high_freq_factor",
                          "rope_original_max_seq_len"}) {
    TRAIL_CHECK(!m->contains(key), path, ": [model] ", key, " needs rope_scaling = \"llama3\"");
  }
  out = {};
}

// [model]: a preset or explicit sizes; vocab_size defaults to the data's tokenizer.
void ReadModel(const Reader& rd, const toml::table& root, const std::string& path,
               int64_t data_vocab, Recipe& r) {
  const toml::table* m = rd.Section(root, "model");
  TRAIL_CHECK(m != nullptr, path, ": a [model] section is required");
  rd.AllowOnly(m,
               {"preset",
                "vocab_size",
                "d_model",
                "n_layers",
                "n_heads",
                "n_kv_heads",
                "head_dim",
                "d_ff",
                "max_seq_len",
                "mlp",
                "norm_gain",
                "embed_norm",
                "qk_norm",
                "qk_norm_gain",
                "qk_norm_projection",
                "post_norm",
                "tied_embeddings",
                "norm_eps",
                "rope_theta",
                "rope_scaling",
                "rope_factor",
                "rope_low_freq_factor",
                "rope_high_freq_factor",
                "rope_original_max_seq_len",
                "z_loss",
                "attention_window",
                "full_attention_every",
                "full_attention_last",
                "init_std",
                "init_seed"},
               "[model]");
  rd.Get(m, "preset", "model", r.preset);
  model::ModelConfig& c = r.model;
  if (!r.preset.empty()) c = model::Preset(r.preset);
  c.vocab_size = 0;
  rd.Get(m, "vocab_size", "model", c.vocab_size);
  // A vocab_size above the tokenizer's pads the embedding (and head): rows no token id reaches.
  TRAIL_CHECK(c.vocab_size == 0 || c.vocab_size >= data_vocab || data_vocab == 0, path,
              ": [model] vocab_size ", c.vocab_size, " is below the tokenizer's ", data_vocab,
              " ids; it may only pad the embedding beyond them");
  if (c.vocab_size == 0) c.vocab_size = data_vocab;
  rd.Get(m, "d_model", "model", c.d_model);
  rd.Get(m, "n_layers", "model", c.n_layers);
  rd.Get(m, "n_heads", "model", c.n_heads);
  rd.Get(m, "n_kv_heads", "model", c.n_kv_heads);
  rd.Get(m, "head_dim", "model", c.head_size);
  // head_dim = d_model / n_heads is the default spelled out: one config, one recipe text.
  if (c.head_size > 0 && c.head_size * c.n_heads == c.d_model) c.head_size = 0;
  rd.Get(m, "d_ff", "model", c.d_ff);
  rd.Get(m, "max_seq_len", "model", c.max_seq_len);
  std::string mlp = model::MlpName(c.mlp);
  rd.Get(m, "mlp", "model", mlp);
  TRAIL_CHECK(mlp == "swiglu" || mlp == "gelu", path, ": [model] mlp must be swiglu or gelu");
  c.mlp = mlp == "swiglu" ? model::MlpKind::kSwiGlu : model::MlpKind::kGelu;
  rd.Get(m, "norm_gain", "model", c.norm_gain);
  rd.Get(m, "embed_norm", "model", c.embed_norm);
  rd.Get(m, "qk_norm", "model", c.qk_norm);
  rd.Get(m, "qk_norm_gain", "model", c.qk_norm_gain);
  rd.Get(m, "qk_norm_projection", "model", c.qk_norm_projection);
  rd.Get(m, "post_norm", "model", c.post_norm);
  rd.Get(m, "tied_embeddings", "model", c.tied_embeddings);
  rd.Get(m, "norm_eps", "model", c.norm_eps);
  rd.Get(m, "rope_theta", "model", c.rope_theta);
  ReadRopeScaling(rd, m, path, c.rope_scaling);
  rd.Get(m, "z_loss", "model", c.z_loss);
  rd.Get(m, "attention_window", "model", c.attention_window);
  rd.Get(m, "full_attention_every", "model", c.full_attention_every);
  rd.Get(m, "full_attention_last", "model", c.full_attention_last);
  rd.Get(m, "init_std", "model", c.init_std);
  int64_t seed = static_cast<int64_t>(c.init_seed);
  rd.Get(m, "init_seed", "model", seed);
  c.init_seed = static_cast<uint64_t>(seed);
  try {
    c.Validate();
  } catch (const Error& e) {
    TRAIL_FAIL(path, ": ", e.what());
  }
}

// [optimizer]: AdamW, clipping and the spike-skip protocol (lr is the schedule's peak).
void ReadOptimizer(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* o = rd.Section(root, "optimizer");
  rd.AllowOnly(o,
               {"lr", "beta1", "beta2", "eps", "weight_decay", "clip_norm", "spike_skip_factor",
                "spike_window", "spike_min_history"},
               "[optimizer]");
  OptimizerConfig& oc = r.optimizer;
  rd.Get(o, "lr", "optimizer", r.schedule.peak_lr);
  rd.Get(o, "beta1", "optimizer", oc.beta1);
  rd.Get(o, "beta2", "optimizer", oc.beta2);
  rd.Get(o, "eps", "optimizer", oc.eps);
  rd.Get(o, "weight_decay", "optimizer", oc.weight_decay);
  rd.Get(o, "clip_norm", "optimizer", oc.clip_norm);
  rd.Get(o, "spike_skip_factor", "optimizer", oc.spike_skip_factor);
  rd.Get(o, "spike_window", "optimizer", oc.spike_window);
  rd.Get(o, "spike_min_history", "optimizer", oc.spike_min_history);
  TRAIL_CHECK(oc.beta1 >= 0 && oc.beta1 < 1 && oc.beta2 >= 0 && oc.beta2 < 1, path,
              ": [optimizer] beta1 and beta2 must be in [0, 1)");
  TRAIL_CHECK(oc.eps > 0 && oc.weight_decay >= 0 && oc.clip_norm > 0, path,
              ": [optimizer] eps and clip_norm must be > 0, weight_decay >= 0");
  TRAIL_CHECK(oc.spike_skip_factor == 0 || oc.spike_skip_factor > 1, path,
              ": [optimizer] spike_skip_factor must be 0 (off) or > 1");
  TRAIL_CHECK(
      oc.spike_window > 0 && oc.spike_min_history > 0 && oc.spike_min_history <= oc.spike_window,
      path, ": [optimizer] need 0 < spike_min_history <= spike_window");
}

// [schedule]: token-anchored warmup and decay.
void ReadSchedule(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* s = rd.Section(root, "schedule");
  rd.AllowOnly(s, {"warmup_tokens", "decay", "total_tokens", "min_lr_ratio", "wsd_decay_tokens"},
               "[schedule]");
  std::string decay = "constant";
  rd.Get(s, "decay", "schedule", decay);
  r.schedule.decay = ParseDecayKind(decay);
  rd.Get(s, "warmup_tokens", "schedule", r.schedule.warmup_tokens);
  rd.Get(s, "total_tokens", "schedule", r.schedule.total_tokens);
  rd.Get(s, "min_lr_ratio", "schedule", r.schedule.min_lr_ratio);
  rd.Get(s, "wsd_decay_tokens", "schedule", r.schedule.wsd_decay_tokens);
  try {
    r.schedule.Validate();
  } catch (const Error& e) {
    TRAIL_FAIL(path, ": ", e.what());
  }
}

// [mesh]: the logical data-parallel mesh.
void ReadMesh(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* me = rd.Section(root, "mesh");
  rd.AllowOnly(me, {"replicas", "shards", "micro_batches", "shard_params"}, "[mesh]");
  rd.Get(me, "replicas", "mesh", r.mesh.replicas);
  rd.Get(me, "shards", "mesh", r.mesh.shards);
  rd.Get(me, "micro_batches", "mesh", r.mesh.micro_batches);
  rd.Get(me, "shard_params", "mesh", r.mesh.shard_params);
  TRAIL_CHECK(r.mesh.replicas >= 1 && r.mesh.shards >= 1 && r.mesh.micro_batches >= 0, path,
              ": [mesh] replicas and shards must be >= 1, micro_batches >= 0");
}

// [train]: steps, evaluation, checkpoints and logging.
void ReadLoop(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* t = rd.Section(root, "train");
  rd.AllowOnly(t,
               {"steps", "eval_every", "eval_windows", "checkpoint_every", "keep_checkpoints",
                "log_every", "state_hash_every", "recompute"},
               "[train]");
  rd.Get(t, "steps", "train", r.loop.steps);
  rd.Get(t, "eval_every", "train", r.loop.eval_every);
  rd.Get(t, "eval_windows", "train", r.loop.eval_windows);
  rd.Get(t, "checkpoint_every", "train", r.loop.checkpoint_every);
  rd.Get(t, "keep_checkpoints", "train", r.loop.keep_checkpoints);
  rd.Get(t, "log_every", "train", r.loop.log_every);
  rd.Get(t, "state_hash_every", "train", r.loop.state_hash_every);
  std::string recompute = model::RecomputeName(r.loop.recompute);
  rd.Get(t, "recompute", "train", recompute);
  TRAIL_CHECK(recompute == "none" || recompute == "layers", path,
              ": [train] recompute must be \"none\" or \"layers\", got \"", recompute, "\"");
  r.loop.recompute = model::ParseRecompute(recompute);
  TRAIL_CHECK(r.loop.steps >= 1 && r.loop.eval_every >= 0 && r.loop.eval_windows >= 1 &&
                  r.loop.checkpoint_every >= 0 && r.loop.keep_checkpoints >= 1 &&
                  r.loop.log_every >= 1 && r.loop.state_hash_every >= 0,
              path,
              ": [train] steps, eval_windows, keep_checkpoints, log_every must be >= 1; "
              "eval_every, checkpoint_every, state_hash_every >= 0");
}

// [monitor]: the loss-spike monitor.
void ReadMonitor(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* mo = rd.Section(root, "monitor");
  rd.AllowOnly(mo, {"window", "min_history", "threshold", "confirm"}, "[monitor]");
  rd.Get(mo, "window", "monitor", r.monitor.window);
  rd.Get(mo, "min_history", "monitor", r.monitor.min_history);
  rd.Get(mo, "threshold", "monitor", r.monitor.threshold);
  rd.Get(mo, "confirm", "monitor", r.monitor.confirm);
  TRAIL_CHECK(r.monitor.window >= r.monitor.min_history && r.monitor.min_history >= 2 &&
                  r.monitor.threshold > 0 && r.monitor.confirm >= 1,
              path, ": [monitor] needs window >= min_history >= 2, threshold > 0, confirm >= 1");
}

// [quant]: int8 quantization-aware training of the block matrices (the model reads it).
void ReadQuant(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* q = rd.Section(root, "quant");
  rd.AllowOnly(q, {"linear", "backward", "step_size"}, "[quant]");
  model::ModelConfig& c = r.model;
  std::string linear = model::LinearQuantName(c.linear_quant);
  std::string backward = model::QuantBackwardName(c.quant_backward);
  rd.Get(q, "linear", "quant", linear);
  rd.Get(q, "backward", "quant", backward);
  std::string step = model::QuantStepName(c.quant_step_learned);
  rd.Get(q, "step_size", "quant", step);
  TRAIL_CHECK(step == "recompute" || step == "learned", path,
              ": [quant] step_size must be \"recompute\" or \"learned\", got \"", step, "\"");
  TRAIL_CHECK(linear == "none" || linear == "int8-lsq", path,
              ": [quant] linear must be \"none\" or \"int8-lsq\", got \"", linear, "\"");
  TRAIL_CHECK(backward == "int8" || backward == "fp32", path,
              ": [quant] backward must be \"int8\" or \"fp32\", got \"", backward, "\"");
  TRAIL_CHECK(
      q == nullptr || q->contains("linear") ||
          (!q->contains("backward") && !q->contains("step_size")),
      path, ": [quant] backward or step_size is set but linear is not; add linear = \"int8-lsq\"");
  c.linear_quant = linear == "int8-lsq" ? model::LinearQuant::kInt8Lsq : model::LinearQuant::kNone;
  c.quant_backward = backward == "int8" ? repops::Int8Backward::kInt8 : repops::Int8Backward::kFp32;
  c.quant_step_learned = step == "learned";
  TRAIL_CHECK(!c.quant_step_learned || c.linear_quant == model::LinearQuant::kInt8Lsq, path,
              ": [quant] step_size = \"learned\" needs linear = \"int8-lsq\"");
}

// [init]: random initialization (the default) or an imported base, named by two hashes.
void ReadInit(const Reader& rd, const toml::table& root, const std::string& path, Recipe& r) {
  const toml::table* in = rd.Section(root, "init");
  rd.AllowOnly(in, {"from", "import_sha256", "params_sha256"}, "[init]");
  std::string from = "random";
  rd.Get(in, "from", "init", from);
  TRAIL_CHECK(from == "random" || from == "import", path,
              ": [init] from must be \"random\" or \"import\", got \"", from, "\"");
  r.init.imported = from == "import";
  rd.Get(in, "import_sha256", "init", r.init.import_sha256);
  rd.Get(in, "params_sha256", "init", r.init.params_sha256);
  auto is_hex64 = [](const std::string& h) {
    return h.size() == 64 && h.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  if (r.init.imported) {
    TRAIL_CHECK(is_hex64(r.init.import_sha256) && is_hex64(r.init.params_sha256), path,
                ": [init] from = \"import\" needs import_sha256 and params_sha256, 64 lowercase "
                "hex digits each (the recipe trail import writes has both)");
  } else {
    TRAIL_CHECK(r.init.import_sha256.empty() && r.init.params_sha256.empty(), path,
                ": [init] import_sha256 and params_sha256 need from = \"import\"");
  }
}

}  // namespace

Recipe ParseRecipe(const std::string& text, const std::string& path, int64_t data_vocab) {
  Recipe r;
  r.path = path;
  r.text = text;
  r.sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  const toml::table root = ParseTomlText(text, path);
  const Reader rd(path);
  rd.AllowOnly(&root,
               {"model", "init", "quant", "optimizer", "schedule", "mesh", "train", "monitor"},
               "the top level");
  ReadModel(rd, root, path, data_vocab, r);
  ReadQuant(rd, root, path, r);
  ReadOptimizer(rd, root, path, r);
  ReadSchedule(rd, root, path, r);
  ReadMesh(rd, root, path, r);
  ReadLoop(rd, root, path, r);
  ReadMonitor(rd, root, path, r);
  ReadInit(rd, root, path, r);
  return r;
}

InitConfig ParseRecipeInit(const std::string& text, const std::string& path) {
  Recipe r;
  ReadInit(Reader(path), ParseTomlText(text, path), path, r);
  return r.init;
}

Recipe LoadRecipe(const std::string& path, int64_t data_vocab) {
  return ParseRecipe(ReadFileToString(path), path, data_vocab);
}

}  // namespace trail::train
