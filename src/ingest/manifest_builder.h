// A data manifest from `trail data tokenize` outputs (<prefix>.shards.json lists): the tokenizer
// section from the contract (vocabulary, token width by data::TokenBytesForVocab, EOS and PAD;
// EOS appended when the contract has one; BOS prepended when asked, which needs the contract's),
// one source per NAME=SHARE=LIST, frozen validation and test sets per DOMAIN=LIST, shard paths made
// relative to the manifest's folder, and the stream settings. Each list must come from a complete
// tokenize run under the same contract. The manifest is checked by opening its stream before it is
// written (atomically).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/manifest.h"

namespace trail::ingest {

struct ManifestSpec {
  std::string contract;                       // tokenizer.contract.json
  std::vector<std::string> sources;           // NAME=SHARE=SHARDS_JSON
  std::vector<std::string> validation, test;  // DOMAIN=SHARDS_JSON
  int64_t seq_len = 2048;
  uint64_t seed = 0;
  std::string batch_schedule;               // "" (default), N, or FROM_STEP:N,FROM_STEP:N,...
  std::string seq_len_phases;               // "" or FROM_STEP:L,FROM_STEP:L,... (after step 0)
  std::vector<std::string> mixture_phases;  // FROM_STEP:NAME=SHARE,NAME=SHARE,...
  int64_t micro_batch = 1;
  uint32_t chunk_tokens = 0;           // 0: documents are never cut
  std::string positions = "document";  // document | window
  bool prepend_bos = false;            // BOS (the contract's bos_id, then required) per document
  std::string lineage;  // the corpus build's lineage.sqlite ("" : none), linked by path and hash
  std::string output;   // the manifest to write
};

struct BuiltManifest {
  size_t sources = 0;
  uint64_t windows = 0;  // data::kUnlimited for a stream without end
};

BuiltManifest BuildManifest(const ManifestSpec& spec);

// "FROM_STEP:N,..." (or "N") as batch phases; throws trail::Error naming `flag` when malformed.
std::vector<data::BatchPhase> ParseBatchSchedule(const std::string& text, const std::string& flag);
// "FROM_STEP:L,..." as sequence-length phases (the manifest's checks apply when it is written).
std::vector<data::SeqLenPhase> ParseSeqLenPhases(const std::string& text, const std::string& flag);
// "FROM_STEP:NAME=SHARE,NAME=SHARE,..." as one mixture phase.
data::MixturePhase ParseMixturePhase(const std::string& text, const std::string& flag);

}  // namespace trail::ingest
