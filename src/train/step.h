// One optimizer step on the logical mesh (R replicas × S shards × M micro-batches), run by the
// processes of a job (collectives/communicator.h; one process in-process), each owning a contiguous
// range of logical ranks. The bits never depend on the number of processes:
//
// Loss = Σ NLL / Σ valid targets over the whole step: the reciprocal 1/Σvalid is computed once
// from the step's batch counts before any forward and scales every micro-batch's d loss/d logits,
// so micro-batches with different target counts weigh by their targets (not a mean of means).
// Gradient reduction (Open-1B appendix A, collectives/reduction_tree.h): each logical rank's
// running sum over its micro-batches (acc = g_0; acc = acc + g_m); inside a replica the ascending
// sum over shards; across replicas TreeFold. The flat gradient is reduce-scattered: process q
// reduces, norms, clips, updates and hashes its range of whole chunks (core/state_hash.h), then
// the updated parameters are all-gathered — or, with [mesh] shard_params, kept there, each
// process gathering every unit (layer) from all just before the forward or backward uses it.
// Then: global norm (Σ of per-chunk SumSq in chunk order), spike protocol, clipping of that final
// gradient, AdamW with the LR of the tokens consumed before the step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/hash.h"
#include "data/batcher.h"
#include "data/stream.h"
#include "collectives/communicator.h"
#include "collectives/mesh_reduce.h"
#include "collectives/reduction_tree.h"
#include "model/transformer.h"
#include "repops/backend.h"
#include "train/checkpoint.h"
#include "train/flat_state.h"
#include "train/recipe.h"
#include "train/sharded_params.h"
#include "train/state.h"

namespace trail::train {

model::BatchView ViewOf(const data::PackedBatch& b);

// Why a step's update was skipped (the step is consumed either way).
enum class SkipReason { kNone, kNoTargets, kNonFinite, kSpike };
// As recorded: "no_targets", "non_finite", "spike" ("" for kNone).
const char* SkipReasonName(SkipReason r);

struct StepResult {
  int64_t step = 0;
  uint64_t window_begin = 0, window_end = 0;
  int64_t input_tokens = 0, target_tokens = 0;
  int64_t tokens_before = 0;  // the LR clock at the step
  float loss = 0;             // Σ NLL · (1/Σ valid)
  float z_loss = 0;           // z · Σ lse² · (1/Σ valid) (0 without z-loss)
  float lr = 0, grad_norm = 0, clip_coef = 1;
  SkipReason skip = SkipReason::kNone;  // why the update was skipped, if it was
  bool skipped() const { return skip != SkipReason::kNone; }
  Digest batch_hash{}, grads_hash{}, params_hash{}, optim_hash{};
  bool state_hashed = false;  // params_hash and optim_hash computed (Recipe CommitsStateAfter)
  double seconds = 0, hash_seconds = 0, comm_seconds = 0;
  int64_t bytes_sent = 0;  // by this process, to other processes
};

// One micro-batch's contribution to the step's scalars, gathered from every process.
struct MicroRecord {
  float nll_sum = 0, lse_sq_sum = 0;
  int64_t valid = 0;
  Digest batch{};  // SHA-256 of the micro-batch's canonical bytes
};

// Observes a step's execution: which micro-batch of which logical rank runs next, then (as a
// model::OpObserver) every operation of its forward and backward.
class StepObserver : public model::OpObserver {
 public:
  virtual void BeginMicroBatch(int64_t logical_rank, int64_t micro, const Digest& batch) = 0;
};

class StepEngine {
 public:
  // `comm` must outlive the engine; every process of the job builds its engine the same way.
  // The engine owns `backend`, which runs the model.
  StepEngine(const Recipe& recipe, data::CanonicalStream& stream, collectives::Communicator& comm,
             std::unique_ptr<repops::Backend> backend);
  // On a backend of `device` (repops/devices.h) on the active SIMD target.
  StepEngine(const Recipe& recipe, data::CanonicalStream& stream, collectives::Communicator& comm,
             const Device& device = {});
  StepEngine(const Recipe& recipe, data::CanonicalStream& stream);  // one process, on the cpu
  // Runs the state's next step. Every process of the job passes an equal state; in a job of
  // several processes, or one that shards the parameters, the engine holds what AdoptState
  // took (call it first).
  StepResult Run(TrainState& st);
  // In a job of several processes: takes this process's range of st's moments (zeros when st
  // has none) into the engine, which keeps and updates only that range, and frees st's. A job
  // of one process updates st's moments in place. With [mesh] shard_params (any number of
  // processes) the same for the parameters: the engine keeps this process's range and
  // st.params is unbound from then on, its units bound only while the model uses them
  // (train/sharded_params.h); read it through ParamsHash and VisitParameters.
  void AdoptState(TrainState& st);
  bool params_sharded() const { return shards_ != nullptr; }
  // The recipe's initial parameters into st (ParameterSet::InitRandom). With sharded parameters
  // every process computes them unit by unit and keeps its range (adopted: no process ever holds
  // them whole).
  void InitParameters(TrainState& st);
  // Given initial parameters into st (an imported base: host tensors of st.params' names and
  // shapes). With sharded parameters every process keeps only its range of them.
  void SetParameters(TrainState& st, std::span<const Tensor> host);
  // Resumes st from the checkpoint in dir (of the run `id`) holding only this process's ranges
  // (sharded parameters): st's scalars set, the parameters' and moments' ranges read from the
  // files at their offsets (LoadCheckpointRanges) and kept as AdoptState keeps them, and the state
  // hashes checked against meta.json with every process (collective). Throws trail::Error.
  void LoadCheckpointShared(const std::string& dir, const RunIdentity& id, TrainState& st);
  // This process's share of a checkpoint of st as it is (not after a step): the state hashes are
  // computed now (collective). For checkpoint 0 of a run whose parameters are sharded.
  CheckpointShare CheckpointShareNow(TrainState& st);
  // The state hash of st's parameters (collective: every process calls it).
  Digest ParamsHash(const TrainState& st);
  // fn(t) for every parameter tensor of st, in canonical order, each bound while fn runs
  // (collective: with sharded parameters every process gathers the units one at a time).
  void VisitParameters(TrainState& st, const std::function<void(const DeviceTensor&)>& fn);
  // What a process whose share of a validation has one batch fewer than another's runs in its
  // place (collective; nothing unless the parameters are sharded).
  void IdleScore() {
    if (shards_) shards_->IdlePass(/*backward=*/false);
  }
  // The bytes of gathered parameter units (0 unless the parameters are sharded).
  int64_t gathered_param_bytes() const { return shards_ ? shards_->gathered_bytes() : 0; }
  const model::Transformer& model() const { return model_; }
  repops::Backend& backend() const { return *backend_; }
  // The micro-batches this process runs, and their operations, go to `o` from now on
  // (nullptr: to no one).
  void set_observer(StepObserver* o) {
    observer_ = o;
    model_.set_observer(o);
  }
  // Forward only (evaluation) on this engine's activations. With sharded parameters every
  // process scores as many batches (IdleScore for a missing one).
  repops::CrossEntropySums Score(const model::ParameterSet& p, const data::PackedBatch& b) {
    TRAIL_CHECK(!shards_ || shards_->params() == &p,
                "scoring another parameter set than the sharded state's");
    return model_.Forward(p, ViewOf(b), acts_);
  }
  int64_t activation_bytes() const { return acts_.bytes(); }
  uint64_t WindowsAt(int64_t step) const { return batcher_.schedule().WindowsAt(step); }
  size_t max_resident_partials() const { return max_resident_; }
  collectives::Communicator& comm() const { return comm_; }
  collectives::RankRange logical_ranks() const { return own_; }
  // This process's flat range of the state: [range_begin(), range_end()).
  int64_t range_begin() const { return flat_bounds_[comm_.rank()]; }
  int64_t range_end() const { return flat_bounds_[comm_.rank() + 1]; }
  // This process's share of a checkpoint that every process writes (SaveCheckpointShared):
  // its range of the parameters and moments copied to the host, and the state hashes of `r`,
  // the step just run, which must have hashed the state (Recipe: every checkpoint step does).
  CheckpointShare CheckpointShareOf(const TrainState& st, const StepResult& r);

 private:
  friend struct TrainTestAccess;  // train/test_access.h: what tests read, never shipped
  std::unique_ptr<model::ParameterSet> TakeBuffer();
  using Buf = std::unique_ptr<model::ParameterSet>;
  std::vector<MicroRecord> RunLocalRanks(const TrainState& st, float scale,
                                         std::vector<std::pair<int, Buf>>& partials);
  // This process's range of the reduced gradient (host memory, where the collectives leave
  // it) on the backend's device: the span itself on a host device, else a device copy.
  float* GradientOnDevice(std::span<float> grad);
  // Norm, clipping and AdamW on this process's range; grad is that range on the device.
  void UpdateRange(TrainState& st, StepResult& r, float* grad);
  void HashRange(TrainState& st, StepResult& r);
  // Keeps this process's ranges of the moments (host values; nullptr: zeros) on the device.
  void KeepMomentRanges(const float* m, const float* v);
  // The first moment (0) or second (1) at chunk c of this process's range.
  float* Moment(TrainState& st, int which, int64_t c);
  bool sharded() const { return comm_.size() > 1; }
  // The micro-batches every process computes this step, by process.
  std::vector<int64_t> PassesByProcess(int64_t step) const;
  // Where AdamW finds the parameters at chunk c of this process's range.
  float* Param(TrainState& st, int64_t c);

  const Recipe& recipe_;
  data::CanonicalStream& stream_;
  collectives::Communicator& comm_;
  data::Batcher batcher_;
  std::unique_ptr<repops::Backend> backend_;
  model::Transformer model_;
  model::Activations acts_;
  model::ParameterSet layout_;  // the parameters' names and shapes (unbound: no memory)
  Buf micro_grad_;              // a micro-batch's gradient after a rank's first
  collectives::ReductionTree tree_;
  collectives::RankRange own_;
  FlatState flat_;
  ChunkLayout moments_layout_;  // adam_m's tensors, then adam_v's (TrainState::OptimizerHash)
  std::vector<TensorMeta> param_metas_, moment_metas_;  // names and shapes for the state roots
  Buffer m_, v_;  // this process's range of the moments (device), in a sharded job
  std::vector<int64_t> chunk_bounds_, flat_bounds_;  // process q: chunks / flat [b[q], b[q+1])
  std::vector<Buf> free_;                            // reusable gradient buffers
  collectives::MeshBuffers reduce_buffers_, gather_buffers_;
  // This process's range of the gradient as used by the update (on the device: grad_device_,
  // or reduce_buffers_ on a host device).
  std::span<float> last_grad_;
  Buffer grad_device_;
  std::vector<float> updated_;  // this process's range of updated parameters, to all-gather
  data::PackedBatch batch_;
  size_t max_resident_ = 0;
  StepObserver* observer_ = nullptr;
  std::unique_ptr<ShardedParameters> shards_;  // with [mesh] shard_params
};

// The canonical digest of a micro-batch, everything the model reads from it
// (docs/training.md, "Trajectory record": SHA-256 of rows and seq_len as u64 LE, then windows,
// inputs, labels, doc_ids, positions and key_valid, each as a u64 LE count and its elements).
Digest MicroBatchDigest(const data::PackedBatch& b);

// Runs the state's next step and chains its record into st.chain: returns the trajectory line.
std::string StepAndChain(StepEngine& engine, TrainState& st, StepResult& r);

}  // namespace trail::train
