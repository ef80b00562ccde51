// An auditor's signed attestation (format "trail.audit.attestation.v1"): "I replayed these
// steps of this run, assigned to me by this plan, on this machine, and this is what I found."
//   {"statement": {"format", "run": {"genesis", "final_chain", "steps"}, "plan_sha256",
//                  "auditor": slot in the plan, "steps": [{"step", "verdict", "chain",
//                  "detail"}], "findings": [{"step" | null, "what"}],
//                  "machine": {"arch", "backend", "threads", "processes", "trail"},
//                  "publication": {"root", "signer", "binding"}   (only when the steps' bytes
//                                  were fetched from a publication: its root, its signer's
//                                  fingerprint and how that key is bound to the trainer)},
//    "public_key": 64 hex, "signature": 128 hex}
// The signature (Ed25519) is over "trail.audit.attestation.v1\n" followed by the statement
// serialized compactly with sorted keys; the statement holds only strings, integers, booleans
// and null, so any reader re-serializes it to the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/plan.h"
#include "audit/replay.h"
#include "core/signing.h"

namespace trail::audit {

inline constexpr const char* kAttestationFormat = "trail.audit.attestation.v1";

// The attestation of `report` (a replay of the steps the plan assigns to `auditor`).
nlohmann::json MakeAttestation(const ReplayReport& report, const AuditPlan& plan,
                               const std::string& plan_sha256, int64_t auditor,
                               const SigningKey& key);

struct AttestedStep {
  int64_t step = 0;
  std::string verdict, chain, detail;
};

// An attestation whose signature verified (nothing else is checked here).
struct SignedAttestation {
  std::string path, signer;  // signer: the public key's fingerprint
  nlohmann::json statement;
  RunBinding run;
  std::string plan_sha256;
  int64_t auditor = -1;
  std::vector<AttestedStep> steps;
};

// Parses an attestation file and verifies its signature; throws trail::Error naming the file
// and the problem (malformed, unknown format, a signature that does not verify).
SignedAttestation ReadSignedAttestation(const std::string& path);

}  // namespace trail::audit
