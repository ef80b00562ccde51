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
//
// Gathering ahead: within a pass (BeginPass), in a job of several processes, on the host device,
// where the communicator may be called from another thread and the process has a CPU its kernel
// threads leave idle, a thread of this object gathers the pass's next unit while the model
// computes with the current one (at most one unit ahead), so a layer's compute hides the next
// layer's gather. The main thread makes no other collective call while a pass runs.
// TRAIL_GATHER_AHEAD=0 or 1 turns it off or on whatever the CPUs (for measurements); the bits
// are the same either way.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <thread>
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
  ~ShardedParameters() override;

  // Keeps `mine`, the host values of this process's range of `params`, on the device and
  // unbinds every tensor of `params`: from now on it has its units only while acquired.
  void Adopt(model::ParameterSet& params, std::span<const float> mine);
  const model::ParameterSet* params() const { return params_; }
  // This process's range on the backend's device, flat elements [range_begin(), ...).
  float* range() const { return range_.data<float>(); }
  int64_t range_begin() const { return bounds_[comm_.rank()]; }
  TensorView range_view() const { return range_.view(); }

  void BeginPass(bool backward) override;
  void Acquire(int unit) override;
  void Release(int unit) override;
  // The acquisitions of one forward (and backward) this process does not compute.
  void IdlePass(bool backward);
  // fn(unit) with the unit acquired, for every unit in order (collective; outside a pass).
  void ForEachUnit(const std::function<void(int unit)>& fn);
  // fn(unit, flat begin, flat end) with the unit's tensors of `params` (unbound) bound to local
  // memory of undefined values, one unit at a time (not collective): to initialize a set this
  // process never holds whole (fn fills the unit and keeps what it needs), then Adopt.
  void ForEachLocalUnit(model::ParameterSet& params,
                        const std::function<void(int unit, int64_t begin, int64_t end)>& fn);

  // Whether passes gather ahead on a thread (see above).
  // The bytes of the gathered units' memory, held, gathered ahead or kept for reuse (the memory
  // sharding adds).
  int64_t gathered_bytes() const;
  // The most gathered_bytes() comes to for a model of this layout: one buffer per unit size,
  // and a second of a layer's (the next layer gathered while one is used) — when the
  // embedding's, the head's and a layer's units differ in size, as in every preset.
  static int64_t PlannedGatheredBytes(const model::ParameterSet& layout);

 private:
  friend struct TrainTestAccess;  // train/test_access.h: what tests read, never shipped
  struct Unit {
    int64_t flat_begin = 0, flat_end = 0;  // in the flat vector
    std::vector<int64_t> offsets;          // each tensor's offset in the unit's buffer
    int64_t buffer_floats = 0;             // with each tensor 64-byte aligned
    bool packed = true;                    // offsets are the flat ones (no padding needed)
  };
  // A unit gathered: into its buffer (packed, on the host), else into `staged` (flat order).
  struct Fetched {
    Buffer buf;
    std::vector<float> staged;
  };
  static std::vector<Unit> UnitsOf(const model::ParameterSet& layout);
  bool InPass() const { return taken_ < order_.size(); }
  // Receives unit u whole into `out` (floats in flat order).
  void Gather(const Unit& u, float* out);
  Fetched Fetch(int unit);  // a buffer for the unit, filled by Gather
  // The unit's tensors bound to f's buffer (staged values copied in first).
  void Bind(int unit, Fetched f);
  Buffer TakeBuffer(int64_t floats);  // callers hold mu_
  void GatherAhead();                 // the gathering thread

  collectives::Communicator& comm_;
  repops::Backend& be_;
  std::vector<int64_t> bounds_;
  std::vector<Unit> units_;
  std::vector<size_t> first_tensor_;  // unit u's tensors: [first_tensor_[u], first_tensor_[u+1])
  model::ParameterSet* params_ = nullptr;
  Buffer range_;
  std::map<int, Buffer> held_;                    // acquired units
  std::map<int64_t, std::vector<Buffer>> spare_;  // released buffers by size, for reuse
  std::vector<float> own_piece_;                  // my piece on the host, off the host device
  int64_t allocated_bytes_ = 0;
  // The pass: its acquisitions in order, how many were taken, and (gathering ahead) how many
  // the thread gathered, ready_ holding those not yet taken.
  bool ahead_ = false;
  std::vector<int> order_;
  size_t taken_ = 0, gathered_ = 0;
  std::deque<Fetched> ready_;
  mutable std::mutex mu_;  // the pass's counters, ready_, spare_, allocated_bytes_
  std::condition_variable cv_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace trail::train
