// The collectives of a training step across processes, on the reduction tree's fixed order.
//
// The flat elements of a state (its tensors concatenated in canonical order) are cut into P
// contiguous ranges at chunk boundaries (ChunkLayout::Split(P), core/state_hash.h); process q
// owns range q: it reduces it, keeps its optimizer state, updates it and hashes it.
//
// ReduceScatterMesh is the reduce-scatter of Open-1B appendix A with the all-reduce folded in:
// every process sends range q of each of its local partial sums (LocalFold) to process q, which
// evaluates the rest of the tree on its range — replica sums by ascending shard (A.2), then
// TreeFold across replicas (A.1) — so every element is added in exactly the tree's order,
// whichever processes hold which ranks. A process sends and receives (partials) × N/P floats
// per step, the volume of a ring reduce-scatter, in blocks (ReduceScatterBlock). AllGatherRanges
// then gives every process every range (the updated parameters): N·(P−1)/P floats in and out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "core/error.h"
#include "collectives/communicator.h"
#include "collectives/reduction_tree.h"

namespace trail::collectives {

// A process's leaf gradients streamed into its local partial sums: Push(rank, g) for the
// owned ranks in ascending order combines two partials as soon as they are the left and right
// operands of a node inside the owned range, so a process owning a whole mesh holds at most
// ⌊log2 R⌋ + 2 partials (the TreeFold stack and the replica being summed).
template <class T>
class LocalFold {
 public:
  // combine(left, right) must leave left + right in `left`.
  LocalFold(const ReductionTree& tree, RankRange owned, std::function<void(T&, T&)> combine)
      : tree_(tree), owned_(owned), combine_(std::move(combine)) {}

  // Combined-away partials are handed to `recycle` so their storage can be reused.
  void Push(int64_t rank, T leaf, const std::function<void(T&&)>& recycle) {
    TRAIL_CHECK(rank == next_ && rank < owned_.end, "local fold: rank ", rank, " pushed, ", next_,
                " expected");
    ++next_;
    stack_.emplace_back(static_cast<int>(rank), std::move(leaf));
    while (stack_.size() >= 2) {
      auto& [ln, lv] = stack_[stack_.size() - 2];
      auto& [rn, rv] = stack_.back();
      const int parent = tree_.node(rn).parent;
      if (parent < 0 || tree_.node(parent).left != ln || tree_.node(parent).right != rn) break;
      combine_(lv, rv);
      recycle(std::move(rv));
      stack_.pop_back();
      stack_.back().first = parent;
    }
    resident_ = std::max(resident_, stack_.size());
  }
  // The local roots' partial sums in leaf order (ReductionTree::LocalRoots(owned)).
  std::vector<std::pair<int, T>>& partials() {
    TRAIL_CHECK(next_ == owned_.end, "local fold: ranks ", next_, "..", owned_.end - 1,
                " not pushed");
    return stack_;
  }
  size_t max_resident() const { return resident_; }

 private:
  const ReductionTree& tree_;
  RankRange owned_;
  std::function<void(T&, T&)> combine_;
  int64_t next_ = owned_.begin;
  std::vector<std::pair<int, T>> stack_;
  size_t resident_ = 0;
};

// Copies `count` flat elements of local partial i, starting at flat element `begin`, to `out`.
using PartialReader = std::function<void(size_t i, int64_t begin, int64_t count, float* out)>;

// The buffers of the collectives below, kept from one step to the next so that a step does not
// allocate (and fault in) fresh memory for every message.
struct MeshBuffers {
  std::vector<std::vector<float>> send, recv;
  std::vector<float> result;  // ReduceScatterMesh's reduced range
};

// The block ReduceScatterMesh moves per round by default for P processes: 4 Mi floats / P, at
// least 64 Ki, so its buffers stay near (local partials) x 16 MiB a side whatever the model.
int64_t ReduceScatterBlock(int processes);

// bounds: P + 1 flat element offsets (range q = [bounds[q], bounds[q+1])). Each process passes
// its local roots in leaf order (as LocalFold leaves them) and the mesh's rank ownership is
// LogicalRanksOf(p, P, K). Returns this process's range of the fully reduced gradient, inside
// `buffers` (valid until they are used again). The ranges move in rounds of `block` elements of
// each (0: ReduceScatterBlock(P)): round j sends block j of range q to q, which reduces it, so
// the message buffers never hold more than (partials) x block floats per process. Every
// element is summed in the tree's order either way: the block changes no bit.
std::span<float> ReduceScatterMesh(Communicator& comm, const ReductionTree& tree,
                                   std::span<const int64_t> bounds,
                                   std::span<const int> local_roots, const PartialReader& read,
                                   MeshBuffers& buffers, int64_t block = 0);

// Every process sends its range (`mine`, bounds[rank] .. bounds[rank+1]) to all; store(begin,
// values) is called for every other process's range.
void AllGatherRanges(Communicator& comm, std::span<const int64_t> bounds,
                     std::span<const float> mine,
                     const std::function<void(int64_t begin, std::span<const float>)>& store,
                     MeshBuffers& buffers);

// The reduction order evaluated on one range of received partials (exposed for tests): `have`
// maps a node to its buffer of `count` floats; buffers are consumed (summed into in place).
// Returns the root's buffer.
float* EvaluateTree(const ReductionTree& tree, int node, std::vector<float*>& have, int64_t count);

}  // namespace trail::collectives
