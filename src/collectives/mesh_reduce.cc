#include "collectives/mesh_reduce.h"

#include <algorithm>

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

int64_t ReduceScatterBlock(int processes) {
  constexpr int64_t kBudget = int64_t{4} << 20, kMin = int64_t{1} << 16;
  return std::max(kMin, kBudget / std::max(processes, 1));
}

std::span<float> ReduceScatterMesh(Communicator& comm, const ReductionTree& tree,
                                   std::span<const int64_t> bounds,
                                   std::span<const int> local_roots, const PartialReader& read,
                                   MeshBuffers& buffers, int64_t block) {
  const int P = comm.size(), me = comm.rank();
  TRAIL_CHECK(static_cast<int>(bounds.size()) == P + 1, "mesh reduction: ", bounds.size(),
              " range bounds for ", P, " processes");
  if (block <= 0) block = ReduceScatterBlock(P);
  auto range_len = [&](int q) { return bounds[q + 1] - bounds[q]; };
  std::vector<std::vector<int>> roots_of(P);
  for (int p = 0; p < P; ++p) roots_of[p] = tree.LocalRoots(LogicalRanksOf(p, P, tree.ranks()));
  TRAIL_CHECK(roots_of[me] == std::vector<int>(local_roots.begin(), local_roots.end()),
              "mesh reduction: this process's partials are not its local roots");
  // Block j of every range in round j: each buffer holds at most (partials) x block floats.
  int64_t rounds = 0;
  for (int q = 0; q < P; ++q) rounds = std::max(rounds, (range_len(q) + block - 1) / block);
  std::vector<std::vector<float>>& out = buffers.send;
  std::vector<std::vector<float>>& in = buffers.recv;
  out.resize(P), in.resize(P);
  buffers.result.resize(static_cast<size_t>(range_len(me)));
  std::vector<std::span<const float>> send(P);
  std::vector<std::span<float>> recv(P);
  std::vector<float*> have(tree.size(), nullptr);
  for (int64_t j = 0; j < rounds; ++j) {
    auto piece = [&](int q) {  // [begin, begin + n) of range q in this round
      const int64_t b = std::min(j * block, range_len(q));
      return std::pair{bounds[q] + b, std::min(block, range_len(q) - b)};
    };
    // To q: block j of range q of each local partial, one after the other (mine straight into
    // my receive buffer).
    for (int q = 0; q < P; ++q) {
      const auto [begin, n] = piece(q);
      std::vector<float>& buf = q == me ? in[me] : out[q];
      buf.resize(local_roots.size() * n);
      for (size_t i = 0; i < local_roots.size(); ++i) read(i, begin, n, buf.data() + i * n);
      send[q] = q == me ? std::span<const float>{} : std::span<const float>(buf);
    }
    // From p: block j of my range of each of p's local roots.
    const auto [my_begin, my_n] = piece(me);
    for (int p = 0; p < P; ++p) {
      if (p == me) continue;
      in[p].resize(roots_of[p].size() * my_n);
      recv[p] = in[p];
    }
    comm.AllToAll(send, recv);
    if (my_n == 0) continue;
    for (int p = 0; p < P; ++p) {
      for (size_t i = 0; i < roots_of[p].size(); ++i) {
        have[roots_of[p][i]] = in[p].data() + i * my_n;
      }
    }
    const float* sum = EvaluateTree(tree, tree.root(), have, my_n);
    std::copy(sum, sum + my_n, buffers.result.data() + (my_begin - bounds[me]));
  }
  return buffers.result;
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
