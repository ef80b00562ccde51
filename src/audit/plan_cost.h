// What each auditor of a plan spends (docs/audit.md, "Verifying a run together"): the steps
// its replay executes and the starting points it loads, by the replay's rule over the
// checkpoints at hand; and, for a published bundle, the bytes a remote audit of its steps
// fetches (remote_run.h), counted in the bundle's chunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audit/plan.h"
#include "audit/publication.h"

namespace trail::audit {

struct AuditorCost {
  int64_t steps = 0;     // assigned
  int64_t replayed = 0;  // executed, on the way included
  int64_t loads = 0;     // starting points loaded
  uint64_t bytes = 0;    // fetched from the bundle (0 without one)
};

// checkpoints: the steps with a checkpoint (a bundle's own, for a remote audit), ascending.
AuditorCost ReplayCost(const std::vector<int64_t>& steps, const std::vector<int64_t>& checkpoints);

// The bytes a remote audit of `steps` fetches from `pub` into an empty cache; the windows' reads
// are computed on the run's own data (`manifest_path`, the manifest the bundle holds a copy of).
uint64_t FetchBytes(const Publication& pub, const std::vector<int64_t>& steps,
                    const std::string& manifest_path);

}  // namespace trail::audit
