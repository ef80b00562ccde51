// The data manifest (JSON): which token shards a run trains on and how the stream is built
// from them. Loading is strict: unknown keys, missing fields and bad values are errors that
// name the manifest and the field. Shard paths are relative to the manifest's directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/shard_format.h"
#include "data/stream_config.h"

namespace trail::data {

struct ShardRef {
  std::string path;    // as written in the manifest (relative to its directory)
  std::string sha256;  // the shard's trailing content hash, hex
  uint64_t tokens = 0, documents = 0;
};

enum class Sampling {
  kPermutation,  // each epoch a fresh permutation of shards and of documents within shards
  kReplacement,  // documents drawn i.i.d. (uniform), in blocks of replacement_block_tokens
};

struct SourceSpec {
  std::string name;         // the training domain
  double target_share = 0;  // share of training tokens; shares are normalized over sources
  Sampling sampling = Sampling::kPermutation;
  uint32_t max_epochs = 0;  // permutation only: 0 = wrap forever; N = the source ends after N
  std::vector<ShardRef> shards;
};

// A frozen validation or test set of one domain (scored apart from training): read in stored order,
// never resampled or reweighted.
struct EvalSet {
  std::string domain;
  std::vector<ShardRef> shards;
};

struct TokenizerSpec {
  ContractHash contract{};
  uint32_t vocab_size = 0;
  uint32_t token_bytes = 2;
  int64_t eos_id = -1;  // required when stream.append_eos
  int64_t bos_id = -1;  // required when stream.prepend_bos (written only then)
  int64_t pad_id = -1;  // token written into padding slots (never a target)
};

struct Manifest {
  std::string path;  // where it was loaded from (empty for one built in memory)
  std::string dir;   // directory shard paths are relative to
  TokenizerSpec tokenizer;
  std::vector<SourceSpec> sources;
  std::vector<EvalSet> validation, test;
  StreamConfig stream;
  std::string lineage_db, lineage_sha256;  // optional link to the corpus factory's lineage

  std::string ShardPath(const ShardRef& s) const;
};

Manifest LoadManifest(const std::string& path);
Manifest ParseManifest(const std::string& json_text, const std::string& path_for_errors,
                       const std::string& dir);
std::string ManifestToJson(const Manifest& m);  // stable key order: same manifest, same bytes
void SaveManifest(const Manifest& m, const std::string& path);  // atomic

ContractHash ParseContractHash(const std::string& hex, const std::string& where);

}  // namespace trail::data
