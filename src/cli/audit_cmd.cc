#include "cli/audit_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "audit/published_run.h"
#include "audit/replay.h"
#include "audit/step_selection.h"
#include "core/error.h"
#include "core/signing.h"
#include "core/thread_pool.h"
#include "dist/launch.h"
#include "repops/kernels.h"

namespace trail::cli {
namespace {

void AddThreads(CLI::App* c, int& threads) {
  c->add_option("--threads", threads, "Kernel threads (default: all CPUs)")
      ->check(CLI::Range(1, 1024));
}

void AddReplay(CLI::App* audit, AuditCommand& c) {
  c.replay = audit->add_subcommand(
      "replay", "Replay steps of a published run on this machine and compare every recorded "
                "field with its trajectory (exit 0 only when all match)");
  c.replay->add_option("--run", c.run, "The run directory")->required();
  auto* one = c.replay->add_option("--step", c.step, "One step")->check(CLI::NonNegativeNumber);
  auto* range = c.replay->add_option("--steps", c.step_spec, "Steps A:B (B exclusive)");
  auto* sample = c.replay->add_option("--sample", c.sample, "K steps sampled with --seed")
                     ->check(CLI::PositiveNumber);
  one->excludes(range)->excludes(sample);
  range->excludes(sample);
  c.replay->add_option("--seed", c.seed, "Seed of the --sample")->capture_default_str();
  c.replay->add_option("--data", c.data,
                       "A copy of the run's data manifest (default: the one run.json names)");
  AddThreads(c.replay, c.threads);
  c.replay->add_flag("--json", c.json, "Print the report as JSON");
  c.replay->add_flag("--quiet", c.quiet, "No progress lines");
}

void AddKeygen(CLI::App* audit, AuditCommand& c) {
  c.keygen = audit->add_subcommand(
      "keygen", "Create an Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub");
  c.keygen->add_option("--out", c.out, "NAME: the files' path without extension")->required();
}

std::vector<int64_t> RequestedSteps(const AuditCommand& c) {
  if (c.step >= 0) return {c.step};
  if (!c.step_spec.empty()) return audit::ParseSteps(c.step_spec);
  TRAIL_CHECK(c.sample > 0, "audit replay: choose the steps: --step N, --steps A:B or --sample K");
  const audit::PublishedRun run = audit::OpenPublishedRun(c.run);
  return audit::SampleSteps(run.steps(), c.sample, c.seed);
}

int RunReplay(const AuditCommand& c) {
  audit::ReplayOptions o;
  o.run_dir = c.run, o.data = c.data, o.steps = RequestedSteps(c), o.quiet = c.quiet;
  o.comm = &dist::JobCommunicator();  // MPI under mpirun / srun, else this process alone
  const audit::ReplayReport r = audit::ReplaySteps(o);
  if (o.comm->rank() == 0) {
    if (c.json) {
      std::printf("%s\n", audit::ReportJson(r).dump(2).c_str());
    } else {
      std::printf("%s", audit::ReportText(r).c_str());
    }
  }
  return r.ok() ? 0 : 1;
}

int RunKeygen(const AuditCommand& c) {
  const SigningKey k = SigningKey::Generate();
  k.Save(c.out);
  std::printf("wrote %s.key and %s.pub; fingerprint %s\n", c.out.c_str(), c.out.c_str(),
              k.fingerprint().c_str());
  return 0;
}

}  // namespace

void AddAuditCommand(CLI::App& app, AuditCommand& c) {
  c.audit = app.add_subcommand(
      "audit", "Check a published run: replay its steps bit for bit, and verify it together with "
               "other auditors (plans, signed attestations, coverage)");
  c.audit->require_subcommand(1);
  AddReplay(c.audit, c);
  AddKeygen(c.audit, c);
}

int RunAuditCommand(const AuditCommand& c) {
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  repops::UseDefaultBackend();
  if (*c.replay) return RunReplay(c);
  if (*c.keygen) return RunKeygen(c);
  return 0;
}

}  // namespace trail::cli
