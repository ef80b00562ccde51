#include "cli/audit_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/checks.h"

#include <cstdio>
#include <memory>

#include "audit/bisect.h"
#include "cli/device_option.h"
#include "audit/certify.h"
#include "audit/collect.h"
#include "audit/plan_cost.h"
#include "audit/published_run.h"
#include "audit/remote_run.h"
#include "audit/replay.h"
#include "audit/step_selection.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/signing.h"
#include "core/thread_pool.h"
#include "fetch/source.h"
#include "collectives/launch.h"
#include "repops/kernels.h"
#include "train/checkpoint.h"
#include "train/step_trace.h"

namespace trail::cli {
namespace {

void AddData(CLI::App* c, std::string& data) {
  c->add_option("--data", data,
                "A copy of the run's data manifest (default: the one run.json names)");
}

// --run as a URL of a published bundle, and where its bytes are cached.
void AddRemote(CLI::App* c, AuditCommand& a) {
  c->add_option("--cache", a.cache,
                "With --run URL: the cache of fetched bytes, shared between audits (default: "
                "$XDG_CACHE_HOME/trail or ~/.cache/trail)");
  c->add_option("--retries", a.retries, "With --run URL: retries of a failed transfer")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  c->add_option("--trust-publisher", a.trust_publishers,
                "With --run URL: accept a publication signed by this key (a fingerprint or a "
                ".pub file) although it is not the key that signed the run's attestation");
  c->add_option("--trainer", a.trainer_key,
                "With --run URL: the trainer's key (a fingerprint or a .pub file); refuse a run "
                "whose attestation.json it did not sign");
}

// The replay's activation recomputation, overriding the run's recipe.
void AddRecompute(CLI::App* c, std::string& recompute) {
  c->add_option("--recompute", recompute,
                "none | layers: activation recomputation for the replay (default: the run's "
                "recipe); layers needs less memory, the bits are the same")
      ->check(CLI::IsMember({"none", "layers"}));
}

std::optional<model::Recompute> RecomputeOf(const AuditCommand& c) {
  if (c.recompute.empty()) return std::nullopt;
  return model::ParseRecompute(c.recompute);
}

void AddThreads(CLI::App* c, int& threads) {
  c->add_option("--threads", threads, "Kernel threads (default: all CPUs)")
      ->check(CLI::Range(1, 1024));
}

void AddReplay(CLI::App* audit, AuditCommand& c) {
  c.replay = audit->add_subcommand(
      "replay",
      "Replay steps of a published run on this machine and compare every recorded "
      "field with its trajectory (exit 0 only when all match)");
  c.replay->add_option("--run", c.run, "The run directory, or a published bundle's URL")
      ->required();
  AddRemote(c.replay, c);
  auto* one = c.replay->add_option("--step", c.step, "One step")->check(kNonNegative);
  auto* range = c.replay->add_option("--steps", c.step_spec, "Steps A:B (B exclusive)");
  auto* sample =
      c.replay->add_option("--sample", c.sample, "K steps sampled with --seed")->check(kPositive);
  one->excludes(range)->excludes(sample);
  range->excludes(sample);
  c.replay->add_option("--seed", c.seed, "Seed of the --sample")->capture_default_str();
  AddData(c.replay, c.data);
  AddThreads(c.replay, c.threads);
  c.replay->add_flag("--json", c.json, "Print the report as JSON");
  c.replay->add_flag("--quiet", c.quiet, "No progress lines");
  AddDeviceOption(c.replay, c.device);
  AddRecompute(c.replay, c.recompute);
}

void AddKeygen(CLI::App* audit, AuditCommand& c) {
  c.keygen = audit->add_subcommand(
      "keygen", "Create an Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub");
  c.keygen->add_option("--out", c.out, "NAME: the files' path without extension")->required();
}

void AddPlan(CLI::App* audit, AuditCommand& c) {
  c.plan = audit->add_subcommand(
      "plan",
      "Assign steps of a run to K auditors, each step to r of them, derived from the "
      "run's final chained hash (so the trainer cannot choose the checked steps)");
  c.plan->add_option("--run", c.run, "The run directory")->required();
  c.plan->add_option("--auditors", c.auditors, "K: the number of auditors")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  c.plan->add_option("--redundancy", c.redundancy, "r: auditors per step")
      ->capture_default_str()
      ->check(kPositive);
  c.plan
      ->add_option("--sample", c.plan_sample,
                   "Steps (segments, with --segments) to check (default: all)")
      ->check(kPositive);
  c.plan
      ->add_option("--segments", c.segments,
                   "Assign contiguous segments of L steps instead of single steps (L a multiple "
                   "of the checkpoint interval: one checkpoint load per segment)")
      ->check(kPositive);
  c.plan->add_option("--bundle", c.bundle,
                     "The run's published bundle (folder or URL): also print each auditor's "
                     "bytes to download");
  c.plan->add_option("--cache", c.cache, "With --bundle: where its publication.json is kept");
  AddData(c.plan, c.data);
  c.plan->add_option("--out", c.out, "The plan file to write (JSON)")->required();
}

void AddCertify(CLI::App* audit, AuditCommand& c) {
  c.certify = audit->add_subcommand(
      "certify",
      "Replay the steps a plan assigns to one auditor and write a signed attestation "
      "of the verdicts (exit 0 only when all match)");
  c.certify->add_option("--run", c.run, "The run directory, or a published bundle's URL")
      ->required();
  AddRemote(c.certify, c);
  c.certify->add_option("--plan", c.plan_path, "The plan (from `trail audit plan`)")->required();
  c.certify->add_option("--key", c.key, "This auditor's private key (from `trail audit keygen`)")
      ->required();
  c.certify->add_option("--auditor", c.slot, "This auditor's slot in the plan (0..K-1)")
      ->required()
      ->check(kNonNegative);
  c.certify->add_option("--out", c.out, "The attestation file to write (JSON)")->required();
  AddData(c.certify, c.data);
  AddThreads(c.certify, c.threads);
  c.certify->add_flag("--quiet", c.quiet, "No progress lines");
  AddDeviceOption(c.certify, c.device);
  AddRecompute(c.certify, c.recompute);
}

void AddCollect(CLI::App* audit, AuditCommand& c) {
  c.collect = audit->add_subcommand(
      "collect",
      "Check auditors' attestations of a run and report coverage, disagreements and "
      "the run's verdict (exit 0 only when verified)");
  c.collect->add_option("--run", c.run, "The run directory")->required();
  c.collect->add_option("--plan", c.plan_path, "The plan the auditors worked from")->required();
  c.collect->add_option("--keys", c.keys_dir, "Directory of the trusted auditors' *.pub keys")
      ->required();
  c.collect->add_option("attestations", c.attestations, "Attestation files")->required();
  c.collect->add_flag("--json", c.json, "Print the report as JSON");
}

void AddTraceAndBisect(CLI::App* audit, AuditCommand& c) {
  c.trace = audit->add_subcommand(
      "trace", "Replay one step and record the hash of every operation's output (a trace)");
  c.trace->add_option("--run", c.run, "The run directory, or a published bundle's URL")->required();
  AddRemote(c.trace, c);
  c.trace->add_option("--step", c.step, "The step")->required()->check(kNonNegative);
  c.trace->add_option("--capture", c.capture, "Also keep the output values of this entry")
      ->check(kNonNegative);
  c.trace->add_option("--out", c.out, "The trace file to write")->required();
  AddDeviceOption(c.trace, c.device);
  AddRecompute(c.trace, c.recompute);
  AddData(c.trace, c.data);
  AddThreads(c.trace, c.threads);
  c.bisect = audit->add_subcommand(
      "bisect",
      "Name the first operation where two traces of a step diverge, and its first "
      "differing element (exit 0 when they do not diverge)");
  c.bisect->add_option("trace_a", c.trace_a, "A trace (e.g. the run's traces/step_N.trace)")
      ->required();
  c.bisect->add_option("trace_b", c.trace_b, "Another trace of the same step")->required();
  c.bisect->add_option("--run", c.run,
                       "The run: re-run the step here to name the differing element when the "
                       "traces hold hashes only");
  c.bisect->add_option("--data", c.data, "A copy of the run's data manifest");
  c.bisect->add_flag("--strict", c.strict,
                     "Refuse unless trace_a is signed by the run's trainer and matches the run "
                     "(needs --run)");
  AddThreads(c.bisect, c.threads);
  c.bisect->add_flag("--json", c.json, "Print the result as JSON");
}

// A run given as a URL: its publication, opened (nullptr for a run directory).
std::unique_ptr<audit::RemoteRun> OpenRemote(const AuditCommand& c) {
  if (!fetch::IsUrl(c.run)) {
    if (!c.trust_publishers.empty() || !c.trainer_key.empty()) {
      throw CLI::ValidationError("audit", "--trust-publisher and --trainer go with --run URL");
    }
    return nullptr;
  }
  if (!c.data.empty()) {
    throw CLI::ValidationError("audit",
                               "--data does not go with --run URL: the bundle holds the data");
  }
  audit::RemoteOptions ro;
  ro.location = c.run, ro.cache_dir = c.cache, ro.quiet = c.quiet;
  ro.source.retries = c.retries;
  for (const std::string& k : c.trust_publishers) {
    ro.trusted_publishers.push_back(audit::KeyFingerprint(k));
  }
  if (!c.trainer_key.empty()) ro.trainer_key = audit::KeyFingerprint(c.trainer_key);
  return std::make_unique<audit::RemoteRun>(ro);
}

// What fetching cost, on stderr, once the replay is done (it may have fetched more for a starting
// point it fell back to).
void PrintFetch(const audit::RemoteRun& remote) {
  const audit::FetchTotals f = remote.totals();
  const uint64_t total = remote.publication().total_bytes();
  std::fprintf(stderr,
               "fetch: %.2f MB now (%.2f MB reused from other publications in the cache); "
               "these steps read %.2f MB of the bundle's %.2f MB (%.1f%%)\n",
               f.fetched_bytes / 1e6, f.reused_bytes / 1e6, f.used_bytes / 1e6, total / 1e6,
               total ? 100.0 * f.used_bytes / total : 0.0);
}

std::vector<int64_t> RequestedSteps(const AuditCommand& c, const audit::RemoteRun* remote) {
  if (c.step >= 0) return {c.step};
  if (!c.step_spec.empty()) return audit::ParseSteps(c.step_spec);
  if (c.sample <= 0) {
    throw CLI::ValidationError("audit replay",
                               "choose the steps: --step N, --steps A:B or --sample K");
  }
  const int64_t steps =
      remote ? remote->publication().run.steps : audit::OpenPublishedRun(c.run).steps();
  return audit::SampleSteps(steps, c.sample, c.seed);
}

int RunReplay(const AuditCommand& c) {
  const std::unique_ptr<audit::RemoteRun> remote = OpenRemote(c);
  audit::ReplayOptions o;
  o.run_dir = c.run, o.data = c.data, o.steps = RequestedSteps(c, remote.get()), o.quiet = c.quiet;
  o.device = repops::ParseDevice(c.device), o.recompute = RecomputeOf(c);
  o.comm = &collectives::JobCommunicator();  // MPI under mpirun / srun, else this process alone
  if (remote) remote->FetchForSteps(o.steps, o);
  const audit::ReplayReport r = audit::ReplaySteps(o);
  if (o.comm->rank() == 0) {
    if (remote && !c.quiet) PrintFetch(*remote);
    if (c.json) {
      nlohmann::json j = audit::ReportJson(r);
      if (remote) j["fetch"] = audit::FetchReportJson(*remote, c.run);
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s", audit::ReportText(r).c_str());
    }
  }
  return r.ok() ? 0 : 1;
}

// Each auditor's cost: steps to replay and starting points to load by the checkpoints at
// hand (the bundle's, when given), and with a bundle the bytes a remote audit fetches.
void PrintPlanCosts(const AuditCommand& c, const audit::AuditPlan& p) {
  std::unique_ptr<audit::RemoteRun> remote;
  std::vector<int64_t> checkpoints = train::ListCheckpoints(c.run);
  std::string manifest;
  if (!c.bundle.empty()) {
    audit::RemoteOptions ro;
    ro.location = c.bundle, ro.cache_dir = c.cache, ro.quiet = true;
    remote = std::make_unique<audit::RemoteRun>(ro);
    TRAIL_CHECK(remote->publication().run == p.run, c.bundle, " is the bundle of another run");
    checkpoints = remote->publication().checkpoints;
    manifest = audit::ManifestForReplay(audit::OpenPublishedRun(c.run), c.data);
  }
  for (size_t a = 0; a < p.assignments.size(); ++a) {
    audit::AuditorCost cost = audit::ReplayCost(p.assignments[a], checkpoints);
    std::printf("  auditor %zu: %lld steps; replays %lld from %lld starting point(s)", a,
                static_cast<long long>(cost.steps), static_cast<long long>(cost.replayed),
                static_cast<long long>(cost.loads));
    if (remote) {
      cost.bytes = audit::FetchBytes(remote->publication(), p.assignments[a], manifest);
      const uint64_t total = remote->publication().total_bytes();
      std::printf("; fetches %.2f MB of the bundle's %.2f MB (%.1f%%)", cost.bytes / 1e6,
                  total / 1e6, total ? 100.0 * cost.bytes / total : 0.0);
    }
    std::printf("\n");
  }
}

int RunPlan(const AuditCommand& c) {
  const audit::AuditPlan p =
      audit::PlanForRun(c.run, c.auditors, c.redundancy, c.plan_sample, c.segments);
  WriteFileAtomic(c.out, audit::PlanJson(p).dump(2) + "\n");
  size_t planned = 0;
  for (const auto& a : p.assignments) planned += a.size();
  std::printf(
      "wrote %s: %lld auditors, %lld step checks (%lld per step) over a run of %lld "
      "steps; plan SHA-256 %s\n",
      c.out.c_str(), static_cast<long long>(p.auditors), static_cast<long long>(planned),
      static_cast<long long>(p.redundancy), static_cast<long long>(p.run.steps),
      ToHex(Sha256OfFile(c.out)).c_str());
  PrintPlanCosts(c, p);
  return 0;
}

int RunCertify(const AuditCommand& c) {
  const std::unique_ptr<audit::RemoteRun> remote = OpenRemote(c);
  audit::CertifyOptions o;
  o.run_dir = c.run, o.plan_path = c.plan_path, o.key_path = c.key, o.data = c.data;
  if (remote) {
    const audit::AuditPlan plan = audit::LoadPlanFor(c.plan_path, remote->publication().run);
    TRAIL_CHECK(c.slot < plan.auditors, "audit certify: --auditor ", c.slot,
                " is not a slot of the plan (0..", plan.auditors - 1, ")");
    audit::ReplayOptions ro;
    remote->FetchForSteps(plan.assignments[static_cast<size_t>(c.slot)], ro);
    o.run_dir = ro.run_dir, o.data = ro.data, o.verify_shards = false, o.fetched = ro.fetched;
  }
  o.auditor = c.slot, o.quiet = c.quiet, o.device = repops::ParseDevice(c.device);
  o.recompute = RecomputeOf(c);
  o.comm = &collectives::JobCommunicator();
  const audit::Certified r = audit::Certify(o);
  if (o.comm->rank() != 0) return r.report.ok() ? 0 : 1;
  if (remote && !c.quiet) PrintFetch(*remote);
  WriteFileAtomic(c.out, r.attestation.dump(2) + "\n");
  std::printf("%swrote %s (signed)\n", audit::ReportText(r.report).c_str(), c.out.c_str());
  return r.report.ok() ? 0 : 1;
}

int RunCollect(const AuditCommand& c) {
  const audit::CollectReport r = audit::Collect(c.run, c.plan_path, c.attestations, c.keys_dir);
  if (c.json) {
    std::printf("%s\n", audit::CollectJson(r).dump(2).c_str());
  } else {
    std::printf("%s", audit::CollectText(r).c_str());
  }
  return r.verdict == "verified" ? 0 : 1;
}

int RunTrace(const AuditCommand& c) {
  const std::unique_ptr<audit::RemoteRun> remote = OpenRemote(c);
  audit::ReplayOptions o;
  o.run_dir = c.run, o.data = c.data, o.steps = {c.step}, o.quiet = true;
  if (remote) remote->FetchForSteps(o.steps, o);
  o.trace_step = c.step, o.capture = c.capture, o.bisect = false;
  o.device = repops::ParseDevice(c.device), o.recompute = RecomputeOf(c);
  const audit::ReplayReport r = audit::ReplaySteps(o);
  if (remote && !c.quiet) PrintFetch(*remote);
  train::WriteStepTrace(c.out, r.trace);
  const audit::StepVerdict* v = r.Find(c.step);
  std::printf("wrote %s: %zu entries of step %lld (replayed: %s)\n", c.out.c_str(),
              r.trace.ops.size(), static_cast<long long>(c.step),
              v ? audit::VerdictName(v->verdict) : "?");
  return 0;
}

int RunBisect(const AuditCommand& c) {
  const train::StepTrace a = train::ReadStepTrace(c.trace_a), b = train::ReadStepTrace(c.trace_b);
  if (c.strict) {
    if (c.run.empty()) throw CLI::ValidationError("audit bisect", "--strict needs --run");
    audit::CheckStrictTraces(c.trace_a, a, b, c.run);
  }
  const audit::Divergence d =
      c.run.empty() ? audit::Bisect(a, b) : audit::BisectWithRun(a, b, c.run, c.data);
  if (c.json) {
    std::printf("%s\n", audit::DivergenceJson(d).dump(2).c_str());
  } else {
    std::printf("%s", audit::DivergenceText(d).c_str());
  }
  return d.found ? 1 : 0;
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
      "audit",
      "Check a published run: replay its steps bit for bit, and verify it together with "
      "other auditors (plans, signed attestations, coverage)");
  c.audit->require_subcommand(1);
  AddReplay(c.audit, c);
  AddKeygen(c.audit, c);
  AddPlan(c.audit, c);
  AddCertify(c.audit, c);
  AddCollect(c.audit, c);
  AddTraceAndBisect(c.audit, c);
  AddAuditEvalCommand(c.audit, c.eval);
}

int RunAuditCommand(const AuditCommand& c) {
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  repops::UseDefaultSimdTarget();
  if (*c.replay) return RunReplay(c);
  if (*c.keygen) return RunKeygen(c);
  if (*c.plan) return RunPlan(c);
  if (*c.certify) return RunCertify(c);
  if (*c.collect) return RunCollect(c);
  if (*c.trace) return RunTrace(c);
  if (*c.bisect) return RunBisect(c);
  if (*c.eval.eval) return RunAuditEvalCommand(c.eval);
  return 0;
}

}  // namespace trail::cli
