#include "report/run_report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "audit/collect.h"
#include "core/error.h"
#include "core/hash.h"
#include "data/inspect.h"
#include "data/manifest.h"
#include "data/stream.h"
#include "train/run_metrics.h"
#include "report/contamination.h"
#include "report/eval_section.h"
#include "report/svg_chart.h"
#include "train/run_dir.h"
#include "train/step_report.h"

namespace trail::report {
namespace {

using train::ReadRunMetrics;
using train::RunMetrics;

using train::FormatNumber;

std::string Row(const std::string& key, const std::string& value) {
  return "<tr><th>" + EscapeHtml(key) + "</th><td>" + value + "</td></tr>";
}

std::string Code(const std::string& s) { return "<code>" + EscapeHtml(s) + "</code>"; }

std::string JsonText(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "—";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// "2 replicas × 3 shards" from run.json's mesh ({"replicas": R, "shards": S}).
std::string MeshText(const nlohmann::json& j) {
  if (!j.contains("mesh") || !j["mesh"].is_object()) return JsonText(j, "mesh");
  const nlohmann::json& m = j["mesh"];
  auto count = [&](const char* key, const char* one, const char* many) {
    const int64_t n = m.value(key, int64_t{0});
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return count("replicas", "replica", "replicas") + " × " + count("shards", "shard", "shards");
}

// A loss for people: four decimals in the cell, the exact value (every digit) in data-value.
std::string LossCell(double v) {
  return "<td class=\"num\" data-value=\"" + FormatNumber("%.17g", v) + "\">" +
         FormatNumber("%.4f", v) + "</td>";
}

std::string FactsSection(const train::RunDirectory& run, const train::RunInfo& info,
                         const RunMetrics& m) {
  const nlohmann::json& j = info.json;
  // A trajectory that does not chain is reported, not fatal: the curves are still worth seeing.
  std::string last_chain = "—";
  size_t records = 0;
  try {
    const auto chain = run.ReadTrajectory(info.genesis, /*drop_torn_tail=*/false);
    records = chain.size();
    if (!chain.empty()) last_chain = ToHex(chain.back().chain);
  } catch (const Error& e) {
    last_chain = "the trajectory does not verify: " + EscapeHtml(e.what());
  }
  std::string s = "<section id=\"facts\"><h2>Run</h2><table class=\"facts\">";
  s += Row("parameters", JsonText(j, "parameters"));
  s += Row("FLOPs per token", JsonText(j, "flops_per_token"));
  s += Row("mesh", EscapeHtml(MeshText(j)));
  s += Row("steps executed", std::to_string(m.step.size()) +
                                 " (trajectory: " + std::to_string(records) + " records)");
  s += Row("tokens", m.tokens.empty() ? "0" : FormatNumber("%.0f", m.tokens.back()));
  s += Row("recipe SHA-256", Code(JsonText(j, "recipe_sha256")));
  s += Row("data manifest SHA-256", Code(JsonText(j, "manifest_sha256")));
  s += Row("genesis H_0", Code(ToHex(info.genesis)));
  s += Row("last chained hash", "<code id=\"last-chain\">" + last_chain + "</code>");
  s += Row("kernels", EscapeHtml(JsonText(j, "repops")));
  return s + "</table></section>";
}

Chart LossChart(const RunMetrics& m, const nlohmann::json& entropy) {
  Chart c{"loss", "Loss against tokens", "tokens", "nats per token", false, {}, {}};
  c.series.push_back({"training loss", m.tokens, m.loss, SeriesColor(0)});
  size_t k = 1;
  for (const auto& [domain, s] : m.val) {
    const char* color = SeriesColor(k++);
    c.series.push_back({"validation " + domain, s.tokens, s.values, color, s.values.size() == 1});
    if (entropy.is_object() && entropy.contains(domain) && entropy[domain].is_number()) {
      c.lines.push_back({"unigram entropy " + domain, entropy[domain].get<double>(), color});
    }
  }
  return c;
}

Chart GradChart(const RunMetrics& m) {
  Chart c{"grad-norm", "Gradient norm", "tokens", "global L2 norm", true, {}, {}};
  c.series.push_back({"before clipping", m.tokens, m.grad_norm, SeriesColor(0)});
  c.series.push_back(
      {"after clipping", m.tokens, m.grad_norm_clipped, SeriesColor(1), false, true});
  Series skipped{"skipped update", {}, {}, "#d62728", true};
  for (size_t i = 0; i < m.step.size(); ++i) {
    if (m.skipped[i].empty()) continue;
    skipped.x.push_back(m.tokens[i]);
    skipped.y.push_back(m.grad_norm[i]);
  }
  c.series.push_back(skipped);
  return c;
}

Chart WeightChart(const RunMetrics& m) {
  Chart c{"weight-norms", "Weight norms", "tokens", "L2 norm", true, {}, {}};
  size_t k = 0;
  for (const auto& [name, s] : m.weight_norms)
    c.series.push_back({name, s.tokens, s.values, SeriesColor(k++)});
  return c;
}

std::string ChartsSection(const RunMetrics& m, const nlohmann::json& info) {
  const nlohmann::json entropy = info.value("val_unigram_entropy", nlohmann::json::object());
  std::string s = "<section id=\"charts\"><h2>Training</h2>";
  s += RenderSvg(LossChart(m, entropy));
  s += RenderSvg(
      {"lr", "Learning rate", "tokens", "lr", false, {{"lr", m.tokens, m.lr, SeriesColor(0)}}, {}});
  s += RenderSvg(GradChart(m));
  s += RenderSvg({"throughput",
                  "Throughput",
                  "tokens",
                  "tokens/s (since start)",
                  false,
                  {{"tokens/s", m.tokens, m.tok_s, SeriesColor(2)}},
                  {}});
  s += RenderSvg(WeightChart(m));
  return s + "</section>";
}

std::string EvalSection(const RunMetrics& m, const nlohmann::json& info) {
  const nlohmann::json entropy = info.value("val_unigram_entropy", nlohmann::json::object());
  std::string s = "<section id=\"validation\"><h2>Validation (last evaluation)</h2>";
  if (m.val.empty()) return s + "<p>No evaluation step in metrics.jsonl.</p></section>";
  s += "<table><tr><th>domain</th><th>step</th><th>loss</th><th>unigram entropy</th></tr>";
  for (const auto& [domain, v] : m.val) {
    const std::string h = entropy.contains(domain) ? LossCell(entropy[domain].get<double>())
                                                   : "<td class=\"num\">—</td>";
    s += "<tr class=\"val\" data-domain=\"" + EscapeHtml(domain) + "\"><td>" + EscapeHtml(domain) +
         "</td><td>" + std::to_string(v.steps.back()) + "</td>" + LossCell(v.values.back()) + h +
         "</tr>";
  }
  return s + "</table></section>";
}

std::string AlertsSection(const RunMetrics& m) {
  std::string s = "<section id=\"alerts\"><h2>Alerts</h2>";
  size_t skipped = 0;
  for (const std::string& why : m.skipped) skipped += !why.empty();
  s += "<p>" + std::to_string(m.alerts.size()) + " spike-monitor alert(s); " +
       std::to_string(skipped) + " skipped update(s).</p>";
  if (m.alerts.empty()) return s + "</section>";
  s += "<table><tr><th>step</th><th>kind</th><th>details</th></tr>";
  for (const nlohmann::json& a : m.alerts) {
    s += "<tr class=\"alert\"><td>" + JsonText(a, "step") + "</td><td>" +
         EscapeHtml(JsonText(a, "kind")) + "</td><td>" + Code(a.dump()) + "</td></tr>";
  }
  return s + "</table></section>";
}

std::string PhaseTable(const std::vector<data::MixturePhaseShares>& phases) {
  std::string s =
      "<h3>Mixture phases</h3><table><tr><th>from step</th><th>windows</th>"
      "<th>source</th><th>target</th><th>measured</th></tr>";
  for (const data::MixturePhaseShares& p : phases) {
    for (size_t k = 0; k < p.target_share.size(); ++k) {
      s += "<tr class=\"phase\"><td>" + std::to_string(p.from_step) + "</td><td class=\"num\">" +
           std::to_string(p.windows) + "</td><td>" + EscapeHtml(p.target_share[k].first) +
           "</td><td class=\"num\">" + FormatNumber("%.4f", p.target_share[k].second) +
           "</td><td class=\"num\">" + FormatNumber("%.4f", p.measured_share[k].second) +
           "</td></tr>";
    }
  }
  return s + "</table>";
}

std::string LengthTable(const std::vector<data::LengthPhaseTokens>& phases) {
  std::string s =
      "<h3>Sequence-length phases</h3><table><tr><th>from step</th><th>L</th>"
      "<th>windows</th><th>tokens</th></tr>";
  for (const data::LengthPhaseTokens& p : phases) {
    s += "<tr class=\"length\"><td>" + std::to_string(p.from_step) + "</td><td class=\"num\">" +
         std::to_string(p.seq_len) + "</td><td class=\"num\">" + std::to_string(p.windows) +
         "</td><td class=\"num\">" + std::to_string(p.tokens) + "</td></tr>";
  }
  return s + "</table>";
}

std::string MixtureSection(const std::string& manifest_path, int64_t steps) {
  std::string s = "<section id=\"mixture\"><h2>Data mixture</h2>";
  if (manifest_path.empty() || !std::filesystem::exists(manifest_path)) {
    return s + "<p>The data manifest (" +
           EscapeHtml(manifest_path.empty() ? "none named" : manifest_path) +
           ") is not here; give a copy with --data to see the mixture.</p></section>";
  }
  try {
    data::CanonicalStream stream(data::LoadManifest(manifest_path));
    const uint64_t windows = data::WindowsBeforeStep(stream.manifest(), steps);
    const data::SourceShareReport shares = data::SourceShares(stream, windows);
    s += "<p>Shares of the tokens in the " + std::to_string(windows) + " windows of steps 0.." +
         std::to_string(steps - 1) +
         ".</p><table><tr><th>source</th><th>target</th><th>scheduled</th>"
         "<th>measured</th><th>tokens</th><th>epochs</th></tr>";
    for (const data::SourceShare& r : shares.sources) {
      s += "<tr class=\"source\"><td>" + EscapeHtml(r.source) + "</td><td class=\"num\">" +
           FormatNumber("%.4f", r.target_share) + "</td><td class=\"num\">" +
           FormatNumber("%.4f", r.scheduled_share) + "</td><td class=\"num\">" +
           FormatNumber("%.4f", r.measured_share) + "</td><td class=\"num\">" +
           std::to_string(r.tokens) + "</td><td class=\"num\">" + FormatNumber("%.3f", r.epochs) +
           "</td></tr>";
    }
    s += "</table>";
    if (!shares.mixture_phases.empty()) s += PhaseTable(shares.mixture_phases);
    if (!shares.seq_len_phases.empty()) s += LengthTable(shares.seq_len_phases);
    return s + "</section>";
  } catch (const Error& e) {
    return s + "<p>The data manifest could not be opened: " + EscapeHtml(e.what()) +
           "</p></section>";
  }
}

// Planned steps in ten ranges: how many, how many verified by r auditors, how many disputed.
std::string CoverageTable(const audit::CollectReport& r) {
  std::string s = "<table><tr><th>steps</th><th>planned</th><th>verified by &ge; " +
                  std::to_string(r.plan.redundancy) + "</th><th>disagreements</th></tr>";
  if (r.steps.empty()) return s + "</table>";
  const int64_t first = r.steps.front().step, last = r.steps.back().step;
  const int64_t width = std::max<int64_t>(1, (last - first + 10) / 10);
  for (int64_t lo = first; lo <= last; lo += width) {
    int64_t planned = 0, verified = 0, disputed = 0;
    for (const audit::StepTally& t : r.steps) {
      if (t.step < lo || t.step >= lo + width) continue;
      ++planned;
      verified += t.verified_by >= r.plan.redundancy;
      disputed += t.disagreement;
    }
    if (planned == 0) continue;
    s += "<tr class=\"coverage\"><td>" + std::to_string(lo) + ".." +
         std::to_string(lo + width - 1) + "</td><td class=\"num\">" + std::to_string(planned) +
         "</td><td class=\"num\">" + std::to_string(verified) + "</td><td class=\"num\">" +
         std::to_string(disputed) + "</td></tr>";
  }
  return s + "</table>";
}

std::string AuditSection(const RunReportOptions& o) {
  std::string s = "<section id=\"audit\"><h2>Audit</h2>";
  if (o.audit_plan.empty())
    return s + "<p>No attestations given (--plan, --keys, --attestation).</p></section>";
  const audit::CollectReport r =
      audit::Collect(o.run_dir, o.audit_plan, o.attestations, o.audit_keys);
  s += "<p>Verdict: <strong id=\"audit-verdict\">" + EscapeHtml(r.verdict) + "</strong>; " +
       std::to_string(r.accepted.size()) + " attestation(s) accepted, " +
       std::to_string(r.rejected.size()) + " rejected; " +
       std::to_string(r.CoveredBy(r.plan.redundancy)) + " of " + std::to_string(r.steps.size()) +
       " planned steps verified by at least " + std::to_string(r.plan.redundancy) +
       " auditor(s).</p>";
  Series verified{"verified by", {}, {}, SeriesColor(2), true},
      disputed{"disagreement", {}, {}, "#d62728", true};
  for (const audit::StepTally& t : r.steps) {
    verified.x.push_back(double(t.step));
    verified.y.push_back(double(t.verified_by));
    if (t.disagreement)
      disputed.x.push_back(double(t.step)), disputed.y.push_back(double(t.votes.size()));
  }
  s += RenderSvg({"audit-coverage",
                  "Audit coverage",
                  "step",
                  "auditors",
                  false,
                  {verified, disputed},
                  {{"redundancy r", double(r.plan.redundancy)}}});
  s += CoverageTable(r);
  for (const audit::Rejection& j : r.rejected) {
    s += "<p class=\"rejected\">rejected " + Code(j.path) + ": " + EscapeHtml(j.reason) + "</p>";
  }
  for (const audit::StepTally& t : r.steps) {
    if (!t.disagreement) continue;
    s += "<p class=\"disagreement\">step " + std::to_string(t.step) + ":";
    for (const audit::StepVote& v : t.votes) s += " " + EscapeHtml(v.signer_name + " " + v.verdict);
    s += "</p>";
  }
  return s + "</section>";
}

constexpr char kStyle[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:980px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;"
    "text-align:left;font-size:13px}td.num{text-align:right;font-family:monospace}"
    "code{font-size:12px;word-break:break-all}svg.chart{display:block;margin:12px 0}";

}  // namespace

std::string RunReportHtml(const RunReportOptions& o) {
  const train::RunDirectory run(o.run_dir);
  const train::RunInfo info = run.ReadInfo();
  const RunMetrics m = ReadRunMetrics(run.metrics_path());
  const std::string name = std::filesystem::path(o.run_dir).filename().string();
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>trail run " +
      EscapeHtml(name) + "</title><style>" + kStyle + "</style></head><body>";
  html += "<h1>trail run <code>" + EscapeHtml(o.run_dir) + "</code></h1>";
  html += FactsSection(run, info, m);
  html += ChartsSection(m, info.json);
  html += EvalSection(m, info.json);
  html += DownstreamEvalSection(o.run_dir);
  html += ContaminationSection(o.run_dir);
  html += AlertsSection(m);
  html += MixtureSection(o.data.empty() ? info.data_manifest : o.data,
                         static_cast<int64_t>(m.step.size()));
  html += AuditSection(o);
  return html + "</body></html>\n";
}

}  // namespace trail::report
