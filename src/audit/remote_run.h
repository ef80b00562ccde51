// Auditing a run published elsewhere (docs/audit.md, "Auditing a published run"): `trail audit
// replay|certify|trace --run URL` fetches only what the chosen steps read, into a cache shared
// between audits, every byte verified against the signed publication before use:
//   publication.json (its signature verified), then run.json, recipe.toml, trajectory.jsonl,
//   attestation.json and the recorded traces of the chosen steps; for each chosen step s the
//   newest published checkpoint at or before it (none: s is replayed from step 0); the data
//   manifest; of every shard its header, document index, keys and trailer; and of the token
//   arrays exactly the ranges that assembling the windows of the steps to replay reads (the
//   stream is run with a read log, data/shard_reader.h), chunk by chunk.
// The cache mirrors the bundle under <cache>/bundles/<root>/ with links to the verified objects,
// so the replay itself is a local one (with verify_shards off: a shard there holds only the
// chunks fetched; the rest reads as zeros and no step reads it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "audit/publication.h"
#include "fetch/chunk_cache.h"
#include "fetch/source.h"

namespace trail::audit {

struct RemoteOptions {
  std::string location;   // an https://, http:// or file:// URL, or a directory
  std::string cache_dir;  // "" : DefaultCacheDir()
  bool quiet = false;     // no progress line
  fetch::SourceOptions source;
};

struct FetchedRun {
  std::string run_dir, manifest;  // local paths to replay with (verify_shards off)
  uint64_t fetched_bytes = 0;     // downloaded: publication.json and what this call fetched
  uint64_t used_bytes = 0;        // of the chunks the steps need, fetched now or before
};

// $XDG_CACHE_HOME/trail, else $HOME/.cache/trail.
std::string DefaultCacheDir();

class RemoteRun {
 public:
  // Fetches publication.json and verifies its signature (FetchError when it cannot be fetched,
  // trail::Error when it is malformed or the signature fails).
  explicit RemoteRun(const RemoteOptions& o);
  ~RemoteRun();

  const Publication& publication() const { return pub_; }
  // Fetches (or finds in the cache) what replaying `steps` reads.
  FetchedRun FetchForSteps(const std::vector<int64_t>& steps);

 private:
  struct Want {
    const fetch::RemoteFile* file;
    uint64_t begin, end;  // bytes, ignored when whole
    bool whole;           // every chunk, then the file's SHA-256
  };
  std::vector<std::string> Fetch(const std::vector<Want>& wants);
  void FetchRunFiles(const std::vector<int64_t>& steps);
  void FetchData(const std::vector<int64_t>& replayed);

  RemoteOptions o_;
  std::unique_ptr<fetch::Source> source_;
  fetch::Progress progress_;
  std::unique_ptr<fetch::ChunkCache> cache_;
  Publication pub_;
  std::string bundle_;                              // <cache>/bundles/<root>
  uint64_t publication_bytes_ = 0;                  // publication.json, fetched on every open
  std::map<std::string, std::set<uint64_t>> used_;  // path -> chunks needed
};

}  // namespace trail::audit
