// Looking into the canonical stream, for `trail data inspect | stats | verify` and for anyone
// tracing a training window back to its documents. Each report is a JSON object (the CLI prints
// it as it is with --json, or as a table).
//   InspectWindow: window w — its source, the source's window index and the window's offset in
//     the source's stream, L, real tokens, targets; with phases, the step and the phases it is in;
//     "documents": per segment source, shard, document index and key, chunk, doc_offset (token
//     offset in the document), piece_offset, tokens, starts_with_bos, ends_with_eos, epoch
//     (permutation sources) or draw_block (sampling with replacement), window_offset, and "text"
//     when decoding; "tokens": for each of the L+1 positions token, doc, position, real, "piece"
//     when decoding, and for the first L label, loss (mask), attn_doc, key_valid.
//   InspectStep: the step's window range, and per logical rank (of `ranks`; only `rank` when
//     >= 0) its micro-batches' windows (null for a padding row), B_input, real_tokens,
//     B_target; the step's L, tokens consumed before it and totals.
//   SourceShares: over the first W windows, per source its sampling, target share, scheduled
//     share, measured token share, windows, tokens read, epoch tokens, epochs and whether it ended.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/manifest.h"
#include "data/stream.h"

namespace trail::data {

using Json = nlohmann::ordered_json;
// Token ids -> their text (a tokenizer's decoder); an empty function decodes nothing.
using Decoder = std::function<std::string(const std::vector<uint32_t>&)>;

Json InspectWindow(CanonicalStream& s, uint64_t w, const Decoder& decode);
Json InspectStep(CanonicalStream& s, int64_t step, int64_t ranks, int64_t rank);
// The windows that steps [0, steps) consume.
uint64_t WindowsBeforeStep(const Manifest& m, int64_t steps);
// Target, scheduled and measured shares of each source over the first `windows` windows (capped
// at the stream's length). With mixture phases, also "mixture_phases": per phase its first step
// and window, window and token counts within the range, target shares (normalized) and
// measured token shares of its stretch; with length phases, "seq_len_phases": per phase its
// first step and window, L, and its windows and tokens within the range.
Json SourceShares(CanonicalStream& s, uint64_t windows);

// Printable text of some bytes: newlines and control characters escaped (\n, \xNN).
std::string PrintableBytes(const std::string& bytes);

struct ShardCheck {
  std::string what;   // "train/<source>", "validation/<domain>" or "test/<domain>"
  std::string error;  // "" when the shard verified
};
// Opens and rehashes every shard the manifest lists (train, validation, test).
std::vector<ShardCheck> VerifyManifestShards(const Manifest& m);

}  // namespace trail::data
