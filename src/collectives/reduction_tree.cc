#include "collectives/reduction_tree.h"

#include "core/error.h"
#include "collectives/tree_fold.h"

namespace trail::collectives {

RankRange LogicalRanksOf(int64_t process, int64_t processes, int64_t logical_ranks) {
  TRAIL_CHECK(processes >= 1 && process >= 0 && process < processes, "process ", process, " of ",
              processes);
  return {process * logical_ranks / processes, (process + 1) * logical_ranks / processes};
}

ReductionTree::ReductionTree(int64_t replicas, int64_t shards) : ranks_(replicas * shards) {
  TRAIL_CHECK(replicas >= 1 && shards >= 1, "a mesh needs at least one replica and one shard, got ",
              replicas, " x ", shards);
  for (int64_t k = 0; k < ranks_; ++k) nodes_.push_back({-1, -1, -1, k, k + 1});
  TreeFold<int> fold([this](int& left, const int& right) { left = Add(left, right); });
  for (int64_t r = 0; r < replicas; ++r) {
    int acc = static_cast<int>(r * shards);
    for (int64_t s = 1; s < shards; ++s) acc = Add(acc, static_cast<int>(r * shards + s));
    fold.Push(acc);
  }
  root_ = fold.Finish();
}

int ReductionTree::Add(int left, int right) {
  TRAIL_CHECK(nodes_[left].last == nodes_[right].first, "reduction tree: non-adjacent operands");
  nodes_.push_back({left, right, -1, nodes_[left].first, nodes_[right].last});
  const int id = static_cast<int>(nodes_.size()) - 1;
  nodes_[left].parent = nodes_[right].parent = id;
  return id;
}

std::vector<int> ReductionTree::LocalRoots(RankRange owned) const {
  std::vector<int> out;
  for (int64_t k = owned.begin; k < owned.end;) {
    int n = static_cast<int>(k);
    // Climb while the parent's leaves stay inside the range.
    while (nodes_[n].parent >= 0 && nodes_[nodes_[n].parent].first >= owned.begin &&
           nodes_[nodes_[n].parent].last <= owned.end) {
      n = nodes_[n].parent;
    }
    out.push_back(n);
    k = nodes_[n].last;
  }
  return out;
}

std::string ReductionTree::Describe(int node) const {
  const Node& n = nodes_[node];
  if (n.left < 0) return std::to_string(n.first);
  return "(" + Describe(n.left) + "+" + Describe(n.right) + ")";
}

}  // namespace trail::collectives
