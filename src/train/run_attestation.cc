#include "train/run_attestation.h"

#include "train/imported_base.h"

#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "core/json_read.h"
#include "core/version.h"
#include "data/manifest.h"
#include "train/imported_base.h"

namespace trail::train {
namespace {

std::string SignedMessage(const nlohmann::json& statement) {
  return std::string(kRunAttestationFormat) + "\n" + statement.dump();
}

}  // namespace

nlohmann::json RunStatement(const RunDirectory& rd, const std::string& manifest_path) {
  const RunInfo info = rd.ReadInfo();
  const std::vector<TrajectoryRecord> recs = rd.ReadTrajectory(info.genesis, false);
  TRAIL_CHECK(!recs.empty(), rd.trajectory_path(), ": no steps to attest");
  const RecordedState last = RecordedStateOf(recs.back());  // the last step always commits
  const data::Manifest m = data::LoadManifest(manifest_path);
  nlohmann::json st = {{"format", kRunAttestationFormat},
                       {"genesis", ToHex(info.genesis)},
                       {"final_chain", ToHex(recs.back().chain)},
                       {"steps", static_cast<int64_t>(recs.size())},
                       {"final_params", last.params},
                       {"final_optim", last.optim},
                       {"recipe_sha256", info.json.at("recipe_sha256")},
                       {"manifest_sha256", info.json.at("manifest_sha256")},
                       {"tokenizer_contract", ToHex(m.tokenizer.contract)},
                       {"repops", info.json.value("repops", "")},
                       {"trail", kTrailVersion}};
  if (std::filesystem::exists(rd.import_path())) st["base"] = BaseStatement(rd.import_path());
  return st;
}

void WriteRunAttestation(const RunDirectory& rd, const nlohmann::json& statement,
                         const SigningKey* key) {
  nlohmann::json doc = {{"statement", statement}, {"public_key", nullptr}, {"signature", nullptr}};
  if (key != nullptr) {
    doc["public_key"] = key->public_hex();
    doc["signature"] = key->Sign(SignedMessage(statement));
  }
  WriteFileAtomic(rd.dir() + "/attestation.json", doc.dump(2) + "\n");
}

RunAttestationCheck CheckRunAttestation(const RunDirectory& rd, const RunInfo& info,
                                        const std::vector<TrajectoryRecord>& records) {
  RunAttestationCheck out;
  const std::string path = rd.dir() + "/attestation.json";
  if (!std::filesystem::exists(path)) return out;
  out.present = true;
  auto problem = [&](auto&&... why) { out.problems.push_back(StrCat(path, ": ", why...)); };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(ReadFileToString(path));
    const nlohmann::json& st = doc.at("statement");
    if (st.value("format", "") != kRunAttestationFormat) problem("unknown format");
    if (!doc.at("signature").is_null()) {
      const SigningKey k = SigningKey::FromPublicHex(doc.at("public_key"), path + ": public_key");
      out.is_signed = k.Verify(SignedMessage(st), doc.at("signature").get<std::string>());
      if (!out.is_signed) problem("the signature does not verify (the statement was altered)");
      out.signer = k.fingerprint();
    }
    const std::string final_chain = records.empty() ? "" : ToHex(records.back().chain);
    const std::pair<const char*, std::string> expected[] = {
        {"genesis", ToHex(info.genesis)},
        {"final_chain", final_chain},
        {"recipe_sha256", info.json.value("recipe_sha256", "")},
        {"manifest_sha256", info.json.value("manifest_sha256", "")}};
    for (const auto& [key, want] : expected) {
      if (st.at(key).get<std::string>() != want) {
        problem(key, " is ", st.at(key).get<std::string>(), " but the run's is ", want);
      }
    }
    const nlohmann::json base = std::filesystem::exists(rd.import_path())
                                    ? BaseStatement(rd.import_path())
                                    : nlohmann::json(nullptr);
    if (st.value("base", nlohmann::json(nullptr)) != base) {
      problem("its base (the imported model the run continues) is ",
              st.value("base", nlohmann::json(nullptr)).dump(),
              " but the run's base.import.json says ", base.dump());
    }
    const int64_t steps = JsonInteger<int64_t>(st.at("steps"), "steps");
    if (steps != static_cast<int64_t>(records.size())) {
      problem("attests ", steps, " steps but the trajectory holds ", records.size());
    }
  } catch (const std::exception& e) {
    problem("malformed: ", e.what());
  }
  return out;
}

}  // namespace trail::train
