// A state's tensors (parameters, gradients or moments, in canonical order) seen as one flat
// vector cut into the fixed chunks of core/state_hash.h: copying flat ranges in and out, and
// the chunk leaves and root of the state hash for any chunk range. The step engine uses it to
// move process ranges (collectives/mesh_reduce.h) and to hash only the chunks a process owns. The
// tensors live on a backend's device: Read and Write are the explicit device-to-host and
// host-to-device boundary the collectives cross, and leaves are hashed on the device.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/device.h"
#include "core/state_hash.h"
#include "repops/backend.h"

namespace trail::train {

class FlatState {
 public:
  explicit FlatState(std::span<const int64_t> tensor_sizes);
  const ChunkLayout& layout() const { return layout_; }

  // Copies flat elements [begin, begin + count) of `tensors` (on be's device) to the host
  // array out (any range inside the state), and host values back.
  void Read(repops::Backend& be, const std::vector<DeviceTensor>& tensors, int64_t begin,
            int64_t count, float* out) const;
  void Write(repops::Backend& be, std::vector<DeviceTensor>& tensors, int64_t begin,
             std::span<const float> values) const;
  // Leaves of chunks [c0, c1), hashed on be's device: of `tensors`, or of a device buffer
  // holding flat [FlatBegin(c0), ...).
  std::vector<Digest> Leaves(repops::Backend& be, const std::vector<DeviceTensor>& tensors,
                             int64_t c0, int64_t c1) const;
  std::vector<Digest> Leaves(repops::Backend& be, const float* range, int64_t c0, int64_t c1) const;
  // SumSq of each of chunks [c0, c1) of a device buffer holding them (as Leaves), in one op.
  std::vector<float> ChunkSumSqs(repops::Backend& be, const float* range, int64_t c0,
                                 int64_t c1) const;
  // The state hash from all leaves in chunk order; names, dtypes and shapes from `tensors`.
  Digest Root(std::span<const TensorMeta> tensors, std::span<const Digest> leaves) const {
    return StateRootFromLeaves(tensors, layout_, leaves);
  }
  // The first chunk starting at flat offset `flat` (which must be a chunk boundary).
  int64_t ChunkAt(int64_t flat) const;

 private:
  // The chunks [c0, c1) of a device buffer holding them back to back from chunk c0's start.
  std::vector<repops::LeafChunk> RangeChunks(const float* range, int64_t c0, int64_t c1) const;
  // fn(tensor, offset in tensor, count, flat offset) for each tensor's piece of [begin, +count).
  void ForEachPiece(int64_t begin, int64_t count,
                    const std::function<void(size_t, int64_t, int64_t, int64_t)>& fn) const;
  ChunkLayout layout_;
  std::vector<int64_t> tensor_begin_;  // flat offset of each tensor, then the total
};

}  // namespace trail::train
