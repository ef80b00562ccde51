#include "infer/olmes_tasks.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/json_read.h"
#include "ingest/documents.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

// Bounds on what a request file may make us hold: a text of a request, and all of a task.
constexpr size_t kMaxRequestText = 1 << 20;
constexpr size_t kMaxTaskBytes = size_t{4} << 30;

void FindUnder(const fs::path& dir, std::vector<std::string>& out) {
  if (fs::exists(dir / "config.json")) {
    out.push_back(dir.string());
    return;
  }
  std::vector<fs::path> subdirs;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) subdirs.push_back(e.path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const fs::path& d : subdirs) FindUnder(d, out);
}

void ReadConfig(const std::string& dir, EvalTask& t) {
  const std::string path = dir + "/config.json";
  const std::string text = ReadFileToString(path);
  t.config_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    t.name = j.at("task_name").get<std::string>();
    t.primary_metric = j.at("task_config").at("primary_metric").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path,
               ": not an OLMES task config (task_name, task_config.primary_metric): ", e.what());
  }
  const auto& names = EvalMetricNames();
  TRAIL_CHECK(std::find(names.begin(), names.end(), t.primary_metric) != names.end(), path,
              ": unknown primary metric '", t.primary_metric,
              "' (trail eval computes acc_raw, acc_per_char, acc_per_token, bits_per_byte)");
  t.mc = t.name.size() > 3 && t.name.compare(t.name.size() - 3, 3, ":mc") == 0;
  t.base = t.mc ? t.name.substr(0, t.name.size() - 3) : t.name;
}

EvalRequest ParseRequest(const std::string& line, const std::string& where) {
  EvalRequest r;
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string type = j.at("request_type").get<std::string>();
    TRAIL_CHECK(type == "loglikelihood", where, ": request_type '", type,
                "': trail eval scores loglikelihood requests only");
    r.context = j.at("request").at("context").get<std::string>();
    r.continuation = j.at("request").at("continuation").get<std::string>();
    r.doc_id = JsonInteger<int64_t>(j.at("doc_id"), where + ": doc_id");
    r.idx = JsonInteger<int64_t>(j.at("idx"), where + ": idx");
    r.label = JsonInteger<int64_t>(j.at("label"), where + ": label");
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(where,
               ": not an OLMES request (request.context, request.continuation, doc_id, "
               "idx, label): ",
               e.what());
  }
  TRAIL_CHECK(r.context.size() <= kMaxRequestText && r.continuation.size() <= kMaxRequestText,
              where, ": a context or continuation of more than ", kMaxRequestText, " bytes");
  TRAIL_CHECK(!r.continuation.empty(), where, ": an empty continuation");
  return r;
}

// Orders each document's choices by idx and checks them: 0..n-1 once each, one label among them.
void CheckDocument(std::vector<EvalRequest>& doc, const std::string& path) {
  std::sort(doc.begin(), doc.end(),
            [](const EvalRequest& a, const EvalRequest& b) { return a.idx < b.idx; });
  const int64_t id = doc[0].doc_id;
  for (size_t i = 0; i < doc.size(); ++i) {
    TRAIL_CHECK(doc[i].idx == static_cast<int64_t>(i), path, ": document ", id,
                ": its choices (idx) are not 0..", doc.size() - 1, " once each");
    TRAIL_CHECK(doc[i].label == doc[0].label, path, ": document ", id, ": two labels");
  }
  TRAIL_CHECK(doc[0].label >= 0 && doc[0].label < static_cast<int64_t>(doc.size()), path,
              ": document ", id, ": label ", doc[0].label, " is not one of its ", doc.size(),
              " choices");
}

}  // namespace

const std::vector<std::string>& EvalMetricNames() {
  static const std::vector<std::string> names = {"acc_raw", "acc_per_char", "acc_per_token",
                                                 "bits_per_byte"};
  return names;
}

std::vector<std::string> FindTaskDirs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    TRAIL_CHECK(fs::is_directory(p), p, ": not a folder of OLMES tasks");
    const size_t before = out.size();
    FindUnder(p, out);
    TRAIL_CHECK(out.size() > before, p,
                ": holds no task folder (a folder with config.json and requests.jsonl.gz)");
  }
  return out;
}

EvalTask LoadTask(const std::string& dir, int64_t limit) {
  TRAIL_CHECK(limit >= 0, "--limit must be >= 0, got ", limit);
  EvalTask t;
  t.dir = dir;
  ReadConfig(dir, t);
  const std::string path = dir + "/requests.jsonl.gz";
  TRAIL_CHECK(fs::exists(path), path, ": missing");
  t.requests_sha256 = ToHex(Sha256OfFile(path));
  std::map<int64_t, size_t> doc_index;  // doc_id -> its place in `docs`
  std::vector<std::vector<EvalRequest>> docs;
  ingest::DocumentReader reader(path);
  std::string line;
  uint64_t lineno = 0;
  size_t bytes = 0;
  while (reader.NextRecord(line, lineno)) {
    bytes += line.size();
    TRAIL_CHECK(bytes <= kMaxTaskBytes, path, ": more than ", kMaxTaskBytes, " bytes of requests");
    EvalRequest r = ParseRequest(line, path + ":" + std::to_string(lineno));
    auto [it, fresh] = doc_index.emplace(r.doc_id, docs.size());
    if (fresh) {
      if (limit > 0 && static_cast<int64_t>(docs.size()) == limit) {
        doc_index.erase(it);
        continue;  // past the limit: later lines may still belong to kept documents
      }
      docs.emplace_back();
    }
    docs[it->second].push_back(std::move(r));
  }
  TRAIL_CHECK(!docs.empty(), path, ": no requests");
  for (std::vector<EvalRequest>& doc : docs) {
    CheckDocument(doc, path);
    for (EvalRequest& r : doc) t.requests.push_back(std::move(r));
  }
  t.documents = static_cast<int64_t>(docs.size());
  return t;
}

}  // namespace trail::infer
