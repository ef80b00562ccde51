// attestation.json: the trainer's statement about a finished run, signed with Ed25519 when the
// trainer has a key (core/signing.h). It binds what an auditor replays against:
//   {"statement": {"format": "trail.run.attestation.v1", "genesis", "final_chain", "steps",
//                  "final_params", "final_optim", "recipe_sha256", "manifest_sha256",
//                  "tokenizer_contract", "repops", "trail",
//                  "base" (only for a run continuing an imported model: imported_base.h's
//                  BaseStatement, naming every file of the checkpoint it started from)},
//    "public_key": 64 hex | null, "signature": 128 hex | null}
// All hashes are hex. The signature is over "trail.run.attestation.v1\n" followed by the
// statement serialized compactly with keys in sorted order (nlohmann::json::dump()); the
// statement holds only strings, integers and objects of them, so every reader re-serializes it to
// the same bytes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/signing.h"
#include "train/run_dir.h"

namespace trail::train {

inline constexpr const char* kRunAttestationFormat = "trail.run.attestation.v1";

// The statement for the run as its directory holds it now (run.json, the whole trajectory,
// the tokenizer contract of the manifest run.json names, read from `manifest_path`).
nlohmann::json RunStatement(const RunDirectory& rd, const std::string& manifest_path);

// Writes <run>/attestation.json atomically; signed when `key` is not null.
void WriteRunAttestation(const RunDirectory& rd, const nlohmann::json& statement,
                         const SigningKey* key);

// What an auditor learns from attestation.json.
struct RunAttestationCheck {
  bool present = false, is_signed = false;
  std::string signer;                 // the public key's fingerprint, when signed
  std::vector<std::string> problems;  // each names what is wrong
};

// Checks attestation.json against the run: its signature, and that the statement's genesis,
// final chain, step count, recipe and manifest hashes are those of `info` and `records`.
RunAttestationCheck CheckRunAttestation(const RunDirectory& rd, const RunInfo& info,
                                        const std::vector<TrajectoryRecord>& records);

}  // namespace trail::train
