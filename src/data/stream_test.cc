#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.h"
#include "data/batcher.h"
#include "data/eval_stream.h"
#include "data/stream_golden.h"
#include "data/stream.h"
#include "core/file_util.h"
#include "data/synthetic_corpus.h"

namespace trail::data {
namespace {

using synthetic::MakeCorpus;
using synthetic::SyntheticSource;

StreamConfig Config(int64_t L, uint64_t seed = 7) {
  StreamConfig c;
  c.seed = seed;
  c.seq_len = L;
  c.schedule = {{0, 6}, {5, 10}, {9, 13}};
  c.micro_batch_windows = 2;
  return c;
}

bool SameWindow(const RawWindow& a, const RawWindow& b) {
  return a.length == b.length && a.tokens == b.tokens && a.doc == b.doc &&
         a.positions == b.positions && a.target_ok == b.target_ok &&
         a.segments.size() == b.segments.size() && a.owner.source == b.owner.source &&
         a.owner.source_window == b.owner.source_window;
}

// Where a window token came from: (source, shard, doc, offset in the document), or offset -1
// for an appended EOS.
struct Origin {
  uint32_t source, shard;
  uint64_t doc;
  int64_t offset;
  uint32_t chunk;
  auto operator<=>(const Origin&) const = default;
};

Origin OriginOf(const RawWindow& w, int64_t i, const StreamConfig& cfg, const CanonicalStream& s) {
  const Segment& seg = w.segments[w.doc[i]];
  const uint64_t in_piece = seg.piece_offset + (i - seg.window_offset);
  const uint64_t start = ChunkStart(cfg.chunking, seg.chunk);
  const uint64_t len = s.source(seg.source).shard(seg.shard).doc_length(seg.doc);
  const uint64_t chunk_len =
      cfg.chunking.max_tokens == 0 ? len : std::min<uint64_t>(cfg.chunking.max_tokens, len - start);
  const int64_t off = in_piece < chunk_len ? static_cast<int64_t>(start + in_piece) : -1;
  return {seg.source, seg.shard, seg.doc, off, off < 0 ? seg.chunk : 0};
}

TEST(Stream, RandomAccessEqualsSequentialIteration) {
  TempDir dir;
  StreamConfig cfg = Config(32);
  cfg.chunking.max_tokens = 50;
  cfg.chunking.overlap = 8;
  const Manifest m = MakeCorpus(dir.path(),
                                {{"web", 0.6, 3, 20, 1, 120},
                                 {"code", 0.3, 2, 15, 5, 60},
                                 {"books", 0.1, 1, 5, 100, 300, Sampling::kReplacement}},
                                cfg);
  CanonicalStream seq(m), fresh(m);
  RawWindow a, b;
  for (uint64_t w = 0; w < 600; ++w) {
    seq.Window(w, a);
    // A fresh stream asked for w alone (no history) gives the same window.
    CanonicalStream cold(m);
    cold.Window(w, b);
    ASSERT_TRUE(SameWindow(a, b)) << "window " << w;
  }
  // Random order, far positions (many epochs in): each equals a cold computation.
  for (uint64_t w : {1000000ull, 17ull, 123456789ull, 5ull, 40000000ull, 123456788ull}) {
    fresh.Window(w, a);
    CanonicalStream cold(m);
    cold.Window(w, b);
    ASSERT_TRUE(SameWindow(a, b)) << "window " << w;
    ASSERT_EQ(a.length, 33);
  }
}

TEST(Stream, ResumeFromACursorEqualsTheUninterruptedStream) {
  TempDir dir;
  const Manifest m = MakeCorpus(dir.path(), {{"web", 0.5}, {"code", 0.5, 1, 7}}, Config(16));
  CanonicalStream full(m);
  RawWindow a, b;
  std::vector<RawWindow> reference(300);
  for (uint64_t w = 0; w < 300; ++w) full.Window(w, reference[w]);
  for (uint64_t cursor : {0ull, 1ull, 137ull, 299ull}) {
    CanonicalStream resumed(m);  // a new process that only knows the cursor
    for (uint64_t w = cursor; w < 300; ++w) {
      resumed.Window(w, b);
      ASSERT_TRUE(SameWindow(reference[w], b)) << "cursor " << cursor << " window " << w;
    }
  }
}

// Adds the origin of every target of window w (L positions) to as_target, or counts it in
// eos_targets when it is an appended EOS.
void CountTargets(const RawWindow& w, int64_t L, const StreamConfig& cfg, const CanonicalStream& s,
                  std::map<Origin, int>& as_target, uint64_t& eos_targets) {
  PackedBatch b;
  b.Resize(1, L);
  PackRow(w, cfg.semantics, b, 0);
  for (int64_t j = 0; j < L; ++j) {
    if (b.loss_mask[j] == 0) continue;
    const Origin o = OriginOf(w, j + 1, cfg, s);
    if (o.offset < 0) {
      ++eos_targets;
    } else {
      ++as_target[o];
    }
  }
}

TEST(Stream, WindowsOverlapByOneTokenSoEveryTokenIsATargetOnce) {
  TempDir dir;
  StreamConfig cfg = Config(8);
  cfg.semantics = Semantics::kContinuous;
  const Manifest m =
      MakeCorpus(dir.path(), {{"web", 1, 2, 6, 1, 20, Sampling::kPermutation, 1}}, cfg);
  CanonicalStream s(m);
  ASSERT_NE(s.num_windows(), kUnlimited);
  std::map<Origin, int> as_target;
  uint64_t eos_targets = 0, docs = 0, doc_tokens = 0;
  for (const auto& sh : m.sources[0].shards) {
    docs += sh.documents;
    doc_tokens += sh.tokens;
  }
  RawWindow w, next;
  for (uint64_t i = 0; i < s.num_windows(); ++i) {
    s.Window(i, w);
    if (i + 1 < s.num_windows()) {
      s.Window(i + 1, next);
      EXPECT_EQ(w.tokens[8], next.tokens[0]);  // consecutive windows share one token
    }
    CountTargets(w, 8, cfg, s, as_target, eos_targets);
  }
  // One epoch, continuous stream: every token but the very first is a target exactly once.
  EXPECT_EQ(eos_targets, docs);
  EXPECT_EQ(as_target.size() + 1, doc_tokens);
  for (const auto& [o, n] : as_target) EXPECT_EQ(n, 1);
  EXPECT_THROW(s.Window(s.num_windows(), w), Error);
}

// The same across a sequence-length switch (one window per step, L = 8 for steps 0..4, then 13):
// the first window of the new length starts on the last token of the source's previous window,
// so nothing is skipped or read twice, and the finite source ends by tokens at the new length.
TEST(Stream, ALengthSwitchNeitherSkipsNorRepeatsATarget) {
  TempDir dir;
  StreamConfig cfg = Config(8);
  cfg.semantics = Semantics::kContinuous;
  cfg.schedule = {{0, 1}};
  cfg.seq_len_phases = {{5, 13}};
  const Manifest m =
      MakeCorpus(dir.path(), {{"web", 1, 2, 6, 1, 20, Sampling::kPermutation, 1}}, cfg);
  CanonicalStream s(m);
  uint64_t docs = 0, doc_tokens = 0;
  for (const auto& sh : m.sources[0].shards) docs += sh.documents, doc_tokens += sh.tokens;
  // T = doc_tokens + docs (an EOS each): 40 targets in windows of 8, the rest in windows of 13.
  const uint64_t T = doc_tokens + docs;
  ASSERT_GT(T - 1, 40u);
  EXPECT_EQ(s.num_windows(), 5 + (T - 1 - 40 + 12) / 13);
  std::map<Origin, int> as_target;
  uint64_t eos_targets = 0;
  RawWindow w, next;
  for (uint64_t i = 0; i < s.num_windows(); ++i) {
    s.Window(i, w);
    const int64_t L = i < 5 ? 8 : 13;
    ASSERT_EQ(w.owner.seq_len, L);
    if (i + 1 < s.num_windows()) {
      s.Window(i + 1, next);
      EXPECT_EQ(w.tokens[L], next.tokens[0]) << "window " << i;
    }
    CountTargets(w, L, cfg, s, as_target, eos_targets);
  }
  EXPECT_EQ(eos_targets, docs);
  EXPECT_EQ(as_target.size() + 1, doc_tokens);
  for (const auto& [o, n] : as_target) EXPECT_EQ(n, 1);
}

// The schedule's token sums in closed form equal step-by-step sums.
TEST(Stream, ScheduledTokensSumEveryStepsWindowsTimesItsLength) {
  StreamConfig cfg = Config(8);
  cfg.schedule = {{0, 3}, {4, 5}, {9, 2}};
  cfg.seq_len_phases = {{2, 16}, {9, 8}, {12, 32}};
  const BatchSchedule schedule(cfg.schedule);
  for (int64_t from = 0; from < 15; ++from) {
    for (int64_t to = from; to < 16; ++to) {
      std::map<int64_t, uint64_t> expect;
      for (int64_t s = from; s < to; ++s)
        expect[SeqLenAtStep(cfg, s)] += schedule.WindowsAt(s) * SeqLenAtStep(cfg, s);
      std::map<int64_t, uint64_t> got;
      uint64_t total = 0;
      for (const LengthTokens& t : ScheduledTokensByLength(cfg, from, to))
        got[t.seq_len] += t.tokens, total += t.tokens;
      ASSERT_EQ(got, expect) << from << ".." << to;
      ASSERT_EQ(ScheduledTokens(cfg, from, to), total);
    }
  }
  EXPECT_EQ(ScheduledTokensByLength(cfg, 0, 16).size(), 3u);  // 8, 16, 32 in order of first use
  EXPECT_EQ(ScheduledTokensByLength(cfg, 0, 16)[0].seq_len, 8);
}

TEST(Stream, EachEpochIsADifferentPermutationOfAllDocuments) {
  TempDir dir;
  StreamConfig cfg = Config(4);
  cfg.append_eos = true;
  const Manifest m =
      MakeCorpus(dir.path(), {{"web", 1, 3, 8, 2, 9, Sampling::kPermutation, 3}}, cfg);
  CanonicalStream s(m);
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> order(3);
  RawWindow w;
  for (uint64_t i = 0; i < s.num_windows(); ++i) {
    s.Window(i, w);
    for (const Segment& seg : w.segments) {
      ASSERT_LT(seg.pass, 3u);
      auto& o = order[seg.pass];
      if (seg.piece_offset == 0 && (o.empty() || o.back() != std::make_pair(seg.shard, seg.doc))) {
        o.push_back({seg.shard, seg.doc});
      }
    }
  }
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(order[e].size(), 24u) << "epoch " << e;
    EXPECT_EQ(std::set(order[e].begin(), order[e].end()).size(), 24u);
  }
  EXPECT_NE(order[0], order[1]);
  EXPECT_NE(order[1], order[2]);
}

TEST(Stream, OverlapTokensCarryLossExactlyOnceUnderTheOncePolicy) {
  for (bool once : {true, false}) {
    TempDir dir;
    StreamConfig cfg = Config(16);
    cfg.chunking.max_tokens = 12;
    cfg.chunking.overlap = 4;
    cfg.chunking.overlap_loss_once = once;
    const Manifest m =
        MakeCorpus(dir.path(), {{"web", 1, 2, 10, 1, 60, Sampling::kPermutation, 1}}, cfg);
    CanonicalStream s(m);
    std::map<Origin, int> as_target;
    RawWindow w;
    PackedBatch b;
    for (uint64_t i = 0; i < s.num_windows(); ++i) {
      s.Window(i, w);
      b.Resize(1, 16);
      PackRow(w, cfg.semantics, b, 0);
      for (int64_t j = 0; j < 16; ++j) {
        if (b.loss_mask[j] == 0) continue;
        const Origin o = OriginOf(w, j + 1, cfg, s);
        if (o.offset >= 0) ++as_target[o];
      }
    }
    int twice = 0;
    for (int h = 0; h < 2; ++h) {
      for (int d = 0; d < 10; ++d) {
        const int len = synthetic::SyntheticDocLength({"web", 1, 2, 10, 1, 60}, 0, h, d);
        for (int j = 1; j < len; ++j) {
          const int n = as_target[{0u, uint32_t(h), uint64_t(d), j, 0u}];
          if (once) {
            ASSERT_EQ(n, 1) << "doc " << h << "/" << d << " token " << j << " of " << len;
          } else {
            ASSERT_GE(n, 1);
            twice += n > 1;
          }
        }
      }
    }
    if (!once) {
      EXPECT_GT(twice, 0);  // "both" counts overlap tokens in two chunks
    }
  }
}

TEST(Stream, MeasuredTokenSharesMatchTargetsOverAMillionWindows) {
  TempDir dir;
  StreamConfig cfg = Config(8);
  const std::vector<double> target = {0.55, 0.3, 0.1, 0.05};
  const Manifest m = MakeCorpus(dir.path(),
                                {{"web", target[0], 2, 30},
                                 {"code", target[1], 2, 20},
                                 {"math", target[2], 1, 10, 1, 30, Sampling::kReplacement},
                                 {"wiki", target[3], 1, 5}},
                                cfg);
  CanonicalStream s(m);
  const uint64_t W = 1000000;
  std::vector<uint64_t> tokens(4, 0);
  uint64_t total = 0;
  RawWindow w;
  for (uint64_t i = 0; i < W; ++i) {
    s.Window(i, w);
    // Count the L new tokens of each window by the source they were read from.
    for (const Segment& seg : w.segments) {
      const uint64_t lo = std::max<uint64_t>(seg.window_offset, 1);
      const uint64_t hi = seg.window_offset + seg.length;
      if (hi > lo) tokens[seg.source] += hi - lo;
    }
    total += 8;
  }
  // Tolerance: the period quantization (0.5/65536 = 7.6e-6) plus the interleave's prefix
  // discrepancy (< S windows out of W = 4e-6).
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(double(tokens[i]) / total, target[i], 1.2e-5) << m.sources[i].name;
  }
}

TEST(Stream, ExhaustedSourcesEndOrWrapAsConfigured) {
  TempDir dir;
  StreamConfig cfg = Config(10);
  const Manifest m = MakeCorpus(dir.path(),
                                {{"once", 0.5, 1, 10, 5, 30, Sampling::kPermutation, 1},
                                 {"twice", 0.3, 1, 10, 5, 30, Sampling::kPermutation, 2},
                                 {"wraps", 0.2, 1, 4, 5, 30}},
                                cfg);
  CanonicalStream s(m);
  EXPECT_EQ(s.num_windows(), kUnlimited);
  std::vector<uint64_t> windows(3, 0), max_pass(3, 0);
  RawWindow w;
  for (uint64_t i = 0; i < 5000; ++i) {
    s.Window(i, w);
    ++windows[w.owner.source];
    for (const Segment& seg : w.segments)
      max_pass[seg.source] = std::max(max_pass[seg.source], seg.pass);
    if (w.length < 11) {
      EXPECT_NE(w.owner.source, 2u) << "only an ending source has a partial window";
    }
  }
  EXPECT_EQ(windows[0], s.source(0).num_windows(10));
  EXPECT_EQ(windows[1], s.source(1).num_windows(10));
  EXPECT_EQ(max_pass[0], 0u);
  EXPECT_EQ(max_pass[1], 1u);
  EXPECT_GT(max_pass[2], 10u);  // the wrapping source keeps starting new epochs
  EXPECT_EQ(windows[2], 5000 - windows[0] - windows[1]);
}

TEST(Stream, LogicalRanksSplitEveryStepDisjointlyForAnyRankCount) {
  TempDir dir;
  StreamConfig cfg = Config(12);
  cfg.micro_batch_windows = 2;
  const Manifest m = MakeCorpus(dir.path(), {{"web", 0.7}, {"code", 0.3}}, cfg);
  CanonicalStream reference_stream(m);
  Batcher reference(reference_stream);
  for (int64_t step : {0, 4, 5, 9, 20}) {
    const WindowRange range = reference.schedule().StepWindows(step);
    std::map<uint64_t, std::vector<int32_t>> by_window;  // window -> packed row inputs+labels
    for (int64_t P = 1; P <= 8; ++P) {
      CanonicalStream stream(m);
      Batcher batcher(stream);
      std::set<uint64_t> seen;
      for (int64_t k = 0; k < P; ++k) {
        for (int64_t mb = 0; mb < batcher.NumMicroBatches(step, k, P); ++mb) {
          PackedBatch b;
          batcher.MicroBatch(step, k, P, mb, b);
          for (int64_t r = 0; r < b.rows; ++r) {
            const uint64_t win = b.windows[r];
            if (win == kPaddingRow) continue;
            EXPECT_EQ(win % P, uint64_t(k));
            EXPECT_TRUE(seen.insert(win).second) << "window " << win << " owned twice";
            std::vector<int32_t> row(b.inputs.begin() + r * 12, b.inputs.begin() + (r + 1) * 12);
            row.insert(row.end(), b.labels.begin() + r * 12, b.labels.begin() + (r + 1) * 12);
            auto [it, fresh] = by_window.emplace(win, row);
            if (!fresh) {
              EXPECT_EQ(it->second, row) << "window " << win << " differs at P=" << P;
            }
          }
        }
      }
      EXPECT_EQ(seen.size(), range.end - range.begin) << "P=" << P;
      EXPECT_EQ(*seen.begin(), range.begin);
      EXPECT_EQ(*seen.rbegin(), range.end - 1);
    }
  }
  // The schedule's phases: 6 windows per step for steps 0-4, 10 for 5-8, 13 from 9.
  const BatchSchedule& sch = reference.schedule();
  EXPECT_EQ(sch.StepWindows(4).begin, 24u);
  EXPECT_EQ(sch.StepWindows(5).begin, 30u);
  EXPECT_EQ(sch.StepWindows(9).begin, 70u);
  EXPECT_EQ(sch.StepWindows(10).end, 96u);
  EXPECT_EQ(sch.StepOfWindow(69), 8);
  EXPECT_EQ(sch.StepOfWindow(70), 9);
}

TEST(Stream, ReplacementDrawsAreUniformOverDocuments) {
  TempDir dir;
  StreamConfig cfg = Config(64);
  cfg.replacement_block_tokens = 4096;
  const Manifest m = MakeCorpus(dir.path(), {{"r", 1, 2, 10, 3, 3, Sampling::kReplacement}}, cfg);
  CanonicalStream s(m);
  std::map<std::pair<uint32_t, uint64_t>, int> starts;
  RawWindow w;
  const uint64_t W = 20000;
  for (uint64_t i = 0; i < W; ++i) {
    s.Window(i, w);
    for (const Segment& seg : w.segments) {
      if (seg.piece_offset == 0) ++starts[{seg.shard, seg.doc}];
    }
  }
  ASSERT_EQ(starts.size(), 20u);
  int total = 0;
  for (const auto& [k, n] : starts) total += n;
  double chi2 = 0;
  for (const auto& [k, n] : starts)
    chi2 += (n - total / 20.0) * (n - total / 20.0) / (total / 20.0);
  EXPECT_LT(chi2, 50.0);  // 19 degrees of freedom: the 0.1% tail is at 43.8
}

TEST(Stream, SeedChangesTheOrderButNotTheMixture) {
  TempDir dir;
  const Manifest m1 = MakeCorpus(dir.path(), {{"web", 0.5}, {"code", 0.5}}, Config(16, 1));
  Manifest m2 = m1;
  m2.stream.seed = 2;
  CanonicalStream a(m1), b(m2);
  RawWindow wa, wb;
  int same = 0;
  for (uint64_t i = 0; i < 50; ++i) {
    a.Window(i, wa);
    b.Window(i, wb);
    EXPECT_EQ(wa.owner.source, wb.owner.source);
    same += wa.tokens == wb.tokens;
  }
  EXPECT_LT(same, 5);
}

}  // namespace
}  // namespace trail::data

namespace trail::data {
namespace {

TEST(EvalStream, ScoresEveryDocumentTokenOnceInStoredOrder) {
  TempDir dir;
  StreamConfig cfg = Config(8);
  Manifest m = MakeCorpus(dir.path(), {{"web", 1, 2, 9, 1, 30}}, cfg);
  // Use the training shards as a stand-in frozen validation set of domain "web".
  m.validation.push_back({"web", m.sources[0].shards});
  EXPECT_THROW(EvalStream(m, "validation", "code"), Error);
  const EvalStream ev(m, "validation", "web");
  RawWindow w;
  PackedBatch b;
  uint64_t targets = 0, expected = 0;
  std::pair<uint32_t, uint64_t> prev{0, 0};
  for (uint64_t i = 0; i < ev.num_windows(); ++i) {
    ev.Window(i, w);
    ASSERT_EQ(w.segments.size(), 1u);
    const auto cur = std::make_pair(w.segments[0].shard, w.segments[0].doc);
    EXPECT_GE(cur, prev);  // stored order
    prev = cur;
    b.Resize(1, 8);
    PackRow(w, Semantics::kIndependent, b, 0);
    EXPECT_TRUE(EveryAttentionRowNonEmpty(b));
    targets += b.target_tokens;
  }
  for (const auto& sh : m.sources[0].shards) expected += sh.tokens;  // + EOS - first token
  EXPECT_EQ(targets, expected);
  // Frozen: a second reader (another process, another time) sees the same windows.
  const EvalStream again(m, "validation", "web");
  RawWindow w2;
  for (uint64_t i = 0; i < ev.num_windows(); ++i) {
    ev.Window(i, w);
    again.Window(i, w2);
    EXPECT_EQ(w.tokens, w2.tokens);
  }
}

}  // namespace
}  // namespace trail::data

namespace trail::data {
namespace {

TEST(StreamGolden, ReproducesTheCommittedDigest) {
  // The digest pins every choice of the stream (orders, interleave, chunking, packing); a
  // change to any of them must be deliberate and update goldens/stream.txt.
  for (const std::string& name : StreamGoldenNames()) {
    EXPECT_EQ(ComputeStreamGoldenDigest(name), CommittedStreamGoldenDigest(name)) << name;
  }
}

}  // namespace
}  // namespace trail::data

namespace trail::data {
namespace {

TEST(Stream, ChunkBoundaryPolicyDecidesEosAndPositions) {
  for (ChunkBoundary boundary : {ChunkBoundary::kIndependent, ChunkBoundary::kContinuation}) {
    TempDir dir;
    StreamConfig cfg = Config(64);
    cfg.chunking.max_tokens = 10;
    cfg.chunking.overlap = 3;
    cfg.chunking.boundary = boundary;
    const Manifest m =
        MakeCorpus(dir.path(), {{"web", 1, 1, 6, 15, 40, Sampling::kPermutation, 1}}, cfg);
    CanonicalStream s(m);
    RawWindow w;
    int cut_pieces = 0;
    for (uint64_t i = 0; i < s.num_windows(); ++i) {
      s.Window(i, w);
      for (const Segment& seg : w.segments) {
        const uint64_t len = s.source(0).shard(0).doc_length(seg.doc);
        const uint64_t start = ChunkStart(cfg.chunking, seg.chunk);
        const bool last = start + std::min<uint64_t>(10, len - start) == len;
        const int32_t pos = w.positions[seg.window_offset];
        if (boundary == ChunkBoundary::kIndependent) {
          EXPECT_EQ(pos, int32_t(seg.piece_offset));  // restarts per piece
          if (seg.piece_offset + seg.length == std::min<uint64_t>(10, len - start) + 1) {
            EXPECT_TRUE(seg.ends_with_eos);  // every piece ends with EOS
          }
        } else {
          EXPECT_EQ(pos, int32_t(start + seg.piece_offset));  // continues through the document
          EXPECT_TRUE(!seg.ends_with_eos || last);            // only the last piece has EOS
        }
        cut_pieces += seg.chunk > 0;
      }
    }
    EXPECT_GT(cut_pieces, 3);
  }
  // Window positions: the index in the window, whatever the document.
  TempDir dir;
  StreamConfig cfg = Config(16);
  cfg.positions = PositionMode::kWindow;
  CanonicalStream s(MakeCorpus(dir.path(), {{"web", 1}}, cfg));
  RawWindow w;
  s.Window(3, w);
  for (int32_t i = 0; i <= 16; ++i) EXPECT_EQ(w.positions[i], i);
}

}  // namespace
}  // namespace trail::data
