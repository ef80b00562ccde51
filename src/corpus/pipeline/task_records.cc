#include "corpus/pipeline/task_records.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/le_bytes.h"
#include "corpus/pipeline/build_work.h"
#include "corpus/pipeline/doc_record.h"
#include "corpus/pipeline/read_phase.h"

namespace trail::corpus {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kFormat = "trail.corpus-read-task.v1";
constexpr uint64_t kMaxManifestBytes = 256ull << 20;  // a manifest lists runs: far below this

std::string Num5(uint32_t i) { return Padded(i).substr(3); }

std::string ConfigSha(const CorpusConfig& cfg) {
  return ToHex(Sha256({reinterpret_cast<const uint8_t*>(cfg.text.data()), cfg.text.size()}));
}

Json FilesJson(const ReadTaskPlan& p) {
  Json files = Json::array();
  for (uint32_t f = p.files.begin; f < p.files.end; ++f) {
    files.push_back(Json{{"index", f}, {"path", p.paths[f]}, {"bytes", p.bytes[f]}});
  }
  return files;
}

std::vector<Quarantined> ReadQuarantine(const std::string& path) {
  const std::string all = ReadFileToString(path);
  std::vector<Quarantined> out;
  for (size_t at = 0; at < all.size();) {
    TRAIL_CHECK(all.size() - at >= 8, path, ": ends inside a record length");
    const uint64_t n = GetU64(reinterpret_cast<const uint8_t*>(all.data() + at));
    at += 8;
    TRAIL_CHECK(n <= all.size() - at, path, ": a record runs past the end of the file");
    out.push_back(DecodeQuarantined(std::string_view(all).substr(at, n)));
    at += n;
  }
  return out;
}

// What is wrong with a task's outputs against what the final phase expects ("" when nothing),
// filling `record` when nothing is.
std::string CheckTask(const Json& expect_files, const std::string& config_sha,
                      const std::string& dir, uint32_t task, uint32_t tasks, ReadTaskRecord* record,
                      std::string* manifest_sha) {
  if (!fs::exists(dir + "/task.json")) return "not complete (no task.json)";
  const Json m = ReadSealedManifest(dir + "/task.json", kMaxManifestBytes);
  if (m.is_null()) return "task.json is damaged (it does not parse or its manifest_sha256 differs)";
  try {
    if (m.at("format") != kFormat || m.at("task") != task || m.at("tasks") != tasks) {
      return "task.json belongs to another task or format";
    }
    if (m.at("config_sha256") != config_sha || m.at("stage_versions") != kStageVersions) {
      return "ran with another config or trail version";
    }
    if (m.at("files") != expect_files) return "ran on other input files (they changed since)";
    *manifest_sha = JsonSha256(m);
    for (const Json& r : m.at("runs")) {
      const std::string name = r.at("name");
      const std::string path = dir + "/" + name;
      if (name.find('/') != std::string::npos || !fs::exists(path)) return name + " is missing";
      if (ToHex(Sha256OfFile(path)) != r.at("sha256")) {
        return name + " is damaged (its SHA-256 differs from task.json)";
      }
      record->runs.push_back(path);
    }
    const std::string q = dir + "/quarantine.bin";
    if (!fs::exists(q)) return "quarantine.bin is missing";
    if (ToHex(Sha256OfFile(q)) != m.at("quarantine").at("sha256")) {
      return "quarantine.bin is damaged (its SHA-256 differs from task.json)";
    }
    record->quarantined = ReadQuarantine(q);
    if (record->quarantined.size() != m.at("quarantine").at("records")) {
      return "quarantine.bin holds another number of records than task.json says";
    }
    record->warc_skipped = m.at("warc_skipped");
    record->resumed_runs = m.at("resumed_runs");
    record->checkpoint_seconds = m.at("checkpoint_seconds");
    for (const auto& [stage, s] : m.at("seconds").items()) record->seconds.push_back({stage, s});
  } catch (const std::exception& e) {
    return std::string("task.json or its files are malformed: ") + e.what();
  }
  return "";
}

}  // namespace

std::string ReadTasksDirectory(const std::string& out_dir, uint32_t tasks) {
  return out_dir + "/.tasks/read-" + Num5(tasks);
}

std::string ReadTaskDirectory(const std::string& out_dir, uint32_t task, uint32_t tasks) {
  return ReadTasksDirectory(out_dir, tasks) + "/" + TaskName(task);
}

ReadTaskPlan PlanReadTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                          uint32_t tasks, uint64_t budget_bytes) {
  ReadTaskPlan p;
  p.task = task;
  p.tasks = tasks;
  p.paths = BuildFileList(cfg);
  p.bytes = InputFileSizes(p.paths);
  p.files = TaskSlice(p.bytes, task, tasks);
  p.dir = ReadTaskDirectory(out_dir, task, tasks);
  Sha256Hasher h;
  h.Update(cfg.text.data(), cfg.text.size());
  h.Update(kStageVersions, std::strlen(kStageVersions));
  h.UpdateU64(budget_bytes);
  h.UpdateU64(task);
  h.UpdateU64(tasks);
  for (uint32_t f = p.files.begin; f < p.files.end; ++f) {
    const Digest d = Sha256OfFile(p.paths[f]);
    h.Update(p.paths[f].data(), p.paths[f].size());
    h.Update(d.data(), d.size());
  }
  p.fingerprint = ToHex(h.Finish());
  return p;
}

bool ReadTaskIsComplete(const CorpusConfig& cfg, const ReadTaskPlan& plan) {
  const Json m = ReadSealedManifest(plan.dir + "/task.json", kMaxManifestBytes);
  if (m.is_null() || m.value("fingerprint", "") != plan.fingerprint) return false;
  ReadTaskRecord unused;
  std::string sha;
  return CheckTask(FilesJson(plan), ConfigSha(cfg), plan.dir, plan.task, plan.tasks, &unused, &sha)
      .empty();
}

void PrepareReadTaskDirectory(const ReadTaskPlan& plan) {
  // The work directory's rules (build_work.h) for this task's directory: another fingerprint
  // clears it, scratch goes, intact-looking runs stay to be checked against their meta.
  fs::remove(plan.dir + "/task.json");  // first: from here on the task is not complete
  PrepareRunDirectory(plan.dir, plan.fingerprint);
}

void WriteReadTaskManifest(const CorpusConfig& cfg, const ReadTaskPlan& plan,
                           const ReadTaskRecord& record) {
  Json runs = Json::array();
  for (const std::string& run : record.runs) {
    const Json meta = Json::parse(ReadFileToString(run + ".meta"));
    runs.push_back(Json{{"name", fs::path(run).filename().string()},
                        {"documents", meta.at("documents")},
                        {"sha256", meta.at("sha256")}});
  }
  std::string q;
  for (const Quarantined& x : record.quarantined) {
    std::string rec;
    EncodeQuarantined(x, &rec);
    uint8_t len[8];
    PutU64(len, rec.size());
    q.append(reinterpret_cast<const char*>(len), 8);
    q += rec;
  }
  WriteFileAtomic(plan.dir + "/quarantine.bin", q);
  Json seconds = Json::object();
  for (const auto& [stage, s] : record.seconds) seconds[stage] = s;
  Json m{{"format", kFormat},
         {"task", plan.task},
         {"tasks", plan.tasks},
         {"config_sha256", ConfigSha(cfg)},
         {"stage_versions", kStageVersions},
         {"fingerprint", plan.fingerprint},
         {"files", FilesJson(plan)},
         {"runs", runs},
         {"quarantine",
          Json{{"records", record.quarantined.size()},
               {"sha256", ToHex(Sha256({reinterpret_cast<const uint8_t*>(q.data()), q.size()}))}}},
         {"warc_skipped", record.warc_skipped},
         {"resumed_runs", record.resumed_runs},
         {"seconds", seconds},
         {"checkpoint_seconds", record.checkpoint_seconds}};
  WriteSealedManifest(plan.dir + "/task.json", std::move(m));
}

std::vector<ReadTaskRecord> VerifyReadTasks(const CorpusConfig& cfg, const std::string& out_dir,
                                            uint32_t tasks, std::string* fingerprint) {
  TRAIL_CHECK(tasks > 0, "--tasks must be at least 1");
  ReadTaskPlan plan;  // the expected slices, without hashing the inputs again
  plan.paths = BuildFileList(cfg);
  plan.bytes = InputFileSizes(plan.paths);
  plan.tasks = tasks;
  const std::string config_sha = ConfigSha(cfg);
  std::vector<ReadTaskRecord> records(tasks);
  std::vector<std::string> problems;
  Sha256Hasher all;
  for (uint32_t t = 0; t < tasks; ++t) {
    plan.task = t;
    plan.files = TaskSlice(plan.bytes, t, tasks);
    std::string sha;
    const std::string why =
        CheckTask(FilesJson(plan), config_sha, ReadTaskDirectory(out_dir, t, tasks), t, tasks,
                  &records[t], &sha);
    if (!why.empty()) problems.push_back("task " + std::to_string(t) + ": " + why);
    all.Update(sha.data(), sha.size());
  }
  if (!problems.empty()) {
    TRAIL_FAIL(
        "the final phase needs all ", tasks, " read tasks complete and intact; ", problems.size(),
        " of them are not (in ", ReadTasksDirectory(out_dir, tasks), "):", ProblemLines(problems),
        "\nRun each of these tasks again (`trail corpus build --config ... --out ", out_dir,
        " --task I --tasks ", tasks, "`; each alone repairs itself), then this phase again.");
  }
  *fingerprint = ToHex(all.Finish());
  return records;
}

}  // namespace trail::corpus
