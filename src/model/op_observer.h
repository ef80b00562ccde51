// An observer of the model's operations: after each operation of the forward and backward
// pass the transformer (transformer.h) hands the observer the operation's output. Audit traces
// hash these outputs to name the first operation where two executions of a step diverge.
// Observing never changes a result; without an observer the model does no extra work.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace trail::model {

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // op: the operation ("matmul", "rmsnorm", "attention", ...); layer: its layer (-1 outside
  // the layers); tensor: the output's name ("q_proj", "d_logits", "g.wq", ...); data: the
  // output's elements, row-major with `shape`. Valid only during the call.
  virtual void Output(const char* op, int64_t layer, const char* tensor, const float* data,
                      std::initializer_list<int64_t> shape) = 0;
};

}  // namespace trail::model
