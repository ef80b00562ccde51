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

uint64_t PlanSeed(const RunBinding& run, int64_t K, int64_t r, int64_t n) {
  const std::string text =
      StrCat("trail.audit.plan.v1 ", run.final_chain, " ", run.steps, " ", K, " ", r, " ", n);
  const Digest d = Sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | d[static_cast<size_t>(i)];
  return seed;
}

}  // namespace

AuditPlan MakePlan(const RunBinding& run, int64_t auditors, int64_t redundancy, int64_t sample) {
  TRAIL_CHECK(auditors >= 1 && auditors <= kMaxAuditors,
              "audit plan: the number of auditors must "
              "be 1..",
              kMaxAuditors, ", not ", auditors);
  TRAIL_CHECK(redundancy >= 1 && redundancy <= auditors, "audit plan: --redundancy ", redundancy,
              " needs 1 ≤ r ≤ the number of auditors (", auditors, ")");
  TRAIL_CHECK(sample >= 1, "audit plan: the sample must hold at least one step");
  TRAIL_CHECK(run.steps >= 1, "audit plan: the run records no step");
  AuditPlan p;
  p.run = run, p.auditors = auditors, p.redundancy = redundancy, p.sample = sample;
  p.seed = PlanSeed(run, auditors, redundancy, sample);
  const std::vector<int64_t> sampled = SampleSteps(run.steps, sample, p.seed);
  const data::Permutation order(sampled.size(), p.seed, kPlanStream);
  p.assignments.assign(static_cast<size_t>(auditors), {});
  for (uint64_t i = 0; i < sampled.size(); ++i) {
    for (int64_t j = 0; j < redundancy; ++j) {
      const uint64_t a = (i * static_cast<uint64_t>(redundancy) + j) % auditors;
      p.assignments[a].push_back(sampled[order(i)]);
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
  return {
      {"format", "trail.audit.plan.v1"},
      {"run",
       {{"genesis", p.run.genesis}, {"final_chain", p.run.final_chain}, {"steps", p.run.steps}}},
      {"auditors", p.auditors},
      {"redundancy", p.redundancy},
      {"sample", p.sample},
      {"seed", seed},
      {"assignments", assignments}};
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
                 JsonInteger<int64_t>(j.at("sample"), path + ": sample"));
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed plan: ", e.what());
  }
  TRAIL_CHECK(PlanJson(p) == j, path,
              ": its seed or assignments are not the ones derived from the run's final chain "
              "(docs/audit.md): the plan was altered");
  return p;
}

}  // namespace trail::audit
