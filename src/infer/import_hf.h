// `trail import`: a Hugging Face checkpoint directory (docs/import.md) becomes an imported base
// (train/imported_base.h): a model trail trains from, evaluates, samples and exports. Read:
//   config.json                          model_type "llama" (LlamaForCausalLM) or "qwen3"
//                                        (Qwen3ForCausalLM); every feature mapped exactly, or
//                                        refused by name
//   model.safetensors, or the shards a model.safetensors.index.json maps (files of this folder
//                                        only); F32, BF16 or F16 tensors, widened to float32
//                                        exactly (core/half.h)
//   tokenizer.json                       a byte-level BPE tokenizer (tokenizer/loaders.h)
// Nothing else is read, and nothing is approximated: the import is the checkpoint's function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infer/export_arch.h"
#include "model/config.h"

namespace trail::infer {

// What config.json says, mapped to trail.
struct HfModel {
  model::ModelConfig config;
  ExportArchitecture arch;
  std::string model_type, architecture, dtype;  // dtype: config's torch_dtype / dtype, or ""
  int64_t bos_id = -1, eos_id = -1, pad_id = -1;
  std::vector<std::string> notes;  // what the import chose where HF allows more (eos lists)
};
// Throws trail::Error naming the key and what trail lacks. max_seq_len > 0 replaces
// max_position_embeddings (the RoPE table's length).
HfModel ReadHfConfig(const std::string& config_path, int64_t max_seq_len);

struct ImportOptions {
  std::string from;         // the Hugging Face checkpoint directory
  std::string out;          // the directory to write: new, empty, or an interrupted import
  int64_t max_seq_len = 0;  // 0: config's max_position_embeddings
};

struct ImportResult {
  HfModel model;
  int64_t parameters = 0, tensors = 0;
  std::string params_sha256, import_sha256;
  std::vector<std::string> source_files;  // read, relative to `from`
  std::vector<std::string> ignored;       // tensors read past (rotary_emb.inv_freq buffers)
};

// Throws trail::Error for a checkpoint trail cannot represent, a missing, damaged or foreign
// file, or an unwritable `out`; import.json is written last, so a failed import leaves no import.
ImportResult ImportHf(const ImportOptions& options);

}  // namespace trail::infer
