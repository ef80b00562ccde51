#include "audit/plan.h"

#include <algorithm>
#include <cstring>

#include "audit/step_selection.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/json_read.h"
#include "data/permutation.h"

namespace trail::audit {
namespace {

uint64_t PlanSeed(const RunBinding& run, int64_t K, int64_t r, int64_t n, int64_t L) {
  std::string text =
      StrCat("trail.audit.plan.v1 ", run.final_chain, " ", run.steps, " ", K, " ", r, " ", n);
  if (L > 0) text += StrCat(" segments ", L);
  const Digest d = Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | d[static_cast<size_t>(i)];
  return seed;
}

}  // namespace

AuditPlan MakePlan(const RunBinding& run, int64_t auditors, int64_t redundancy, int64_t sample,
                   int64_t segment_steps) {
  TRAIL_CHECK(auditors >= 1 && auditors <= kMaxAuditors,
              "audit plan: the number of auditors must "
              "be 1..",
              kMaxAuditors, ", not ", auditors);
  TRAIL_CHECK(redundancy >= 1 && redundancy <= auditors, "audit plan: --redundancy ", redundancy,
              " needs 1 ≤ r ≤ the number of auditors (", auditors, ")");
  TRAIL_CHECK(sample >= 1, "audit plan: the sample must hold at least one step");
  TRAIL_CHECK(run.steps >= 1, "audit plan: the run records no step");
  TRAIL_CHECK(segment_steps >= 0, "audit plan: --segments must be 1 or more steps");
  AuditPlan p;
  p.run = run, p.auditors = auditors, p.redundancy = redundancy, p.sample = sample;
  p.segment_steps = segment_steps;
  p.seed = PlanSeed(run, auditors, redundancy, sample, segment_steps);
  const int64_t L = std::max<int64_t>(segment_steps, 1);
  const std::vector<int64_t> sampled = SampleSteps((run.steps + L - 1) / L, sample, p.seed);
  const data::Permutation order(sampled.size(), p.seed, kPlanStream);
  p.assignments.assign(static_cast<size_t>(auditors), {});
  for (uint64_t i = 0; i < sampled.size(); ++i) {
    for (int64_t j = 0; j < redundancy; ++j) {
      const uint64_t a = (i * static_cast<uint64_t>(redundancy) + j) % auditors;
      const int64_t first = sampled[order(i)] * L;
      for (int64_t s = first; s < std::min(first + L, run.steps); ++s)
        p.assignments[a].push_back(s);
    }
  }
  for (std::vector<int64_t>& steps : p.assignments) std::sort(steps.begin(), steps.end());
  return p;
}

nlohmann::json PlanJson(const AuditPlan& p) {
  nlohmann::json assignments = nlohmann::json::array();
  for (size_t a = 0; a < p.assignments.size(); ++a) {
    assignments.push_back({{"auditor", a}, {"steps", p.assignments[a]}});
  }
  char seed[17];
  std::snprintf(seed, sizeof seed, "%016llx", static_cast<unsigned long long>(p.seed));
  nlohmann::json j = {
      {"format", "trail.audit.plan.v1"},
      {"run",
       {{"genesis", p.run.genesis}, {"final_chain", p.run.final_chain}, {"steps", p.run.steps}}},
      {"auditors", p.auditors},
      {"redundancy", p.redundancy},
      {"sample", p.sample},
      {"seed", seed},
      {"assignments", assignments}};
  if (p.segment_steps > 0) j["segment_steps"] = p.segment_steps;
  return j;
}

AuditPlan LoadPlanFor(const std::string& path, const RunBinding& run) {
  nlohmann::json j;
  RunBinding bound;
  try {
    j = nlohmann::json::parse(ReadFileToString(path));
    TRAIL_CHECK(j.at("format") == "trail.audit.plan.v1", path, ": not a trail audit plan");
    const nlohmann::json& r = j.at("run");
    bound = {r.at("genesis"), r.at("final_chain"),
             JsonInteger<int64_t>(r.at("steps"), path + ": run.steps")};
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed plan: ", e.what());
  }
  TRAIL_CHECK(bound == run, path, ": a plan for another run (final chain ", bound.final_chain, ", ",
              bound.steps, " steps) than this one (", run.final_chain, ", ", run.steps, " steps)");
  AuditPlan p;
  try {
    p = MakePlan(run, JsonInteger<int64_t>(j.at("auditors"), path + ": auditors"),
                 JsonInteger<int64_t>(j.at("redundancy"), path + ": redundancy"),
                 JsonInteger<int64_t>(j.at("sample"), path + ": sample"),
                 j.contains("segment_steps")
                     ? JsonInteger<int64_t>(j.at("segment_steps"), path + ": segment_steps")
                     : 0);
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed plan: ", e.what());
  }
  TRAIL_CHECK(PlanJson(p) == j, path,
              ": its seed or assignments are not the ones derived from the run's final chain "
              "(docs/audit.md): the plan was altered");
  return p;
}

}  // namespace trail::audit
