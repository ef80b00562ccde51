#include "audit/attestation.h"

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_read.h"
#include "core/version.h"

namespace trail::audit {
namespace {

std::string SignedMessage(const nlohmann::json& statement) {
  return std::string(kAttestationFormat) + "\n" + statement.dump();
}

}  // namespace

nlohmann::json MakeAttestation(const ReplayReport& report, const AuditPlan& plan,
                               const std::string& plan_sha256, int64_t auditor,
                               const SigningKey& key) {
  nlohmann::json steps = nlohmann::json::array(), findings = nlohmann::json::array();
  for (const StepVerdict& v : report.steps) {
    if (!v.requested) continue;
    steps.push_back({{"step", v.step},
                     {"verdict", VerdictName(v.verdict)},
                     {"chain", v.chain},
                     {"detail", v.detail}});
  }
  for (const Finding& f : report.findings) {
    findings.push_back(
        {{"step", f.step >= 0 ? nlohmann::json(f.step) : nlohmann::json()}, {"what", f.what}});
  }
  nlohmann::json statement = {{"format", kAttestationFormat},
                              {"run",
                               {{"genesis", plan.run.genesis},
                                {"final_chain", plan.run.final_chain},
                                {"steps", plan.run.steps}}},
                              {"plan_sha256", plan_sha256},
                              {"auditor", auditor},
                              {"steps", steps},
                              {"findings", findings},
                              {"machine",
                               {{"arch", MachineArch()},
                                {"backend", report.backend},
                                {"threads", report.threads},
                                {"processes", report.processes},
                                {"trail", kTrailVersion}}}};
  if (!report.publication.root.empty()) {  // the replayed bytes came from this publication
    statement["publication"] = {{"root", report.publication.root},
                                {"signer", report.publication.signer},
                                {"binding", report.publication.binding}};
  }
  return {{"statement", statement},
          {"public_key", key.public_hex()},
          {"signature", key.Sign(SignedMessage(statement))}};
}

SignedAttestation ReadSignedAttestation(const std::string& path) {
  SignedAttestation a;
  a.path = path;
  try {
    const nlohmann::json doc = nlohmann::json::parse(ReadFileToString(path));
    a.statement = doc.at("statement");
    TRAIL_CHECK(a.statement.at("format") == kAttestationFormat, path,
                ": not a trail audit attestation (format ", a.statement.at("format").dump(), ")");
    const SigningKey k = SigningKey::FromPublicHex(doc.at("public_key"), path + ": public_key");
    TRAIL_CHECK(k.Verify(SignedMessage(a.statement), doc.at("signature").get<std::string>()), path,
                ": the signature does not verify: the attestation was altered after signing");
    a.signer = k.fingerprint();
    const nlohmann::json& run = a.statement.at("run");
    a.run = {run.at("genesis"), run.at("final_chain"),
             JsonInteger<int64_t>(run.at("steps"), path + ": run.steps")};
    a.plan_sha256 = a.statement.at("plan_sha256");
    a.auditor = JsonInteger<int64_t>(a.statement.at("auditor"), path + ": auditor");
    for (const nlohmann::json& s : a.statement.at("steps")) {
      a.steps.push_back({JsonInteger<int64_t>(s.at("step"), path + ": step"), s.at("verdict"),
                         s.at("chain"), s.at("detail")});
    }
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed attestation: ", e.what());
  }
  return a;
}

}  // namespace trail::audit
