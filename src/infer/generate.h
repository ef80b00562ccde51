// Generation: a prompt's prefill on a KV-cache decoder, then one decode step per new token,
// each chosen by model::Sampler (its canonical order) from the logits of the position before.
// The token at sequence position t is drawn with Philox keyed by (seed, t), so a generation is
// a pure function of (parameters, prompt ids, options) on every device and SIMD target.
//
// The prompt is the start of a document, as training saw documents: positions from 0, no BOS
// (the data stream adds none). Generation ends at the first of: max_tokens new tokens; the
// EOS id (kept in ids, not in the text); the text containing a stop string (the text ends
// before it; the ids keep the token that completed it); or the model's context (max_seq_len
// positions: the last token drawn may sit at position max_seq_len, which is never fed back).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "infer/trained_model.h"
#include "model/decoder.h"
#include "model/sampler.h"
#include "tokenizer/tokenizer.h"

namespace trail::infer {

struct GenerateOptions {
  std::vector<int32_t> prompt;  // at least one id
  int64_t max_tokens = 64;
  model::SamplingParams sampling;
  std::vector<std::string> stop;  // byte strings, none empty
  int64_t eos_id = -1;            // -1: none
};

struct Generation {
  std::vector<int32_t> ids;                        // the new tokens
  std::vector<float> logprobs;                     // of each under the model (model/sampler.h)
  std::string text;                                // their bytes, up to a stop string
  std::string finish;                              // "length", "eos", "stop" or "context"
  double prefill_seconds = 0, decode_seconds = 0;  // wall clock, for reports only
};

// Runs on `decoder` (emptied first; its capacity must hold the prompt). `on_text` receives the
// text as it becomes final: never an incomplete UTF-8 character or bytes that a stop string
// could still claim, except at the very end. Throws trail::Error for a bad option or prompt.
Generation Generate(model::Decoder& decoder, const tok::Tokenizer& tokenizer,
                    const GenerateOptions& options,
                    const std::function<void(std::string_view)>& on_text = {});

// The positions a decoder needs for this prompt and max_tokens, within the model's context.
int64_t DecoderCapacity(const model::ModelConfig& c, int64_t prompt_tokens, int64_t max_tokens);

// `trail generate`: a trained model from a run directory, the prompt text encoded with the
// run's tokenizer (special tokens as plain text), EOS the contract's, then Generate.
struct GenerateRun {
  std::vector<int32_t> prompt;  // the prompt's ids
  Generation generation;
  int64_t step = 0;                     // the checkpoint's
  std::string checkpoint_dir, backend;  // the backend's description
  int64_t cache_bytes = 0;              // the decoder's KV cache (model::Decoder::cache_bytes)
};
GenerateRun GenerateFromRun(const TrainedModelOptions& model, const std::string& prompt,
                            GenerateOptions options,
                            const std::function<void(std::string_view)>& on_text = {});

}  // namespace trail::infer
