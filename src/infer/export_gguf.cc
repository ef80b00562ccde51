// The GGUF export (export.h): llama.cpp's metadata for the llama, qwen3 or olmo2 architecture, the
// tokenizer (model "gpt2", byte-level tokens and merges, a known pre-tokenizer), the tensors.
#include <filesystem>
#include <map>

#include "core/error.h"
#include "infer/export.h"
#include "infer/gguf_writer.h"
#include "repops/rope.h"
#include "tokenizer/loaders.h"
#include "tokenizer/patterns.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

// llama.cpp's name for the tokenizer's pre-tokenizer, or an error. llama.cpp's "gpt-2" regex
// leaves out GPT-2's final "|\s+"; what that alternative matches (one whitespace code point
// before a non-space, after \s+(?!\S)) llama.cpp emits as a piece of its own, so the pieces
// are the same.
std::string PreTokenizerName(const std::string& pattern) {
  if (pattern == tok::kGpt2Pattern) return "gpt-2";
  if (pattern == tok::kCl100kPattern) return "llama-bpe";
  if (pattern == tok::kO200kPattern) return "gpt-4o";
  TRAIL_FAIL(
      "the tokenizer's pre-tokenizer pattern is not one llama.cpp knows (GPT-2's, "
      "cl100k's = Llama 3's, o200k's); GGUF export refuses it: ",
      pattern);
}

// llama.cpp's tensor name and GGML shape (ne[0] contiguous) of an exported tensor.
std::string GgufName(const ExportTensor& t) {
  static const std::map<std::string, std::string> block = {
      {"attn_norm", "attn_norm"},
      {"q", "attn_q"},
      {"k", "attn_k"},
      {"v", "attn_v"},
      {"o", "attn_output"},
      {"q_norm", "attn_q_norm"},
      {"k_norm", "attn_k_norm"},
      {"mlp_norm", "ffn_norm"},
      {"attn_post_norm", "post_attention_norm"},
      {"mlp_post_norm", "post_ffw_norm"},
      {"gate", "ffn_gate"},
      {"up", "ffn_up"},
      {"down", "ffn_down"}};
  if (t.layer >= 0) return "blk." + std::to_string(t.layer) + "." + block.at(t.role) + ".weight";
  if (t.role == "embed") return "token_embd.weight";
  if (t.role == "final_norm") return "output_norm.weight";
  return "output.weight";
}

// HF's halves layout of Q or K rows to llama.cpp's interleaved pairs (its llama rotary): in each
// head, row 2i takes row i and row 2i+1 takes row i + hd/2.
std::vector<float> InterleaveRotaryRows(const std::vector<float>& w, int64_t heads, int64_t hd,
                                        int64_t cols) {
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < hd / 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const float* src = w.data() + (h * hd + j * (hd / 2) + i) * cols;
        std::copy(src, src + cols, out.data() + (h * hd + 2 * i + j) * cols);
      }
    }
  }
  return out;
}

// One token per embedding row (llama.cpp sizes the vocabulary by the token list): a padded
// vocabulary's rows past the tokenizer's ids are unused tokens, as ids without bytes are.
void AddTokenizer(GgufWriter& g, const tok::TokenizerContract& k, const tok::Tokenizer& t,
                  int64_t rows) {
  const tok::BpeModel& m = t.model();
  std::vector<std::string> tokens(static_cast<size_t>(rows));
  std::vector<int32_t> types(static_cast<size_t>(rows), 1);  // normal
  for (uint32_t id = 0; id < rows; ++id) {
    if (id < t.vocab_size() && id < m.size() && !m.bytes(id).empty()) {
      tokens[id] = tok::BytesToByteLevel(m.bytes(id));
    } else {
      tokens[id] = "[UNUSED_" + std::to_string(id) + "]", types[id] = 5;  // unused
    }
  }
  for (const tok::SpecialToken& s : t.specials()) tokens[s.id] = s.text, types[s.id] = 3;
  std::vector<std::string> merges;
  for (const tok::BpeModel::Merge& mg : m.Merges()) {
    merges.push_back(tok::BytesToByteLevel(m.bytes(mg.left)) + " " +
                     tok::BytesToByteLevel(m.bytes(mg.right)));
  }
  g.AddString("tokenizer.ggml.model", "gpt2");
  g.AddString("tokenizer.ggml.pre", PreTokenizerName(t.pattern()));
  g.AddStringArray("tokenizer.ggml.tokens", tokens);
  g.AddI32Array("tokenizer.ggml.token_type", types);
  g.AddStringArray("tokenizer.ggml.merges", merges);
  if (k.bos_id >= 0) g.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(k.bos_id));
  if (k.eos_id >= 0) g.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(k.eos_id));
  if (k.pad_id >= 0) g.AddU32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(k.pad_id));
  g.AddBool("tokenizer.ggml.add_bos_token", false);  // the model saw documents without BOS
  g.AddBool("tokenizer.ggml.add_eos_token", false);
}

}  // namespace

ExportWritten ExportGguf(const model::ModelConfig& c, const model::ParameterSet& p,
                         const tok::TokenizerContract& contract, const tok::Tokenizer& tokenizer,
                         const std::string& out, const std::string& type) {
  TRAIL_CHECK(type == "f32" || type == "f16", "GGUF type '", type, "': f32 or f16");
  TRAIL_CHECK(tokenizer.normalization() == tok::Normalization::kNone,
              "the tokenizer normalizes text (NFC), which llama.cpp's gpt2 tokenizer does not: "
              "GGUF export refuses it");
  const ExportArchitecture a = ChooseArchitecture(c, ExportFormat::kGguf);
  const std::string& arch = a.name;
  GgufWriter g;
  g.AddString("general.architecture", arch);
  g.AddString("general.name", "trail " + arch);
  g.AddU32("general.file_type", type == "f32" ? 0 : 1);
  g.AddU32(arch + ".context_length", static_cast<uint32_t>(c.max_seq_len));
  g.AddU32(arch + ".embedding_length", static_cast<uint32_t>(c.d_model));
  g.AddU32(arch + ".block_count", static_cast<uint32_t>(c.n_layers));
  g.AddU32(arch + ".feed_forward_length", static_cast<uint32_t>(c.d_ff));
  g.AddU32(arch + ".attention.head_count", static_cast<uint32_t>(c.n_heads));
  g.AddU32(arch + ".attention.head_count_kv", static_cast<uint32_t>(c.kv_heads()));
  g.AddU32(arch + ".attention.key_length", static_cast<uint32_t>(c.head_dim()));
  g.AddU32(arch + ".attention.value_length", static_cast<uint32_t>(c.head_dim()));
  g.AddU32(arch + ".rope.dimension_count", static_cast<uint32_t>(c.head_dim()));
  g.AddF32(arch + ".rope.freq_base", c.rope_theta);
  g.AddF32(arch + ".attention.layer_norm_rms_epsilon", c.norm_eps);
  g.AddU32(arch + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
  AddTokenizer(g, contract, tokenizer, c.vocab_size);
  int64_t tensors = 0;
  for (ExportTensor& t : ExportTensors(c, p, a)) {
    ++tensors;
    if (arch == "llama" && (t.role == "q" || t.role == "k")) {
      const int64_t heads = t.role == "q" ? c.n_heads : c.kv_heads();
      t.data = InterleaveRotaryRows(t.data, heads, c.head_dim(), c.d_model);
    }
    const std::vector<int64_t> ne(t.shape.rbegin(), t.shape.rend());  // HF [out, in] -> (in, out)
    const bool half = type == "f16" && ne.size() == 2;
    g.AddTensor(GgufName(t), ne, half ? GgufType::kF16 : GgufType::kF32, t.data);
  }
  if (c.rope_scaling.enabled()) {  // llama.cpp divides each frequency by its factor
    const int64_t hd = c.head_dim();
    const std::vector<float> plain = repops::RopeInvFreq(hd, c.rope_theta);
    std::vector<float> factors = repops::RopeInvFreq(hd, c.rope_theta, c.rope_scaling);
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = plain[i] / factors[i];
    g.AddTensor("rope_freqs.weight", {hd / 2}, GgufType::kF32, factors);
    ++tensors;
  }
  if (fs::path(out).has_parent_path()) fs::create_directories(fs::path(out).parent_path());
  g.Write(out);
  return {{out}, tensors};
}

}  // namespace trail::infer
