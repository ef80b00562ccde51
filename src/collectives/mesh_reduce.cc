#include "collectives/mesh_reduce.h"

namespace trail::collectives {

float* EvaluateTree(const ReductionTree& tree, int node, std::vector<float*>& have, int64_t count) {
  if (have[node] != nullptr) {
    float* out = have[node];
    have[node] = nullptr;  // each partial is one operand of the tree
    return out;
  }
  const ReductionTree::Node& n = tree.node(node);
  TRAIL_CHECK(n.left >= 0, "mesh reduction: no partial covers logical rank ", n.first);
  float* left = EvaluateTree(tree, n.left, have, count);
  const float* right = EvaluateTree(tree, n.right, have, count);
  for (int64_t i = 0; i < count; ++i) left[i] = left[i] + right[i];
  return left;
}

std::span<float> ReduceScatterMesh(Communicator& comm, const ReductionTree& tree,
                                   std::span<const int64_t> bounds,
                                   std::span<const int> local_roots, const PartialReader& read,
                                   MeshBuffers& buffers) {
  const int P = comm.size(), me = comm.rank();
  TRAIL_CHECK(static_cast<int>(bounds.size()) == P + 1, "mesh reduction: ", bounds.size(),
              " range bounds for ", P, " processes");
  auto range_len = [&](int q) { return bounds[q + 1] - bounds[q]; };
  std::vector<std::vector<float>>& out = buffers.send;
  std::vector<std::vector<float>>& in = buffers.recv;
  out.resize(P), in.resize(P);
  // To q: range q of each local partial, one after the other.
  std::vector<std::span<const float>> send(P);
  for (int q = 0; q < P; ++q) {
    if (q == me) continue;  // read straight into the receive buffer below
    out[q].resize(local_roots.size() * range_len(q));
    for (size_t i = 0; i < local_roots.size(); ++i) {
      read(i, bounds[q], range_len(q), out[q].data() + i * range_len(q));
    }
    send[q] = out[q];
  }
  // From p: my range of each of p's local roots.
  std::vector<std::vector<int>> roots_of(P);
  std::vector<std::span<float>> recv(P);
  for (int p = 0; p < P; ++p) {
    roots_of[p] = tree.LocalRoots(LogicalRanksOf(p, P, tree.ranks()));
    in[p].resize(roots_of[p].size() * range_len(me));
    if (p != me) recv[p] = in[p];
  }
  TRAIL_CHECK(roots_of[me] == std::vector<int>(local_roots.begin(), local_roots.end()),
              "mesh reduction: this process's partials are not its local roots");
  for (size_t i = 0; i < local_roots.size(); ++i) {
    read(i, bounds[me], range_len(me), in[me].data() + i * range_len(me));
  }
  comm.AllToAll(send, recv);
  if (range_len(me) == 0) return {};  // more processes than chunks: nothing to reduce here
  std::vector<float*> have(tree.size(), nullptr);
  for (int p = 0; p < P; ++p) {
    for (size_t i = 0; i < roots_of[p].size(); ++i) {
      have[roots_of[p][i]] = in[p].data() + i * range_len(me);
    }
  }
  return {EvaluateTree(tree, tree.root(), have, range_len(me)), static_cast<size_t>(range_len(me))};
}

void AllGatherRanges(Communicator& comm, std::span<const int64_t> bounds,
                     std::span<const float> mine,
                     const std::function<void(int64_t begin, std::span<const float>)>& store,
                     MeshBuffers& buffers) {
  const int P = comm.size(), me = comm.rank();
  TRAIL_CHECK(static_cast<int64_t>(mine.size()) == bounds[me + 1] - bounds[me],
              "all-gather: ", mine.size(), " elements for a range of ",
              bounds[me + 1] - bounds[me]);
  std::vector<std::span<const float>> send(P, mine);
  std::vector<std::vector<float>>& in = buffers.recv;
  in.resize(P);
  std::vector<std::span<float>> recv(P);
  for (int p = 0; p < P; ++p) {
    if (p != me) in[p].resize(bounds[p + 1] - bounds[p]);
    if (p != me) recv[p] = in[p];
  }
  send[me] = {};  // nothing to copy to itself
  comm.AllToAll(send, recv);
  for (int p = 0; p < P; ++p) {
    if (p != me) store(bounds[p], in[p]);
  }
}

}  // namespace trail::collectives
