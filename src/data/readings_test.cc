// ReadDocument, the inverse of the stream, against a brute-force scan of every window of the
// run's steps that identifies each document token by its id (the synthetic corpus gives every
// token of every document a distinct id), under permutation and replacement sampling, several
// epochs, chunking with overlap, BOS and EOS marks, mixture and sequence-length phases.
#include "data/readings.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/test_util.h"
#include "data/batch_schedule.h"
#include "data/packing.h"
#include "data/synthetic_corpus.h"

namespace trail::data {
namespace {

using synthetic::MakeCorpus;
using synthetic::SyntheticSource;
using synthetic::SyntheticToken;

// A document token as read: window, index in the window, document token, loss-bearing.
using Read = std::tuple<uint64_t, int64_t, uint64_t, bool>;
using DocKey = std::tuple<uint32_t, uint32_t, uint64_t>;

// Every read of every document token by windows of steps [0, steps), found by token id.
std::map<DocKey, std::vector<Read>> ScanAll(CanonicalStream& s,
                                            const std::vector<SyntheticSource>& sources,
                                            int64_t steps) {
  std::map<uint32_t, std::pair<DocKey, uint64_t>> by_id;
  for (size_t i = 0; i < sources.size(); ++i) {
    const SourceStream& src = s.source(i);
    for (uint32_t h = 0; h < src.num_shards(); ++h) {
      for (uint64_t d = 0; d < src.shard(h).num_docs(); ++d) {
        for (uint64_t j = 0; j < src.shard(h).doc_length(d); ++j) {
          const uint32_t id = SyntheticToken(int(i), int(h), int(d), int(j));
          EXPECT_TRUE(by_id.emplace(id, std::pair{DocKey{uint32_t(i), h, d}, j}).second);
        }
      }
    }
  }
  const BatchSchedule schedule(s.manifest().stream.schedule);
  const uint64_t limit = std::min(schedule.StepWindows(steps).begin, s.num_windows());
  std::map<DocKey, std::vector<Read>> out;
  RawWindow win;
  for (uint64_t w = 0; w < limit; ++w) {
    s.Window(w, win);
    for (int64_t i = 0; i < win.length; ++i) {
      auto it = by_id.find(static_cast<uint32_t>(win.tokens[i]));
      if (it == by_id.end()) continue;  // a BOS or EOS mark
      const bool target = i >= 1 && LabelValid(s.manifest().stream.semantics, win.doc.data(),
                                               win.target_ok.data(), i - 1, win.length);
      out[it->second.first].push_back({w, i, it->second.second, target});
    }
  }
  return out;
}

std::vector<Read> Flatten(const std::vector<Reading>& rs, uint64_t* targets) {
  std::vector<Read> out;
  for (const Reading& r : rs) {
    for (uint64_t t = r.tokens.begin; t < r.tokens.end; ++t) {
      out.push_back({r.window, int64_t(r.window_offset + (t - r.tokens.begin)), t, false});
    }
    *targets += r.targets;
  }
  return out;
}

// Every document's readings equal the scan's reads, token by token, and the loss-bearing
// counts agree.
void ExpectReadingsMatchScan(const std::vector<SyntheticSource>& sources, const StreamConfig& cfg,
                             int64_t steps) {
  TempDir dir;
  StreamConfig plain = cfg;
  plain.prepend_bos = false;  // the manifest writer wants a BOS id with it: set both after
  Manifest m = MakeCorpus(dir.path(), sources, plain);
  m.stream.prepend_bos = cfg.prepend_bos;
  m.tokenizer.bos_id = 5;  // below the synthetic ids
  CanonicalStream s(m), scan_stream(m);
  const auto scan = ScanAll(scan_stream, sources, steps);
  uint64_t docs_read = 0, reads = 0;
  for (uint32_t i = 0; i < s.num_sources(); ++i) {
    for (uint32_t h = 0; h < s.source(i).num_shards(); ++h) {
      for (uint64_t d = 0; d < s.source(i).shard(h).num_docs(); ++d) {
        uint64_t targets = 0;
        auto got = Flatten(ReadDocument(s, {i, h, d}, {0, UINT64_MAX}, steps), &targets);
        auto it = scan.find(DocKey{i, h, d});
        std::vector<Read> want = it == scan.end() ? std::vector<Read>{} : it->second;
        uint64_t want_targets = 0;
        for (auto& r : want) {
          want_targets += std::get<3>(r) ? 1 : 0;
          std::get<3>(r) = false;
        }
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        ASSERT_EQ(got, want) << "source " << i << " shard " << h << " doc " << d;
        EXPECT_EQ(targets, want_targets) << "source " << i << " shard " << h << " doc " << d;
        docs_read += want.empty() ? 0 : 1;
        reads += want.size();
      }
    }
  }
  EXPECT_GT(docs_read, 0u);
  EXPECT_GT(reads, 0u);
}

StreamConfig Chunked(bool bos) {
  StreamConfig c;
  c.seed = 5, c.seq_len = 24, c.schedule = {{0, 3}, {4, 5}};
  c.chunking.max_tokens = 12, c.chunking.overlap = 4;
  c.prepend_bos = bos;
  return c;
}

TEST(Readings, PermutationOverSeveralEpochsWithChunksAndPhases) {
  StreamConfig c = Chunked(true);
  c.mixture_phases = {{6, {{"web", 0.2}, {"code", 0.8}}}};
  c.seq_len_phases = {{9, 40}};
  ExpectReadingsMatchScan({{"web", 0.7, 2, 9, 1, 40, Sampling::kPermutation, 3},
                           {"code", 0.3, 1, 5, 5, 30, Sampling::kPermutation, 2}},
                          c, 1000);  // past the end: every window of the finite stream
}

TEST(Readings, ReplacementAndEndlessPermutationUpToTheRunsSteps) {
  StreamConfig c = Chunked(false);
  c.replacement_block_tokens = 50;
  ExpectReadingsMatchScan({{"web", 0.5, 2, 7, 1, 30, Sampling::kReplacement},
                           {"books", 0.5, 2, 4, 10, 50, Sampling::kPermutation}},
                          c, 30);
}

TEST(Readings, ContinuationBoundaryAndContinuousSemantics) {
  StreamConfig c = Chunked(true);
  c.chunking.boundary = ChunkBoundary::kContinuation;
  c.chunking.overlap_loss_once = false;
  c.semantics = Semantics::kContinuous;
  ExpectReadingsMatchScan({{"web", 1, 2, 6, 1, 45, Sampling::kPermutation, 2}}, c, 1000);
}

TEST(Readings, AStretchIsReadOnlyWhereItsTokensAre) {
  TempDir dir;
  StreamConfig c = Chunked(false);
  Manifest m = MakeCorpus(dir.path(), {{"web", 1, 1, 4, 30, 30, Sampling::kPermutation, 1}}, c);
  CanonicalStream s(m);
  const auto whole = ReadDocument(s, {0, 0, 2}, {0, 30}, 1000);
  const auto part = ReadDocument(s, {0, 0, 2}, {13, 17}, 1000);
  ASSERT_FALSE(part.empty());
  for (const Reading& r : part) {
    EXPECT_GE(r.tokens.begin, 13u);
    EXPECT_LE(r.tokens.end, 17u);
  }
  EXPECT_LT(part.size(), whole.size() + 1);
  EXPECT_TRUE(ReadDocument(s, {0, 0, 2}, {0, 30}, 0).empty());  // no step trained
  EXPECT_THROW(ReadDocument(s, {0, 0, 4}, {0, 30}, 10), Error);
  EXPECT_THROW(ReadDocument(s, {1, 0, 0}, {0, 30}, 10), Error);
}

}  // namespace
}  // namespace trail::data
