// `trail audit …`: what an auditor runs on a published run (docs/audit.md): replay steps and
// compare them with the trajectory; keys, plans, signed attestations and their collection for
// many auditors verifying a run together. `replay`, `certify` and `trace` take a run published
// elsewhere as --run URL (audit/remote_run.h). Exit status: 0 when the verdict is a match, 1
// when a step differs or a published file disagrees, 2 on a usage error, 3 on an error, 4 when
// the publication's bytes cannot be fetched (or are not the published ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/audit_eval_cmd.h"

namespace CLI {
class App;
}

namespace trail::cli {

struct AuditCommand {
  CLI::App* audit = nullptr;
  CLI::App *replay = nullptr, *keygen = nullptr, *plan = nullptr, *certify = nullptr,
           *collect = nullptr, *trace = nullptr, *bisect = nullptr;
  std::string run, data, step_spec, out, key, plan_path, keys_dir;
  std::vector<std::string> attestations;
  int64_t step = -1, sample = -1, auditors = 0, redundancy = 1, plan_sample = -1, slot = -1,
          capture = -1;
  std::string trace_a, trace_b, device = "cpu", cache, bundle;
  int64_t segments = 0;
  int retries = 4;
  std::vector<std::string> trust_publishers;  // --trust-publisher: fingerprints or .pub files
  std::string trainer_key;                    // --trainer: a fingerprint or a .pub file
  uint64_t seed = 0;
  int threads = 0;
  std::string recompute;  // "": the run's recipe; "none" or "layers"
  bool json = false, quiet = false, strict = false;
  AuditEvalCommand eval;  // `audit eval`
};
void AddAuditCommand(CLI::App& app, AuditCommand& cmd);
int RunAuditCommand(const AuditCommand& cmd);

}  // namespace trail::cli
