#include "corpus/pipeline/build_work.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/spill.h"
#include "corpus/read/source_reader.h"

namespace trail::corpus {
namespace fs = std::filesystem;

std::string InputFingerprint(const CorpusConfig& cfg, uint64_t budget_bytes) {
  Sha256Hasher h;
  h.Update(cfg.text.data(), cfg.text.size());
  h.Update(kStageVersions, std::strlen(kStageVersions));
  h.UpdateU64(budget_bytes);
  for (const SourceConfig& src : cfg.sources) {
    for (const std::string& path : src.paths) {
      TRAIL_CHECK(fs::exists(path), src.name, ": input file ", path, " does not exist");
      const Digest d = Sha256OfFile(path);
      h.Update(path.data(), path.size());
      h.Update(d.data(), d.size());
    }
  }
  return ToHex(h.Finish());
}

namespace {
std::string ReadOr(const std::string& path, const std::string& otherwise) {
  try {
    return fs::exists(path) ? ReadFileToString(path) : otherwise;
  } catch (const std::exception&) {
    return otherwise;
  }
}
}  // namespace

std::string PrepareWorkDirectory(const std::string& out_dir, const std::string& fingerprint) {
  fs::remove(out_dir + "/report.json");
  for (const char* split : {"train", "validation", "test"}) fs::remove_all(out_dir + "/" + split);
  fs::remove(out_dir + "/quarantine.jsonl");
  const std::string work = out_dir + "/.work";
  PrepareRunDirectory(work, fingerprint);
  return work;
}

void PrepareRunDirectory(const std::string& work, const std::string& fingerprint) {
  if (ReadOr(work + "/fingerprint", "") != fingerprint) fs::remove_all(work);
  fs::create_directories(work);
  WriteFileAtomic(work + "/fingerprint", fingerprint);
  std::vector<fs::path> scratch;  // listed first, then removed (not while iterating)
  for (const auto& e : fs::directory_iterator(work)) {
    const std::string name = e.path().filename().string();
    const bool run = name.rfind("docs-", 0) == 0 && name.find(".tmp") == std::string::npos;
    if (name != "fingerprint" && !run) scratch.push_back(e.path());
  }
  for (const fs::path& p : scratch) fs::remove_all(p);
}

std::string DocRunPath(const std::string& work, size_t chunk) {
  return work + "/docs-" + Padded(chunk).substr(3) + ".run";
}

bool DocRunIsValid(const std::string& run, const std::string& fingerprint, size_t chunk,
                   size_t documents) {
  try {
    if (!fs::exists(run) || !fs::exists(run + ".meta")) return false;
    const nlohmann::json m = nlohmann::json::parse(ReadFileToString(run + ".meta"));
    return m.at("fingerprint") == fingerprint && m.at("chunk") == chunk &&
           m.at("documents") == documents && m.at("sha256") == ToHex(Sha256OfFile(run));
  } catch (const std::exception&) {
    return false;
  }
}

void WriteDocRun(std::vector<PendingDoc>& chunk, const std::string& run,
                 const std::string& fingerprint, size_t chunk_index, size_t write_buffer) {
  std::vector<size_t> order(chunk.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return chunk[a].rec.key < chunk[b].rec.key; });
  Sha256Hasher h;
  SpillWriter w(run + ".tmp", write_buffer);
  std::string bytes;
  for (size_t i : order) {
    DocRecord& d = chunk[i].rec;
    if (d.drop.dropped()) std::string().swap(d.text);  // a dropped text is never used again
    bytes.clear();
    EncodeDocRecord(d, &bytes);
    w.AppendRecord(bytes);
    h.UpdateU64(bytes.size());  // the file's bytes: length prefix, record
    h.Update(bytes.data(), bytes.size());
  }
  w.Close();  // no fsync: the meta's SHA-256 is checked before the run is reused
  fs::rename(run + ".tmp", run);
  WriteFileAtomic(run + ".meta", nlohmann::json{{"fingerprint", fingerprint},
                                                {"chunk", chunk_index},
                                                {"documents", chunk.size()},
                                                {"sha256", ToHex(h.Finish())}}
                                         .dump() +
                                     "\n");
}

}  // namespace trail::corpus
