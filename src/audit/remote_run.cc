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

// Fetches every wanted range (whole: every chunk and the file's hash) after planning their
// missing bytes, so the progress line's total and ETA cover the whole batch; links each object
// at its bundle path; returns the local paths, in order.
std::vector<std::string> RemoteRun::Fetch(const std::vector<Want>& wants) {
  for (const Want& w : wants) {
    const uint64_t end = w.whole ? w.file->size : w.end, begin = w.whole ? 0 : w.begin;
    const auto [first, last] = w.file->ChunksOf(begin, end);
    for (uint64_t c = first; c < last; ++c) used_[w.file->path].insert(c);
    progress_.Plan(cache_->MissingBytes(*w.file, begin, end));
  }
  std::vector<std::string> local;
  for (const Want& w : wants) {
    const std::string object =
        w.whole ? cache_->EnsureWhole(*w.file) : cache_->Ensure(*w.file, w.begin, w.end);
    const fs::path link = fs::path(bundle_) / w.file->path;
    fs::create_directories(link.parent_path());
    std::error_code ec;
    if (!fs::is_symlink(link, ec)) {
      fs::remove(link, ec);
      fs::create_symlink(fs::absolute(object), link);
    }
    local.push_back(link.string());
  }
  return local;
}

// The run's small files, the chosen steps' recorded traces, and for each chosen step the newest
// published checkpoint at or before it (none: it is replayed from step 0), all whole.
void RemoteRun::FetchRunFiles(const std::vector<int64_t>& steps) {
  std::vector<Want> wants;
  auto want = [&](const std::string& path, bool required) {
    const fetch::RemoteFile* f = required ? &pub_.Get(path) : pub_.Find(path);
    if (f != nullptr) wants.push_back({f, 0, 0, true});
  };
  for (const char* name : {"run/run.json", "run/recipe.toml", "run/trajectory.jsonl"}) {
    want(name, true);
  }
  want("run/attestation.json", false);
  want("run/manifest.json", false);
  for (int64_t s : steps) {  // the trainer's trace of a step names where a replay diverges
    want(train::TracePath("run", s), false);
    want(train::TracePath("run", s) + ".sig", false);
  }
  for (int64_t c : StartingCheckpoints(steps, pub_.checkpoints)) {
    if (c < 0) continue;
    for (const char* file : {"meta.json", "model.safetensors", "optim.safetensors"}) {
      want(BundleCheckpointPath(c, file), false);
    }
  }
  Fetch(wants);
}

// The manifest; every shard's header, then its index, keys and trailer; then the token ranges
// that the windows of the `replayed` steps read, a run of consecutive chunks at a time.
void RemoteRun::FetchData(const std::vector<int64_t>& replayed) {
  const std::string manifest_path = Fetch({{&pub_.Get(pub_.manifest), 0, 0, true}})[0];
  const data::Manifest m = data::LoadManifest(manifest_path);
  std::vector<const fetch::RemoteFile*> shards;
  std::vector<Want> heads, indexes, tokens;
  for (const data::ShardRef* r : ManifestShards(m)) {
    shards.push_back(&pub_.Get(BundleShardPath(*r)));
    heads.push_back({shards.back(), 0, data::kShardHeaderBytes, false});
  }
  const std::vector<std::string> local = Fetch(heads);
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string head(data::kShardHeaderBytes, '\0');
    std::ifstream(local[i], std::ios::binary)
        .read(head.data(), static_cast<std::streamsize>(head.size()));
    const data::ShardHeader h = data::ParseShardHeader(
        reinterpret_cast<const uint8_t*>(head.data()), shards[i]->size, shards[i]->path);
    indexes.push_back({shards[i], h.index_offset, shards[i]->size, false});
  }
  Fetch(indexes);
  for (const ShardReads& r : TokenReadsOfSteps(m, replayed)) {
    const fetch::RemoteFile& f = pub_.Get(BundleShardPath(m.sources[r.source].shards[r.shard]));
    std::set<uint64_t> chunks;
    for (const auto& [b, e] : r.ranges) {
      const auto [first, last] =
          f.ChunksOf(r.tokens_offset + b * r.token_bytes, r.tokens_offset + e * r.token_bytes);
      for (uint64_t c = first; c < last; ++c) chunks.insert(c);
    }
    for (auto it = chunks.begin(); it != chunks.end();) {
      uint64_t last = *it;
      auto next = std::next(it);
      while (next != chunks.end() && *next == last + 1) last = *next++;
      tokens.push_back({&f, f.ChunkBegin(*it), f.ChunkEnd(last), false});
      it = next;
    }
  }
  Fetch(tokens);
}

FetchedRun RemoteRun::FetchForSteps(const std::vector<int64_t>& steps) {
  TRAIL_CHECK(!steps.empty(), "audit: no steps to fetch");
  TRAIL_CHECK(steps.back() < pub_.run.steps, "audit: step ", steps.back(), " is beyond the ",
              pub_.run.steps, " steps the publication records");
  const uint64_t before = cache_->fetched_bytes();
  FetchRunFiles(steps);
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
