#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/philox.h"
#include "collectives/communicator.h"
#include "collectives/mesh_reduce.h"
#include "collectives/reduction_tree.h"
#include "collectives/thread_group.h"
#include "collectives/tree_fold.h"

namespace trail::collectives {
namespace {

// ---------------------------------------------------------------- TreeFold (appendix A.1)

// Recursive doubling pairs neighbours, lower replica on the left; leftover blocks (the set bits
// of R) are combined smallest level first, lower block on the left. Written out by hand.
const char* kTreeFoldOrder[] = {"0",
                                "(0+1)",
                                "((0+1)+2)",
                                "((0+1)+(2+3))",
                                "(((0+1)+(2+3))+4)",
                                "(((0+1)+(2+3))+(4+5))",
                                "(((0+1)+(2+3))+((4+5)+6))",
                                "(((0+1)+(2+3))+((4+5)+(6+7)))"};

std::string FoldOrder(int R, size_t* resident = nullptr) {
  TreeFold<std::string> fold(
      [](std::string& l, const std::string& r) { l = "(" + l + "+" + r + ")"; });
  for (int i = 0; i < R; ++i) fold.Push(std::to_string(i));
  std::string out = fold.Finish();
  if (resident) *resident = fold.max_resident();
  return out;
}

TEST(TreeFold, MatchesTheHandComputedOrderForOneToEightReplicas) {
  for (int R = 1; R <= 8; ++R) {
    size_t resident = 0;
    EXPECT_EQ(FoldOrder(R, &resident), kTreeFoldOrder[R - 1]) << "R=" << R;
    EXPECT_LE(resident, static_cast<size_t>(std::floor(std::log2(R))) + 1) << "R=" << R;
  }
  // At R = 8 the fold holds at most 4 partials where a flat reduction holds 8 (paper, A.1).
  size_t resident = 0;
  FoldOrder(8, &resident);
  EXPECT_EQ(resident, 4u);
}

TEST(TreeFold, FloatResultIsTheTreeNotTheLeftToRightSum) {
  // Values where the grouping shows in the bits: 1e8 cancels only when paired with -1e8 first.
  const float v[] = {1e8f, 1.0f, -1e8f, 1.0f, 3.0f, 0.5f};
  TreeFold<float> fold([](float& l, const float& r) { l = l + r; });
  for (float x : v) fold.Push(x);
  const float tree = fold.Finish();
  const float hand = ((v[0] + v[1]) + (v[2] + v[3])) + (v[4] + v[5]);
  float flat = 0;
  for (float x : v) flat = flat + x;
  EXPECT_EQ(tree, hand);
  EXPECT_NE(tree, flat);
}

// ---------------------------------------------------------------- the mesh's order

// The expected order by hand: replica r is the chain ((r·S + 0) + (r·S + 1)) + …, and the
// replicas are combined in kTreeFoldOrder with each digit replaced by its replica's chain.
std::string HandOrder(int R, int S) {
  std::string out;
  for (char c : std::string(kTreeFoldOrder[R - 1])) {
    if (c < '0' || c > '9') {
      out += c;
      continue;
    }
    const int r = c - '0';
    std::string chain = std::to_string(r * S);
    for (int s = 1; s < S; ++s) chain = "(" + chain + "+" + std::to_string(r * S + s) + ")";
    out += chain;
  }
  return out;
}

TEST(ReductionTree, IsTheAscendingShardSumInsideTreeFoldForEveryMesh) {
  EXPECT_EQ(ReductionTree(3, 2).Describe(ReductionTree(3, 2).root()), "(((0+1)+(2+3))+(4+5))");
  EXPECT_EQ(ReductionTree(1, 4).Describe(ReductionTree(1, 4).root()), "(((0+1)+2)+3)");
  for (int R = 1; R <= 8; ++R) {
    for (int S = 1; S <= 4; ++S) {
      const ReductionTree t(R, S);
      EXPECT_EQ(t.Describe(t.root()), HandOrder(R, S)) << R << "x" << S;
    }
  }
}

TEST(ReductionTree, LogicalRanksAreContiguousAndBalanced) {
  // 6 logical ranks on 4 processes: 1, 2, 1, 2.
  const int64_t expect[][2] = {{0, 1}, {1, 3}, {3, 4}, {4, 6}};
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(LogicalRanksOf(p, 4, 6).begin, expect[p][0]);
    EXPECT_EQ(LogicalRanksOf(p, 4, 6).end, expect[p][1]);
  }
}

TEST(ReductionTree, LocalRootsAreTheMaximalSubtreesInsideARange) {
  const ReductionTree t(3, 2);  // (((0+1)+(2+3))+(4+5))
  auto roots = [&](int64_t b, int64_t e) {
    std::string s;
    for (int n : t.LocalRoots({b, e})) s += (s.empty() ? "" : " ") + t.Describe(n);
    return s;
  };
  EXPECT_EQ(roots(0, 6), "(((0+1)+(2+3))+(4+5))");
  EXPECT_EQ(roots(1, 3), "1 2");  // 1 is the right operand of a chain that starts elsewhere
  EXPECT_EQ(roots(0, 4), "((0+1)+(2+3))");
  EXPECT_EQ(roots(3, 6), "3 (4+5)");
  const ReductionTree chain(1, 4);  // (((0+1)+2)+3)
  EXPECT_EQ(chain.Describe(chain.LocalRoots({0, 2})[0]), "(0+1)");
  EXPECT_EQ(chain.LocalRoots({1, 4}).size(), 3u);  // no suffix of a chain is a node
}

TEST(LocalFold, EndsWithTheLocalRootsAndHoldsFewPartials) {
  for (int R = 1; R <= 8; ++R) {
    for (int S = 1; S <= 4; ++S) {
      const ReductionTree t(R, S);
      const int K = R * S;
      for (int P = 1; P <= K; ++P) {
        for (int p = 0; p < P; ++p) {
          const RankRange own = LogicalRanksOf(p, P, K);
          LocalFold<std::string> fold(
              t, own, [](std::string& l, std::string& r) { l = "(" + l + "+" + r + ")"; });
          for (int64_t k = own.begin; k < own.end; ++k) {
            fold.Push(k, std::to_string(k), [](std::string&&) {});
          }
          const std::vector<int> want = t.LocalRoots(own);
          ASSERT_EQ(fold.partials().size(), want.size());
          for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(fold.partials()[i].first, want[i]);
            EXPECT_EQ(fold.partials()[i].second, t.Describe(want[i]));
          }
          if (P == 1) {
            EXPECT_LE(fold.max_resident(), static_cast<size_t>(std::floor(std::log2(R))) + 2);
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- the collectives, P threads

// Float value of an order string like "((0+1)+2)" over per-rank leaves.
float EvalOrder(const std::string& s, size_t& i, const std::vector<float>& leaf) {
  if (s[i] == '(') {
    ++i;
    float l = EvalOrder(s, i, leaf);
    ++i;  // '+'
    const float r = EvalOrder(s, i, leaf);
    ++i;  // ')'
    return l + r;
  }
  int v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  return leaf[v];
}

TEST(ReduceScatterMesh, EveryProcessCountAndBlockAddsInTheHandComputedOrder) {
  constexpr int64_t N = 37;  // elements; cut into P ranges at arbitrary (chunk) boundaries
  for (int R = 1; R <= 8; ++R) {
    for (int S = 1; S <= 4; ++S) {
      const int K = R * S;
      const ReductionTree tree(R, S);
      // Leaves mixing magnitudes, so that a different grouping changes the bits.
      std::vector<std::vector<float>> g(K, std::vector<float>(N));
      // Other orders the payload must tell apart from the mesh's (for K ≥ 3 leaves).
      std::string flat = "0", reverse = std::to_string(K - 1);
      for (int k = 1; k < K; ++k) {
        flat = "(" + flat + "+" + std::to_string(k) + ")";
        reverse = "(" + reverse + "+" + std::to_string(K - 1 - k) + ")";
      }
      std::vector<std::string> others = {reverse};
      if (flat != HandOrder(R, S)) others.push_back(flat);
      std::vector<int> differs(others.size(), 0);
      std::vector<float> expect(N);
      for (int64_t e = 0; e < N; ++e) {
        std::vector<float> leaf(K);
        for (int k = 0; k < K; ++k) {
          const uint32_t u = Philox4x32(7, static_cast<uint64_t>(k), static_cast<uint64_t>(e))[0];
          const float mag = (u & 1) ? 1e8f : ((u & 2) ? 1.0f : 3e-3f);
          leaf[k] = g[k][e] = ((u >> 8) & 1 ? -1.0f : 1.0f) * mag * (1.0f + (u >> 12) * 1e-7f);
        }
        size_t i = 0;
        expect[e] = EvalOrder(HandOrder(R, S), i, leaf);
        for (size_t o = 0; o < others.size(); ++o) {
          size_t j = 0;
          const float v = EvalOrder(others[o], j, leaf);
          differs[o] += std::memcmp(&v, &expect[e], 4) != 0;
        }
      }
      for (size_t o = 0; o < others.size() && K >= 3; ++o) {
        EXPECT_GT(differs[o], 0) << R << "x" << S << " cannot tell " << others[o];
      }
      for (int P = 1; P <= K; ++P) {
        std::vector<int64_t> bounds(P + 1);
        for (int q = 0; q <= P; ++q) bounds[q] = q * N / P;
        std::vector<float> got(N);
        ThreadGroup group(P);
        group.Run([&](Communicator& comm) {
          const RankRange own = LogicalRanksOf(comm.rank(), P, K);
          using Buf = std::vector<float>;
          LocalFold<Buf> fold(tree, own, [](Buf& l, Buf& r) {
            for (size_t i = 0; i < l.size(); ++i) l[i] = l[i] + r[i];
          });
          for (int64_t k = own.begin; k < own.end; ++k) fold.Push(k, g[k], [](Buf&&) {});
          std::vector<int> roots;
          for (auto& [n, b] : fold.partials()) roots.push_back(n);
          MeshBuffers reduce, gather;
          // Blocks of 1..3 elements (ranges then move in several rounds, more for some ranges
          // than others) or the default (one round here): the same bits.
          const int64_t block = (R + S + P) % 4;
          const std::span<float> mine = ReduceScatterMesh(
              comm, tree, bounds, roots,
              [&](size_t i, int64_t b, int64_t n, float* out) {
                std::memcpy(out, fold.partials()[i].second.data() + b, n * sizeof(float));
              },
              reduce, block);
          std::vector<float> all(N);
          std::memcpy(all.data() + bounds[comm.rank()], mine.data(), mine.size() * sizeof(float));
          AllGatherRanges(
              comm, bounds, mine,
              [&](int64_t b, std::span<const float> v) {
                std::memcpy(all.data() + b, v.data(), v.size() * sizeof(float));
              },
              gather);
          if (comm.rank() == P - 1) got = all;
          EXPECT_EQ(std::memcmp(all.data(), expect.data(), N * sizeof(float)), 0)
              << R << "x" << S << " P=" << P << " process " << comm.rank();
        });
        EXPECT_EQ(std::memcmp(got.data(), expect.data(), N * sizeof(float)), 0);
      }
    }
  }
}

TEST(Communicator, AllGatherCarriesContributionsOfDifferentLengths) {
  ThreadGroup group(3);
  group.Run([](Communicator& comm) {
    std::vector<uint8_t> mine(comm.rank() * 2, static_cast<uint8_t>(comm.rank()));
    const auto all = comm.AllGather(mine);
    ASSERT_EQ(all.size(), 3u);
    for (int p = 0; p < 3; ++p) EXPECT_EQ(all[p], std::vector<uint8_t>(p * 2, p));
  });
  auto one = InProcessCommunicator();
  EXPECT_EQ(one->AllGather(std::vector<uint8_t>{1, 2})[0], (std::vector<uint8_t>{1, 2}));
}

}  // namespace
}  // namespace trail::collectives
