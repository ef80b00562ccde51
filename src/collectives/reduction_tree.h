// The order in which the gradients of a logical mesh's R × S ranks are added (Open-1B appendix
// A), as a binary tree over logical ranks k = r·S + s:
//   - inside replica r, the ascending running sum over its shards (A.2):
//       ((G(r,0) + G(r,1)) + G(r,2)) + …
//   - across replicas, TreeFold (A.1, tree_fold.h) over the replica sums: recursive doubling
//     with the lower replica on the left; R = 7 gives ((0+1)+(2+3)) + ((4+5)+6).
// Every inner node is `left + right`, element by element, its left operand holding the lower
// ranks. A leaf G(r,s) is that rank's own running sum over its micro-batches (g_0, then + g_m).
//
// Which process computes a node never changes its bits, so processes can split the work any
// way: a process owning ranks [begin, end) adds up on its own every node whose leaves all lie in
// that range (its local roots), and the rest is evaluated where the data meets (mesh_reduce.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::collectives {

struct RankRange {
  int64_t begin = 0, end = 0;  // logical ranks [begin, end)
  int64_t size() const { return end - begin; }
};

// The logical ranks process p of P owns: [⌊p·K/P⌋, ⌊(p+1)·K/P⌋) — contiguous, sizes differing by
// at most one (6 ranks on 4 processes: 1, 2, 1, 2).
RankRange LogicalRanksOf(int64_t process, int64_t processes, int64_t logical_ranks);

class ReductionTree {
 public:
  struct Node {
    int left = -1, right = -1;  // children (-1 for a leaf)
    int parent = -1;
    int64_t first = 0, last = 0;  // the logical ranks below it: [first, last)
  };

  ReductionTree(int64_t replicas, int64_t shards);
  int64_t ranks() const { return ranks_; }
  // Nodes 0..ranks()-1 are the leaves, node k holding logical rank k.
  const Node& node(int i) const { return nodes_[i]; }
  int root() const { return root_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  // The maximal nodes whose leaves all lie in `owned`, in leaf order.
  std::vector<int> LocalRoots(RankRange owned) const;
  // The sum as a string of rank numbers, e.g. "((0+1)+(2+3))" — for tests and docs.
  std::string Describe(int node) const;

 private:
  int Add(int left, int right);
  int64_t ranks_ = 0;
  int root_ = 0;
  std::vector<Node> nodes_;
};

}  // namespace trail::collectives
