// An observer of the model's operations: after each operation of the forward and backward
// pass the transformer (transformer.h) hands the observer the operation's output. Audit traces
// hash these outputs to name the first operation where two executions of a step diverge.
// Observing never changes a result; without an observer the model does no extra work.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "repops/backend.h"

namespace trail::model {

// An operation's output where it lives: on the model's device, readable by the host only
// through the backend's copy. Valid only during the Output call.
struct OpOutput {
  TensorView view;  // float32, contiguous, row-major
  repops::Backend* backend = nullptr;
  // The elements copied to the host (the one device-to-host copy an observer makes).
  std::vector<float> ToHost() const {
    std::vector<float> out(static_cast<size_t>(view.numel()));
    backend->CopyToHost(view, out.data());
    return out;
  }
  std::vector<int64_t> shape() const {
    return {view.shape.begin(), view.shape.begin() + view.rank};
  }
};

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // op: the operation ("matmul", "rmsnorm", "attention", ...); layer: its layer (-1 outside
  // the layers); tensor: the output's name ("q_proj", "d_logits", "g.wq", ...); out: the
  // output's elements, row-major with out.view's shape.
  virtual void Output(const char* op, int64_t layer, const char* tensor, const OpOutput& out) = 0;
};

}  // namespace trail::model
