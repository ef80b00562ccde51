#include "cli/audit_eval_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/device_option.h"
#include "core/thread_pool.h"
#include "infer/eval_audit.h"

namespace trail::cli {

void AddAuditEvalCommand(CLI::App* audit, AuditEvalCommand& c) {
  c.eval = audit->add_subcommand(
      "eval",
      "Check an evaluation: its files, its metrics from the recorded log-likelihoods, and a "
      "seeded sample of requests scored again bit for bit");
  c.eval->add_option("--report", c.report, "The evaluation report (trail eval)")->required();
  c.eval->add_option("--tasks", c.tasks, "The OLMES task folders it scored")->required();
  c.eval->add_option("--sample", c.sample, "Requests to score again (0: none)")
      ->capture_default_str();
  c.eval->add_option("--seed", c.seed, "Which requests (any seed the auditor picks)")
      ->capture_default_str();
  c.eval->add_option("--run", c.run, "The run directory (default: the one the report names)");
  c.eval->add_option("--tokenizer", c.tokenizer, "The run's tokenizer.contract.json");
  c.eval->add_option("--threads", c.threads, "Kernel threads (default: all CPUs)");
  c.eval->add_flag("--json", c.json, "Print the result as JSON");
  AddDeviceOption(c.eval, c.device);
}

int RunAuditEvalCommand(const AuditEvalCommand& c) {
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  infer::EvalAuditOptions o;
  o.report = c.report, o.run = c.run, o.tasks = c.tasks, o.tokenizer = c.tokenizer;
  o.sample = c.sample, o.seed = c.seed, o.device = repops::ParseDevice(c.device);
  const infer::EvalAuditResult r =
      infer::AuditEval(o, [&](const std::string& line) { std::cerr << line << "\n"; });
  if (c.json) {
    std::cout << nlohmann::json{{"report", c.report},
                                {"requests", r.requests},
                                {"rescored", r.rescored},
                                {"ok", r.ok()},
                                {"findings", r.findings}}
                     .dump(2)
              << "\n";
  } else {
    for (const std::string& f : r.findings) std::printf("finding: %s\n", f.c_str());
    std::printf("%s: %lld requests, %lld scored again: %s\n", c.report.c_str(),
                static_cast<long long>(r.requests), static_cast<long long>(r.rescored),
                r.ok() ? "every check agrees" : "DISAGREES");
  }
  return r.ok() ? 0 : 1;
}

}  // namespace trail::cli
