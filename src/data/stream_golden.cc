#include "data/stream_golden.h"

#include <algorithm>

#include "core/error.h"
#include "core/file_util.h"
#include "core/golden.h"
#include "core/hash.h"
#include "data/packing.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"

namespace trail::data {

std::vector<std::string> StreamGoldenNames() { return {"stream", "stream_bos"}; }

std::string CommittedStreamGoldenDigest(const std::string& name) {
  const GoldenTable& t = CommittedGoldens("stream");
  const auto it = t.find(name);
  return it == t.end() ? "" : it->second;
}

namespace {

void HashWindows(const Manifest& m, Sha256Hasher& h) {
  CanonicalStream s(m);
  RawWindow w;
  PackedBatch b;
  std::vector<uint64_t> windows;
  for (uint64_t i = 0; i < 200; ++i) windows.push_back(i);
  for (uint64_t i : {1'000'000ull, 10'000'001ull, 123'456'789ull, 4'000'000'000ull}) {
    windows.push_back(i);
  }
  for (uint64_t i : windows) {
    s.Window(i, w);
    b.Resize(1, m.stream.seq_len);
    PackRow(w, m.stream.semantics, b, 0);
    h.UpdateU64(i);
    h.UpdateU64(w.owner.source);
    h.UpdateU64(w.owner.source_window);
    for (const Segment& seg : w.segments) {
      for (uint64_t v : {uint64_t{seg.shard}, seg.doc, uint64_t{seg.chunk}, seg.piece_offset,
                         seg.length, seg.pass}) {
        h.UpdateU64(v);
      }
    }
    const auto put = [&](const auto& v) { h.Update(v.data(), v.size() * sizeof(v[0])); };
    put(b.inputs);
    put(b.labels);
    put(b.doc_ids);
    put(b.positions);
    put(b.key_valid);
    put(b.loss_mask);
  }
}

}  // namespace

std::string ComputeStreamGoldenDigest(const std::string& name) {
  const std::vector<std::string> names = StreamGoldenNames();
  TRAIL_CHECK(std::find(names.begin(), names.end(), name) != names.end(), "no stream golden '",
              name, "'");
  TempDir dir("trail-stream-golden");
  StreamConfig cfg;
  cfg.seed = 20261202;
  cfg.seq_len = 48;
  cfg.chunking.max_tokens = 40;
  cfg.chunking.overlap = 6;
  cfg.replacement_block_tokens = 1000;
  const std::vector<synthetic::SyntheticSource> sources = {
      {"web", 0.6, 3, 40, 1, 120},
      {"code", 0.3, 2, 25, 5, 90, Sampling::kPermutation, 2},
      {"books", 0.1, 1, 6, 50, 400, Sampling::kReplacement}};
  Manifest m = synthetic::MakeCorpus(dir.path(), sources, cfg, 2);
  if (name == "stream_bos") m.stream.prepend_bos = true, m.tokenizer.bos_id = 5;
  Sha256Hasher h;
  HashWindows(m, h);
  // The other choices: continuous semantics, window positions, continuation chunks, both.
  m.stream.semantics = Semantics::kContinuous;
  m.stream.positions = PositionMode::kWindow;
  m.stream.chunking.boundary = ChunkBoundary::kContinuation;
  m.stream.chunking.overlap_loss_once = false;
  HashWindows(m, h);
  return ToHex(h.Finish());
}

}  // namespace trail::data
