// For tests only (never included by library or tool code): reads of StepEngine and
// ShardedParameters internals that tests compare against, so the shipped classes carry no
// test-only methods. Both classes name TrainTestAccess a friend.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/params.h"
#include "train/sharded_params.h"
#include "train/state.h"
#include "train/step.h"

namespace trail::train {

struct TrainTestAccess {
  // Gives process 0's `st` every range of the moments (the whole state in one place, to compare
  // it; checkpoints are written by every process and need no gather); other processes' `st` is
  // left as it is. Nothing to do in a job of one process. Collective.
  static void GatherMoments(StepEngine& e, TrainState& st) {
    const int P = e.comm_.size(), me = e.comm_.rank();
    if (P == 1) return;
    auto len = [&](int q) { return e.flat_bounds_[q + 1] - e.flat_bounds_[q]; };
    std::vector<float> mine(e.m_.numel() + e.v_.numel());
    e.backend_->CopyToHost(e.m_.view(), mine.data());
    e.backend_->CopyToHost(e.v_.view(), mine.data() + e.m_.numel());
    std::vector<std::vector<float>> in(P);
    std::vector<std::span<const float>> send(P);
    std::vector<std::span<float>> recv(P);
    if (me != 0) send[0] = mine;
    for (int p = 1; p < P && me == 0; ++p) {
      in[p].resize(2 * len(p));
      recv[p] = in[p];
    }
    e.comm_.AllToAll(send, recv);
    if (me != 0) return;
    in[0] = std::move(mine);
    for (int p = 0; p < P; ++p) {
      const std::span<const float> got(in[p]);
      e.flat_.Write(*e.backend_, st.adam_m().tensors(), e.flat_bounds_[p], got.first(len(p)));
      e.flat_.Write(*e.backend_, st.adam_v().tensors(), e.flat_bounds_[p], got.subspan(len(p)));
    }
  }

  // The step's reduced gradient as last used by the update (clipped if clipping applied); a job
  // of one process only.
  static void CopyLastGradient(const StepEngine& e, model::ParameterSet& out) {
    TRAIL_CHECK(e.comm_.size() == 1, "the whole gradient is only held by a job of one process");
    std::vector<float> host(e.last_grad_.size());
    e.backend_->CopyToHost(
        TensorView::Contiguous(e.last_grad_.data(), DType::kF32, e.backend_->device(),
                               {static_cast<int64_t>(host.size())}),
        host.data());
    e.flat_.Write(out.backend(), out.tensors(), 0, host);
  }

  // Whether the shards gather the next unit ahead on a thread.
  static bool GathersAhead(const ShardedParameters& s) { return s.ahead_; }
};

}  // namespace trail::train
