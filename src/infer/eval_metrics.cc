#include "infer/eval_metrics.h"

#include <cmath>
#include <map>

#include "core/error.h"
#include "core/utf8.h"

namespace trail::infer {
namespace {

// The index of the first largest value.
size_t ArgMax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

}  // namespace

int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t valid = ValidUtf8Prefix(std::string_view(s).substr(i, 4));
    size_t len = 1;
    if (valid > 0) DecodeValidUtf8(s.data() + i, len);
    i += len;
    ++n;
  }
  return n;
}

double TaskMetrics::Metric(const std::string& name) const {
  if (name == "acc_raw") return acc_raw;
  if (name == "acc_per_char") return acc_per_char;
  if (name == "acc_per_token") return acc_per_token;
  TRAIL_CHECK(name == "bits_per_byte", "unknown metric '", name, "'");
  return bits_per_byte;
}

TaskMetrics ComputeMetrics(const EvalTask& t, const std::vector<ScoredRequest>& scores) {
  TRAIL_CHECK(scores.size() == t.requests.size(), t.name, ": ", scores.size(), " scores for ",
              t.requests.size(), " requests");
  TaskMetrics m;
  m.requests = static_cast<int64_t>(t.requests.size());
  double raw = 0, per_char = 0, per_token = 0, bpb = 0, chance = 0;
  for (size_t b = 0; b < t.requests.size();) {
    size_t e = b;
    while (e < t.requests.size() && t.requests[e].doc_id == t.requests[b].doc_id) ++e;
    std::vector<double> ll, by_char, by_token;
    for (size_t i = b; i < e; ++i) {
      const ScoredRequest& s = scores[i];
      ll.push_back(s.loglik);
      by_char.push_back(s.loglik / static_cast<double>(CodePoints(t.requests[i].continuation)));
      by_token.push_back(s.loglik /
                         static_cast<double>(std::max<int64_t>(1, s.continuation_tokens)));
      m.truncated_requests += s.truncated > 0;
    }
    const size_t label = static_cast<size_t>(t.requests[b].label);
    raw += ArgMax(ll) == label;
    per_char += ArgMax(by_char) == label;
    per_token += ArgMax(by_token) == label;
    const double bytes = static_cast<double>(t.requests[b + label].continuation.size());
    bpb += -ll[label] / (bytes * std::log(2.0));
    chance += 1.0 / static_cast<double>(e - b);
    ++m.documents;
    b = e;
  }
  const double n = static_cast<double>(m.documents);
  m.acc_raw = raw / n, m.acc_per_char = per_char / n, m.acc_per_token = per_token / n;
  m.bits_per_byte = bpb / n, m.chance = chance / n;
  return m;
}

Macro ComputeMacro(const std::vector<TaskScore>& tasks) {
  std::map<std::string, MacroRow> rows;
  std::map<std::string, bool> lower_better;
  for (const TaskScore& t : tasks) {
    MacroRow& r = rows[t.base];
    r.base = t.base;
    std::optional<double>& slot = t.mc ? r.mcf : r.cf;
    TRAIL_CHECK(!slot, "two ", t.mc ? "MCF" : "CF", " tasks for ", t.base);
    slot = t.primary;
    lower_better[t.base] = t.primary_metric == "bits_per_byte";
  }
  Macro m;
  for (auto& [base, r] : rows) {
    if (r.cf && r.mcf) {
      r.best = lower_better[base] ? std::min(*r.cf, *r.mcf) : std::max(*r.cf, *r.mcf);
    } else {
      r.best = r.cf ? *r.cf : *r.mcf;
    }
    m.score += r.best;
    m.rows.push_back(r);
  }
  if (!m.rows.empty()) m.score /= static_cast<double>(m.rows.size());
  return m;
}

}  // namespace trail::infer
