// `trail publish`: a finished run made into a bundle (audit/publication.h) that auditors fetch
// from anywhere, and `trail publish verify`: a bundle checked byte for byte against its signed
// file list, in a directory or at a URL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audit/publication.h"
#include "fetch/source.h"

namespace trail::audit {

struct PublishOptions {
  std::string run_dir, out_dir, key_path;
  // Keep the checkpoints whose step is a multiple of K, and always the first and the last
  // (0: every checkpoint).
  int64_t checkpoint_every = 0;
  uint64_t chunk_bytes = 1u << 20;
  // The tokenizer contract to publish ("": the .json file beside the data manifest whose SHA-256
  // the manifest records, when there is one). Its artifact is published beside it.
  std::string contract;
  bool quiet = false;
  // Further files to publish: (the file on disk, its path in the bundle), e.g. the band keys of
  // data::kBandSetPath that the caller computed with the corpus build's parameters.
  std::vector<std::pair<std::string, std::string>> extra_files;
};

struct PublishSummary {
  Publication publication;
  uint64_t bytes = 0;
};

// Checks the run first (the trajectory chains, every checkpoint verifies, the manifest is the
// one the run hashed, its shards are where it says and relative to it), then writes the bundle
// (files hard-linked where the file system allows, else copied) and publication.json last.
// Refuses an out_dir that exists and is not empty.
PublishSummary Publish(const PublishOptions& o);

struct BundleCheck {
  Publication publication;
  std::vector<std::string> problems;     // files whose bytes are not the published ones
  std::vector<std::string> unavailable;  // files whose bytes could not be fetched
  PublisherBinding binding;              // the signer against the run's attestation
  uint64_t bytes_read = 0;
  bool ok() const { return problems.empty() && unavailable.empty() && binding.problem.empty(); }
};

// Reads publication.json (its signature must verify: else it throws PublisherError) and every
// listed file in full, checking each chunk and each file's SHA-256, then binds the signer to the
// key of the run's attestation.json (audit/publication.h; `trusted`: --trust-publisher,
// `trainer_key`: --trainer). Extra
// files in a directory are ignored (a hub adds its own); an altered file is a problem, a file
// that cannot be fetched (missing, or a transfer that fails) is unavailable.
BundleCheck VerifyBundle(const std::string& location, const fetch::SourceOptions& so,
                         const std::vector<std::string>& trusted = {},
                         const std::string& trainer_key = "");

}  // namespace trail::audit
