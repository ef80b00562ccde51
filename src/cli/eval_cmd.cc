#include "cli/eval_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "cli/device_option.h"
#include "core/thread_pool.h"
#include "infer/eval_run.h"
#include "repops/kernels.h"

namespace trail::cli {

void AddEvalCommand(CLI::App& app, EvalCommand& c) {
  c.eval = app.add_subcommand(
      "eval",
      "Score OLMES tasks (cloze and multiple-choice) on a run's checkpoint; every request's "
      "log-likelihood is written as bits an auditor can check (trail audit eval)");
  auto* e = c.eval;
  e->add_option("--run", c.run, "The run directory")->required();
  e->add_option("--step", c.step, "The checkpoint's step (default: the newest)");
  e->add_option("--tasks", c.tasks,
                "OLMES task folders (config.json + requests.jsonl.gz), or folders holding them")
      ->required();
  e->add_option("--limit", c.limit, "Score the first K documents of each task (0: all)")
      ->capture_default_str();
  e->add_option("--out", c.out,
                "The report (default: RUN/evals/step_N.json); the requests' bits go beside it "
                "(.requests.jsonl)");
  e->add_option("--tokenizer", c.tokenizer, "The run's tokenizer.contract.json (default: found)");
  e->add_option("--threads", c.threads, "Kernel threads (default: all CPUs)");
  e->add_flag("--json", c.json, "Print the report as JSON");
  e->add_flag("--quiet", c.quiet, "No progress lines");
  AddDeviceOption(e, c.device);
}

std::string EvalTable(const infer::EvalReport& r) {
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-16s %-4s %-14s %7s %7s %8s %8s %8s %7s %6s\n", "task", "form",
                "primary", "value", "chance", "acc_raw", "per_char", "per_tok", "bpb", "docs");
  s += buf;
  for (const infer::EvalTaskReport& t : r.tasks) {
    const infer::TaskMetrics& m = t.metrics;
    std::snprintf(buf, sizeof buf, "%-16s %-4s %-14s %7.4f %7.4f %8.4f %8.4f %8.4f %7.3f %6lld\n",
                  t.base.c_str(), t.mc ? "MCF" : "CF", t.primary_metric.c_str(), t.primary,
                  m.chance, m.acc_raw, m.acc_per_char, m.acc_per_token, m.bits_per_byte,
                  static_cast<long long>(m.documents));
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "OLMES macro over %zu tasks (the better of CF and MCF per task): %.4f\n",
                r.macro.rows.size(), r.macro.score);
  s += buf;
  return s;
}

int RunEvalCommand(const EvalCommand& c) {
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  repops::UseDefaultSimdTarget();
  infer::EvalOptions o;
  o.model = {c.run, c.step, c.tokenizer, repops::ParseDevice(c.device)};
  o.tasks = c.tasks, o.limit = c.limit, o.out = c.out;
  const infer::EvalReport r = infer::RunEval(o, [&](const std::string& line) {
    if (!c.quiet) std::cerr << line << "\n";
  });
  if (c.json) {
    std::cout << infer::EvalReportToJson(r).dump(2) << "\n";
    return 0;
  }
  std::printf("%s", EvalTable(r).c_str());
  const std::string out = c.out.empty() ? infer::DefaultEvalReportPath(c.run, r.step) : c.out;
  std::printf("step %lld; %lld requests in %.1f s; report %s; request bits %s (sha256 %s)\n",
              static_cast<long long>(r.step), static_cast<long long>(r.requests), r.seconds,
              out.c_str(), infer::RequestsPathFor(out).c_str(), r.requests_sha256.c_str());
  return 0;
}

}  // namespace trail::cli
