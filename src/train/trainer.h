// `trail train`: the training loop over the canonical stream, writing the run directory
// (run_dir.h): recipe.toml, run.json, trajectory.jsonl, metrics.jsonl, checkpoints/, and when
// the recipe's last step is done attestation.json (run_attestation.h). A resumed run continues
// from the newest valid checkpoint and re-executes the
// steps after it that were already recorded, requiring each to reproduce its record exactly —
// so a resume that lost any state is detected at its first step, not silently continued.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/device.h"
#include "collectives/communicator.h"

namespace trail::train {

struct TrainOptions {
  std::string recipe_path;    // fresh runs; on resume optional (must equal the run's)
  std::string manifest_path;  // the data manifest (on resume: default the run's, from run.json)
  std::string run_dir;
  bool resume = false;
  // A fresh run of a recipe whose [init] names an imported base (train/imported_base.h) starts
  // from the parameters in this directory, which `trail import` wrote; its import.json is
  // copied into the run. On resume it may be given again (it must be the same base).
  std::string init_from;
  int64_t stop_after = -1;  // stop once this many steps are done (the recipe's count still rules)
  bool quiet = false;       // no progress lines on stderr
  bool verify_shards = true;
  // The job this process is part of (nullptr: a job of one process). Every process runs the
  // same steps; process 0 alone writes the run directory, which every process must see at the
  // same path (shared storage on many machines), as it must see the data.
  collectives::Communicator* comm = nullptr;
  // An Ed25519 private key (PEM) that signs attestation.json when the run finishes ("": the
  // attestation is written unsigned). Read by process 0 only, before the first step.
  std::string sign_key;
  // Record an operation trace (step_trace.h) of every step whose number is a multiple of this,
  // in <run>/traces/ (0: none).
  int64_t trace_every = 0;
  // Where the model runs (repops/devices.h). The trajectory is the same bits on every device.
  Device device;
};

struct TrainSummary {
  int64_t steps_done = 0;
  std::string final_chain;   // H of the last step, hex
  std::string final_params;  // parameter state hash, hex
  int64_t steps_verified_on_resume = 0;
  double last_val_loss = 0;  // mean over domains of the last evaluation
  // Every process's peak resident memory (PeakResidentBytes) at the end, in process order (on
  // every process), and the bytes of gathered parameter units each held (sharded parameters).
  std::vector<uint64_t> peak_resident_bytes;
  int64_t gathered_param_bytes = 0;
};

// Throws trail::Error on bad input or a diverging resume (nothing already written is lost). In a
// job of several processes, an error on any one must end the job
// (collectives::AbortJobIfDistributed).
TrainSummary RunTraining(const TrainOptions& opt);

}  // namespace trail::train
