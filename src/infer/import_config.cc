// ReadHfConfig (import_hf.h): a Hugging Face config.json read the way transformers reads it for
// LlamaForCausalLM and Qwen3ForCausalLM, mapped to trail's model or refused by name.
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/error.h"
#include "core/file_util.h"
#include "infer/import_hf.h"

namespace trail::infer {
namespace {
using Json = nlohmann::json;

struct ConfigReader {
  const Json& j;
  std::string path;

  bool Has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }
  int64_t Int(const char* key) const {
    TRAIL_CHECK(Has(key), path, ": ", key, " is missing");
    TRAIL_CHECK(j.at(key).is_number_integer(), path, ": ", key, " must be an integer");
    return j.at(key).get<int64_t>();
  }
  int64_t Int(const char* key, int64_t otherwise) const { return Has(key) ? Int(key) : otherwise; }
  double Number(const Json& from, const char* key, double otherwise) const {
    if (!from.contains(key) || from.at(key).is_null()) return otherwise;
    TRAIL_CHECK(from.at(key).is_number(), path, ": ", key, " must be a number");
    return from.at(key).get<double>();
  }
  bool Bool(const char* key, bool otherwise) const {
    if (!Has(key)) return otherwise;
    TRAIL_CHECK(j.at(key).is_boolean(), path, ": ", key, " must be true or false");
    return j.at(key).get<bool>();
  }
  std::string String(const char* key, const std::string& otherwise) const {
    if (!Has(key)) return otherwise;
    TRAIL_CHECK(j.at(key).is_string(), path, ": ", key, " must be a string");
    return j.at(key).get<std::string>();
  }
  // A token id: an integer, or a list whose first id is used (noted).
  int64_t TokenId(const char* key, std::vector<std::string>& notes) const {
    if (!Has(key)) return -1;
    const Json& v = j.at(key);
    if (v.is_array() && !v.empty() && v[0].is_number_integer()) {
      if (v.size() > 1) {
        notes.push_back(StrCat(key, " lists ", v.size(), " ids; trail's contract keeps the first, ",
                               v[0].get<int64_t>()));
      }
      return v[0].get<int64_t>();
    }
    TRAIL_CHECK(v.is_number_integer(), path, ": ", key, " must be an integer or a list of them");
    return v.get<int64_t>();
  }
};

// rope_theta and rope scaling: transformers 5 writes rope_parameters {rope_type, rope_theta,
// ...}; earlier versions rope_theta and rope_scaling {rope_type | type, ...}. Both are read.
void ReadRope(const ConfigReader& r, model::ModelConfig& c) {
  const Json none = Json::object();
  const Json& params = r.Has("rope_parameters") ? r.j.at("rope_parameters") : none;
  const Json& scaling = r.Has("rope_scaling") ? r.j.at("rope_scaling") : params;
  TRAIL_CHECK(params.is_object() && scaling.is_object(), r.path,
              ": rope_parameters / rope_scaling must be objects");
  c.rope_theta =
      static_cast<float>(r.Number(params, "rope_theta", r.Number(r.j, "rope_theta", 1e4)));
  std::string type = "default";
  for (const char* key : {"type", "rope_type"}) {
    if (scaling.contains(key) && scaling.at(key).is_string()) type = scaling.at(key);
  }
  if (type == "default") return;
  TRAIL_CHECK(type == "llama3", r.path, ": RoPE scaling \"", type,
              "\" is not one trail represents (it has Llama 3's, rope_type \"llama3\", only)");
  repops::RopeScaling& s = c.rope_scaling;
  s.factor = static_cast<float>(r.Number(scaling, "factor", 0));
  s.low_freq_factor = static_cast<float>(r.Number(scaling, "low_freq_factor", 0));
  s.high_freq_factor = static_cast<float>(r.Number(scaling, "high_freq_factor", 0));
  TRAIL_CHECK(scaling.contains("original_max_position_embeddings") &&
                  scaling.at("original_max_position_embeddings").is_number_integer(),
              r.path, ": llama3 RoPE scaling needs an integer original_max_position_embeddings");
  s.original_max_pos = scaling.at("original_max_position_embeddings").get<int64_t>();
  s.Validate();
}

// Qwen3's sliding windows: with use_sliding_window, layer l attends within sliding_window keys
// when layer_types[l] is "sliding_attention" (layer_types defaults to sliding from layer
// max_window_layers on). trail's pattern (a window everywhere but every k-th layer and perhaps
// the last) must give the same layers, or the import is refused.
void ReadWindows(const ConfigReader& r, model::ModelConfig& c) {
  if (!r.Bool("use_sliding_window", false) || !r.Has("sliding_window")) return;
  const int64_t w = r.Int("sliding_window"), L = c.n_layers;
  std::vector<bool> sliding(static_cast<size_t>(L));
  if (r.Has("layer_types")) {
    const Json& t = r.j.at("layer_types");
    TRAIL_CHECK(t.is_array() && static_cast<int64_t>(t.size()) == L, r.path,
                ": layer_types must list one type per layer");
    for (int64_t l = 0; l < L; ++l) {
      TRAIL_CHECK(t[l] == "sliding_attention" || t[l] == "full_attention", r.path, ": layer_types[",
                  l, "] is ", t[l].dump(), ", not a type trail represents");
      sliding[l] = t[l] == "sliding_attention";
    }
  } else {
    const int64_t first = r.Int("max_window_layers", 28);
    for (int64_t l = 0; l < L; ++l) sliding[l] = l >= first;
  }
  model::ModelConfig t = c;
  t.attention_window = w;
  for (int64_t every = 0; every <= L; ++every) {
    for (bool last : {false, true}) {
      t.full_attention_every = every, t.full_attention_last = last;
      bool same = true;
      for (int64_t l = 0; l < L; ++l) same = same && (t.LayerWindow(l) > 0) == sliding[l];
      if (!same) continue;
      c.attention_window = w, c.full_attention_every = every, c.full_attention_last = last;
      return;
    }
  }
  TRAIL_FAIL(r.path,
             ": its sliding-window layers are not a pattern trail represents (a window "
             "on every layer but every k-th and perhaps the last)");
}

void CheckUnsupported(const ConfigReader& r) {
  TRAIL_CHECK(r.String("hidden_act", "silu") == "silu", r.path, ": hidden_act \"",
              r.String("hidden_act", ""), "\" is not SiLU, the only gated MLP trail has");
  TRAIL_CHECK(!r.Bool("attention_bias", false), r.path,
              ": attention_bias: trail's attention projections have no bias");
  TRAIL_CHECK(!r.Bool("mlp_bias", false), r.path, ": mlp_bias: trail's MLP has no bias");
  TRAIL_CHECK(r.Int("pretraining_tp", 1) == 1, r.path,
              ": pretraining_tp other than 1 changes how the logits are summed");
}

}  // namespace

HfModel ReadHfConfig(const std::string& path, int64_t max_seq_len) {
  Json j;
  try {
    j = Json::parse(ReadFileToString(path));
  } catch (const Json::exception& e) {
    TRAIL_FAIL(path, ": not valid JSON: ", e.what());
  }
  TRAIL_CHECK(j.is_object(), path, ": not a JSON object");
  const ConfigReader r{j, path};
  HfModel m;
  m.model_type = r.String("model_type", "");
  const bool olmo2 = m.model_type == "olmo2";
  TRAIL_CHECK(m.model_type == "llama" || m.model_type == "qwen3" || olmo2, path, ": model_type \"",
              m.model_type, "\" is not one trail imports (llama, qwen3, olmo2)");
  m.arch.name = m.model_type;
  m.arch.hf_class = m.model_type == "llama"   ? "LlamaForCausalLM"
                    : m.model_type == "qwen3" ? "Qwen3ForCausalLM"
                                              : "Olmo2ForCausalLM";
  m.arch.qk_norm = m.model_type != "llama";
  m.arch.post_norm = olmo2;
  if (r.Has("architectures")) {
    const Json& a = j.at("architectures");
    TRAIL_CHECK(a.is_array() && a.size() == 1 && a[0] == m.arch.hf_class, path,
                ": architectures is ", a.dump(), "; trail imports ", m.arch.hf_class);
  }
  m.architecture = m.arch.hf_class;
  m.dtype = r.String("dtype", r.String("torch_dtype", ""));
  CheckUnsupported(r);
  model::ModelConfig& c = m.config;
  c.vocab_size = r.Int("vocab_size");
  c.d_model = r.Int("hidden_size");
  c.d_ff = r.Int("intermediate_size");
  c.n_layers = r.Int("num_hidden_layers");
  c.n_heads = r.Int("num_attention_heads");
  c.n_kv_heads = r.Int("num_key_value_heads", c.n_heads);
  // Bounds before anything is sized from them (a hostile config must not allocate at will).
  for (const auto& [key, v, most] : {std::tuple{"vocab_size", c.vocab_size, int64_t{1} << 24},
                                     {"hidden_size", c.d_model, int64_t{1} << 20},
                                     {"intermediate_size", c.d_ff, int64_t{1} << 22},
                                     {"num_hidden_layers", c.n_layers, int64_t{1} << 12},
                                     {"num_attention_heads", c.n_heads, int64_t{1} << 12},
                                     {"num_key_value_heads", c.n_kv_heads, int64_t{1} << 12}}) {
    TRAIL_CHECK(v >= 1 && v <= most, path, ": ", key, " ", v, " is outside [1, ", most, "]");
  }
  // head_dim (Qwen3: 128 at every size) may differ from hidden_size / num_attention_heads; when
  // absent or null the heads split the model width, as transformers' getattr default.
  const int64_t head_dim = r.Int("head_dim", 0);
  TRAIL_CHECK(head_dim >= 0 && head_dim <= (int64_t{1} << 12) && head_dim % 2 == 0, path,
              ": head_dim ", head_dim, " is not an even width in [2, 4096]");
  TRAIL_CHECK(head_dim > 0 || c.d_model % c.n_heads == 0, path, ": hidden_size ", c.d_model,
              " is not a multiple of num_attention_heads ", c.n_heads, " and head_dim is not set");
  c.head_size = head_dim * c.n_heads == c.d_model ? 0 : head_dim;
  c.max_seq_len = max_seq_len > 0 ? max_seq_len : r.Int("max_position_embeddings");
  TRAIL_CHECK(c.max_seq_len >= 1 && c.max_seq_len <= (int64_t{1} << 24), path,
              ": max_position_embeddings ", c.max_seq_len,
              " is outside [1, 2^24]; give the positions to cover with --max-seq-len");
  c.mlp = model::MlpKind::kSwiGlu;
  c.norm_gain = true;
  c.qk_norm = c.qk_norm_gain = m.arch.qk_norm;
  c.qk_norm_projection = c.post_norm = olmo2;  // OLMo 2's layout
  c.tied_embeddings = r.Bool("tie_word_embeddings", false);
  // The default of each family's config class when the file leaves it out.
  c.norm_eps = static_cast<float>(r.Number(j, "rms_norm_eps", olmo2 ? 1e-5 : 1e-6));
  ReadRope(r, c);
  if (m.model_type == "qwen3") ReadWindows(r, c);  // OLMo 2 attends to the full context
  m.arch.sliding = c.attention_window > 0;
  m.bos_id = r.TokenId("bos_token_id", m.notes);
  m.eos_id = r.TokenId("eos_token_id", m.notes);
  m.pad_id = r.TokenId("pad_token_id", m.notes);
  try {
    c.Validate();
  } catch (const Error& e) {
    TRAIL_FAIL(path, ": ", e.what());
  }
  return m;
}

}  // namespace trail::infer
