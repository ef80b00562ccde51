// The packing sanity checks on the real code path — shifted labels (independent-document vs
// continuous semantics), the block-diagonal mask with its functional test, the EOS boundary (kept
// as the last token of its document, never a label across documents) and padding (loss and key
// masks, no empty attention row): labels from the one label rule, masks from PackRow, attention
// through the RepOps attention op.
#include <gtest/gtest.h>

#include <cmath>

#include "data/packing.h"
#include "data/stream.h"
#include "core/file_util.h"
#include "data/synthetic_corpus.h"
#include "repops/attention.h"

namespace trail::data {
namespace {

constexpr int32_t I = kIgnoreLabel;

// A raw window from explicit tokens and document ids (L+1 = tokens.size()), `valid` real.
RawWindow MakeWindow(std::vector<int32_t> tokens, std::vector<int32_t> doc, int64_t valid = -1) {
  RawWindow w;
  w.Reset(static_cast<int64_t>(tokens.size()));
  w.tokens = std::move(tokens);
  w.doc = std::move(doc);
  w.length = valid < 0 ? static_cast<int64_t>(w.tokens.size()) : valid;
  for (size_t i = 0; i < w.tokens.size(); ++i) {
    w.positions[i] = static_cast<int32_t>(i);
    w.target_ok[i] = static_cast<int64_t>(i) < w.length ? 1 : 0;
  }
  return w;
}

// Runs the packed row (1 head, head_dim 1) through AttentionForward with q = k = 0, so every
// allowed key gets the same weight; returns the outputs and fills the probabilities.
std::vector<float> UniformAttention(const PackedBatch& b, const std::vector<float>& values,
                                    std::vector<float>& probs) {
  const int64_t T = b.seq_len;
  repops::AttentionShape s;
  s.batch = 1;
  s.heads = 1;
  s.seq = T;
  s.head_dim = 1;
  s.doc_ids = b.doc_ids.data();
  s.key_valid = b.key_valid.data();
  std::vector<float> q(T, 0.0f), k(T, 0.0f), out(T);
  probs.assign(T * T, -1.0f);
  repops::AttentionForward(s, q.data(), k.data(), values.data(), out.data(), probs.data());
  return out;
}

PackedBatch Pack(const RawWindow& w, Semantics sem) {
  PackedBatch b;
  b.Resize(1, static_cast<int64_t>(w.tokens.size()) - 1);
  PackRow(w, sem, b, 0);
  return b;
}

TEST(Packing, ShiftedLabelsForBothSemantics) {
  const std::vector<int32_t> tokens = {11, 12, 13, 21, 22}, doc = {0, 0, 0, 1, 1};
  EXPECT_EQ(ShiftedLabels(tokens, doc, Semantics::kIndependent),
            (std::vector<int32_t>{12, 13, I, 22, I}));
  EXPECT_EQ(ShiftedLabels(tokens, doc, Semantics::kContinuous),
            (std::vector<int32_t>{12, 13, 21, 22, I}));
  // The packer applies the same rule to a window (L+1 tokens -> L labels).
  const RawWindow w = MakeWindow({11, 12, 13, 21, 22, 23}, {0, 0, 0, 1, 1, 1});
  EXPECT_EQ(Pack(w, Semantics::kIndependent).labels, (std::vector<int32_t>{12, 13, I, 22, 23}));
  EXPECT_EQ(Pack(w, Semantics::kContinuous).labels, (std::vector<int32_t>{12, 13, 21, 22, 23}));
}

TEST(Packing, BlockDiagonalMaskAndFunctionalTestThroughAttention) {
  // Window of L+1 = 6 tokens; the first 5 are the reference example (tokens 11,12,13 | 21,22).
  const RawWindow w = MakeWindow({11, 12, 13, 21, 22, 23}, {0, 0, 0, 1, 1, 1});
  const PackedBatch block = Pack(w, Semantics::kIndependent);
  const PackedBatch cont = Pack(w, Semantics::kContinuous);
  const int64_t T = 5;
  std::vector<float> pb, pc;
  const std::vector<float> values = {100, 100, 100, 0, 0};
  const auto out_block = UniformAttention(block, values, pb);
  const auto out_cont = UniformAttention(cont, values, pc);
  // Mask entries, read off the op's probabilities.
  EXPECT_EQ(pb[3 * T + 2], 0.0f);  // M_block[3,2] = False (crosses documents)
  EXPECT_EQ(pb[4 * T + 0], 0.0f);  // M_block[4,0] = False
  EXPECT_GT(pb[4 * T + 3], 0.0f);  // M_block[4,3] = True
  EXPECT_GT(pc[3 * T + 2], 0.0f);  // M_cont[3,2] = True: same (q,k), a configuration choice
  EXPECT_EQ(pb[2 * T + 3], 0.0f);  // causal in both
  EXPECT_EQ(out_block[3], 0.0f);
  EXPECT_EQ(out_cont[3], 75.0f);  // (100+100+100+0)/4

  // Changing document 0's values leaves document 1's outputs unchanged in block mode only.
  const std::vector<float> values2 = {1000, 1000, 1000, 0, 0};
  const auto out_block2 = UniformAttention(block, values2, pb);
  const auto out_cont2 = UniformAttention(cont, values2, pc);
  EXPECT_EQ(out_block2[3], out_block[3]);
  EXPECT_EQ(out_block2[4], out_block[4]);
  EXPECT_EQ(out_cont2[3], 750.0f);
  // And changing document 1's values leaves document 0's outputs unchanged.
  const auto out_block3 = UniformAttention(block, {100, 100, 100, 55, -9}, pb);
  for (int t = 0; t < 3; ++t) EXPECT_EQ(out_block3[t], out_block[t]);
}

TEST(Packing, EosBoundaryFollowsFromTheDocumentRule) {
  const int32_t EOS = 999;
  const std::vector<int32_t> tokens = {11, 12, 13, EOS, 21, 22, EOS};
  const std::vector<int32_t> doc = {0, 0, 0, 0, 1, 1, 1};
  EXPECT_EQ(ShiftedLabels(tokens, doc, Semantics::kIndependent),
            (std::vector<int32_t>{12, 13, EOS, I, 22, EOS, I}));
}

TEST(Packing, EosBoundaryOnStreamWindows) {
  // Through the stream: every "content -> EOS" label is kept, every "EOS -> next document"
  // label is masked, in every window.
  TempDir dir;
  StreamConfig cfg;
  cfg.seq_len = 24;
  const Manifest m = synthetic::MakeCorpus(dir.path(), {{"web", 1, 2, 20, 1, 12}}, cfg);
  CanonicalStream s(m);
  RawWindow w;
  int kept = 0, masked = 0;
  for (uint64_t i = 0; i < 50; ++i) {
    s.Window(i, w);
    const PackedBatch b = Pack(w, Semantics::kIndependent);
    for (int64_t j = 0; j < 24; ++j) {
      if (w.tokens[j + 1] == synthetic::kSyntheticEos) {
        EXPECT_EQ(b.labels[j], synthetic::kSyntheticEos);
        ++kept;
      }
      if (w.tokens[j] == synthetic::kSyntheticEos) {
        EXPECT_EQ(b.labels[j], I);
        EXPECT_NE(w.doc[j], w.doc[j + 1]);
        ++masked;
      }
    }
  }
  EXPECT_GT(kept, 50);
  EXPECT_GT(masked, 50);
}

TEST(Packing, PaddingMasksAndNoEmptyAttentionRow) {
  for (Semantics sem : {Semantics::kIndependent, Semantics::kContinuous}) {
    // Tokens [11, 12, 13] then padding, L+1 = 6.
    const RawWindow w = MakeWindow({11, 12, 13, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, 3);
    const PackedBatch b = Pack(w, sem);
    EXPECT_EQ(b.loss_mask, (std::vector<uint8_t>{1, 1, 0, 0, 0}));
    EXPECT_EQ(b.key_valid, (std::vector<uint8_t>{1, 1, 1, 0, 0}));
    EXPECT_EQ(b.target_tokens, 2);
    EXPECT_EQ(b.input_tokens, 5);
    EXPECT_EQ(b.real_tokens, 3);
    EXPECT_TRUE(EveryAttentionRowNonEmpty(b));
    // Real queries never read padding: changing padding values changes no real output.
    std::vector<float> p;
    const auto a = UniformAttention(b, {1, 2, 3, 50, 60}, p);
    const auto c = UniformAttention(b, {1, 2, 3, -7, 1e6}, p);
    for (int t = 0; t < 3; ++t) EXPECT_EQ(a[t], c[t]);
    for (float x : a) EXPECT_TRUE(std::isfinite(x));
    for (int q = 0; q < 5; ++q) {
      float row = 0;
      for (int k = 0; k < 5; ++k) row += p[q * 5 + k];
      EXPECT_NEAR(row, 1.0f, 1e-6f) << "row " << q << " is empty";
    }
  }
  // PAD == EOS: the loss mask comes from the valid length, not from token ids, so the real
  // EOS target is kept.
  const int32_t EOS = 999;
  const RawWindow w = MakeWindow({11, 12, EOS, EOS, EOS, EOS}, {0, 0, 0, 0, 0, 0}, 3);
  EXPECT_EQ(Pack(w, Semantics::kIndependent).loss_mask, (std::vector<uint8_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(Pack(w, Semantics::kIndependent).labels, (std::vector<int32_t>{12, EOS, I, I, I}));

  // A row with no real token (a rank's short last micro-batch) still has no empty row.
  PackedBatch b;
  b.Resize(2, 8);
  PackPaddingRow(b, 0, 3);
  PackRow(MakeWindow({1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, 0, 0, 1, 1, 1, 1, 2, 2}),
          Semantics::kIndependent, b, 1);
  EXPECT_TRUE(EveryAttentionRowNonEmpty(b));
  EXPECT_EQ(b.target_tokens, 6);  // 8 labels minus the two document boundaries
  EXPECT_EQ(b.input_tokens, 16);  // B_input counts slots, padding included
  EXPECT_EQ(b.real_tokens, 8);
}

TEST(Packing, StreamPaddingKeepsRowsNonEmptyAndMasksLoss) {
  // A finite source's last window is padded.
  TempDir dir;
  StreamConfig cfg;
  cfg.seq_len = 64;
  const Manifest m =
      synthetic::MakeCorpus(dir.path(), {{"web", 1, 1, 3, 5, 9, Sampling::kPermutation, 1}}, cfg);
  CanonicalStream s(m);
  ASSERT_EQ(s.num_windows(), 1u);
  RawWindow w;
  s.Window(0, w);
  ASSERT_LT(w.length, 65);
  for (Semantics sem : {Semantics::kIndependent, Semantics::kContinuous}) {
    const PackedBatch b = Pack(w, sem);
    EXPECT_TRUE(EveryAttentionRowNonEmpty(b));
    for (int64_t j = w.length - 1; j < 64; ++j) EXPECT_EQ(b.loss_mask[j], 0);
    for (int64_t j = w.length; j < 64; ++j) {
      EXPECT_EQ(b.key_valid[j], 0);
      EXPECT_EQ(b.inputs[j], synthetic::kSyntheticPad);
    }
  }
}

}  // namespace
}  // namespace trail::data
