// The canonical stream: window w (L+1 tokens) as a pure function of (manifest, stream seed, w).
// MixtureSchedule says which source owns w, its length L (the sequence-length phase of w's
// step) and its offset o in the source's stream; the window is that stream's tokens [o, o+L]
// (consecutive windows of a source share one token, so every token is a target in exactly one
// window). Past the end of a finite source the window is padded.
//
// Not thread-safe (it caches orders); give each thread its own CanonicalStream.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "data/manifest.h"
#include "data/mixture.h"
#include "data/source_stream.h"
#include "data/window.h"

namespace trail::data {

struct StreamOptions {
  StreamOptions() = default;
  explicit StreamOptions(bool verify, std::set<std::string> differing = {})
      : verify_hashes(verify), differing_shards(std::move(differing)) {}

  bool verify_hashes = true;  // rehash every shard on open (see ShardReader)
  // Shards (paths as the manifest writes them) whose content is known to differ from the
  // manifest's entry: opened without its SHA-256 (their counts must still be the manifest's).
  // For an audit on a copy of the data that differs (audit/published_run.h), which then vouches
  // for no step that reads them.
  std::set<std::string> differing_shards;
};

// Opens a manifest's shard list, checking each against the manifest (hash, contract, counts).
std::vector<std::shared_ptr<const ShardReader>> OpenShards(const Manifest& m,
                                                           const std::vector<ShardRef>& refs,
                                                           const StreamOptions& opt);

class CanonicalStream {
 public:
  explicit CanonicalStream(Manifest manifest, const StreamOptions& opt = {});

  const Manifest& manifest() const { return manifest_; }
  // L of the windows of step `step` (the sequence-length curriculum), and the longest of all.
  int64_t SeqLenAtStep(int64_t step) const { return data::SeqLenAtStep(manifest_.stream, step); }
  int64_t max_seq_len() const { return MaxSeqLen(manifest_.stream); }
  uint64_t num_windows() const { return mixture_.num_windows(); }  // kUnlimited if endless
  const MixtureSchedule& mixture() const { return mixture_; }
  size_t num_sources() const { return sources_.size(); }
  const SourceStream& source(size_t i) const { return *sources_[i]; }
  SourceStream& source(size_t i) { return *sources_[i]; }

  WindowOwner Owner(uint64_t w) const { return mixture_.Owner(w); }
  // Fills `out` with window w: L+1 entries (L of w's step), out.length real tokens, then padding
  // (token pad_id, or eos_id without one, or 0; the last document id continued; never a target).
  void Window(uint64_t w, RawWindow& out);

  int32_t pad_token() const { return pad_token_; }

 private:
  Manifest manifest_;
  std::vector<std::unique_ptr<SourceStream>> sources_;
  MixtureSchedule mixture_;
  int32_t pad_token_ = 0;
};

}  // namespace trail::data
