// `trail export`: a run's checkpoint as a Hugging Face model folder or a GGUF v3 file
// (docs/inference.md §6). The architecture is chosen by export_arch.h; a feature neither target
// represents is refused, never approximated.
//
//   hf:   OUT/config.json, OUT/generation_config.json, OUT/model.safetensors (HF names, [out, in]
//         projections, float32), OUT/tokenizer.json (the run's tokenizer),
//         OUT/tokenizer_config.json
//   gguf: OUT, one GGUF v3 file (f32, or f16 for the 2-D tensors with 1-D ones in f32), for
//         llama.cpp's llama (Q and K rows permuted to its interleaved rotary pairs) or qwen3
#pragma once

#include <string>
#include <vector>

#include "infer/export_arch.h"
#include "infer/trained_model.h"

namespace trail::infer {

struct ExportOptions {
  TrainedModelOptions model;
  ExportFormat format = ExportFormat::kHf;
  std::string out;
  std::string gguf_type = "f32";  // f32 | f16
};

// What an export wrote.
struct ExportWritten {
  std::vector<std::string> files;
  int64_t tensors = 0;
};

struct ExportResult {
  ExportArchitecture arch;
  ExportWritten written;
  int64_t step = 0;
};

// Throws trail::Error for a model no target represents, a tokenizer llama.cpp does not know
// (GGUF) or an unwritable OUT; nothing is left half-written (each file is written atomically).
ExportResult ExportModel(const ExportOptions& options);

// The parts, for tests: the HF folder and the GGUF file of a model in memory.
ExportWritten ExportHf(const model::ModelConfig& c, const model::ParameterSet& p,
                       const tok::TokenizerContract& contract, const tok::Tokenizer& tokenizer,
                       const std::string& out_dir);
ExportWritten ExportGguf(const model::ModelConfig& c, const model::ParameterSet& p,
                         const tok::TokenizerContract& contract, const tok::Tokenizer& tokenizer,
                         const std::string& out_file, const std::string& type);

}  // namespace trail::infer
