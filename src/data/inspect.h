// Looking into the canonical stream, for `trail data inspect | stats | verify`, the run report
// and anyone tracing a training window back to its documents. Each report is a struct; its
// ToJson form is what `--json` prints: a key per field, in the order here and named as the field
// unless its comment gives the JSON name; an unset optional field has no key.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/manifest.h"
#include "data/stream.h"

namespace trail::data {

using Json = nlohmann::ordered_json;
// Token ids -> their text (a tokenizer's decoder); an empty function decodes nothing.
using Decoder = std::function<std::string(const std::vector<uint32_t>&)>;

// One run of a piece's tokens in a window.
struct WindowDocument {
  std::string source, shard;  // shard: its path as the manifest lists it
  uint64_t doc = 0;           // index in the shard
  std::string key;            // the document's key
  uint32_t chunk = 0;
  uint64_t doc_offset = 0;    // offset in the document of the run's first document token
  uint64_t piece_offset = 0;  // offset of the run's first token in its piece (a BOS counts)
  uint64_t tokens = 0;        // the run's tokens, BOS and EOS included
  bool starts_with_bos = false, ends_with_eos = false;
  // The pass it was read in: an epoch (JSON "epoch") for a permutation source, a draw block
  // ("draw_block") for sampling with replacement.
  bool draw_block = false;
  uint64_t pass = 0;
  uint64_t window_offset = 0;       // where the run starts in the window
  std::optional<std::string> text;  // the run decoded (PrintableBytes), with a decoder
};

// One of a window's L + 1 positions; the first L carry the packed row's label and masks.
struct WindowToken {
  int32_t token = 0, doc = 0, position = 0;  // doc: window-local document id
  bool real = false;                         // false: padding
  std::optional<std::string> piece;          // the token decoded, with a decoder
  bool has_label = false;                    // position < L: the four below are set
  int32_t label = 0;
  uint8_t loss = 0;
  int32_t attn_doc = 0;
  uint8_t key_valid = 0;
};

// Window w: its source, the source's window index and the window's offset in the source's
// stream, L, real tokens, targets, documents and tokens; with phases, the step that consumes it
// and the phases that step is in (the first step of each).
struct WindowInspection {
  uint64_t window = 0;
  std::string source;
  uint64_t source_window = 0, source_offset = 0;
  int64_t seq_len = 0, real_tokens = 0, targets = 0;
  std::vector<WindowDocument> documents;
  std::vector<WindowToken> tokens;
  std::optional<int64_t> step, mixture_phase_from_step, seq_len_phase_from_step;
};

struct MicroBatchInspection {
  std::vector<std::optional<uint64_t>> windows;  // one a row; nullopt (JSON null): padding row
  int64_t input_tokens = 0, real_tokens = 0, target_tokens = 0;  // B_input, real, B_target
};
struct RankInspection {
  int64_t rank = 0;
  std::vector<MicroBatchInspection> micro_batches;
};
// A step's window range, L, tokens consumed before it (the LR clock), and per logical rank (of
// `logical_ranks`; one rank when asked for one) its micro-batches; input and target totals
// over the ranks listed.
struct StepInspection {
  int64_t step = 0;
  uint64_t first_window = 0, end_window = 0;  // JSON "windows": [first, end)
  int64_t seq_len = 0;
  uint64_t tokens_before = 0;
  int64_t logical_ranks = 0, input_tokens = 0, target_tokens = 0;
  std::vector<RankInspection> ranks;
};

struct SourceShare {
  std::string source;
  Sampling sampling = Sampling::kPermutation;
  double target_share = 0, scheduled_share = 0, measured_share = 0;
  uint64_t windows = 0, tokens = 0, epoch_tokens = 0;
  double epochs = 0;
  bool ended = false;
};
// A mixture phase (phase 0: the sources' target shares from step 0) within the windows asked
// for: its first step and window, its windows and tokens, and per source (manifest order) its
// normalized target share and measured token share.
struct MixturePhaseShares {
  int64_t from_step = 0;
  uint64_t start_window = 0, windows = 0, tokens = 0;
  std::vector<std::pair<std::string, double>> target_share, measured_share;
};
// A sequence-length phase (phase 0: stream.seq_len from step 0) within the windows asked for.
struct LengthPhaseTokens {
  int64_t from_step = 0, seq_len = 0;
  uint64_t start_window = 0, windows = 0, tokens = 0;
};
// Target, scheduled and measured token shares of each source over the first `windows` windows
// (capped at the stream's length), with the phases' when the manifest has phases (empty
// otherwise).
struct SourceShareReport {
  uint64_t windows = 0;
  uint64_t stream_windows = 0;  // kUnlimited (JSON "unlimited") for an endless stream
  int64_t seq_len = 0;
  uint64_t tokens = 0;
  std::vector<SourceShare> sources;
  std::vector<MixturePhaseShares> mixture_phases;
  std::vector<LengthPhaseTokens> seq_len_phases;
};

WindowInspection InspectWindow(CanonicalStream& s, uint64_t w, const Decoder& decode);
// Every logical rank of `ranks`, or only `rank` when it is >= 0.
StepInspection InspectStep(CanonicalStream& s, int64_t step, int64_t ranks, int64_t rank);
// The windows that steps [0, steps) consume.
uint64_t WindowsBeforeStep(const Manifest& m, int64_t steps);
SourceShareReport SourceShares(CanonicalStream& s, uint64_t windows);

Json ToJson(const WindowInspection& r);
Json ToJson(const StepInspection& r);
Json ToJson(const SourceShareReport& r);

// Printable text of some bytes: newlines and control characters escaped (\n, \xNN).
std::string PrintableBytes(const std::string& bytes);

struct ShardCheck {
  std::string what;   // "train/<source>", "validation/<domain>" or "test/<domain>"
  std::string error;  // "" when the shard verified
};
// Opens and rehashes every shard the manifest lists (train, validation, test).
std::vector<ShardCheck> VerifyManifestShards(const Manifest& m);

}  // namespace trail::data
