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

// Thrown when a publication cannot stand for the run's trainer: its signature does not verify,
// or it is signed by another key than the one that signed the run's attestation.json and that
// key is not trusted (--trust-publisher). The CLI exits 6 (docs/audit.md, "Exit status").
class PublisherError : public Error {
 public:
  explicit PublisherError(const std::string& message) : Error(message) {}
};

// Parses publication.json's text and verifies its signature; throws PublisherError when the
// signature does not verify, trail::Error naming `where` and the problem when it is malformed
// or out of bounds.
Publication ParsePublication(const std::string& text, const std::string& where);

// Who stands behind a publication. The trainer is the key that signed the run's
// attestation.json; a publication signed by another key (a mirror that re-signed the file
// list) is accepted only when that key is trusted by name.
struct PublisherBinding {
  std::string signer;   // the publication's key fingerprint
  std::string trainer;  // the fingerprint of attestation.json's key ("": unsigned or absent)
  // "trainer": the publication's key signed the run's attestation; "trusted": another key,
  // named by --trust-publisher; "unsigned run": the run carries no trainer key to compare
  // with; "refused": another key, not trusted (`problem` says so).
  std::string binding;
  std::string problem;
};

// Binds p's signer to the trainer: `attestation` is the text of the run's attestation.json
// as published ("": the publication lists none), `trusted` fingerprints of keys accepted as
// publishers besides the trainer's, `trainer_key` the fingerprint the auditor knows the trainer
// by ("": none; else the attestation must be signed by it, or the binding is refused). Throws
// trail::Error when the attestation is malformed.
PublisherBinding BindPublisher(const Publication& p, const std::string& attestation,
                               const std::vector<std::string>& trusted,
                               const std::string& trainer_key = "");
// A key given to --trust-publisher or --trainer: a fingerprint (64 hex digits) or a .pub file's
// path.
std::string KeyFingerprint(const std::string& key_or_path);

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
