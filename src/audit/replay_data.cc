#include "audit/replay_data.h"

#include <filesystem>

#include "core/error.h"
#include "core/hash.h"
#include "audit/publication.h"
#include "data/manifest.h"

namespace trail::audit {
namespace {

namespace fs = std::filesystem;

bool HasRunsHash(const PublishedRun& run, const std::string& path) {
  return !path.empty() && fs::exists(path) &&
         ToHex(Sha256OfFile(path)) == run.info.json.value("manifest_sha256", "");
}

// Compares the copy with the run's manifest; returns the shards whose content differs, or
// throws naming what makes the copy other data.
std::map<std::string, std::string> CompareWithRun(const std::string& run_manifest,
                                                  const std::string& copy_path) {
  data::Manifest ref = data::LoadManifest(run_manifest), copy = data::LoadManifest(copy_path);
  std::vector<data::ShardRef*> rs = ManifestShards(ref), cs = ManifestShards(copy);
  const std::string other =
      StrCat(copy_path, ": SHA-256 ", ToHex(Sha256OfFile(copy_path)),
             " is not the manifest_sha256 the run records (", ToHex(Sha256OfFile(run_manifest)),
             "): it describes other data than the run trained on: ");
  TRAIL_CHECK(rs.size() == cs.size(), other, "it lists ", cs.size(), " shards, the run's ",
              rs.size());
  std::map<std::string, std::string> differing;
  for (size_t i = 0; i < rs.size(); ++i) {
    TRAIL_CHECK(rs[i]->path == cs[i]->path, other, "shard ", i, " is '", cs[i]->path,
                "', the run's '", rs[i]->path, "'");
    TRAIL_CHECK(rs[i]->tokens == cs[i]->tokens && rs[i]->documents == cs[i]->documents, other,
                "shard ", rs[i]->path, " holds ", cs[i]->documents, " documents / ", cs[i]->tokens,
                " tokens, the run's ", rs[i]->documents, " / ", rs[i]->tokens,
                ", so no window can be placed");
    if (rs[i]->sha256 != cs[i]->sha256) {
      differing[rs[i]->path] = StrCat("the copy's SHA-256 ", cs[i]->sha256.substr(0, 16),
                                      ", the run's ", rs[i]->sha256.substr(0, 16));
      cs[i]->sha256 = rs[i]->sha256;
    }
  }
  copy.path = ref.path, copy.dir = ref.dir;
  TRAIL_CHECK(data::ManifestToJson(copy) == data::ManifestToJson(ref), other,
              "beyond its shards' hashes it is not the run's manifest (sources, shares, the "
              "stream or the tokenizer differ)");
  return differing;
}

// A folder with the run's manifest bytes and, at each shard's path, a link to the copy's file.
std::shared_ptr<TempDir> Stage(const std::string& run_manifest, const std::string& copy_path) {
  auto dir = std::make_shared<TempDir>("trail-replay-data");
  fs::copy_file(run_manifest, dir->path() + "/manifest.json");
  data::Manifest copy = data::LoadManifest(copy_path);
  for (data::ShardRef* r : ManifestShards(copy)) {
    const fs::path link = fs::path(dir->path()) / r->path;
    fs::create_directories(link.parent_path());
    std::error_code ec;
    if (!fs::exists(link, ec)) fs::create_symlink(fs::absolute(copy.ShardPath(*r)), link);
  }
  return dir;
}

}  // namespace

std::set<std::string> ReplayData::differing_paths() const {
  std::set<std::string> out;
  for (const auto& [path, what] : differing) out.insert(path);
  return out;
}

ReplayData DataForReplay(const PublishedRun& run, const std::string& given) {
  std::string reference;  // the run's own manifest, when one with its hash is at hand
  for (const std::string& p : {run.rd.manifest_path(), run.info.data_manifest}) {
    if (reference.empty() && HasRunsHash(run, p)) reference = p;
  }
  const std::string path = given.empty() ? run.info.data_manifest : given;
  if (reference.empty() || path.empty() || !fs::exists(path) || HasRunsHash(run, path)) {
    return {ManifestForReplay(run, given), {}, nullptr};  // the run's data, or why not
  }
  ReplayData d;
  d.differing = CompareWithRun(reference, path);
  d.staging = Stage(reference, path);
  d.manifest = d.staging->path() + "/manifest.json";
  return d;
}

DifferingReads::DifferingReads(const std::string& manifest, const data::StreamOptions& shards,
                               const std::set<std::string>& differing)
    : stream_(data::LoadManifest(manifest), shards), schedule_(stream_.manifest().stream.schedule) {
  const data::Manifest& m = stream_.manifest();
  for (size_t i = 0; i < m.sources.size(); ++i) {
    for (size_t j = 0; j < m.sources[i].shards.size(); ++j) {
      const std::string& path = m.sources[i].shards[j].path;
      if (differing.count(path)) {
        stream_.source(i).shard(static_cast<uint32_t>(j)).LogReadsTo(&logs_[path]);
      }
    }
  }
}

std::string DifferingReads::ShardReadBy(int64_t step) {
  for (auto& [path, log] : logs_) log.clear();
  const data::WindowRange r = schedule_.StepWindows(step);
  for (uint64_t w = r.begin; w < r.end; ++w) stream_.Window(w, raw_);
  for (const auto& [path, log] : logs_) {
    if (!log.empty()) return path;
  }
  return "";
}

}  // namespace trail::audit
