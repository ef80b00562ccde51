#include "audit/remote_run.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "audit/step_reads.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "data/shard_format.h"
#include "data/manifest.h"
#include "data/shard_reader.h"
#include "train/checkpoint.h"
#include "train/step_trace.h"

namespace trail::audit {
namespace {

constexpr const char* kAttestationPath = "run/attestation.json";

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
  const std::string text = source_->ReadSmall(kPublicationFile, kMaxPublicationBytes);
  pub_ = ParsePublication(text, source_->Describe(kPublicationFile));
  publication_bytes_ = text.size();
  cache_ = std::make_unique<fetch::ChunkCache>(o_.cache_dir, pub_.root, *source_, progress_);
}

RemoteRun::~RemoteRun() = default;

// Fetches every wanted range (whole: every chunk and the file's hash) after planning their
// missing bytes, so the progress line's total and ETA cover the whole batch; returns the local
// paths, in order.
std::vector<std::string> RemoteRun::Fetch(const std::vector<Want>& wants) {
  for (const Want& w : wants) {
    const uint64_t end = w.whole ? w.file->size : w.end, begin = w.whole ? 0 : w.begin;
    const auto [first, last] = w.file->ChunksOf(begin, end);
    for (uint64_t c = first; c < last; ++c) used_[w.file->path].insert(c);
    progress_.Plan(cache_->MissingBytes(*w.file, begin, end));
  }
  std::vector<std::string> local;
  for (const Want& w : wants) {
    local.push_back(w.whole ? cache_->EnsureWhole(*w.file)
                            : cache_->Ensure(*w.file, w.begin, w.end));
  }
  return local;
}

// The run's small files, the chosen steps' recorded traces, and the checkpoint each chosen step
// starts from while none is rejected, all whole.
void RemoteRun::FetchRunFiles(const std::vector<int64_t>& steps) {
  std::vector<Want> wants;
  auto want = [&](const std::string& path, bool required) {
    const fetch::RemoteFile* f = required ? &pub_.Get(path) : pub_.Find(path);
    if (f != nullptr) wants.push_back({f, 0, 0, true});
  };
  for (const char* name : {"run/run.json", "run/recipe.toml", "run/trajectory.jsonl"}) {
    want(name, true);
  }
  want(kAttestationPath, false);
  want("run/manifest.json", false);
  want("run/base.import.json", false);  // a continued pretraining's base record
  for (int64_t s : steps) {  // the trainer's trace of a step names where a replay diverges
    want(train::TracePath("run", s), false);
    want(train::TracePath("run", s) + ".sig", false);
  }
  for (int64_t c : StartingCheckpoints(steps, pub_.checkpoints)) {
    if (c >= 0) WantCheckpoint(c, wants);
  }
  Fetch(wants);
}

// The published files of checkpoint `step`, whole.
void RemoteRun::WantCheckpoint(int64_t step, std::vector<Want>& wants) const {
  for (const char* file : train::kCheckpointFiles) {
    if (const fetch::RemoteFile* f = pub_.Find(BundleCheckpointPath(step, file))) {
      wants.push_back({f, 0, 0, true});
    }
  }
}

// The manifest; every shard's header, then its index, keys and trailer.
void RemoteRun::FetchShardIndexes() {
  const std::string manifest_path = Fetch({{&pub_.Get(pub_.manifest), 0, 0, true}})[0];
  manifest_ = std::make_unique<data::Manifest>(data::LoadManifest(manifest_path));
  std::vector<const fetch::RemoteFile*> shards;
  std::vector<Want> heads, indexes;
  for (const data::ShardRef* r : ManifestShards(*manifest_)) {
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
}

// The token ranges that the windows of the `replayed` steps read, a run of consecutive chunks
// at a time.
void RemoteRun::FetchTokens(const std::vector<int64_t>& replayed) {
  std::vector<Want> tokens;
  for (const ShardReads& r : TokenReadsOfSteps(*manifest_, replayed)) {
    const fetch::RemoteFile& f =
        pub_.Get(BundleShardPath(manifest_->sources[r.source].shards[r.shard]));
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

// The publication's signer against the trainer's key (attestation.json, fetched and verified
// whole first).
void RemoteRun::Bind() {
  const fetch::RemoteFile* f = pub_.Find(kAttestationPath);
  const std::string text = f != nullptr ? ReadFileToString(Fetch({{f, 0, 0, true}})[0]) : "";
  binding_ = BindPublisher(pub_, text, o_.trusted_publishers, o_.trainer_key);
  if (!binding_.problem.empty()) {
    throw PublisherError(source_->Describe(kPublicationFile) + ": " + binding_.problem);
  }
}

// Shards whose published trailer names another content hash than the manifest's entry (the
// trailer is fetched and verified with the index; the tokens are not all fetched, so the hash
// itself is not recomputed: a step that reads altered tokens differs in its `batch`).
std::map<std::string, std::string> RemoteRun::DifferingShards() const {
  std::map<std::string, std::string> out;
  for (const data::ShardRef* r : ManifestShards(*manifest_)) {
    const fetch::RemoteFile& f = pub_.Get(BundleShardPath(*r));
    std::string trailer(data::kShardTrailerBytes, '\0');
    if (f.size < trailer.size()) continue;  // not a shard: its header did not parse either
    std::ifstream(cache_->files_dir() + "/" + f.path, std::ios::binary)
        .seekg(static_cast<std::streamoff>(f.size - trailer.size()))
        .read(trailer.data(), static_cast<std::streamsize>(trailer.size()));
    Digest named{};
    std::copy(trailer.begin() + 8, trailer.end(), named.begin());
    const std::string hash = ToHex(named);
    if (hash != r->sha256) {
      out[r->path] = StrCat("its trailer names content hash ", hash.substr(0, 16),
                            "..., the manifest ", r->sha256.substr(0, 16), "...");
    }
  }
  return out;
}

// What starting at `start` to replay up to `target` reads, unless fetched already.
void RemoteRun::Prepare(int64_t start, bool checkpoint, int64_t target) {
  const int64_t key = checkpoint ? start : -1;
  if (!prepared_.insert({key, target}).second) return;
  if (checkpoint) {
    std::vector<Want> wants;
    WantCheckpoint(start, wants);
    Fetch(wants);
  }
  FetchTokens(
      ReplayedSteps({target}, checkpoint ? std::vector<int64_t>{start} : std::vector<int64_t>{}));
  progress_.Finish();
}

void RemoteRun::FetchForSteps(const std::vector<int64_t>& steps, ReplayOptions& o) {
  TRAIL_CHECK(!steps.empty(), "audit: no steps to fetch");
  TRAIL_CHECK(steps.back() < pub_.run.steps, "audit: step ", steps.back(), " is beyond the ",
              pub_.run.steps, " steps the publication records");
  Bind();  // before anything else is fetched: a refused publisher costs only two small files
  FetchRunFiles(steps);
  FetchShardIndexes();
  FetchTokens(ReplayedSteps(steps, pub_.checkpoints));
  const std::vector<int64_t> starts = StartingCheckpoints(steps, pub_.checkpoints);
  for (size_t i = 0; i < steps.size(); ++i) prepared_.insert({starts[i], steps[i]});
  progress_.Finish();
  o.run_dir = cache_->files_dir() + "/run";
  o.data = cache_->files_dir() + "/" + pub_.manifest;
  o.verify_shards = false;
  FetchedSource& f = o.fetched;
  f.origin = {o_.location, pub_.root, binding_.signer, binding_.trainer, binding_.binding};
  f.checkpoints = pub_.checkpoints;
  f.differing_shards = DifferingShards();
  f.prepare = [this](int64_t start, bool checkpoint, int64_t target) {
    Prepare(start, checkpoint, target);
  };
}

std::string RemoteRun::FetchDataIndexes() {
  Bind();
  FetchRunFiles({});
  FetchShardIndexes();
  progress_.Finish();
  return cache_->files_dir() + "/" + pub_.manifest;
}

void RemoteRun::FetchShardTokens(const std::string& bundle_path, uint64_t begin, uint64_t end) {
  const fetch::RemoteFile& f = pub_.Get(bundle_path);
  const std::string local = Fetch({{&f, 0, data::kShardHeaderBytes, false}})[0];
  std::string head(data::kShardHeaderBytes, '\0');
  std::ifstream(local, std::ios::binary)
      .read(head.data(), static_cast<std::streamsize>(head.size()));
  const data::ShardHeader h =
      data::ParseShardHeader(reinterpret_cast<const uint8_t*>(head.data()), f.size, f.path);
  const uint64_t at = h.tokens_offset;
  Fetch({{&f, at + begin * h.token_bytes, at + end * h.token_bytes, false}});
  progress_.Finish();
}

std::string RemoteRun::FetchRange(const std::string& path, uint64_t begin, uint64_t end) {
  const std::string local = Fetch({{&pub_.Get(path), begin, end, false}})[0];
  progress_.Finish();
  return local;
}

std::string RemoteRun::ReadRange(const std::string& path, uint64_t begin, uint64_t end) {
  const std::string local = FetchRange(path, begin, end);
  std::ifstream in(local, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(begin));
  std::string out(end - begin, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  TRAIL_CHECK(static_cast<uint64_t>(in.gcount()) == out.size(), local, ": cannot read ", out.size(),
              " bytes at ", begin);
  return out;
}

std::string RemoteRun::local_path(const std::string& bundle_path) const {
  return cache_->files_dir() + "/" + bundle_path;
}

FetchTotals RemoteRun::totals() const {
  FetchTotals t;
  t.fetched_bytes = cache_->fetched_bytes() + publication_bytes_;
  t.reused_bytes = cache_->reused_bytes();
  for (const auto& [path, chunks] : used_) {
    const fetch::RemoteFile& f = pub_.Get(path);
    for (uint64_t c : chunks) t.used_bytes += f.ChunkEnd(c) - f.ChunkBegin(c);
  }
  return t;
}

nlohmann::json FetchReportJson(const RemoteRun& remote, const std::string& url) {
  const FetchTotals f = remote.totals();
  return {{"url", url},
          {"root", remote.publication().root},
          {"signer", remote.publication().signer},
          {"fetched_bytes", f.fetched_bytes},
          {"reused_bytes", f.reused_bytes},
          {"used_bytes", f.used_bytes},
          {"bundle_bytes", remote.publication().total_bytes()}};
}

}  // namespace trail::audit
