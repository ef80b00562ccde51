#include "audit/collect.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "audit/attestation.h"
#include "audit/published_run.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/signing.h"

namespace trail::audit {
namespace {
namespace fs = std::filesystem;

// Fingerprint -> name ("alice" for alice.pub) of every trusted key.
std::map<std::string, std::string> TrustedKeys(const std::string& dir) {
  TRAIL_CHECK(fs::is_directory(dir), dir, " is not a directory of auditors' public keys (--keys)");
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".pub") continue;
    const SigningKey k = SigningKey::Load(e.path().string());
    out[k.fingerprint()] = e.path().stem().string();
  }
  TRAIL_CHECK(!out.empty(), dir, " holds no auditor public keys (*.pub)");
  return out;
}

// "" when `a` may count under `plan`, else why not. Records the slot and key it takes.
std::string Admission(const SignedAttestation& a, const AuditPlan& plan,
                      const std::string& plan_sha, const std::map<std::string, std::string>& keys,
                      std::map<int64_t, std::string>& slot_key,
                      std::map<std::string, int64_t>& key_slot) {
  if (!keys.count(a.signer)) {
    return StrCat("signed by a key that is not a trusted auditor's (fingerprint ", a.signer, ")");
  }
  if (!(a.run == plan.run)) {
    return StrCat("an attestation for another run (final chain ", a.run.final_chain, ")");
  }
  if (a.plan_sha256 != plan_sha) return "made under another plan (plan_sha256 differs)";
  if (a.auditor < 0 || a.auditor >= plan.auditors) {
    return StrCat("claims auditor slot ", a.auditor, " but the plan has ", plan.auditors);
  }
  if (slot_key.count(a.auditor)) {
    return StrCat("auditor slot ", a.auditor, " was already attested (by ",
                  keys.at(slot_key[a.auditor]), ")");
  }
  if (key_slot.count(a.signer)) {
    return StrCat("key ", keys.at(a.signer), " already attested auditor slot ", key_slot[a.signer]);
  }
  const std::vector<int64_t>& mine = plan.assignments[static_cast<size_t>(a.auditor)];
  std::set<int64_t> seen;
  for (const AttestedStep& s : a.steps) {
    if (!std::binary_search(mine.begin(), mine.end(), s.step)) {
      return StrCat("step ", s.step, " is not assigned to auditor ", a.auditor);
    }
    if (!seen.insert(s.step).second) return StrCat("step ", s.step, " is attested twice");
  }
  slot_key[a.auditor] = a.signer;
  key_slot[a.signer] = a.auditor;
  return "";
}

void Tally(CollectReport& r, const std::vector<train::TrajectoryRecord>& records) {
  for (StepTally& t : r.steps) {
    std::set<std::string> kinds;
    for (const StepVote& v : t.votes) {
      const bool run_chain = t.step < static_cast<int64_t>(records.size()) &&
                             v.chain == ToHex(records[static_cast<size_t>(t.step)].chain);
      if (v.verdict == "match" && run_chain) ++t.verified_by;
      kinds.insert(v.verdict == "match" && !run_chain ? "match-other-chain" : v.verdict);
    }
    t.disagreement = kinds.size() > 1 || kinds.count("match-other-chain");
  }
  bool diverged = false, disputed = false, complete = true;
  for (const StepTally& t : r.steps) {
    const bool all_differ =
        !t.votes.empty() && std::all_of(t.votes.begin(), t.votes.end(),
                                        [](const StepVote& v) { return v.verdict == "differs"; });
    diverged |= all_differ;
    disputed |= t.disagreement;
    complete &= t.verified_by >= r.plan.redundancy;
  }
  r.verdict = diverged ? "diverged" : disputed ? "disputed" : complete ? "verified" : "incomplete";
}

}  // namespace

int64_t CollectReport::CoveredBy(int64_t at_least) const {
  return std::count_if(steps.begin(), steps.end(),
                       [&](const StepTally& t) { return t.verified_by >= at_least; });
}

CollectReport Collect(const std::string& run_dir, const std::string& plan_path,
                      const std::vector<std::string>& attestations, const std::string& keys_dir) {
  const PublishedRun run = OpenPublishedRun(run_dir);
  CollectReport r;
  r.run = {ToHex(run.info.genesis), run.final_chain(), run.steps()};
  r.run_attestation = run.attestation;
  r.plan = LoadPlanFor(plan_path, r.run);
  const std::string plan_sha = ToHex(Sha256OfFile(plan_path));
  const std::map<std::string, std::string> keys = TrustedKeys(keys_dir);
  std::map<int64_t, StepTally> tally;
  for (const std::vector<int64_t>& steps : r.plan.assignments) {
    for (int64_t s : steps) tally[s].step = s;
  }
  std::map<int64_t, std::string> slot_key;
  std::map<std::string, int64_t> key_slot;
  for (const std::string& path : attestations) {
    SignedAttestation a;
    try {
      a = ReadSignedAttestation(path);
    } catch (const Error& e) {
      r.rejected.push_back({path, e.what()});
      continue;
    }
    const std::string why = Admission(a, r.plan, plan_sha, keys, slot_key, key_slot);
    if (!why.empty()) {
      r.rejected.push_back({path, why});
      continue;
    }
    r.accepted.push_back(path);
    for (const AttestedStep& s : a.steps) {
      tally[s.step].votes.push_back({a.auditor, keys.at(a.signer), s.verdict, s.chain, s.detail});
    }
  }
  for (int64_t slot = 0; slot < r.plan.auditors; ++slot) {
    if (!slot_key.count(slot)) r.silent_auditors.push_back(slot);
  }
  for (auto& [step, t] : tally) r.steps.push_back(std::move(t));
  Tally(r, run.records);
  return r;
}

}  // namespace trail::audit
