// `trail audit replay`: replays chosen steps of a published run on this machine and compares
// every recorded field of every replayed step with the run's trajectory (docs/audit.md).
//
// To reach step N the replay starts from the newest usable starting point at or before N: a
// checkpoint, or step 0 from the recipe's initial parameters (which the genesis hash commits
// to). A starting point is usable when it agrees with the trajectory — its chain is the
// trajectory's after step c-1, its parameter and optimizer state hashes are the ones record
// c-1 holds (at step 0: the recipe's initial parameters and zero moments), its window cursor
// is where record c-1 ended — and otherwise it is reported as a finding at step c and an older
// one is tried. Every step from the start to N is replayed and compared; after a step that
// differs, later steps are replayed only from a starting point after it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "collectives/communicator.h"
#include "model/config.h"
#include "repops/kernels.h"
#include "train/run_attestation.h"
#include "train/step_trace.h"

namespace trail::audit {

enum class Verdict { kMatch, kDiffers, kUnverified };
const char* VerdictName(Verdict v);  // "match", "differs", "unverified"

struct StepVerdict {
  int64_t step = 0;
  Verdict verdict = Verdict::kUnverified;
  bool requested = false;  // asked for, rather than replayed on the way to a step that was
  std::string detail;      // what differs (expected and replayed values), or why unverified
  std::string chain;       // H_step as replayed, hex ("" when not replayed)
  double seconds = 0;      // the replay of this step
};

// A published file that disagrees with the trajectory, at the first step it affects (-1: the
// run as a whole, e.g. its attestation).
struct Finding {
  int64_t step = -1;
  std::string what;
};

// The publication a replayed run's bytes were fetched from (audit/remote_run.h), for the report.
struct PublicationOrigin {
  std::string location, root;            // the URL or folder; the publication's root (hex)
  std::string signer, trainer, binding;  // as audit/publication.h's PublisherBinding
};

// What a replay of a run fetched from a publication adds to a local one.
struct FetchedSource {
  PublicationOrigin origin;  // empty root: a local run
  // The starting points: the publication's checkpoints (not those of the local mirror, which
  // holds only what was fetched).
  std::vector<int64_t> checkpoints;
  // Called before a starting point at `start` is loaded to replay up to `target` (checkpoint
  // false: step 0 from the recipe), and before a checkpoint the replay passes is checked: makes
  // present its files and the data that steps start..target read. Throws fetch::FetchError
  // when they cannot be had.
  std::function<void(int64_t start, bool checkpoint, int64_t target)> prepare;
  // Shards whose published bytes are not the ones the manifest names (path -> what differs):
  // no step that reads one is vouched for.
  std::map<std::string, std::string> differing_shards;
  bool present() const { return !origin.root.empty(); }
};

struct ReplayOptions {
  std::string run_dir;
  std::string data;            // a copy of the data manifest ("": the one run.json names)
  std::vector<int64_t> steps;  // requested steps, ascending and distinct
  bool quiet = false;          // no progress lines
  collectives::Communicator* comm = nullptr;  // the job replaying (nullptr: this process alone)
  // Trace this step's operations into ReplayReport::trace (-1: none), keeping the values of
  // entry `capture` (-1: none).
  int64_t trace_step = -1, capture = -1;
  // When a step with a recorded trace (<run>/traces/) differs, name its first diverging
  // operation (audit/bisect.h) in the step's verdict.
  bool bisect = true;
  Device device;  // where the steps are replayed (repops/devices.h)
  // The CPU kernels the replay's backend runs its host work on (a cpu device: every op);
  // nullptr: the SIMD target active now. Bisect replays an operation on the reference's.
  const repops::Kernels* kernels = nullptr;
  // Activation recomputation for the replay, overriding the run's recipe (the same bits either
  // way: "layers" needs less memory for about one more forward a step); unset: the recipe's.
  std::optional<model::Recompute> recompute;
  // Rehash every shard on open. A remote audit turns it off: its shards hold only the chunks
  // the steps read, each verified against the publication when fetched (audit/remote_run.h).
  bool verify_shards = true;
  FetchedSource fetched;  // a run fetched from a publication
};

struct ReplayReport {
  std::string run_dir, genesis, final_chain;
  int64_t recorded_steps = 0;
  std::vector<StepVerdict> steps;  // every step replayed or requested, ascending
  std::vector<Finding> findings;
  train::RunAttestationCheck attestation;
  std::string backend;
  int64_t threads = 0, processes = 0;
  double load_seconds = 0;               // reading and checking starting points
  std::vector<int64_t> starting_points;  // the step of every starting point loaded, in order
  train::StepTrace trace;                // of ReplayOptions::trace_step
  std::string divergence;  // the first diverging operation of the first traced step that differs
  PublicationOrigin publication;  // where the bytes came from (empty root: a local run)

  // The first step that differs, is unverified or carries a finding; -1 when none.
  int64_t first_failure() const;
  // Every requested step matches and nothing published disagrees.
  bool ok() const;
  const StepVerdict* Find(int64_t step) const;
};

// Throws trail::Error only when the run cannot be replayed at all (see OpenPublishedRun and
// ManifestForReplay) or a requested step is beyond the recorded trajectory.
ReplayReport ReplaySteps(const ReplayOptions& options);

nlohmann::json ReportJson(const ReplayReport& r);
// {"location", "root", "signer", "trainer" (null: none), "binding"}; null for a local run.
nlohmann::json PublicationJson(const PublicationOrigin& p);
// A line per failing step, runs of matching steps on one line each, then a summary.
std::string ReportText(const ReplayReport& r);

}  // namespace trail::audit
