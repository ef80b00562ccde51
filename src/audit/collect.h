// `trail audit collect`: many auditors' attestations on one run and plan, checked and added up
// (docs/audit.md, "Verifying a run together").
//
// An attestation is rejected — and then counts for nothing — when it is malformed, its
// signature does not verify, its key is not one of the trusted auditors' public keys, it is for
// another run or was made under another plan, it claims a slot outside the plan, a slot or key
// already accepted (the first on the command line wins), or a step the plan does not assign to
// its slot. Of the accepted ones, each planned step collects its verdicts: it is verified by an
// auditor whose verdict is "match" with the chain the run records at that step; a step with
// verdicts that are not all alike (or a "match" with another chain) is a disagreement.
// The run's verdict: "diverged" when every verdict of some step says it differs; else
// "disputed" when there is a disagreement; else "verified" when every planned step is
// verified by at least r auditors; else "incomplete".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/plan.h"
#include "train/run_attestation.h"

namespace trail::audit {

struct Rejection {
  std::string path, reason;
};

struct StepVote {
  int64_t auditor = 0;
  std::string signer_name;  // the trusted key's file name
  std::string verdict, chain, detail;
};

struct StepTally {
  int64_t step = 0;
  std::vector<StepVote> votes;
  int64_t verified_by = 0;  // auditors whose "match" carries the run's chain
  bool disagreement = false;
};

struct CollectReport {
  RunBinding run;
  AuditPlan plan;
  std::vector<std::string> accepted;
  std::vector<Rejection> rejected;
  std::vector<StepTally> steps;          // every planned step, ascending
  std::vector<int64_t> silent_auditors;  // slots with no accepted attestation
  train::RunAttestationCheck run_attestation;
  std::string verdict;  // "verified", "incomplete", "disputed", "diverged"

  int64_t CoveredBy(int64_t at_least) const;  // steps verified by ≥ at_least auditors
};

// keys_dir: the trusted auditors' public keys, one "<name>.pub" PEM file each.
CollectReport Collect(const std::string& run_dir, const std::string& plan_path,
                      const std::vector<std::string>& attestations, const std::string& keys_dir);

nlohmann::json CollectJson(const CollectReport& r);
std::string CollectText(const CollectReport& r);

}  // namespace trail::audit
