// A process's range of the parameters, in a job that shards them ([mesh] shard_params): the
// flat elements [bounds[q], bounds[q+1]) of the canonical flat vector, the same range of whole
// chunks whose moments the process keeps and updates (ChunkLayout::Split, mesh_reduce.h), and
// the gather of one unit at a time (a layer, the embedding, the head: ParameterSet units) for
// the model (model::ParameterResidency).
//
// Acquire(u): every process sends the part of unit u inside its range to every other process
// (Communicator::Exchange, point-to-point), so each holds the unit whole; the unit's tensors of
// the adopted parameter set are bound to that copy until Release(u), which unbinds them and
// keeps the memory for the next unit of its size. Values are copied, never added: the model
// reads exactly the bits a process holding every parameter reads. Every process must acquire
// the same units in the same order (model::AcquireOrder); one with fewer micro-batches than
// another runs IdlePass for each pass it lacks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "collectives/communicator.h"
#include "core/device.h"
#include "model/params.h"
#include "repops/backend.h"

namespace trail::train {

class ShardedParameters : public model::ParameterResidency {
 public:
  // bounds: P + 1 flat offsets of the processes' ranges; `comm`, `be` outlive this.
  ShardedParameters(collectives::Communicator& comm, repops::Backend& be,
                    const model::ParameterSet& layout, std::span<const int64_t> bounds);

  // Keeps `mine`, the host values of this process's range of `params`, on the device and
  // unbinds every tensor of `params`: from now on it has its units only while acquired.
  void Adopt(model::ParameterSet& params, std::span<const float> mine);
  bool adopted() const { return params_ != nullptr; }
  const model::ParameterSet* params() const { return params_; }
  // This process's range on the backend's device: range_size() floats from flat range_begin().
  float* range() const { return range_.data<float>(); }
  int64_t range_begin() const { return bounds_[comm_.rank()]; }
  int64_t range_size() const { return range_.numel(); }
  TensorView range_view() const { return range_.view(); }

  void Acquire(int unit) override;
  void Release(int unit) override;
  // The acquisitions of one forward (and backward) this process does not compute.
  void IdlePass(bool backward);
  // fn(unit) with the unit acquired, for every unit in order (collective).
  void ForEachUnit(const std::function<void(int unit)>& fn);

  // The bytes of the gathered units' memory, held or kept for reuse (the memory sharding
  // adds): a buffer per unit size, and one more of a size while two units of it are held.
  int64_t gathered_bytes() const { return allocated_bytes_; }
  // What gathered_bytes() comes to for a model of this layout: one buffer per unit size (exact
  // whenever the embedding's, the head's and a layer's units differ in size, as in every preset).
  static int64_t PlannedGatheredBytes(const model::ParameterSet& layout);

 private:
  struct Unit {
    int64_t flat_begin = 0, flat_end = 0;  // in the flat vector
    std::vector<int64_t> offsets;          // each tensor's offset in the unit's buffer
    int64_t buffer_floats = 0;             // with each tensor 64-byte aligned
    bool packed = true;                    // offsets are the flat ones (no padding needed)
  };
  static std::vector<Unit> UnitsOf(const model::ParameterSet& layout);
  // Receives unit u whole into `out` (floats in flat order).
  void Gather(const Unit& u, float* out);

  collectives::Communicator& comm_;
  repops::Backend& be_;
  std::vector<int64_t> bounds_;
  std::vector<Unit> units_;
  std::vector<size_t> first_tensor_;  // unit u's tensors: [first_tensor_[u], first_tensor_[u+1])
  model::ParameterSet* params_ = nullptr;
  Buffer range_;
  std::map<int, Buffer> held_;                    // acquired units
  std::map<int64_t, std::vector<Buffer>> spare_;  // released buffers by size, for reuse
  std::vector<float> staging_, own_piece_;        // host copies where the device is not the host
  int64_t allocated_bytes_ = 0;
};

}  // namespace trail::train
