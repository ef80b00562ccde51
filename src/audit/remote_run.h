// Auditing a run published elsewhere (docs/audit.md, "Auditing a published run"): `trail audit
// replay|certify|trace --run URL` fetches only what the chosen steps read, into a cache shared
// between audits (fetch/chunk_cache.h: every cached byte is checked against this publication's
// chunk hash at every use), every byte verified against the signed publication before use:
//   publication.json (its signature verified), then run.json, recipe.toml, trajectory.jsonl,
//   attestation.json and the recorded traces of the chosen steps; the publication's signer is
//   bound to the trainer (the key that signed attestation.json) or refused (PublisherError);
//   for each chosen step s the starting point the replay will use while none is rejected
//   (step_reads.h, NewestStart), its checkpoint files whole; the data manifest; of every
//   shard its header, document index, keys and trailer; and of the token arrays exactly the
//   ranges that assembling the windows of the steps to replay reads (the stream is run with a
//   read log, data/shard_reader.h), chunk by chunk.
// When the replay rejects a starting point and falls back to an older one, it asks for what that
// one reads (FetchedSource::prepare) before loading it: a replay never starts from bytes that
// were not fetched and verified.
// The cache's files of this publication (fetch::ChunkCache::files_dir) are the bundle's paths,
// so the replay itself is a local one (with verify_shards off: a shard there holds only the
// chunks fetched; the rest reads as zeros and no step reads it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit/publication.h"
#include "audit/replay.h"
#include "data/manifest.h"
#include "fetch/chunk_cache.h"
#include "fetch/source.h"

namespace trail::audit {

struct RemoteOptions {
  std::string location;   // an https://, http:// or file:// URL, or a directory
  std::string cache_dir;  // "" : DefaultCacheDir()
  bool quiet = false;     // no progress line
  fetch::SourceOptions source;
  // Fingerprints of keys accepted as publishers besides the trainer's (--trust-publisher).
  std::vector<std::string> trusted_publishers;
  // The fingerprint the auditor knows the trainer by (--trainer; "": none).
  std::string trainer_key;
};

struct FetchTotals {
  uint64_t fetched_bytes = 0;  // downloaded: publication.json and what this object fetched
  uint64_t reused_bytes = 0;   // copied from another publication's verified copy in the cache
  uint64_t used_bytes = 0;     // of the chunks the replay needs, fetched now or before
};

// $XDG_CACHE_HOME/trail, else $HOME/.cache/trail.
std::string DefaultCacheDir();

class RemoteRun {
 public:
  // Fetches publication.json and verifies its signature (FetchError when it cannot be fetched,
  // PublisherError when the signature fails, trail::Error when it is malformed).
  explicit RemoteRun(const RemoteOptions& o);
  ~RemoteRun();

  const Publication& publication() const { return pub_; }
  // Who stands behind it (after FetchForSteps or FetchDataIndexes bound it).
  const PublisherBinding& binding() const { return binding_; }
  // Fetches (or finds in the cache) what replaying `steps` reads, binds the publisher (throws
  // PublisherError when it is refused) and returns what a replay of this run adds: the local
  // run directory and manifest are set in `o` (o.run_dir, o.data, verify_shards off).
  void FetchForSteps(const std::vector<int64_t>& steps, ReplayOptions& o);
  // Binds the publication's signer to the trainer (fetching attestation.json); throws
  // PublisherError when it is refused.
  void Bind();
  // Fetches the chunks holding bytes [begin, end) of the published file `path`; returns the
  // local path of the file.
  std::string FetchRange(const std::string& path, uint64_t begin, uint64_t end);
  // The verified bytes [begin, end) of the published file `path` (fetched first when missing).
  std::string ReadRange(const std::string& path, uint64_t begin, uint64_t end);
  // Fetches what checking a claim about the training data reads (audit/data_proof.h): binds the
  // publisher (PublisherError when refused), then run.json, recipe.toml, trajectory.jsonl and
  // attestation.json whole, the data manifest, and every shard's header, index, keys and
  // trailer; no checkpoint and no token array. Returns the local path of the manifest, beside
  // which every shard sits at its manifest path (its token array as fetched so far).
  std::string FetchDataIndexes();
  // Fetches the chunks holding tokens [begin, end) of the shard at `bundle_path` (after
  // FetchDataIndexes).
  void FetchShardTokens(const std::string& bundle_path, uint64_t begin, uint64_t end);
  // The local copy of the bundle's run/ folder, and of any file at its bundle path.
  std::string run_dir() const { return local_path("run"); }
  std::string local_path(const std::string& bundle_path) const;
  // What a replay fetching from this publication has cost so far.
  FetchTotals totals() const;

 private:
  struct Want {
    const fetch::RemoteFile* file;
    uint64_t begin, end;  // bytes, ignored when whole
    bool whole;           // every chunk, then the file's SHA-256
  };
  std::vector<std::string> Fetch(const std::vector<Want>& wants);
  void FetchRunFiles(const std::vector<int64_t>& steps);
  void WantCheckpoint(int64_t step, std::vector<Want>& wants) const;
  void FetchShardIndexes();
  void FetchTokens(const std::vector<int64_t>& replayed);
  std::map<std::string, std::string> DifferingShards() const;
  void Prepare(int64_t start, bool checkpoint, int64_t target);

  RemoteOptions o_;
  std::unique_ptr<fetch::Source> source_;
  fetch::Progress progress_;
  std::unique_ptr<fetch::ChunkCache> cache_;
  Publication pub_;
  PublisherBinding binding_;
  std::unique_ptr<data::Manifest> manifest_;        // the publication's data manifest
  uint64_t publication_bytes_ = 0;                  // publication.json, fetched on every open
  std::map<std::string, std::set<uint64_t>> used_;  // path -> chunks needed
  std::set<std::pair<int64_t, int64_t>> prepared_;  // (start, target) fetched; start -1: recipe
};

// The "fetch" object of `trail audit replay --json` on a publication at `url`: url, root,
// signer, fetched_bytes, reused_bytes, used_bytes, bundle_bytes (RemoteRun::totals()).
nlohmann::json FetchReportJson(const RemoteRun& remote, const std::string& url);

}  // namespace trail::audit
