#include "train/step.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/timing.h"
#include "repops/optim.h"
#include "train/trajectory.h"
#include "dist/tree_fold.h"

namespace trail::train {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
void HashVector(Sha256Hasher& h, const std::vector<T>& v) {
  h.UpdateU64(v.size());
  h.Update(v.data(), v.size() * sizeof(T));
}

// Everything the model reads from a micro-batch, in a fixed order.
void HashBatch(Sha256Hasher& h, const data::PackedBatch& b) {
  h.UpdateU64(static_cast<uint64_t>(b.rows));
  h.UpdateU64(static_cast<uint64_t>(b.seq_len));
  HashVector(h, b.windows);
  HashVector(h, b.inputs);
  HashVector(h, b.labels);
  HashVector(h, b.doc_ids);
  HashVector(h, b.positions);
  HashVector(h, b.key_valid);
}

// Median of the accepted norms: sorted, middle element (mean of the two middle ones for an
// even count, computed as (a + b) * 0.5f).
float Median(const std::deque<float>& v) {
  std::vector<float> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) * 0.5f;
}

}  // namespace

model::BatchView ViewOf(const data::PackedBatch& b) {
  return {b.rows, b.seq_len, b.inputs.data(), b.labels.data(), b.doc_ids.data(),
          b.positions.data(), b.key_valid.data()};
}

Digest TrainState::OptimizerHash() const {
  std::vector<const Tensor*> ts;
  for (const Tensor& t : adam_m.tensors()) ts.push_back(&t);
  for (const Tensor& t : adam_v.tensors()) ts.push_back(&t);
  return StateDigest(ts);
}

StepEngine::StepEngine(const Recipe& recipe, data::CanonicalStream& stream)
    : recipe_(recipe),
      stream_(stream),
      batcher_(stream),
      model_(recipe.model),
      acts_(recipe.model, stream.manifest().stream.micro_batch_windows, stream.seq_len()),
      micro_grad_(recipe.model) {
  TRAIL_CHECK(stream.seq_len() <= recipe.model.max_seq_len, "the data's windows of ",
              stream.seq_len(), " tokens exceed the model's max_seq_len ",
              recipe.model.max_seq_len);
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
  TRAIL_CHECK(static_cast<int64_t>(stream.manifest().tokenizer.vocab_size) ==
                  recipe.model.vocab_size,
              "the model's vocabulary (", recipe.model.vocab_size,
              ") differs from the data's tokenizer (", stream.manifest().tokenizer.vocab_size, ")");
}

std::unique_ptr<model::ParameterSet> StepEngine::TakeBuffer() {
  if (free_.empty()) return std::make_unique<model::ParameterSet>(recipe_.model);
  auto b = std::move(free_.back());
  free_.pop_back();
  return b;
}

StepResult StepEngine::Run(TrainState& st, LossNormalization norm) {
  const auto t0 = Clock::now();
  StepResult r;
  r.step = st.step;
  const data::WindowRange range = batcher_.schedule().StepWindows(st.step);
  TRAIL_CHECK(range.begin == st.window_cursor, "step ", st.step, " starts at window ",
              range.begin, " by the batch schedule, but the state's cursor is ",
              st.window_cursor, " (a resume that lost or changed its cursor)");
  r.window_begin = range.begin, r.window_end = range.end;
  const data::StepCounts counts = batcher_.CountStep(st.step);
  r.input_tokens = counts.input_tokens, r.target_tokens = counts.target_tokens;
  r.tokens_before = st.tokens;

  const MeshConfig& mesh = recipe_.mesh;
  const int64_t K = mesh.ranks();
  // The step's one average: d loss / d NLL-sum = 1 / Σ valid targets of the whole step.
  const float scale = counts.target_tokens > 0 ? 1.0f / static_cast<float>(counts.target_tokens)
                                               : 0.0f;
  Sha256Hasher batch_hash;
  float nll_acc = 0, lse_acc = 0;
  int64_t valid_acc = 0;
  using Buf = std::unique_ptr<model::ParameterSet>;
  dist::TreeFold<Buf> fold([](Buf& left, const Buf& right) { model::AddParameterSets(*left, *right); });
  auto recycle = [this](Buf&& b) { free_.push_back(std::move(b)); };
  for (int64_t rep = 0; rep < mesh.replicas; ++rep) {
    Buf acc = TakeBuffer();
    bool acc_empty = true;  // the running sum starts as the replica's first micro-batch gradient
    for (int64_t sh = 0; sh < mesh.shards; ++sh) {
      const int64_t rank = rep * mesh.shards + sh;
      const int64_t M = batcher_.NumMicroBatches(st.step, rank, K);
      TRAIL_CHECK(mesh.micro_batches == 0 || M == mesh.micro_batches, "step ", st.step,
                  ": logical rank ", rank, " has ", M, " micro-batches but the recipe's mesh says ",
                  mesh.micro_batches, " (check the data's batch schedule and micro_batch_windows)");
      for (int64_t m = 0; m < M; ++m) {
        batcher_.MicroBatch(st.step, rank, K, m, batch_);
        HashBatch(batch_hash, batch_);
        float mb_scale = scale;
        if (norm == LossNormalization::kMeanOfMeans) {
          const int64_t total_micro = K * M;
          mb_scale = batch_.target_tokens > 0
                         ? (1.0f / float(batch_.target_tokens)) * (1.0f / float(total_micro))
                         : 0.0f;
        }
        model::ParameterSet& out = acc_empty ? *acc : micro_grad_;
        const repops::CrossEntropySums s =
            model_.ForwardBackward(st.params, ViewOf(batch_), mb_scale, acts_, out);
        if (!acc_empty) model::AddParameterSets(*acc, micro_grad_);
        acc_empty = false;
        nll_acc = nll_acc + s.nll_sum;
        lse_acc = lse_acc + s.lse_sq_sum;
        valid_acc += s.valid;
      }
    }
    if (acc_empty) acc->Zero();  // a replica without windows contributes +0
    fold.Push(std::move(acc), recycle);
  }
  Buf grad = fold.Finish(recycle);
  max_resident_ = std::max(max_resident_, fold.max_resident());
  TRAIL_CHECK(valid_acc == counts.target_tokens, "step ", st.step, ": the micro-batches hold ",
              valid_acc, " targets but the step counts ", counts.target_tokens);
  r.batch_hash = batch_hash.Finish();
  r.loss = nll_acc * scale;
  r.z_loss = recipe_.model.z_loss * lse_acc * scale;

  // Global norm over tensors in canonical order, then the spike protocol, then clipping.
  std::vector<repops::GradSpan> spans;
  std::vector<float*> ptrs;
  std::vector<int64_t> sizes;
  for (Tensor& t : grad->tensors()) {
    spans.push_back({t.data<float>(), t.numel()});
    ptrs.push_back(t.data<float>());
    sizes.push_back(t.numel());
  }
  r.grad_norm = repops::GlobalGradNorm(spans);
  const auto th = Clock::now();
  r.grads_hash = grad->StateHash();
  r.hash_seconds += SecondsSince(th);
  const OptimizerConfig& oc = recipe_.optimizer;
  if (counts.target_tokens == 0) {
    r.skipped = true, r.skip_reason = "no_targets";
  } else if (!std::isfinite(r.grad_norm)) {
    r.skipped = true, r.skip_reason = "non_finite";
  } else if (oc.spike_skip_factor > 0 &&
             static_cast<int64_t>(st.norm_history.size()) >= oc.spike_min_history &&
             r.grad_norm > oc.spike_skip_factor * Median(st.norm_history)) {
    r.skipped = true, r.skip_reason = "spike";
  }
  r.lr = recipe_.schedule.At(st.tokens);
  if (!r.skipped) {
    st.norm_history.push_back(r.grad_norm);
    while (static_cast<int64_t>(st.norm_history.size()) > oc.spike_window) {
      st.norm_history.pop_front();
    }
    r.clip_coef = repops::ClipGradNorm(ptrs, sizes, r.grad_norm, oc.clip_norm);
    ++st.optimizer_updates;
    auto& P = st.params.tensors();
    for (size_t i = 0; i < P.size(); ++i) {
      repops::AdamWHyper h{r.lr, oc.beta1, oc.beta2, oc.eps,
                           P[i].rank() == 2 ? oc.weight_decay : 0.0f};
      repops::AdamWStep(P[i].data<float>(), grad->tensors()[i].data<float>(),
                        st.adam_m.tensors()[i].data<float>(), st.adam_v.tensors()[i].data<float>(),
                        P[i].numel(), h, st.optimizer_updates);
    }
  }
  // The step is consumed either way: a skipped batch is not retried.
  st.tokens += counts.input_tokens;
  ++st.step;
  st.window_cursor = range.end;
  const auto th2 = Clock::now();
  r.params_hash = st.params.StateHash();
  r.optim_hash = st.OptimizerHash();
  r.hash_seconds += SecondsSince(th2);
  if (last_grad_) free_.push_back(std::move(last_grad_));
  last_grad_ = std::move(grad);
  r.seconds = SecondsSince(t0);
  return r;
}

std::string StepAndChain(StepEngine& engine, TrainState& st, StepResult& r) {
  r = engine.Run(st);
  const std::string body = TrajectoryBody(r);
  st.chain = ChainNext(st.chain, body);
  return TrajectoryLine(body, st.chain);
}

}  // namespace trail::train
