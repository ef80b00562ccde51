// A published run (format "trail.publication.v1", docs/audit.md "Publishing a run"): a bundle
// directory that works unchanged as a Hugging Face repository or a bucket prefix:
//   publication.json   the signed list of every other file
//   run/               run.json, recipe.toml, trajectory.jsonl, metrics.jsonl, attestation.json,
//                      traces/, and checkpoints/step_NNNNNNNN/ for the checkpoints kept
//   data/              the data manifest (data/manifest.json, the bytes the run hashed) and every
//                      shard it names (train, validation, test) at its path relative to it
// publication.json = {"statement": S, "public_key": 64 hex, "signature": 128 hex} with
//   S = {"format": "trail.publication.v1",
//        "run": {"genesis", "final_chain", "steps"},        (the trajectory's, hex)
//        "manifest": "data/manifest.json", "checkpoints": [steps kept, ascending],
//        "tokenizer": the tokenizer contract's path, e.g. "data/tokenizer.contract.json" ("":
//        none), "chunk_bytes": C, "files": [{"path", "size", "sha256", "chunks": [SHA-256 of each
//        C-byte piece]}]}
// in which paths are relative, '/'-separated, without "." or ".." parts, sorted and distinct.
// The signature (Ed25519, core/signing.h) is over "trail.publication.v1\n" followed by S
// serialized compactly with sorted keys (S holds only strings and integers); the bundle's root
// is the SHA-256 of those same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/plan.h"
#include "data/manifest.h"
#include "fetch/remote_file.h"

namespace trail::audit {

inline constexpr const char* kPublicationFormat = "trail.publication.v1";
inline constexpr const char* kPublicationFile = "publication.json";
// What a reader accepts (a hostile publication cannot make it allocate beyond these).
inline constexpr uint64_t kMaxPublicationBytes = 256u << 20;
inline constexpr uint64_t kMaxPublishedFiles = 1u << 20;
inline constexpr uint64_t kMaxPublishedFileBytes = uint64_t{1} << 44;  // 16 TiB

struct Publication {
  RunBinding run;
  std::string manifest;   // path of the data manifest in the bundle
  std::string tokenizer;  // path of the tokenizer contract in the bundle ("": not published)
  std::vector<int64_t> checkpoints;
  uint64_t chunk_bytes = 0;
  std::vector<fetch::RemoteFile> files;  // sorted by path
  std::string signer;                    // the public key's fingerprint
  std::string root;                      // hex

  const fetch::RemoteFile* Find(const std::string& path) const;
  const fetch::RemoteFile& Get(const std::string& path) const;  // throws when not listed
  uint64_t total_bytes() const;
};

// Parses publication.json's text and verifies its signature; throws trail::Error naming
// `where` and the problem (malformed, out of bounds, a signature that does not verify).
Publication ParsePublication(const std::string& text, const std::string& where);

// The bundle path of a run's checkpoint file, e.g. "run/checkpoints/step_00000100/meta.json".
std::string BundleCheckpointPath(int64_t step, const std::string& file);
// The bundle path of a shard: "data/" + its manifest path, normalized.
std::string BundleShardPath(const data::ShardRef& s);
// Every shard entry the manifest names, in the order: training sources, validation, test (a
// shard named twice appears twice); mutable entries of a mutable manifest.
template <class M>
auto ManifestShards(M& m) {
  std::vector<decltype(&m.sources.front().shards.front())> out;
  for (auto& s : m.sources) {
    for (auto& r : s.shards) out.push_back(&r);
  }
  for (auto* sets : {&m.validation, &m.test}) {
    for (auto& e : *sets) {
      for (auto& r : e.shards) out.push_back(&r);
    }
  }
  return out;
}

}  // namespace trail::audit
