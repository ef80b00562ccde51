#include "report/eval_section.h"

#include <cstdio>
#include <filesystem>

#include "core/file_util.h"
#include "infer/eval_report.h"
#include "report/svg_chart.h"

namespace trail::report {
namespace {

std::string Num(double v, const char* fmt = "%.4f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return "<td class=\"num\">" + std::string(buf) + "</td>";
}

}  // namespace

std::string DownstreamEvalSection(const std::string& run_dir) {
  std::string s = "<section id=\"downstream\"><h2>Downstream evaluation (OLMES)</h2>";
  const std::vector<std::string> reports = infer::EvalReportsIn(run_dir);
  if (reports.empty()) return s + "<p>No evaluation in evals/ (trail eval).</p></section>";
  const std::string& path = reports.back();
  const infer::EvalReport r = infer::ParseEvalReport(ReadFileToString(path), path);
  s += "<p>" + EscapeHtml(std::filesystem::path(path).filename().string()) + ": step " +
       std::to_string(r.step) + ", " + std::to_string(r.requests) +
       " requests; their log-likelihood bits: <code>" + EscapeHtml(r.requests_sha256) +
       "</code> (trail audit eval checks them).</p>";
  s += "<table><tr><th>task</th><th>form</th><th>primary metric</th><th>value</th>"
       "<th>chance</th><th>bits per byte</th><th>documents</th></tr>";
  for (const infer::EvalTaskReport& t : r.tasks) {
    s += "<tr class=\"task\"><td>" + EscapeHtml(t.base) + "</td><td>" + (t.mc ? "MCF" : "CF") +
         "</td><td>" + EscapeHtml(t.primary_metric) + "</td>" + Num(t.primary) +
         Num(t.metrics.chance) + Num(t.metrics.bits_per_byte, "%.3f") +
         Num(static_cast<double>(t.metrics.documents), "%.0f") + "</tr>";
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "OLMES macro over %zu tasks (the better of CF and MCF): %.4f",
                r.macro.rows.size(), r.macro.score);
  return s + "</table><p class=\"macro\">" + buf + "</p></section>";
}

}  // namespace trail::report
