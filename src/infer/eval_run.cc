#include "infer/eval_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

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
                             m.contract().eos_id);
  EvalReport r;
  r.run = o.model.run_dir, r.step = m.step(), r.checkpoint = m.checkpoint_dir();
  r.params_hash = m.params_hash(), r.tokenizer_sha256 = ToHex(Sha256OfFile(m.tokenizer_path()));
  r.limit = o.limit, r.max_seq_len = m.config().max_seq_len, r.backend = m.backend().description();
  std::string lines;
  std::vector<TaskScore> scores;
  for (const EvalTask& t : tasks) {
    say("eval: " + t.name + ": " + std::to_string(t.documents) + " documents, " +
        std::to_string(t.requests.size()) + " requests");
    const auto t0 = std::chrono::steady_clock::now();
    auto last = t0;
    const int64_t total = static_cast<int64_t>(t.requests.size());
    const std::vector<ScoredRequest> s = scorer.Score(t.requests, [&](int64_t done) {
      if (SecondsSince(last) < 2.0 || done == total) return;
      last = std::chrono::steady_clock::now();
      say("eval: " + t.name + ": " + std::to_string(done) + "/" + std::to_string(total) + " (" +
          Rate(done, SecondsSince(t0)) + ")");
    });
    for (const EvalRequestLine& l : RequestLines(t, s)) lines += EvalRequestLineJson(l) + "\n";
    EvalTaskReport tr{t.name,
                      t.base,
                      t.primary_metric,
                      t.dir,
                      t.config_sha256,
                      t.requests_sha256,
                      t.mc,
                      ComputeMetrics(t, s),
                      0};
    tr.primary = tr.metrics.Metric(t.primary_metric);
    scores.push_back({t.name, t.base, t.primary_metric, t.mc, tr.primary});
    say("eval: " + t.name + ": " + t.primary_metric + " " + std::to_string(tr.primary) + " (" +
        Rate(total, SecondsSince(t0)) + ")");
    r.requests += total;
    r.tasks.push_back(std::move(tr));
  }
  r.macro = ComputeMacro(scores);
  const std::string out = o.out.empty() ? DefaultEvalReportPath(o.model.run_dir, r.step) : o.out;
  const std::string requests_path = RequestsPathFor(out);
  r.requests_file = fs::path(requests_path).filename().string();
  r.requests_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(lines.data()), lines.size()}));
  r.seconds = SecondsSince(start);
  if (fs::path(out).has_parent_path()) fs::create_directories(fs::path(out).parent_path());
  WriteFileAtomic(requests_path, lines);
  WriteFileAtomic(out, EvalReportToJson(r).dump(2) + "\n");
  return r;
}

}  // namespace trail::infer
