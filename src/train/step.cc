#include "train/step.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/timing.h"
#include "repops/devices.h"

namespace trail::train {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
void HashVector(Sha256Hasher& h, const std::vector<T>& v) {
  h.UpdateU64(v.size());
  h.Update(v.data(), v.size() * sizeof(T));
}

std::vector<int64_t> ToFlat(const ChunkLayout& layout, const std::vector<int64_t>& chunk_bounds) {
  std::vector<int64_t> out;
  for (int64_t c : chunk_bounds) out.push_back(layout.FlatBegin(c));
  return out;
}

std::vector<int64_t> SizesOf(const model::ParameterSet& p, int copies) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < copies; ++i)
    for (const DeviceTensor& t : p.tensors()) sizes.push_back(t.numel());
  return sizes;
}

// The longest window the data gives, checked against the model's RoPE table before anything is
// planned for it.
int64_t CheckedMaxSeqLen(const Recipe& recipe, const data::CanonicalStream& stream) {
  TRAIL_CHECK(stream.max_seq_len() <= recipe.model.max_seq_len, "the data's ",
              stream.manifest().stream.seq_len_phases.empty() ? "" : "longest ", "windows of ",
              stream.max_seq_len(), " tokens exceed the model's max_seq_len ",
              recipe.model.max_seq_len);
  return stream.max_seq_len();
}

}  // namespace

Digest MicroBatchDigest(const data::PackedBatch& b) {
  Sha256Hasher h;
  h.UpdateU64(static_cast<uint64_t>(b.rows));
  h.UpdateU64(static_cast<uint64_t>(b.seq_len));
  HashVector(h, b.windows);
  HashVector(h, b.inputs);
  HashVector(h, b.labels);
  HashVector(h, b.doc_ids);
  HashVector(h, b.positions);
  HashVector(h, b.key_valid);
  return h.Finish();
}

const char* SkipReasonName(SkipReason r) {
  switch (r) {
    case SkipReason::kNone:
      return "";
    case SkipReason::kNoTargets:
      return "no_targets";
    case SkipReason::kNonFinite:
      return "non_finite";
    case SkipReason::kSpike:
      return "spike";
  }
  return "";
}

model::BatchView ViewOf(const data::PackedBatch& b) {
  return {b.rows,           b.seq_len,          b.inputs.data(),   b.labels.data(),
          b.doc_ids.data(), b.positions.data(), b.key_valid.data()};
}

Digest TrainState::OptimizerHash() const {
  return model::StateHashOf(backend(), {&adam_m(), &adam_v()});
}

StepEngine::StepEngine(const Recipe& recipe, data::CanonicalStream& stream)
    : StepEngine(recipe, stream, collectives::SingleProcess()) {}

StepEngine::StepEngine(const Recipe& recipe, data::CanonicalStream& stream,
                       collectives::Communicator& comm, const Device& device)
    : StepEngine(recipe, stream, comm, repops::MakeBackend(device)) {}

StepEngine::StepEngine(const Recipe& recipe, data::CanonicalStream& stream,
                       collectives::Communicator& comm, std::unique_ptr<repops::Backend> backend)
    : recipe_(recipe),
      stream_(stream),
      comm_(comm),
      batcher_(stream),
      backend_(std::move(backend)),
      model_(recipe.model, *backend_),
      acts_(recipe.model, stream.manifest().stream.micro_batch_windows,
            CheckedMaxSeqLen(recipe, stream), *backend_, recipe.loop.recompute),
      layout_(recipe.model, *backend_, "", model::Memory::kUnbound),
      tree_(recipe.mesh.replicas, recipe.mesh.shards),
      flat_(SizesOf(layout_, 1)),
      moments_layout_(SizesOf(layout_, 2)) {
  TRAIL_CHECK(comm.size() <= recipe.mesh.ranks(), "the job has ", comm.size(),
              " processes but the recipe's mesh only ", recipe.mesh.ranks(), " logical ranks (",
              recipe.mesh.replicas, " replicas x ", recipe.mesh.shards,
              " shards): start at most that many processes");
  own_ = collectives::LogicalRanksOf(comm.rank(), comm.size(), recipe.mesh.ranks());
  for (const char* prefix : {"", "adam_m.", "adam_v."}) {
    for (const DeviceTensor& t : layout_.tensors()) {
      (*prefix ? moment_metas_ : param_metas_).push_back({prefix + t.name(), t.dtype(), t.shape()});
    }
  }
  chunk_bounds_ = flat_.layout().Split(comm.size());
  flat_bounds_ = ToFlat(flat_.layout(), chunk_bounds_);
  if (recipe.mesh.shard_params) {
    shards_ = std::make_unique<ShardedParameters>(comm, *backend_, layout_, flat_bounds_);
    model_.set_residency(shards_.get());
  }
  const data::StreamConfig& sc = stream.manifest().stream;
  TRAIL_CHECK(sc.positions == data::PositionMode::kWindow ||
                  (sc.chunking.max_tokens > 0 &&
                   sc.chunking.boundary == data::ChunkBoundary::kIndependent &&
                   int64_t{sc.chunking.max_tokens} < recipe.model.max_seq_len),
              "the data's positions are document offsets, which reach ",
              sc.chunking.max_tokens == 0 ? std::string("any document length")
                                          : std::to_string(sc.chunking.max_tokens),
              ", but the model's RoPE covers ", recipe.model.max_seq_len,
              " positions: chunk documents below max_seq_len (independent pieces) or use "
              "window positions");
  // More rows than token ids is a padded vocabulary (docs/training.md, "Recipes").
  TRAIL_CHECK(
      static_cast<int64_t>(stream.manifest().tokenizer.vocab_size) <= recipe.model.vocab_size,
      "the model's vocabulary (", recipe.model.vocab_size,
      ") is smaller than the data's tokenizer (", stream.manifest().tokenizer.vocab_size, ")");
}

std::unique_ptr<model::ParameterSet> StepEngine::TakeBuffer() {
  if (free_.empty()) return std::make_unique<model::ParameterSet>(recipe_.model, *backend_);
  auto b = std::move(free_.back());
  free_.pop_back();
  return b;
}

std::vector<MicroRecord> StepEngine::RunLocalRanks(const TrainState& st, float scale,
                                                   std::vector<std::pair<int, Buf>>& partials) {
  const MeshConfig& mesh = recipe_.mesh;
  const int64_t K = mesh.ranks();
  collectives::LocalFold<Buf> fold(tree_, own_,
                                   [](Buf& l, Buf& r) { model::AddParameterSets(*l, *r); });
  auto recycle = [this](Buf&& b) { free_.push_back(std::move(b)); };
  std::vector<MicroRecord> recs;
  // st.params do not change until the update: every micro-batch of the step multiplies the
  // same int8-quantized weights, quantized once.
  struct Hold {
    model::Activations& a;
    explicit Hold(model::Activations& acts) : a(acts) { a.HoldQuantizedWeights(true); }
    ~Hold() { a.HoldQuantizedWeights(false); }
  } hold(acts_);
  for (int64_t rank = own_.begin; rank < own_.end; ++rank) {
    const int64_t M = batcher_.NumMicroBatches(st.step, rank, K);
    TRAIL_CHECK(mesh.micro_batches == 0 || M == mesh.micro_batches, "step ", st.step,
                ": logical rank ", rank, " has ", M, " micro-batches but the recipe's mesh says ",
                mesh.micro_batches, " (check the data's batch schedule and micro_batch_windows)");
    Buf acc = TakeBuffer();
    for (int64_t m = 0; m < M; ++m) {
      batcher_.MicroBatch(st.step, rank, K, m, batch_);
      const Digest batch_digest = MicroBatchDigest(batch_);
      if (observer_ != nullptr) observer_->BeginMicroBatch(rank, m, batch_digest);
      // The rank's running sum starts as its first micro-batch's gradient.
      // Later ones go to a second buffer, allocated only for ranks of several micro-batches.
      if (m == 1 && !micro_grad_) micro_grad_ = TakeBuffer();
      model::ParameterSet& out = m == 0 ? *acc : *micro_grad_;
      const repops::CrossEntropySums s =
          model_.ForwardBackward(st.params, ViewOf(batch_), scale, acts_, out);
      if (m > 0) model::AddParameterSets(*acc, *micro_grad_);
      recs.push_back({s.nll_sum, s.lse_sq_sum, s.valid, batch_digest});
    }
    if (M == 0) acc->Zero();  // a rank without windows contributes +0
    fold.Push(rank, std::move(acc), recycle);
  }
  if (shards_) {  // every process gathers the units of as many passes as the busiest computes
    const std::vector<int64_t> passes = PassesByProcess(st.step);
    const int64_t most = *std::max_element(passes.begin(), passes.end());
    for (int64_t i = passes[comm_.rank()]; i < most; ++i) shards_->IdlePass(/*backward=*/true);
  }
  max_resident_ = std::max(max_resident_, fold.max_resident());
  partials = std::move(fold.partials());
  return recs;
}

std::vector<int64_t> StepEngine::PassesByProcess(int64_t step) const {
  const int64_t K = recipe_.mesh.ranks();
  std::vector<int64_t> passes;
  for (int p = 0; p < comm_.size(); ++p) {
    const collectives::RankRange own = collectives::LogicalRanksOf(p, comm_.size(), K);
    int64_t n = 0;
    for (int64_t rank = own.begin; rank < own.end; ++rank) {
      n += batcher_.NumMicroBatches(step, rank, K);
    }
    passes.push_back(n);
  }
  return passes;
}

StepResult StepEngine::Run(TrainState& st) {
  TRAIL_CHECK((!sharded() && !shards_) || st.ranges_in_engine,
              "a step engine of a job of several processes, or with sharded parameters, runs "
              "only after AdoptState");
  TRAIL_CHECK(!shards_ || shards_->params() == &st.params,
              "the step engine's sharded parameters are another state's");
  const auto t0 = Clock::now();
  const double comm_s0 = comm_.exchange_seconds();
  const int64_t bytes0 = comm_.bytes_sent();
  StepResult r;
  r.step = st.step;
  const data::WindowRange range = batcher_.schedule().StepWindows(st.step);
  TRAIL_CHECK(range.begin == st.window_cursor, "step ", st.step, " starts at window ", range.begin,
              " by the batch schedule, but the state's cursor is ", st.window_cursor,
              " (a resume that lost or changed its cursor)");
  r.window_begin = range.begin, r.window_end = range.end;
  const data::StepCounts counts = batcher_.CountStep(st.step);
  r.input_tokens = counts.input_tokens, r.target_tokens = counts.target_tokens;
  r.tokens_before = st.tokens;
  // The step's one average: d loss / d NLL-sum = 1 / Σ valid targets of the whole step.
  const float scale =
      counts.target_tokens > 0 ? 1.0f / static_cast<float>(counts.target_tokens) : 0.0f;
  std::vector<std::pair<int, Buf>> partials;
  const std::vector<MicroRecord> mine = RunLocalRanks(st, scale, partials);

  // The step's scalars, every micro-batch in mesh order (processes hold ascending rank ranges).
  Sha256Hasher batch_hash;
  static const char kBatchTag[] = "trail.batch.v2";
  batch_hash.Update(kBatchTag, sizeof(kBatchTag) - 1);
  float nll_acc = 0, lse_acc = 0;
  int64_t valid_acc = 0;
  for (const MicroRecord& m : collectives::AllGatherItems<MicroRecord>(comm_, mine)) {
    nll_acc = nll_acc + m.nll_sum;
    lse_acc = lse_acc + m.lse_sq_sum;
    valid_acc += m.valid;
    batch_hash.Update(m.batch.data(), m.batch.size());
  }
  TRAIL_CHECK(valid_acc == counts.target_tokens, "step ", st.step, ": the micro-batches hold ",
              valid_acc, " targets but the step counts ", counts.target_tokens);
  r.batch_hash = batch_hash.Finish();
  r.loss = nll_acc * scale;
  r.z_loss = recipe_.model.z_loss * lse_acc * scale;

  std::vector<int> roots;
  for (const auto& [node, buf] : partials) roots.push_back(node);
  const std::span<float> grad = collectives::ReduceScatterMesh(
      comm_, tree_, flat_bounds_, roots,
      [&](size_t i, int64_t b, int64_t n, float* out) {
        flat_.Read(*backend_, partials[i].second->tensors(), b, n, out);
      },
      reduce_buffers_);
  for (auto& [node, buf] : partials) free_.push_back(std::move(buf));
  float* g = GradientOnDevice(grad);
  UpdateRange(st, r, g);
  // The step is consumed either way: a skipped batch is not retried.
  st.tokens += counts.input_tokens;
  ++st.step;
  st.window_cursor = range.end;
  if (recipe_.loop.CommitsStateAfter(r.step)) HashRange(st, r);
  last_grad_ = {g, grad.size()};
  r.comm_seconds = comm_.exchange_seconds() - comm_s0;
  r.bytes_sent = comm_.bytes_sent() - bytes0;
  r.seconds = SecondsSince(t0);
  return r;
}

}  // namespace trail::train
