// `trail audit certify` and `trail audit plan`: one auditor's part of verifying a run together.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/plan.h"
#include "audit/replay.h"
#include "collectives/communicator.h"
#include "core/device.h"

namespace trail::audit {

// The plan for a published run (its final chain and step count from the trajectory); sample
// < 1 means every recorded step (every segment, with segment_steps L > 0).
AuditPlan PlanForRun(const std::string& run_dir, int64_t auditors, int64_t redundancy,
                     int64_t sample, int64_t segment_steps = 0);

struct CertifyOptions {
  std::string run_dir, plan_path, key_path, data;
  int64_t auditor = -1;  // the slot in the plan
  bool quiet = false;
  collectives::Communicator* comm = nullptr;
  Device device;  // where the steps are replayed; the attestation's machine.backend names it
  bool verify_shards = true;                  // as ReplayOptions::verify_shards
  std::optional<model::Recompute> recompute;  // as ReplayOptions::recompute
  FetchedSource fetched;                      // as ReplayOptions::fetched
};

struct Certified {
  ReplayReport report;
  nlohmann::json attestation;  // signed (attestation.h)
};

// Checks the plan is the one derived from the run, replays the steps it assigns to the slot
// and signs the attestation of what the replay found (a step that differs is attested as
// such). Throws trail::Error on unusable input (no such slot, a key without its private half).
Certified Certify(const CertifyOptions& o);

}  // namespace trail::audit
