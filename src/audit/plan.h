// A public plan that assigns steps of a run to K auditors, each sampled step to r of them
// (docs/audit.md, "Verifying a run together"). The plan is a pure function of the run's final
// chained hash and (steps, K, r, n), so the trainer — whose final chain is fixed once the run
// is published — cannot choose which steps get checked, and anyone can recompute it:
//   seed      = the first 8 bytes, little-endian, of SHA-256 of the text
//               "trail.audit.plan.v1 <final_chain hex> <steps> <K> <r> <n>"
//   sampled   = SampleSteps(steps, n, seed)  (audit/step_selection.h; n ≥ steps: all of them)
//   order     = data::Permutation(|sampled|, seed, kPlanStream)
//   position i of the order (i = 0, 1, ...) holds sampled[order(i)] and goes to the auditors
//   (i·r + j) mod K for j = 0..r-1 — r distinct auditors when r ≤ K, and every auditor gets
//   ⌊|sampled|·r/K⌋ or one more steps. Each auditor's steps are listed ascending.
// A segment plan (segment length L ≥ 1) assigns contiguous segments instead of single steps, so
// one checkpoint load serves many verified steps: the run's steps are cut into segments
// [i·L, min((i+1)·L, steps)), n counts segments, the seed text ends with " segments L", and the
// rule above runs over segment indices; an auditor's steps are every step of its segments.
// With L a multiple of the run's checkpoint interval, a segment starts at a checkpoint.
// The plan file (format "trail.audit.plan.v1") records the run it is for (genesis, final chain,
// steps), K, r, n, "segment_steps" (L, only in a segment plan), the seed and the assignments;
// attestations bind to its SHA-256.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trail::audit {

inline constexpr uint64_t kPlanStream = 0x61756469745f7031;  // "audit_p1"
inline constexpr int64_t kMaxAuditors = int64_t{1} << 20;    // bounds what a plan file can ask for

struct RunBinding {
  std::string genesis, final_chain;  // hex
  int64_t steps = 0;
  bool operator==(const RunBinding&) const = default;
};

struct AuditPlan {
  RunBinding run;
  int64_t auditors = 0, redundancy = 0, sample = 0;  // K, r, n as requested
  int64_t segment_steps = 0;                         // L; 0: single steps
  uint64_t seed = 0;
  std::vector<std::vector<int64_t>> assignments;  // per auditor, ascending
  bool operator==(const AuditPlan&) const = default;
};

// Throws trail::Error unless 1 ≤ r ≤ K, n ≥ 1 and L ≥ 0.
AuditPlan MakePlan(const RunBinding& run, int64_t auditors, int64_t redundancy, int64_t sample,
                   int64_t segment_steps = 0);

nlohmann::json PlanJson(const AuditPlan& p);
// Parses a plan file and checks it is the plan MakePlan derives for `run` with its K, r, n, L;
// throws trail::Error naming the file and what does not match.
AuditPlan LoadPlanFor(const std::string& path, const RunBinding& run);

}  // namespace trail::audit
