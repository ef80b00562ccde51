#include "infer/eval_report.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/hash.h"
#include "core/json_read.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

std::string DoubleBits(double x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<uint64_t>(x)));
  return buf;
}

double DoubleFromBits(const std::string& hex, const std::string& where) {
  const std::vector<uint8_t> b = BytesFromHex(hex, 8, where);
  uint64_t v = 0;
  for (uint8_t byte : b) v = v << 8 | byte;
  return std::bit_cast<double>(v);
}

nlohmann::json MetricsJson(const TaskMetrics& m) {
  return {{"documents", m.documents},
          {"requests", m.requests},
          {"truncated_requests", m.truncated_requests},
          {"acc_raw", m.acc_raw},
          {"acc_per_char", m.acc_per_char},
          {"acc_per_token", m.acc_per_token},
          {"bits_per_byte", m.bits_per_byte},
          {"chance", m.chance}};
}

TaskMetrics MetricsFrom(const nlohmann::json& j, const std::string& where) {
  TaskMetrics m;
  m.documents = JsonInteger<int64_t>(j.at("documents"), where + ": documents");
  m.requests = JsonInteger<int64_t>(j.at("requests"), where + ": requests");
  m.truncated_requests =
      JsonInteger<int64_t>(j.at("truncated_requests"), where + ": truncated_requests");
  m.acc_raw = j.at("acc_raw").get<double>(), m.acc_per_char = j.at("acc_per_char").get<double>();
  m.acc_per_token = j.at("acc_per_token").get<double>();
  m.bits_per_byte = j.at("bits_per_byte").get<double>(), m.chance = j.at("chance").get<double>();
  return m;
}

nlohmann::json OptionalJson(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
std::optional<double> OptionalFrom(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

}  // namespace

std::string EvalRequestLineJson(const EvalRequestLine& r) {
  const nlohmann::json j = {{"task", r.task},
                            {"doc_id", r.doc_id},
                            {"idx", r.idx},
                            {"label", r.label},
                            {"context_tokens", r.score.context_tokens},
                            {"truncated", r.score.truncated},
                            {"continuation_tokens", r.score.continuation_tokens},
                            {"loglik", r.score.loglik},
                            {"loglik_bits", DoubleBits(r.score.loglik)},
                            {"greedy", r.score.greedy}};
  return j.dump();
}

EvalRequestLine ParseEvalRequestLine(const std::string& line, const std::string& where) {
  EvalRequestLine r;
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    r.task = j.at("task").get<std::string>();
    r.doc_id = JsonInteger<int64_t>(j.at("doc_id"), where + ": doc_id");
    r.idx = JsonInteger<int64_t>(j.at("idx"), where + ": idx");
    r.label = JsonInteger<int64_t>(j.at("label"), where + ": label");
    r.score.context_tokens = JsonInteger<int64_t>(j.at("context_tokens"), where);
    r.score.truncated = JsonInteger<int64_t>(j.at("truncated"), where + ": truncated");
    r.score.continuation_tokens = JsonInteger<int64_t>(j.at("continuation_tokens"), where);
    r.score.loglik =
        DoubleFromBits(j.at("loglik_bits").get<std::string>(), where + ": loglik_bits");
    r.score.greedy = j.at("greedy").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(where, ": not a request line of an evaluation: ", e.what());
  }
  return r;
}

nlohmann::json EvalReportToJson(const EvalReport& r) {
  nlohmann::json tasks = nlohmann::json::array(), macro = nlohmann::json::array();
  for (const EvalTaskReport& t : r.tasks) {
    tasks.push_back({{"task", t.name},
                     {"base", t.base},
                     {"formulation", t.mc ? "MCF" : "CF"},
                     {"primary_metric", t.primary_metric},
                     {"primary", t.primary},
                     {"metrics", MetricsJson(t.metrics)},
                     {"dir", t.dir},
                     {"config_sha256", t.config_sha256},
                     {"requests_sha256", t.requests_sha256}});
  }
  for (const MacroRow& m : r.macro.rows) {
    macro.push_back({{"base", m.base},
                     {"cf", OptionalJson(m.cf)},
                     {"mcf", OptionalJson(m.mcf)},
                     {"best", m.best}});
  }
  return {{"format", kEvalFormat},
          {"run", r.run},
          {"step", r.step},
          {"checkpoint", r.checkpoint},
          {"params_hash", r.params_hash},
          {"tokenizer_sha256", r.tokenizer_sha256},
          {"limit", r.limit},
          {"max_seq_len", r.max_seq_len},
          {"tasks", tasks},
          {"macro", {{"tasks", macro}, {"score", r.macro.score}}},
          {"requests_file", r.requests_file},
          {"requests_sha256", r.requests_sha256},
          {"requests", r.requests},
          {"backend", r.backend},
          {"seconds", r.seconds}};
}

EvalReport ParseEvalReport(const std::string& text, const std::string& path) {
  EvalReport r;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    TRAIL_CHECK(j.at("format") == kEvalFormat, path, ": not a ", kEvalFormat, " report");
    r.run = j.at("run").get<std::string>(), r.checkpoint = j.at("checkpoint").get<std::string>();
    r.params_hash = j.at("params_hash").get<std::string>();
    r.tokenizer_sha256 = j.at("tokenizer_sha256").get<std::string>();
    r.step = JsonInteger<int64_t>(j.at("step"), path + ": step");
    r.limit = JsonInteger<int64_t>(j.at("limit"), path + ": limit");
    r.max_seq_len = JsonInteger<int64_t>(j.at("max_seq_len"), path + ": max_seq_len");
    for (const nlohmann::json& t : j.at("tasks")) {
      EvalTaskReport e;
      e.name = t.at("task").get<std::string>(), e.base = t.at("base").get<std::string>();
      e.mc = t.at("formulation") == "MCF";
      e.primary_metric = t.at("primary_metric").get<std::string>();
      e.primary = t.at("primary").get<double>();
      e.metrics = MetricsFrom(t.at("metrics"), path + ": " + e.name);
      e.dir = t.at("dir").get<std::string>();
      e.config_sha256 = t.at("config_sha256").get<std::string>();
      e.requests_sha256 = t.at("requests_sha256").get<std::string>();
      r.tasks.push_back(std::move(e));
    }
    for (const nlohmann::json& m : j.at("macro").at("tasks")) {
      r.macro.rows.push_back({m.at("base").get<std::string>(), OptionalFrom(m.at("cf")),
                              OptionalFrom(m.at("mcf")), m.at("best").get<double>()});
    }
    r.macro.score = j.at("macro").at("score").get<double>();
    r.requests_file = j.at("requests_file").get<std::string>();
    r.requests_sha256 = j.at("requests_sha256").get<std::string>();
    r.requests = JsonInteger<int64_t>(j.at("requests"), path + ": requests");
    r.backend = j.at("backend").get<std::string>(), r.seconds = j.at("seconds").get<double>();
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed evaluation report: ", e.what());
  }
  return r;
}

std::string RequestsPathFor(const std::string& report_path) {
  const std::string stem = report_path.size() > 5 && report_path.ends_with(".json")
                               ? report_path.substr(0, report_path.size() - 5)
                               : report_path;
  return stem + ".requests.jsonl";
}

std::string DefaultEvalReportPath(const std::string& run_dir, int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%08lld.json", static_cast<long long>(step));
  return run_dir + "/evals/" + buf;
}

std::vector<std::string> EvalReportsIn(const std::string& run_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run_dir + "/evals", ec)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json") && !name.ends_with(".requests.jsonl")) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trail::infer
