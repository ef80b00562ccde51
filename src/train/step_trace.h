// Operation traces (format "trail.trace.v1"): for one step, the hash of every operation's output
// in execution order — logical ranks ascending, each rank's micro-batches ascending, each
// micro-batch's forward then backward operations as the model runs them (model/transformer.cc)
// — followed by the step's gradient state hash, and its parameter and optimizer state hashes
// where the step commits state (recipe.h, CommitsStateAfter). Two executions of a
// step agree on a trace entry exactly when they computed the same bits there, so comparing two
// traces (audit/bisect.h) names the first operation where they diverge.
//
// File: JSONL. The first line is the header
//   {"format": "trail.trace.v1", "genesis", "step", "chain" (H_step after the step), "backend",
//    "threads", "processes", "ops" (the number of entries)}
// then one line per entry, in order:
//   {"i", "rank", "micro", "op", "layer", "tensor", "shape", "hash"[, "values"]}
// where hash = ElementsRoot(f32, output) in hex (core/state_hash.h: the Merkle root of the
// output's 65,536-element chunk leaves), rank and micro are -1 for the step's own entries, and
// layer is -1 outside the layers. A micro-batch starts with the entry {"op": "batch", "tensor":
// "tokens", "hash": the micro-batch's canonical digest}. "values" (hex of the output's f32 bytes,
// little-endian) is present only on an entry captured on request.
#pragma once

#include "core/signing.h"

#include <cstdint>
#include <string>
#include <vector>

#include "train/step.h"

namespace trail::train {

struct TraceOp {
  int64_t rank = -1, micro = -1, layer = -1;
  std::string op, tensor;
  std::vector<int64_t> shape;
  std::string hash;
  std::string values;  // hex; only on a captured entry
  // Everything but the hash and values: what the entry is, not what it computed.
  std::string Identity() const;
};

struct StepTrace {
  int64_t step = 0;
  std::string genesis, chain;  // hex
  std::string backend;
  int64_t threads = 0, processes = 0;
  std::vector<TraceOp> ops;
};

// Records the entries of this process's micro-batches. `capture`: the index, among the entries
// this recorder sees, whose output values are kept too (-1: none).
class TraceRecorder : public StepObserver {
 public:
  explicit TraceRecorder(int64_t capture = -1) : capture_(capture) {}
  void BeginMicroBatch(int64_t logical_rank, int64_t micro, const Digest& batch) override;
  void Output(const char* op, int64_t layer, const char* tensor,
              const model::OpOutput& out) override;
  std::vector<TraceOp>& ops() { return ops_; }

 private:
  int64_t capture_, rank_ = -1, micro_ = -1;
  std::vector<TraceOp> ops_;
};

// Runs st's next step with every operation traced (as StepAndChain, whose line it returns).
// The trace is complete on every process: each gathers the others' entries. `capture` (an
// entry index; a job of one process only) keeps that entry's output values.
std::string TracedStepAndChain(StepEngine& engine, TrainState& st, StepResult& r,
                               const Digest& genesis, StepTrace& trace, int64_t capture = -1);

std::string TracePath(const std::string& run_dir, int64_t step);   // <run>/traces/step_N.trace
void WriteStepTrace(const std::string& path, const StepTrace& t);  // atomic; creates the folder
// Strict: a malformed line, a wrong count or index throws trail::Error naming file and line.
StepTrace ReadStepTrace(const std::string& path);

// A trace signed by the trainer (`train --trace-every K --key KEY`), beside it as <trace>.sig
// (format "trail.trace.signature.v1"):
//   {"statement": {"format", "trace_sha256" (of the trace file), "genesis", "step", "chain"},
//    "public_key": 64 hex, "signature": 128 hex}
// signed as the run's attestation is, over "trail.trace.signature.v1\n" followed by the
// statement serialized compactly with sorted keys.
void SignStepTrace(const std::string& trace_path, const StepTrace& t, const SigningKey& key);

struct TraceSignatureCheck {
  bool present = false;  // <trace>.sig exists
  std::string signer;    // the public key's fingerprint, when the signature verified
  std::string problem;   // "" when present and valid for this trace file and header
};
TraceSignatureCheck CheckTraceSignature(const std::string& trace_path, const StepTrace& t);

}  // namespace trail::train
