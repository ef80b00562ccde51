#include "audit/remote_run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "audit/step_reads.h"
#include "data/manifest.h"
#include "data/shard_reader.h"
#include "train/step_trace.h"

namespace trail::audit {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string DefaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + "/trail";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/trail";
}

RemoteRun::RemoteRun(const RemoteOptions& o)
    : o_(o), source_(fetch::OpenSource(o.location, o.source)), progress_(o.quiet) {
  if (o_.cache_dir.empty()) o_.cache_dir = DefaultCacheDir();
  cache_ = std::make_unique<fetch::ChunkCache>(o_.cache_dir, *source_, progress_);
  const std::string text = source_->ReadSmall(kPublicationFile, kMaxPublicationBytes);
  pub_ = ParsePublication(text, source_->Describe(kPublicationFile));
  publication_bytes_ = text.size();
  bundle_ = o_.cache_dir + "/bundles/" + pub_.root;
  fs::create_directories(bundle_);
  std::ofstream(bundle_ + "/" + kPublicationFile, std::ios::binary) << text;
}

RemoteRun::~RemoteRun() = default;

// Makes [begin, end) of f present (whole: every chunk and the file's hash) and links the
// object at its bundle path.
std::string RemoteRun::Need(const fetch::RemoteFile& f, uint64_t begin, uint64_t end, bool whole) {
  if (whole) begin = 0, end = f.size;
  end = std::min(end, f.size);
  for (uint64_t c = begin / f.chunk_bytes; begin < end && c <= (end - 1) / f.chunk_bytes; ++c) {
    used_[f.path].insert(c);
  }
  progress_.Plan(cache_->MissingBytes(f, begin, end));
  const std::string object = whole ? cache_->EnsureWhole(f) : cache_->Ensure(f, begin, end);
  const fs::path link = fs::path(bundle_) / f.path;
  fs::create_directories(link.parent_path());
  std::error_code ec;
  if (!fs::is_symlink(link, ec)) {
    fs::remove(link, ec);
    fs::create_symlink(fs::absolute(object), link);
  }
  return link.string();
}

void RemoteRun::FetchRunFiles(const std::vector<int64_t>& steps) {
  for (const char* name : {"run/run.json", "run/recipe.toml", "run/trajectory.jsonl"}) {
    Need(pub_.Get(name), 0, 0, true);
  }
  for (const char* name : {"run/attestation.json", "run/manifest.json"}) {  // when published
    if (const fetch::RemoteFile* f = pub_.Find(name)) Need(*f, 0, 0, true);
  }
  for (int64_t s : steps) {  // the trainer's trace of a step names where a replay diverges
    for (const std::string& p : {train::TracePath("run", s), train::TracePath("run", s) + ".sig"}) {
      if (const fetch::RemoteFile* t = pub_.Find(p)) Need(*t, 0, 0, true);
    }
  }
}

// The newest published checkpoint at or before each step, fetched whole.
void RemoteRun::FetchCheckpoints(const std::vector<int64_t>& steps) {
  for (int64_t c : StartingCheckpoints(steps, pub_.checkpoints)) {
    if (c < 0) continue;  // replayed from step 0
    for (const char* file : {"meta.json", "model.safetensors", "optim.safetensors"}) {
      if (const fetch::RemoteFile* f = pub_.Find(BundleCheckpointPath(c, file))) {
        Need(*f, 0, 0, true);
      }
    }
  }
}

// The manifest, every shard's header, index, keys and trailer, then the token ranges that the
// windows of the `replayed` steps read.
void RemoteRun::FetchData(const std::vector<int64_t>& replayed) {
  const std::string manifest_path = Need(pub_.Get(pub_.manifest), 0, 0, true);
  const data::Manifest m = data::LoadManifest(manifest_path);
  for (const data::ShardRef* r : ManifestShards(m)) {
    const fetch::RemoteFile& f = pub_.Get(BundleShardPath(*r));
    const std::string local = Need(f, 0, data::kShardHeaderBytes);
    std::string head(data::kShardHeaderBytes, '\0');
    std::ifstream(local, std::ios::binary)
        .read(head.data(), static_cast<std::streamsize>(head.size()));
    const data::ShardHeader h =
        data::ParseShardHeader(reinterpret_cast<const uint8_t*>(head.data()), f.size, f.path);
    Need(f, h.index_offset, f.size);
  }
  for (const ShardReads& r : TokenReadsOfSteps(m, replayed)) {
    const fetch::RemoteFile& f = pub_.Get(BundleShardPath(m.sources[r.source].shards[r.shard]));
    std::set<uint64_t> chunks;  // the reads' chunks, then fetched a run of chunks at a time
    for (const auto& [b, e] : r.ranges) {
      const uint64_t begin = r.tokens_offset + b * r.token_bytes;
      const uint64_t end = std::min(f.size, r.tokens_offset + e * r.token_bytes);
      for (uint64_t c = begin / f.chunk_bytes; begin < end && c <= (end - 1) / f.chunk_bytes; ++c) {
        chunks.insert(c);
      }
    }
    for (auto it = chunks.begin(); it != chunks.end();) {
      uint64_t last = *it;
      auto next = std::next(it);
      while (next != chunks.end() && *next == last + 1) last = *next++;
      Need(f, f.ChunkBegin(*it), f.ChunkEnd(last));
      it = next;
    }
  }
}

FetchedRun RemoteRun::FetchForSteps(const std::vector<int64_t>& steps) {
  TRAIL_CHECK(!steps.empty(), "audit: no steps to fetch");
  TRAIL_CHECK(steps.back() < pub_.run.steps, "audit: step ", steps.back(), " is beyond the ",
              pub_.run.steps, " steps the publication records");
  const uint64_t before = cache_->fetched_bytes();
  FetchRunFiles(steps);
  FetchCheckpoints(steps);
  FetchData(ReplayedSteps(steps, pub_.checkpoints));
  progress_.Finish();
  FetchedRun out;
  out.run_dir = bundle_ + "/run";
  out.manifest = bundle_ + "/" + pub_.manifest;
  out.fetched_bytes = cache_->fetched_bytes() - before + publication_bytes_;
  for (const auto& [path, chunks] : used_) {
    const fetch::RemoteFile& f = pub_.Get(path);
    for (uint64_t c : chunks) out.used_bytes += f.ChunkEnd(c) - f.ChunkBegin(c);
  }
  return out;
}

}  // namespace trail::audit
