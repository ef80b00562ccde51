#include "corpus/dedup/near_tasks.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "core/task_files.h"
#include "corpus/pipeline/build_work.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kIndexFormat = "trail.corpus-index.v1";
constexpr const char* kNearFormat = "trail.corpus-near-task.v1";

std::string ConfigSha(const CorpusConfig& cfg) {
  return ToHex(Sha256({reinterpret_cast<const uint8_t*>(cfg.text.data()), cfg.text.size()}));
}

// A path under out_dir as the manifests record it (relative, so any spelling of --out works).
std::string Relative(const std::string& out_dir, const std::string& path) {
  const std::string prefix = out_dir + "/";
  TRAIL_CHECK(path.rfind(prefix, 0) == 0, path, " is not under ", out_dir);
  return path.substr(prefix.size());
}

std::string IndexProblem(const std::string& why, uint32_t read_tasks, uint32_t near_tasks) {
  return StrCat("the index phase's output ", why, "; run it again (--tasks ", read_tasks,
                " --near-tasks ", near_tasks, " --phase index), then the near tasks");
}

}  // namespace

std::string NearTasksDirectory(const std::string& out_dir, uint32_t near_tasks) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "/.tasks/near-%05u", near_tasks);
  return out_dir + buf;
}

std::string IndexDirectory(const std::string& out_dir, uint32_t near_tasks) {
  return NearTasksDirectory(out_dir, near_tasks) + "/index";
}

std::string NearTaskDirectory(const std::string& out_dir, uint32_t task, uint32_t near_tasks) {
  return NearTasksDirectory(out_dir, near_tasks) + "/" + TaskName(task);
}

std::string BandPartitionName(uint32_t partition) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "bands-%05u.bin", partition);
  return buf;
}

void WriteIndexManifest(const CorpusConfig& cfg, const std::string& out_dir, const IndexRecord& r) {
  const std::string dir = IndexDirectory(out_dir, r.near_tasks);
  Json runs = Json::array();
  for (const std::string& run : r.runs) {
    runs.push_back(Json{{"path", Relative(out_dir, run)}, {"bytes", fs::file_size(run)}});
  }
  Json files = Json::array();
  std::vector<std::string> names = {"locations.bin", "exact.bin"};
  for (uint32_t p = 0; p < r.near_tasks; ++p) names.push_back(BandPartitionName(p));
  for (const std::string& name : names) {
    files.push_back(Json{{"name", name}, {"sha256", ToHex(Sha256OfFile(dir + "/" + name))}});
  }
  WriteSealedManifest(dir + "/task.json", Json{{"format", kIndexFormat},
                                               {"read_tasks", r.read_tasks},
                                               {"near_tasks", r.near_tasks},
                                               {"config_sha256", ConfigSha(cfg)},
                                               {"stage_versions", kStageVersions},
                                               {"read_digest", r.read_digest},
                                               {"runs", runs},
                                               {"files", files},
                                               {"documents", r.documents},
                                               {"bytes_in", r.bytes_in}});
}

IndexRecord VerifyIndex(const CorpusConfig& cfg, const std::string& out_dir, uint32_t read_tasks,
                        uint32_t near_tasks, const std::string& read_digest,
                        const std::vector<std::string>& check) {
  const std::string dir = IndexDirectory(out_dir, near_tasks);
  if (!fs::exists(dir + "/task.json")) {
    TRAIL_FAIL(IndexProblem("is not complete (no " + dir + "/task.json)", read_tasks, near_tasks));
  }
  const Json m = ReadSealedManifest(dir + "/task.json");
  if (m.is_null()) TRAIL_FAIL(IndexProblem("manifest is damaged", read_tasks, near_tasks));
  IndexRecord r;
  try {
    if (m.at("format") != kIndexFormat || m.at("read_tasks") != read_tasks ||
        m.at("near_tasks") != near_tasks || m.at("config_sha256") != ConfigSha(cfg) ||
        m.at("stage_versions") != kStageVersions) {
      TRAIL_FAIL(IndexProblem("belongs to another config, trail version or task count", read_tasks,
                              near_tasks));
    }
    r.read_digest = m.at("read_digest");
    if (!read_digest.empty() && r.read_digest != read_digest) {
      TRAIL_FAIL(
          IndexProblem("was made from other read tasks' outputs (a read task ran again since)",
                       read_tasks, near_tasks));
    }
    for (const Json& run : m.at("runs")) {
      const std::string path = out_dir + "/" + run.at("path").get<std::string>();
      if (!fs::exists(path) || fs::file_size(path) != run.at("bytes")) {
        TRAIL_FAIL(IndexProblem("names a document run that is missing or changed: " + path,
                                read_tasks, near_tasks));
      }
      r.runs.push_back(path);
    }
    for (const Json& f : m.at("files")) {
      const std::string name = f.at("name");
      if (std::find(check.begin(), check.end(), name) == check.end()) continue;
      const std::string path = dir + "/" + name;
      if (!fs::exists(path) || ToHex(Sha256OfFile(path)) != f.at("sha256")) {
        TRAIL_FAIL(IndexProblem(name + " is missing or damaged", read_tasks, near_tasks));
      }
    }
    r.read_tasks = read_tasks;
    r.near_tasks = near_tasks;
    r.documents = m.at("documents");
    r.bytes_in = m.at("bytes_in");
    r.digest = JsonSha256(m);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(
        IndexProblem(std::string("manifest is malformed: ") + e.what(), read_tasks, near_tasks));
  }
  return r;
}

bool IndexIsComplete(const CorpusConfig& cfg, const std::string& out_dir, uint32_t read_tasks,
                     uint32_t near_tasks, const std::string& read_digest) {
  std::vector<std::string> all = {"locations.bin", "exact.bin"};
  for (uint32_t p = 0; p < near_tasks; ++p) all.push_back(BandPartitionName(p));
  try {
    VerifyIndex(cfg, out_dir, read_tasks, near_tasks, read_digest, all);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void WriteNearTaskManifest(const std::string& dir, uint32_t task, uint32_t near_tasks,
                           const std::string& index_digest, const NearTaskRecord& r) {
  WriteSealedManifest(dir + "/task.json",
                      Json{{"format", kNearFormat},
                           {"task", task},
                           {"tasks", near_tasks},
                           {"index_digest", index_digest},
                           {"pairs", Json{{"sha256", ToHex(Sha256OfFile(dir + "/pairs.bin"))},
                                          {"candidates", r.candidates},
                                          {"verified", r.verified}}}});
}

std::string CheckNearTask(const std::string& out_dir, uint32_t task, uint32_t near_tasks,
                          const std::string& index_digest) {
  const std::string dir = NearTaskDirectory(out_dir, task, near_tasks);
  if (!fs::exists(dir + "/task.json")) return "not complete (no task.json)";
  const Json m = ReadSealedManifest(dir + "/task.json");
  if (m.is_null()) return "task.json is damaged (it does not parse or its manifest_sha256 differs)";
  try {
    if (m.at("format") != kNearFormat || m.at("task") != task || m.at("tasks") != near_tasks) {
      return "task.json belongs to another task or format";
    }
    if (m.at("index_digest") != index_digest)
      return "ran on another index (the index ran again since)";
    const std::string pairs = dir + "/pairs.bin";
    if (!fs::exists(pairs)) return "pairs.bin is missing";
    if (ToHex(Sha256OfFile(pairs)) != m.at("pairs").at("sha256")) {
      return "pairs.bin is damaged (its SHA-256 differs from task.json)";
    }
  } catch (const std::exception& e) {
    return std::string("task.json is malformed: ") + e.what();
  }
  return "";
}

}  // namespace trail::corpus
