// The collection report as JSON (format "trail.audit.collect.v1") and as text (collect.h).
#include <cstdio>

#include "audit/collect.h"
#include "core/error.h"

namespace trail::audit {
namespace {

std::string Percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * double(part) / double(whole) : 0.0);
  return buf;
}

}  // namespace

nlohmann::json CollectJson(const CollectReport& r) {
  nlohmann::json rejected = nlohmann::json::array(), disagreements = nlohmann::json::array(),
                 steps = nlohmann::json::array();
  for (const Rejection& x : r.rejected)
    rejected.push_back({{"path", x.path}, {"reason", x.reason}});
  for (const StepTally& t : r.steps) {
    nlohmann::json votes = nlohmann::json::array();
    for (const StepVote& v : t.votes) {
      votes.push_back({{"auditor", v.auditor},
                       {"key", v.signer_name},
                       {"verdict", v.verdict},
                       {"chain", v.chain},
                       {"detail", v.detail}});
    }
    steps.push_back({{"step", t.step},
                     {"verified_by", t.verified_by},
                     {"disagreement", t.disagreement},
                     {"votes", votes}});
    if (t.disagreement) disagreements.push_back({{"step", t.step}, {"votes", votes}});
  }
  const int64_t planned = static_cast<int64_t>(r.steps.size());
  return {
      {"format", "trail.audit.collect.v1"},
      {"run",
       {{"genesis", r.run.genesis}, {"final_chain", r.run.final_chain}, {"steps", r.run.steps}}},
      {"plan",
       {{"auditors", r.plan.auditors},
        {"redundancy", r.plan.redundancy},
        {"planned_steps", planned}}},
      {"verdict", r.verdict},
      {"coverage",
       {{"verified_by_one", r.CoveredBy(1)},
        {"verified_by_redundancy", r.CoveredBy(r.plan.redundancy)},
        {"planned", planned}}},
      {"accepted", r.accepted},
      {"rejected", rejected},
      {"silent_auditors", r.silent_auditors},
      {"disagreements", disagreements},
      {"run_attestation",
       {{"present", r.run_attestation.present},
        {"signed", r.run_attestation.is_signed},
        {"signer", r.run_attestation.signer},
        {"problems", r.run_attestation.problems}}},
      {"steps", steps}};
}

std::string CollectText(const CollectReport& r) {
  std::string out;
  for (const std::string& p : r.accepted) out += "accepted " + p + "\n";
  for (const Rejection& x : r.rejected) out += "REJECTED " + x.path + ": " + x.reason + "\n";
  for (int64_t slot : r.silent_auditors) out += StrCat("no attestation from auditor ", slot, "\n");
  for (const StepTally& t : r.steps) {
    if (!t.disagreement && (t.votes.empty() || t.votes[0].verdict == "match")) continue;
    out += StrCat(t.disagreement ? "DISAGREEMENT" : "step", " at step ", t.step, ":");
    for (const StepVote& v : t.votes) {
      out += StrCat(" auditor ", v.auditor, " (", v.signer_name, ") says ", v.verdict,
                    v.detail.empty() ? "" : " [" + v.detail + "]", ";");
    }
    out += "\n";
  }
  if (r.run_attestation.present && r.run_attestation.problems.empty()) {
    out += r.run_attestation.is_signed ? StrCat("run attestation: signed by key ",
                                                r.run_attestation.signer.substr(0, 16), "\n")
                                       : std::string("run attestation: unsigned\n");
  }
  for (const std::string& p : r.run_attestation.problems) out += "run attestation: " + p + "\n";
  const int64_t planned = static_cast<int64_t>(r.steps.size());
  out += StrCat("coverage: ", r.CoveredBy(1), " of ", planned,
                " planned steps verified by at least "
                "one auditor (",
                Percent(r.CoveredBy(1), planned), "), ", r.CoveredBy(r.plan.redundancy),
                " by at least ", r.plan.redundancy, " (",
                Percent(r.CoveredBy(r.plan.redundancy), planned), "); ", r.accepted.size(),
                " attestations accepted, ", r.rejected.size(), " rejected\n");
  out += "verdict: " + r.verdict + "\n";
  return out;
}

}  // namespace trail::audit
