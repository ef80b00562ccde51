// prepend_bos (docs/data.md §3.1): the stream, evaluation windows and the manifest with a BOS
// before every document.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/file_util.h"
#include "core/test_util.h"
#include "data/eval_stream.h"
#include "data/packing.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"
namespace trail::data {
namespace {

using synthetic::MakeCorpus;

constexpr int32_t kBos = 5;  // below the synthetic corpus's token ids (all >= 16)

StreamConfig Config(int64_t L) {
  StreamConfig c;
  c.seed = 7, c.seq_len = L, c.schedule = {{0, 6}}, c.micro_batch_windows = 2;
  return c;
}

// prepend_bos: a BOS before each piece (independent) or each document's first (continuation),
// the document's tokens after it unchanged, positions and the overlap's context shifted by it.
TEST(Stream, PrependBosStartsEveryPieceOrDocumentWithBos) {
  for (ChunkBoundary boundary : {ChunkBoundary::kIndependent, ChunkBoundary::kContinuation}) {
    TempDir dir;
    StreamConfig cfg = Config(64);
    cfg.chunking.max_tokens = 10, cfg.chunking.overlap = 3, cfg.chunking.boundary = boundary;
    Manifest m = MakeCorpus(dir.path(), {{"web", 1, 1, 6, 15, 40, Sampling::kPermutation, 1}}, cfg);
    CanonicalStream plain(m);
    m.stream.prepend_bos = true, m.tokenizer.bos_id = kBos;
    CanonicalStream s(m);
    std::multiset<int32_t> with, without;
    uint64_t bos = 0, pieces = 0, docs = 0;
    RawWindow w;
    for (uint64_t i = 0; i < s.num_windows(); ++i) {
      s.Window(i, w);
      for (int64_t t = 0; t < w.length; ++t) {
        const Segment& seg = w.segments[w.doc[t]];
        const uint64_t k = seg.piece_offset + (t - seg.window_offset);  // offset in the piece
        const bool starts = boundary == ChunkBoundary::kIndependent || seg.chunk == 0;
        EXPECT_EQ(seg.piece_bos, starts);
        EXPECT_EQ(w.tokens[t] == kBos, starts && k == 0) << "window " << i << " token " << t;
        if (w.tokens[t] == kBos) {
          ++bos;
          continue;
        }
        const uint64_t start = ChunkStart(cfg.chunking, seg.chunk);
        // Positions: the piece's offset, or the document's stream offset (its BOS first).
        EXPECT_EQ(w.positions[t], boundary == ChunkBoundary::kIndependent
                                      ? int32_t(k)
                                      : int32_t(start + k + (seg.chunk > 0 ? 1 : 0)));
        // The overlap (once): the first 3 chunk tokens of a later piece, after its BOS.
        const uint64_t in_chunk = k - (seg.piece_bos ? 1 : 0);
        EXPECT_EQ(w.target_ok[t], seg.chunk > 0 && in_chunk < 3 ? 0 : 1);
        if (w.tokens[t] != m.tokenizer.eos_id) with.insert(w.tokens[t]);
      }
      for (const Segment& seg : w.segments) {
        pieces += seg.piece_offset == 0;
        docs += seg.piece_offset == 0 && seg.chunk == 0;
      }
    }
    for (uint64_t i = 0; i < plain.num_windows(); ++i) {
      plain.Window(i, w);
      for (int64_t t = 0; t < w.length; ++t) {
        if (w.tokens[t] != m.tokenizer.eos_id) without.insert(w.tokens[t]);
      }
    }
    EXPECT_EQ(bos, boundary == ChunkBoundary::kIndependent ? pieces : docs);
    EXPECT_GT(pieces, docs);
    // Windows overlap by one token: both multisets count each window's first token again, and
    // the BOS marks shift which tokens those are, so compare the sets of distinct tokens.
    EXPECT_EQ(std::set<int32_t>(with.begin(), with.end()),
              std::set<int32_t>(without.begin(), without.end()));
  }
}

// Evaluation windows: each document (or independent piece) starts with BOS, scored after it.
TEST(EvalStream, PrependBosStartsEveryDocumentWithBos) {
  TempDir dir;
  StreamConfig cfg = Config(8);
  Manifest m = MakeCorpus(dir.path(), {{"web", 1, 2, 9, 1, 30}}, cfg);
  m.validation.push_back({"web", m.sources[0].shards});
  m.stream.prepend_bos = true, m.tokenizer.bos_id = kBos;
  const EvalStream ev(m, "validation", "web");
  RawWindow w;
  uint64_t bos = 0, docs = 0, targets = 0, expected = 0;
  PackedBatch b;
  for (uint64_t i = 0; i < ev.num_windows(); ++i) {
    ev.Window(i, w);
    const Segment& seg = w.segments[0];
    EXPECT_EQ(w.tokens[0] == kBos, seg.piece_offset == 0);
    bos += w.tokens[0] == kBos;
    docs += seg.piece_offset == 0;
    EXPECT_EQ(w.positions[0], int32_t(seg.piece_offset));
    b.Resize(1, 8);
    PackRow(w, Semantics::kIndependent, b, 0);
    targets += b.target_tokens;
  }
  // Every document token and its EOS: the first token, never a target, is now the BOS.
  for (const auto& sh : m.sources[0].shards) expected += sh.tokens + sh.documents;
  EXPECT_EQ(bos, docs);
  EXPECT_EQ(targets, expected);
}

// The manifest writes prepend_bos and tokenizer.bos_id only when on, and refuses the flag
// without an id.
TEST(Manifest, PrependBosIsWrittenOnlyWhenOnAndNeedsABosId) {
  TempDir dir;
  Manifest m = MakeCorpus(dir.path(), {{"web", 1, 1, 3}}, Config(8));
  const std::string plain = ManifestToJson(m);
  EXPECT_EQ(plain.find("bos"), std::string::npos);
  m.stream.prepend_bos = true, m.tokenizer.bos_id = kBos;
  const std::string path = dir.path() + "/bos.json";
  SaveManifest(m, path);
  const Manifest back = LoadManifest(path);
  EXPECT_TRUE(back.stream.prepend_bos);
  EXPECT_EQ(back.tokenizer.bos_id, kBos);
  EXPECT_EQ(ManifestToJson(back), ManifestToJson(m));
  nlohmann::json j = nlohmann::json::parse(ReadFileToString(path));
  ASSERT_EQ(j["tokenizer"]["bos_id"], kBos);
  j["tokenizer"].erase("bos_id");
  WriteFileAtomic(path, j.dump());
  EXPECT_NE(ErrorOf([&] { LoadManifest(path); }).find("prepend_bos needs tokenizer.bos_id"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::data
