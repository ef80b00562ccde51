#include "ingest/tokenize_tasks.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/spill.h"
#include "core/task_files.h"
#include "ingest/shard_sink.h"
#include "ingest/token_batches.h"
#include "tokenizer/contract.h"

namespace trail::ingest {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "trail.tokenize-task.v1";

std::string TasksDirectory(const TokenizeOptions& o, uint32_t tasks) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%05u", tasks);
  return o.output_dir + "/.tasks/" + o.prefix + buf;
}

std::string TaskDirectory(const TokenizeOptions& o, uint32_t task, uint32_t tasks) {
  return TasksDirectory(o, tasks) + "/" + TaskName(task);
}

Json FilesJson(const TokenizeOptions& o, const std::vector<uint64_t>& bytes, FileRange r) {
  Json files = Json::array();
  for (uint32_t f = r.begin; f < r.end; ++f) {
    files.push_back(Json{{"index", f}, {"path", o.inputs[f]}, {"bytes", bytes[f]}});
  }
  return files;
}

// What is wrong with a task's outputs ("" when nothing); `fingerprint` is checked when given.
std::string CheckTask(const std::string& dir, uint32_t task, uint32_t tasks, const Json& header,
                      const Json& files, const std::string& fingerprint) {
  if (!fs::exists(dir + "/task.json")) return "not complete (no task.json)";
  const Json m = ReadSealedManifest(dir + "/task.json");
  if (m.is_null()) return "task.json is damaged (it does not parse or its manifest_sha256 differs)";
  try {
    if (m.at("format") != kFormat || m.at("task") != task || m.at("tasks") != tasks) {
      return "task.json belongs to another task or format";
    }
    if (m.at("header") != header) {
      return "ran with other parameters (contract, inputs, prefix, shard_tokens or domain)";
    }
    if (m.at("files") != files) return "ran on other input files (they changed since)";
    if (!fingerprint.empty() && m.at("fingerprint") != fingerprint)
      return "ran on other input bytes";
    const std::string run = dir + "/tokens.run";
    if (!fs::exists(run)) return "tokens.run is missing";
    if (ToHex(Sha256OfFile(run)) != m.at("run").at("sha256")) {
      return "tokens.run is damaged (its SHA-256 differs from task.json)";
    }
  } catch (const std::exception& e) {
    return std::string("task.json is malformed: ") + e.what();
  }
  return "";
}

std::string Fingerprint(const Json& header, const TokenizeOptions& o, FileRange r) {
  Sha256Hasher h;
  const std::string head = header.dump();
  h.Update(head.data(), head.size());
  for (uint32_t f = r.begin; f < r.end; ++f) {
    const Digest d = Sha256OfFile(o.inputs[f]);
    h.Update(o.inputs[f].data(), o.inputs[f].size());
    h.Update(d.data(), d.size());
  }
  return ToHex(h.Finish());
}

// The slice's documents, encoded, into dir/tokens.run (temporary name, fsynced, renamed).
void EncodeSlice(const TokenizeOptions& o, const tok::LoadedContract& lc, FileRange r,
                 const std::string& dir, TokenizeTaskSummary& sum, Sha256Hasher& run_hash) {
  BatchEncoder encoder(*lc.tokenizer, o.threads);
  SpillWriter w(dir + "/tokens.run.tmp", 1 << 20);
  TokenBatch batch;
  std::string bytes;
  for (uint32_t in = r.begin; in < r.end; ++in) {
    DocumentReader reader(o.inputs[in]);
    for (bool more = true; more;) {
      more = encoder.Next(reader, in, batch);
      for (const TokenDoc& d : batch) {
        bytes.clear();
        EncodeTokenDoc(d, &bytes);
        w.AppendRecord(bytes);
        run_hash.UpdateU64(bytes.size());  // the file's bytes: length prefix, record
        run_hash.Update(bytes.data(), bytes.size());
        ++sum.documents;
        sum.tokens += d.ids.size();
      }
    }
  }
  w.Close(/*sync=*/true);
  fs::rename(dir + "/tokens.run.tmp", dir + "/tokens.run");
}

}  // namespace

TokenizeTaskSummary RunTokenizeTask(const TokenizeOptions& o, uint32_t task, uint32_t tasks) {
  TRAIL_CHECK(!o.inputs.empty(), "tokenize: no input files");
  TRAIL_CHECK(o.max_shards < 0,
              "--max-shards stops a one-process job; a task always finishes its slice");
  const tok::LoadedContract lc = tok::LoadContract(o.contract);
  const Json header = TokenizeJournalHeader(o, ToHex(lc.hash));
  const std::vector<uint64_t> bytes = InputFileSizes(o.inputs);
  const FileRange r = TaskSlice(bytes, task, tasks);
  TokenizeTaskSummary sum;
  sum.dir = TaskDirectory(o, task, tasks);
  sum.first_file = r.begin;
  sum.end_file = r.end;
  for (uint32_t f = r.begin; f < r.end; ++f) sum.bytes += bytes[f];
  fs::create_directories(sum.dir);
  const TaskLock lock(sum.dir + ".lock");
  const std::string fingerprint = Fingerprint(header, o, r);
  const Json files = FilesJson(o, bytes, r);
  if (CheckTask(sum.dir, task, tasks, header, files, fingerprint).empty()) {
    sum.already_complete = true;
    return sum;
  }
  fs::remove(sum.dir + "/task.json");  // first: from here on the task is not complete
  Sha256Hasher run_hash;
  EncodeSlice(o, lc, r, sum.dir, sum, run_hash);
  WriteSealedManifest(sum.dir + "/task.json",
                      Json{{"format", kFormat},
                           {"task", task},
                           {"tasks", tasks},
                           {"header", header},
                           {"files", files},
                           {"fingerprint", fingerprint},
                           {"run", Json{{"sha256", ToHex(run_hash.Finish())},
                                        {"documents", sum.documents},
                                        {"tokens", sum.tokens}}}});
  return sum;
}

TokenRuns VerifyTokenizeTasks(const TokenizeOptions& o, uint32_t tasks) {
  TRAIL_CHECK(tasks > 0, "--tasks must be at least 1");
  const tok::LoadedContract lc = tok::LoadContract(o.contract);
  const Json header = TokenizeJournalHeader(o, ToHex(lc.hash));
  const std::vector<uint64_t> bytes = InputFileSizes(o.inputs);
  TokenRuns runs;
  std::vector<std::string> problems;
  for (uint32_t t = 0; t < tasks; ++t) {
    runs.slices.push_back(TaskSlice(bytes, t, tasks));
    runs.paths.push_back(TaskDirectory(o, t, tasks) + "/tokens.run");
    const std::string why = CheckTask(TaskDirectory(o, t, tasks), t, tasks, header,
                                      FilesJson(o, bytes, runs.slices.back()), "");
    if (!why.empty()) problems.push_back("task " + std::to_string(t) + ": " + why);
  }
  if (!problems.empty()) {
    TRAIL_FAIL("the final phase needs all ", tasks, " encode tasks complete and intact; ",
               problems.size(), " of them are not (in ", TasksDirectory(o, tasks),
               "):", ProblemLines(problems),
               "\nRun each of these tasks again (the same command with --task I --tasks ", tasks,
               "; each alone repairs itself), then this phase again.");
  }
  return runs;
}

void ReplayTokenRuns(const TokenRuns& runs, const std::function<void(TokenDoc&&)>& fn) {
  std::string rec;
  for (size_t t = 0; t < runs.paths.size(); ++t) {
    SpillReader run(runs.paths[t], 1 << 20);
    while (run.ReadRecord(rec)) {
      TokenDoc d = DecodeTokenDoc(rec);
      TRAIL_CHECK(d.input < UINT32_MAX && runs.slices[t].contains(static_cast<uint32_t>(d.input)),
                  "task ", t, ": tokens.run names input ", d.input, ", not one of its files");
      fn(std::move(d));
    }
  }
}

void RemoveTokenizeTasks(const TokenizeOptions& o, uint32_t tasks) {
  fs::remove_all(TasksDirectory(o, tasks));
  std::error_code ignored;  // .tasks itself goes when nothing else is in it
  fs::remove(o.output_dir + "/.tasks", ignored);
}

TokenizeResult RunTokenizeFromTasks(const TokenizeOptions& o, uint32_t tasks) {
  TRAIL_CHECK(!o.inputs.empty(), "tokenize: no input files");
  TRAIL_CHECK(o.shard_tokens > 0, "tokenize: shard_tokens must be positive");
  TRAIL_CHECK(o.max_shards < 0, "--max-shards stops a one-process job, not the final phase");
  const tok::LoadedContract lc = tok::LoadContract(o.contract);
  fs::create_directories(o.output_dir);
  ShardSink sink(o, lc);
  const InputPosition pos = sink.Resume();
  if (sink.res().complete) {  // a final phase that ended before removing its tasks
    RemoveTokenizeTasks(o, tasks);
    return sink.res();
  }
  const TokenRuns runs = VerifyTokenizeTasks(o, tasks);  // before anything is written
  // Replayed in task order; what an interrupted final phase already wrote is skipped.
  TokenBatch batch;
  ReplayTokenRuns(runs, [&](TokenDoc&& d) {
    if (d.input < pos.input || (d.input == pos.input && d.line <= pos.line)) return;
    batch.push_back(std::move(d));
    if (batch.size() == 2048) {
      sink.Write(batch);
      batch.clear();
    }
  });
  sink.Write(batch);
  sink.Complete();
  RemoveTokenizeTasks(o, tasks);
  return sink.res();
}

}  // namespace trail::ingest
