// The sharded half of a step: on this process's range of whole chunks, the gradient norm's
// partial sums, clipping, AdamW, the all-gather of the updated parameters, and the chunk leaves
// of the state hashes; what every process needs of the others' ranges is gathered.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/timing.h"
#include "repops/optim.h"
#include "train/step.h"
#include "train/trajectory.h"

namespace trail::train {
namespace {

using Clock = std::chrono::steady_clock;

float Median(const std::deque<float>& v) {
  std::vector<float> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) * 0.5f;
}

}  // namespace

float* StepEngine::GradientOnDevice(std::span<float> grad) {
  if (backend_->allocator().is_host_memory()) return grad.data();
  if (grad_device_.numel() < static_cast<int64_t>(grad.size())) {
    grad_device_ = repops::AllocateOn<float>(*backend_, static_cast<int64_t>(grad.size()));
  }
  backend_->CopyFromHost(grad.data(), grad_device_.view({static_cast<int64_t>(grad.size())}));
  return grad_device_.data<float>();
}

void StepEngine::UpdateRange(TrainState& st, StepResult& r, float* g) {
  repops::Backend& be = *backend_;
  const int me = comm_.rank();
  const int64_t c0 = chunk_bounds_[me], c1 = chunk_bounds_[me + 1], base = flat_bounds_[me];
  // Norm: SumSq of each chunk, added in chunk order by every process.
  struct ChunkSums {
    float sum_sq;
    Digest leaf;
  };
  const auto th = Clock::now();
  const std::vector<Digest> leaves = flat_.Leaves(be, g, c0, c1);
  r.hash_seconds += SecondsSince(th);
  const std::vector<float> sum_sqs = flat_.ChunkSumSqs(be, g, c0, c1);
  std::vector<ChunkSums> mine;
  for (int64_t c = c0; c < c1; ++c) mine.push_back({sum_sqs[c - c0], leaves[c - c0]});
  const std::vector<ChunkSums> all = collectives::AllGatherItems<ChunkSums>(comm_, mine);
  float total = 0.0f;
  std::vector<Digest> all_leaves;
  for (const ChunkSums& s : all) total = total + s.sum_sq, all_leaves.push_back(s.leaf);
  r.grad_norm = std::sqrt(total);
  r.grads_hash = flat_.Root(param_metas_, all_leaves);

  const OptimizerConfig& oc = recipe_.optimizer;
  if (r.target_tokens == 0) {
    r.skip = SkipReason::kNoTargets;
  } else if (!std::isfinite(r.grad_norm)) {
    r.skip = SkipReason::kNonFinite;
  } else if (oc.spike_skip_factor > 0 &&
             static_cast<int64_t>(st.norm_history.size()) >= oc.spike_min_history &&
             r.grad_norm > oc.spike_skip_factor * Median(st.norm_history)) {
    r.skip = SkipReason::kSpike;
  }
  r.lr = recipe_.schedule.At(st.tokens);
  if (r.skipped()) return;
  st.norm_history.push_back(r.grad_norm);
  while (static_cast<int64_t>(st.norm_history.size()) > oc.spike_window) {
    st.norm_history.pop_front();
  }
  r.clip_coef = repops::ClipCoefficient(r.grad_norm, oc.clip_norm);
  if (r.clip_coef < 1.0f) be.Scale(g, range_end() - range_begin(), r.clip_coef);
  ++st.optimizer_updates;
  // AdamW on this range, one call per run of chunks of the same tensor (elementwise: any
  // split gives the same bits).
  for (int64_t c = c0; c < c1;) {
    const int64_t run_begin = c;
    const StateChunk& first = flat_.layout().chunks()[c];
    int64_t count = 0;
    for (; c < c1 && flat_.layout().chunks()[c].tensor == first.tensor; ++c) {
      count += flat_.layout().chunks()[c].count;
    }
    const DeviceTensor& t = st.params.tensors()[first.tensor];
    repops::AdamWHyper h{r.lr, oc.beta1, oc.beta2, oc.eps, t.rank() == 2 ? oc.weight_decay : 0.0f};
    be.AdamWStep(Param(st, run_begin), g + (first.flat - base), Moment(st, 0, run_begin),
                 Moment(st, 1, run_begin), count, h, st.optimizer_updates);
  }
  if (comm_.size() == 1 || shards_) return;  // sharded: each unit is gathered where it is used
  auto& P = st.params.tensors();
  updated_.resize(range_end() - range_begin());
  flat_.Read(be, P, range_begin(), range_end() - range_begin(), updated_.data());
  collectives::AllGatherRanges(
      comm_, flat_bounds_, updated_,
      [&](int64_t begin, std::span<const float> v) { flat_.Write(be, P, begin, v); },
      gather_buffers_);
}

float* StepEngine::Param(TrainState& st, int64_t c) {
  const StateChunk& ch = flat_.layout().chunks()[c];
  if (shards_) return shards_->range() + (ch.flat - range_begin());
  return st.params.tensors()[ch.tensor].data<float>() + ch.offset;
}

float* StepEngine::Moment(TrainState& st, int which, int64_t c) {
  const StateChunk& ch = flat_.layout().chunks()[c];
  if (!sharded()) {
    model::ParameterSet& set = which == 0 ? st.adam_m() : st.adam_v();
    return set.tensors()[ch.tensor].data<float>() + ch.offset;
  }
  return (which == 0 ? m_ : v_).data<float>() + (ch.flat - range_begin());
}

void StepEngine::HashRange(TrainState& st, StepResult& r) {
  const auto th = Clock::now();
  const int me = comm_.rank();
  const int64_t c0 = chunk_bounds_[me], c1 = chunk_bounds_[me + 1];
  struct Leaves {
    Digest params, m, v;
  };
  repops::Backend& be = *backend_;
  const std::vector<Digest> p = shards_ ? flat_.Leaves(be, shards_->range(), c0, c1)
                                        : flat_.Leaves(be, st.params.tensors(), c0, c1);
  const std::vector<Digest> m = sharded() ? flat_.Leaves(be, m_.data<float>(), c0, c1)
                                          : flat_.Leaves(be, st.adam_m().tensors(), c0, c1);
  const std::vector<Digest> v = sharded() ? flat_.Leaves(be, v_.data<float>(), c0, c1)
                                          : flat_.Leaves(be, st.adam_v().tensors(), c0, c1);
  std::vector<Leaves> mine;
  for (size_t i = 0; i < p.size(); ++i) mine.push_back({p[i], m[i], v[i]});
  const std::vector<Leaves> all = collectives::AllGatherItems<Leaves>(comm_, mine);
  std::vector<Digest> lp, lmv;
  for (const Leaves& l : all) lp.push_back(l.params), lmv.push_back(l.m);
  for (const Leaves& l : all) lmv.push_back(l.v);
  r.params_hash = flat_.Root(param_metas_, lp);
  r.optim_hash = StateRootFromLeaves(moment_metas_, moments_layout_, lmv);
  r.state_hashed = true;
  r.hash_seconds += SecondsSince(th);
}

Digest StepEngine::ParamsHash(const TrainState& st) {
  if (!shards_ && !sharded()) return st.params.StateHash();
  const int me = comm_.rank();
  const int64_t c0 = chunk_bounds_[me], c1 = chunk_bounds_[me + 1];
  const std::vector<Digest> mine = shards_ ? flat_.Leaves(*backend_, shards_->range(), c0, c1)
                                           : flat_.Leaves(*backend_, st.params.tensors(), c0, c1);
  return flat_.Root(param_metas_, collectives::AllGatherItems<Digest>(comm_, mine));
}

void StepEngine::VisitParameters(TrainState& st,
                                 const std::function<void(const DeviceTensor&)>& fn) {
  if (!shards_) {
    for (const DeviceTensor& t : st.params.tensors()) fn(t);
    return;
  }
  shards_->ForEachUnit([&](int u) {
    const auto [t0, t1] = st.params.unit_tensors(u);
    for (size_t t = t0; t < t1; ++t) fn(st.params.tensors()[t]);
  });
}

void StepEngine::InitParameters(TrainState& st) {
  if (!shards_) return st.params.InitRandom(recipe_.model);
  std::vector<float> mine(range_end() - range_begin());
  shards_->ForEachLocalUnit(st.params, [&](int u, int64_t begin, int64_t end) {
    st.params.InitUnit(recipe_.model, u);
    const int64_t lo = std::max(begin, range_begin()), hi = std::min(end, range_end());
    if (lo < hi) {
      flat_.Read(*backend_, st.params.tensors(), lo, hi - lo, mine.data() + (lo - range_begin()));
    }
  });
  shards_->Adopt(st.params, mine);
}

void StepEngine::SetParameters(TrainState& st, std::span<const Tensor> host) {
  if (!shards_) return st.params.FromHost(host, "the initial parameters");
  // This process's flat range, from the tensors in st.params' order.
  std::vector<float> mine(range_end() - range_begin());
  int64_t flat = 0;
  for (const DeviceTensor& t : st.params.tensors()) {
    const Tensor* h = nullptr;
    for (const Tensor& c : host) h = c.name() == t.name() ? &c : h;
    TRAIL_CHECK(h != nullptr && h->numel() == t.numel(), "the initial parameters lack ", t.name());
    const int64_t lo = std::max(flat, range_begin()), hi = std::min(flat + t.numel(), range_end());
    if (lo < hi) {
      std::copy(h->data<float>() + (lo - flat), h->data<float>() + (hi - flat),
                mine.begin() + (lo - range_begin()));
    }
    flat += t.numel();
  }
  shards_->Adopt(st.params, mine);
}

CheckpointShare StepEngine::CheckpointShareNow(TrainState& st) {
  StepResult r;
  r.step = st.step;
  HashRange(st, r);
  return CheckpointShareOf(st, r);
}

void StepEngine::LoadCheckpointShared(const std::string& dir, const RunIdentity& id,
                                      TrainState& st) {
  TRAIL_CHECK(shards_ != nullptr, "a checkpoint is loaded by ranges only with sharded parameters");
  const int64_t n = range_end() - range_begin();
  const CheckpointRanges c = LoadCheckpointRanges(dir, id, st, param_metas_, range_begin(), n);
  shards_->Adopt(st.params, c.params);
  if (sharded()) {
    KeepMomentRanges(c.m.data(), c.v.data());
    st.ReleaseMoments();
  } else {  // one process: its range is the whole state, and its moments stay in st
    flat_.Write(*backend_, st.adam_m().tensors(), 0, c.m);
    flat_.Write(*backend_, st.adam_v().tensors(), 0, c.v);
  }
  st.ranges_in_engine = true;
  StepResult h;
  HashRange(st, h);  // with every process: the loaded state against meta.json's hashes
  TRAIL_CHECK(h.params_hash == c.params_hash, dir, ": parameter state hash differs from meta.json");
  TRAIL_CHECK(h.optim_hash == c.optim_hash, dir, ": optimizer state hash differs from meta.json");
}

void StepEngine::AdoptState(TrainState& st) {
  if (st.ranges_in_engine) return;  // LoadCheckpointShared, or an earlier call
  if (shards_ && st.params.bound()) {
    std::vector<float> mine(range_end() - range_begin());
    flat_.Read(*backend_, st.params.tensors(), range_begin(), range_end() - range_begin(),
               mine.data());
    shards_->Adopt(st.params, mine);
  } else if (shards_) {  // kept by InitParameters
    TRAIL_CHECK(shards_->params() == &st.params,
                "a state without parameters adopted by a step engine that does not hold them");
  }
  st.ranges_in_engine = shards_ != nullptr || sharded();
  if (!sharded()) return;
  if (st.has_moments()) {
    const int64_t n = range_end() - range_begin();
    std::vector<float> m(n), v(n);
    flat_.Read(*backend_, st.adam_m().tensors(), range_begin(), n, m.data());
    flat_.Read(*backend_, st.adam_v().tensors(), range_begin(), n, v.data());
    KeepMomentRanges(m.data(), v.data());
  } else {
    KeepMomentRanges(nullptr, nullptr);
  }
  st.ReleaseMoments();
}

void StepEngine::KeepMomentRanges(const float* m, const float* v) {
  const int64_t n = range_end() - range_begin();
  m_ = repops::AllocateOn<float>(*backend_, n), v_ = repops::AllocateOn<float>(*backend_, n);
  if (m != nullptr && n > 0) backend_->CopyFromHost(m, m_.view());
  if (v != nullptr && n > 0) backend_->CopyFromHost(v, v_.view());
}

CheckpointShare StepEngine::CheckpointShareOf(const TrainState& st, const StepResult& r) {
  TRAIL_CHECK(r.state_hashed, "step ", r.step, " did not hash the state a checkpoint records");
  CheckpointShare s;
  s.param_metas = param_metas_, s.moment_metas = moment_metas_;
  s.bounds = flat_bounds_;
  s.params_hash = r.params_hash, s.optim_hash = r.optim_hash;
  const int64_t n = range_end() - range_begin();
  s.params.resize(n), s.m.resize(n), s.v.resize(n);
  if (shards_) {
    backend_->CopyToHost(shards_->range_view(), s.params.data());
  } else {
    flat_.Read(*backend_, st.params.tensors(), range_begin(), n, s.params.data());
  }
  if (sharded()) {
    backend_->CopyToHost(m_.view(), s.m.data());
    backend_->CopyToHost(v_.view(), s.v.data());
  } else {
    flat_.Read(*backend_, st.adam_m().tensors(), range_begin(), n, s.m.data());
    flat_.Read(*backend_, st.adam_v().tensors(), range_begin(), n, s.v.data());
  }
  return s;
}

std::string StepAndChain(StepEngine& engine, TrainState& st, StepResult& r) {
  r = engine.Run(st);
  const std::string body = TrajectoryBody(r);
  st.chain = ChainNext(st.chain, body);
  return TrajectoryLine(body, st.chain);
}

}  // namespace trail::train
