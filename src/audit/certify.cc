#include "audit/certify.h"

#include "audit/attestation.h"
#include "audit/published_run.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/signing.h"

namespace trail::audit {
namespace {

RunBinding BindingOf(const PublishedRun& run) {
  return {ToHex(run.info.genesis), run.final_chain(), run.steps()};
}

}  // namespace

AuditPlan PlanForRun(const std::string& run_dir, int64_t auditors, int64_t redundancy,
                     int64_t sample, int64_t segment_steps) {
  const PublishedRun run = OpenPublishedRun(run_dir);
  TRAIL_CHECK(run.trajectory_problem.empty(), "audit plan: ", run.trajectory_problem,
              ": a plan binds to the final chain of an intact trajectory");
  const int64_t units =
      segment_steps > 0 ? (run.steps() + segment_steps - 1) / segment_steps : run.steps();
  return MakePlan(BindingOf(run), auditors, redundancy, sample < 1 ? units : sample, segment_steps);
}

Certified Certify(const CertifyOptions& o) {
  const SigningKey key = SigningKey::Load(o.key_path);
  TRAIL_CHECK(key.has_private(), o.key_path,
              " is a public key: an attestation is signed with the private .key file");
  const PublishedRun run = OpenPublishedRun(o.run_dir);
  const AuditPlan plan = LoadPlanFor(o.plan_path, BindingOf(run));
  TRAIL_CHECK(o.auditor >= 0 && o.auditor < plan.auditors, "audit certify: --auditor ", o.auditor,
              " is not a slot of the plan (0..", plan.auditors - 1, ")");
  const std::vector<int64_t>& steps = plan.assignments[static_cast<size_t>(o.auditor)];
  TRAIL_CHECK(!steps.empty(), "audit certify: the plan assigns no step to auditor ", o.auditor);
  ReplayOptions ro;
  ro.run_dir = o.run_dir, ro.data = o.data, ro.steps = steps, ro.quiet = o.quiet, ro.comm = o.comm;
  ro.device = o.device, ro.verify_shards = o.verify_shards, ro.recompute = o.recompute;
  ro.fetched = o.fetched;
  Certified out;
  out.report = ReplaySteps(ro);
  out.attestation =
      MakeAttestation(out.report, plan, ToHex(Sha256OfFile(o.plan_path)), o.auditor, key);
  return out;
}

}  // namespace trail::audit
