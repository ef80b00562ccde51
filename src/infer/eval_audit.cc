#include "infer/eval_audit.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <cstdio>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/philox.h"
#include "infer/eval_report.h"
#include "infer/eval_run.h"
#include "infer/loglikelihood.h"
#include "infer/olmes_tasks.h"
#include "infer/trained_model.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

bool SameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// The run a report scored: the path it names when that is a run directory from here (as typed
// when the evaluation ran), else the run folder holding the report (RUN/evals/step_N.json), else
// the named path taken relative to the report's folder.
std::string RunOfReport(const std::string& named, const std::string& report_path) {
  std::error_code ec;
  if (fs::exists(fs::path(named) / "run.json", ec)) return named;
  const fs::path evals = fs::absolute(report_path, ec).parent_path();
  if (evals.filename() == "evals" && fs::exists(evals.parent_path() / "run.json", ec)) {
    return evals.parent_path().string();
  }
  return fs::path(named).is_absolute() ? named : (evals / named).string();
}

std::string RequestName(const EvalRequestLine& l) {
  return l.task + " document " + std::to_string(l.doc_id) + " choice " + std::to_string(l.idx);
}

// The recorded lines, checked against the report's hash.
std::vector<EvalRequestLine> ReadLines(const std::string& report_path, const EvalReport& r,
                                       EvalAuditResult& out) {
  const std::string path = (fs::path(report_path).parent_path() / r.requests_file).string();
  const std::string text = ReadFileToString(path);
  const std::string sha =
      ToHex(Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  if (sha != r.requests_sha256) {
    out.findings.push_back(path + ": SHA-256 " + sha + " is not the report's " + r.requests_sha256);
    return {};
  }
  std::vector<EvalRequestLine> lines;
  size_t pos = 0;
  try {
    for (int64_t n = 1; pos < text.size(); ++n) {
      const size_t end = text.find('\n', pos);
      const std::string line = text.substr(pos, end == std::string::npos ? end : end - pos);
      lines.push_back(ParseEvalRequestLine(line, path + ":" + std::to_string(n)));
      pos = end == std::string::npos ? text.size() : end + 1;
    }
  } catch (const Error& e) {  // a published file that is not what it should be: a finding
    out.findings.push_back(e.what());
    return {};
  }
  return lines;
}

// A metric's value exactly: 17 significant digits, and its bits (two values may print alike).
std::string Exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g (bits %016llx)", v,
                static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
  return buf;
}

// Each task's files and metrics against the report. Returns whether the tasks and the requests
// file line up request by request (so requests can be scored again to name the one that
// changed), whatever the metrics say.
bool CheckTasks(const EvalReport& r, const std::vector<EvalTask>& tasks,
                const std::vector<EvalRequestLine>& lines, EvalAuditResult& out) {
  size_t at = 0;
  std::vector<TaskScore> scores;
  for (const EvalTaskReport& tr : r.tasks) {
    const auto t = std::find_if(tasks.begin(), tasks.end(),
                                [&](const EvalTask& x) { return x.name == tr.name; });
    if (t == tasks.end()) {
      out.findings.push_back(tr.name + ": not among the task folders given (--tasks)");
      return false;
    }
    if (t->config_sha256 != tr.config_sha256 || t->requests_sha256 != tr.requests_sha256) {
      out.findings.push_back(t->dir + ": not the task files the report scored (SHA-256 differs)");
    }
    std::vector<ScoredRequest> s;
    for (size_t i = 0; i < t->requests.size(); ++i, ++at) {
      const EvalRequest& q = t->requests[i];
      if (at >= lines.size() || lines[at].task != tr.name || lines[at].doc_id != q.doc_id ||
          lines[at].idx != q.idx || lines[at].label != q.label) {
        out.findings.push_back(tr.name + ": the requests file does not list its requests in order");
        return false;
      }
      s.push_back(lines[at].score);
    }
    const TaskMetrics m = ComputeMetrics(*t, s);
    const double primary = m.Metric(tr.primary_metric);
    for (const std::string& name : EvalMetricNames()) {
      if (!SameBits(m.Metric(name), tr.metrics.Metric(name))) {
        out.findings.push_back(tr.name + ": " + name + " " + Exact(tr.metrics.Metric(name)) +
                               " in the report; the recorded log-likelihoods give " +
                               Exact(m.Metric(name)));
      }
    }
    scores.push_back({tr.name, tr.base, tr.primary_metric, tr.mc, primary});
  }
  if (at != lines.size()) out.findings.push_back("the requests file has lines of no task");
  if (!SameBits(ComputeMacro(scores).score, r.macro.score)) {
    out.findings.push_back("the macro score differs from what the tasks' metrics give");
  }
  return at == lines.size();
}

// `k` distinct indices of [0, n): the first k of the order by Philox word (seed, i).
std::vector<size_t> Sample(size_t n, int64_t k, uint64_t seed) {
  std::vector<std::pair<uint32_t, size_t>> keyed;
  const uint64_t stream = StreamIdForName("trail.audit-eval");
  for (size_t i = 0; i < n; ++i) keyed.push_back({PhiloxWord(seed, stream, i), i});
  std::sort(keyed.begin(), keyed.end());
  std::vector<size_t> out;
  for (size_t i = 0; i < std::min(n, static_cast<size_t>(k)); ++i) out.push_back(keyed[i].second);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

EvalAuditResult AuditEval(const EvalAuditOptions& o,
                          const std::function<void(const std::string&)>& log) {
  EvalAuditResult out;
  const EvalReport r = ParseEvalReport(ReadFileToString(o.report), o.report);
  const std::vector<EvalRequestLine> lines = ReadLines(o.report, r, out);
  out.requests = static_cast<int64_t>(lines.size());
  if (!out.ok()) return out;
  std::vector<EvalTask> tasks;
  std::vector<const EvalRequest*> requests;  // in the requests file's order
  for (const std::string& d : FindTaskDirs(o.tasks)) tasks.push_back(LoadTask(d, r.limit));
  // A metric that disagrees is a finding, and the sample is still scored again, to name the
  // request that changed; tasks that do not line up with the requests file end the audit.
  if (!CheckTasks(r, tasks, lines, out) || o.sample <= 0) return out;
  for (const EvalTaskReport& tr : r.tasks) {
    for (const EvalTask& t : tasks) {
      if (t.name != tr.name) continue;
      for (const EvalRequest& q : t.requests) requests.push_back(&q);
    }
  }
  const TrainedModel m(
      {o.run.empty() ? RunOfReport(r.run, o.report) : o.run, r.step, o.tokenizer, o.device});
  if (m.params_hash() != r.params_hash) {
    out.findings.push_back(m.checkpoint_dir() + ": parameters " + m.params_hash() +
                           " are not the ones the report scored (" + r.params_hash + ")");
    return out;
  }
  const std::vector<size_t> pick = Sample(lines.size(), o.sample, o.seed);
  std::vector<EvalRequest> again;
  for (size_t i : pick) again.push_back(*requests[i]);
  if (log)
    log("audit eval: scoring " + std::to_string(again.size()) + " of " +
        std::to_string(lines.size()) + " requests again");
  for (EvalRequest& q : again) q.doc_id = &q - again.data();  // each its own group
  LoglikelihoodScorer scorer(m.config(), m.params(), m.backend(), m.tokenizer(),
                             m.contract().eos_id, m.document_bos());
  const std::vector<ScoredRequest> s = scorer.Score(again);
  for (size_t k = 0; k < pick.size(); ++k) {
    const EvalRequestLine& l = lines[pick[k]];
    if (!SameBits(s[k].loglik, l.score.loglik) || s[k].greedy != l.score.greedy ||
        s[k].continuation_tokens != l.score.continuation_tokens ||
        s[k].truncated != l.score.truncated) {
      char buf[128];
      std::snprintf(buf, sizeof buf, ": recorded log-likelihood %.17g, scored again %.17g",
                    l.score.loglik, s[k].loglik);
      out.findings.push_back(RequestName(l) + buf);
    }
  }
  out.rescored = static_cast<int64_t>(pick.size());
  return out;
}

}  // namespace trail::infer
