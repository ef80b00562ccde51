#include "infer/eval_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/timing.h"
#include "infer/loglikelihood.h"
#include "infer/olmes_tasks.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

std::string Rate(int64_t n, double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f requests/s", seconds > 0 ? n / seconds : 0.0);
  return buf;
}

}  // namespace

std::vector<EvalRequestLine> RequestLines(const EvalTask& task,
                                          const std::vector<ScoredRequest>& scores) {
  std::vector<EvalRequestLine> out;
  for (size_t i = 0; i < task.requests.size(); ++i) {
    const EvalRequest& r = task.requests[i];
    out.push_back({task.name, r.doc_id, r.idx, r.label, scores[i]});
  }
  return out;
}

namespace {

// The first line of a task's partial file: what its scores depend on. A partial file whose key
// differs (another checkpoint, task file, limit or context) is scored again.
std::string PartialKey(const EvalReport& r, const EvalTask& t) {
  return nlohmann::json{{"params_hash", r.params_hash},
                        {"tokenizer_sha256", r.tokenizer_sha256},
                        {"max_seq_len", r.max_seq_len},
                        {"limit", r.limit},
                        {"task", t.name},
                        {"config_sha256", t.config_sha256},
                        {"requests_sha256", t.requests_sha256}}
      .dump();
}

// The scores a partial file holds for t, or nothing when it is absent, of another key, or not
// exactly t's requests in order (a torn write cannot happen: the file is written atomically).
std::optional<std::vector<ScoredRequest>> ReadPartial(const std::string& path,
                                                      const std::string& key, const EvalTask& t) {
  if (!fs::exists(path)) return std::nullopt;
  const std::string text = ReadFileToString(path);
  std::vector<ScoredRequest> scores;
  size_t pos = text.find('\n');
  if (pos == std::string::npos || text.compare(0, pos, key) != 0) return std::nullopt;
  try {
    for (size_t i = 0; i < t.requests.size(); ++i) {
      const size_t end = text.find('\n', pos + 1);
      if (end == std::string::npos) return std::nullopt;
      const EvalRequestLine l = ParseEvalRequestLine(text.substr(pos + 1, end - pos - 1), path);
      const EvalRequest& q = t.requests[i];
      if (l.task != t.name || l.doc_id != q.doc_id || l.idx != q.idx) return std::nullopt;
      scores.push_back(l.score);
      pos = end;
    }
  } catch (const Error&) {
    return std::nullopt;
  }
  return pos + 1 == text.size() ? std::optional(scores) : std::nullopt;
}

}  // namespace

EvalReport RunEval(const EvalOptions& o, const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> dirs = FindTaskDirs(o.tasks);
  std::vector<EvalTask> tasks;
  for (const std::string& d : dirs) tasks.push_back(LoadTask(d, o.limit));  // all checked first
  const TrainedModel m(o.model);
  LoglikelihoodScorer scorer(m.config(), m.params(), m.backend(), m.tokenizer(),
                             m.contract().eos_id, m.document_bos());
  // Every request fits the model before any is scored: an over-long continuation in the last
  // task must not stop the evaluation after the others.
  for (const EvalTask& t : tasks) scorer.CheckFits(t.requests, t.dir + " (task " + t.name + ")");
  EvalReport r;
  r.run = o.model.run_dir, r.step = m.step(), r.checkpoint = m.checkpoint_dir();
  r.params_hash = m.params_hash(), r.tokenizer_sha256 = ToHex(Sha256OfFile(m.tokenizer_path()));
  r.limit = o.limit, r.max_seq_len = m.config().max_seq_len, r.backend = m.backend().description();
  const std::string out = o.out.empty() ? DefaultEvalReportPath(o.model.run_dir, r.step) : o.out;
  const std::string partial_dir = out + ".partial";
  fs::create_directories(partial_dir);
  std::string lines;
  std::vector<TaskScore> scores;
  for (size_t k = 0; k < tasks.size(); ++k) {
    const EvalTask& t = tasks[k];
    const std::string partial = partial_dir + "/" + std::to_string(k) + ".jsonl";
    const std::string key = PartialKey(r, t);
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t total = static_cast<int64_t>(t.requests.size());
    std::optional<std::vector<ScoredRequest>> s = ReadPartial(partial, key, t);
    if (s) {
      say("eval: " + t.name + ": resumed from " + partial);
    } else {
      say("eval: " + t.name + ": " + std::to_string(t.documents) + " documents, " +
          std::to_string(total) + " requests");
      auto last = t0;
      s = scorer.Score(t.requests, [&](int64_t done) {
        if (SecondsSince(last) < 2.0 || done == total) return;
        last = std::chrono::steady_clock::now();
        say("eval: " + t.name + ": " + std::to_string(done) + "/" + std::to_string(total) + " (" +
            Rate(done, SecondsSince(t0)) + ")");
      });
    }
    std::string task_lines;
    for (const EvalRequestLine& l : RequestLines(t, *s)) {
      task_lines += EvalRequestLineJson(l) + "\n";
    }
    WriteFileAtomic(partial, key + "\n" + task_lines);  // a crash after this keeps the task
    lines += task_lines;
    EvalTaskReport tr{t.name,
                      t.base,
                      t.primary_metric,
                      t.dir,
                      t.config_sha256,
                      t.requests_sha256,
                      t.mc,
                      ComputeMetrics(t, *s),
                      0};
    tr.primary = tr.metrics.Metric(t.primary_metric);
    scores.push_back({t.name, t.base, t.primary_metric, t.mc, tr.primary});
    say("eval: " + t.name + ": " + t.primary_metric + " " + std::to_string(tr.primary) + " (" +
        Rate(total, SecondsSince(t0)) + ")");
    r.requests += total;
    r.tasks.push_back(std::move(tr));
  }
  r.macro = ComputeMacro(scores);
  const std::string requests_path = RequestsPathFor(out);
  r.requests_file = fs::path(requests_path).filename().string();
  r.requests_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(lines.data()), lines.size()}));
  r.seconds = SecondsSince(start);
  if (fs::path(out).has_parent_path()) fs::create_directories(fs::path(out).parent_path());
  WriteFileAtomic(requests_path, lines);
  WriteFileAtomic(out, EvalReportToJson(r).dump(2) + "\n");
  fs::remove_all(partial_dir);
  return r;
}

}  // namespace trail::infer
