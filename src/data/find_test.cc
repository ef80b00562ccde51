// The find index and token search: winnowing's guarantee, exact documents, excerpts and edited
// copies found with the readings of the stream, a damaged or foreign index refused.
#include "data/find.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "core/le_bytes.h"
#include "core/test_util.h"
#include "data/band_set.h"
#include "data/document_set.h"
#include "data/synthetic_corpus.h"

namespace trail::data {
namespace {

using synthetic::MakeCorpus;

// Any run of n + w - 1 tokens shared by two sequences holds a gram both select at the same place
// (winnowing's guarantee), also with repeated tokens (ties in the gram hashes).
TEST(FindIndex, WinnowingSelectsAGramInEverySharedRunOfTheGuaranteedLength) {
  std::mt19937 rng(3);
  for (uint32_t vocab : {3u, 1000u}) {
    for (uint32_t n : {1u, 4u, 13u}) {
      for (uint32_t w : {1u, 5u, 38u}) {
        std::vector<uint32_t> t(400);
        for (auto& x : t) x = rng() % vocab;
        const auto all = WinnowedGrams(t, n, w);
        const std::set<uint32_t> sel(all.begin(), all.end());
        const uint32_t L = n + w - 1;
        for (uint32_t a = 0; a + L <= t.size(); a += 7) {
          const std::vector<uint32_t> s(t.begin() + a, t.begin() + a + L);
          bool shared = false;
          for (uint32_t o : WinnowedGrams(s, n, w)) shared |= sel.count(a + o) > 0;
          EXPECT_TRUE(shared) << "vocab " << vocab << " n " << n << " w " << w << " at " << a;
        }
        // Density about 2 / (w + 1) on varied tokens.
        if (vocab == 1000 && w == 38) {
          EXPECT_LT(all.size(), 400u * 4 / 39);
        }
      }
    }
  }
  EXPECT_TRUE(WinnowedGrams(std::vector<uint32_t>(3, 1), 4, 2).empty());  // shorter than a gram
}

StreamConfig Config() {
  StreamConfig c;
  c.seed = 9, c.seq_len = 64, c.schedule = {{0, 4}};
  return c;
}

struct Fixture {
  TempDir dir;
  Manifest m = MakeCorpus(dir.path(),
                          {{"web", 0.6, 2, 8, 60, 160, Sampling::kPermutation, 2},
                           {"code", 0.4, 1, 6, 20, 90, Sampling::kPermutation, 2}},
                          Config());
  CanonicalStream s{m};
  Digest manifest_hash = Sha256OfFile(dir / "manifest.json");
  std::string index_path = dir / "find.idx";
  FindIndexSummary built = BuildFindIndex(s, manifest_hash, index_path);
  FindIndex index{index_path, manifest_hash};

  std::vector<uint32_t> Doc(uint32_t src, uint32_t shard, uint64_t d) {
    const ShardReader& sh = s.source(src).shard(shard);
    const DocRecord rec = sh.doc(d);
    std::vector<int32_t> raw(rec.length);
    sh.CopyTokens(rec.token_start, rec.length, raw.data());
    return {raw.begin(), raw.end()};
  }
};

TEST(Find, AWholeDocumentIsFoundWithItsReadings) {
  Fixture f;
  EXPECT_EQ(f.built.documents, 22u);
  EXPECT_EQ(f.index.num_docs(), 22u);
  const auto doc = f.Doc(0, 1, 3);
  const FindResult r = FindTokens(f.s, f.index, doc, {.steps = 1000});
  ASSERT_EQ(r.same_documents.size(), 1u);
  ASSERT_FALSE(r.runs.empty());
  const SharedRun& top = r.runs[0];
  EXPECT_EQ(top.ref.source, 0u);
  EXPECT_EQ(top.ref.shard, 1u);
  EXPECT_EQ(top.ref.doc, 3u);
  EXPECT_EQ(top.key, "web/1/3");
  EXPECT_TRUE(top.whole_query && top.whole_document);
  // Two epochs, the stream finite (1000 steps read all of it): every token but the document's
  // first is a target once per epoch; the first follows another document (independent
  // semantics mask that label).
  const auto want = ReadDocument(f.s, top.ref, {0, doc.size()}, 1000);
  ASSERT_EQ(top.readings.size(), want.size());
  std::set<uint64_t> passes;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(top.readings[i].window, want[i].window);
    passes.insert(top.readings[i].pass);
  }
  EXPECT_EQ(passes, (std::set<uint64_t>{0, 1}));
  EXPECT_EQ(top.targets, 2 * (doc.size() - 1));
  // Read by no step when the run trained none.
  EXPECT_TRUE(FindTokens(f.s, f.index, doc, {.steps = 0}).runs[0].readings.empty());
}

TEST(Find, AnExcerptAndAnEditedCopyAreFoundAsSharedRuns) {
  Fixture f;
  auto doc = f.Doc(0, 0, 5);
  ASSERT_GE(doc.size(), 120u);
  const std::vector<uint32_t> excerpt(doc.begin() + 20, doc.begin() + 110);
  FindResult r = FindTokens(f.s, f.index, excerpt, {.steps = 1000});
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_TRUE(r.runs[0].whole_query);
  EXPECT_FALSE(r.runs[0].whole_document);
  EXPECT_EQ(r.runs[0].doc_tokens.begin, 20u);
  EXPECT_EQ(r.runs[0].doc_tokens.end, 110u);
  for (const Reading& x : r.runs[0].readings) {
    EXPECT_GE(x.tokens.begin, 20u);
    EXPECT_LE(x.tokens.end, 110u);
  }
  // One token changed in the middle: two shared runs, neither the whole query.
  doc[60] = 1;
  r = FindTokens(f.s, f.index, doc, {.steps = 10});
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_TRUE(r.same_documents.empty());
  std::set<std::pair<uint64_t, uint64_t>> ranges;
  for (const SharedRun& x : r.runs) {
    EXPECT_FALSE(x.whole_query);
    ranges.insert({x.doc_tokens.begin, x.doc_tokens.end});
  }
  EXPECT_EQ(ranges, (std::set<std::pair<uint64_t, uint64_t>>{{0, 60}, {61, doc.size()}}));
  // Shorter than min_tokens: not reported.
  r = FindTokens(f.s, f.index, doc, {.min_tokens = 70});
  EXPECT_EQ(r.runs.size(), doc.size() - 61 >= 70 ? 1u : 0u);
}

TEST(Find, TextNotInTheCorpusAndBadQueries) {
  Fixture f;
  std::vector<uint32_t> other(300);
  for (size_t i = 0; i < other.size(); ++i) other[i] = 16 + uint32_t(i);
  const FindResult r = FindTokens(f.s, f.index, other, {});
  EXPECT_TRUE(r.runs.empty() && r.same_documents.empty());
  EXPECT_GT(r.grams_looked_up, 0u);
  EXPECT_EQ(r.guaranteed_tokens, 50u);
  EXPECT_THROW(FindTokens(f.s, f.index, {}, {}), Error);
  EXPECT_EQ(FindKey(f.s, "code/0/2", 0).ref.source, 1u);
  EXPECT_THROW(FindKey(f.s, "code/0/99", 0), Error);
  EXPECT_FALSE(FindKeyIfTrained(f.s, "code/0/99", 0).has_value());
}

// A lineage verdict's survivor: its steps when it is a training document, null when it is
// none, no key without a survivor.
TEST(Find, BuildVerdictsSayWhetherTheSurvivorWasTrainedOn) {
  Fixture f;
  std::vector<BuildVerdict> v = {{"web/9/9", "web", "", false, "exact_dup", "code/0/2", {}},
                                 {"web/9/8", "web", "", false, "near_dup", "code/0/99", {}},
                                 {"web/0/1", "web", "train", true, "", "", {}}};
  AddSurvivorReadings(f.s, v, 1000);
  ASSERT_TRUE(v[0].survivor_steps_read.has_value());
  EXPECT_EQ(*v[0].survivor_steps_read, FindKey(f.s, "code/0/2", 1000).steps_read);
  EXPECT_GT(*v[0].survivor_steps_read, 0u);
  EXPECT_FALSE(v[1].survivor_steps_read.has_value());
  EXPECT_FALSE(v[2].survivor_steps_read.has_value());
  EXPECT_EQ(BuildVerdictToJson(v[0])["survivor_steps_read"], *v[0].survivor_steps_read);
  EXPECT_TRUE(BuildVerdictToJson(v[1])["survivor_steps_read"].is_null());
  EXPECT_FALSE(BuildVerdictToJson(v[2]).contains("survivor_steps_read"));
  EXPECT_EQ(BuildVerdictToJson(v[2]).dump(),
            R"({"key":"web/0/1","source":"web","kept":true,"split":"train","dropped":"",)"
            R"("survivor":""})");
}

TEST(FindIndex, ADamagedOrForeignIndexIsRefused) {
  Fixture f;
  Digest other = f.manifest_hash;
  other[0] ^= 1;
  EXPECT_THROW(FindIndex(f.index_path, other), Error);
  const std::string bytes = ReadFileToString(f.index_path);
  for (size_t at : {size_t{0}, size_t{200}, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] ^= 0x10;
    WriteFileAtomic(f.dir / "bad.idx", bad);
    EXPECT_THROW(FindIndex(f.dir / "bad.idx", f.manifest_hash), Error) << at;
  }
  WriteFileAtomic(f.dir / "short.idx", bytes.substr(0, bytes.size() - 16));
  EXPECT_THROW(FindIndex(f.dir / "short.idx", f.manifest_hash), Error);
}

// The committed sets' files: written, read back, and refused when they do not add up.
TEST(CommittedSets, BandAndDocumentSetsRoundTripAndRefuseBadHeaders) {
  const BandParams p{.ngram = 5, .bands = 3, .rows = 2, .seed = 9, .threshold = 0.7};
  const std::string bytes = BandSetBytes(p, {{1, 5}, {}, {2, 3, 4}});
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  const BandSetHeader h = ParseBandSetHeader(b, bytes.size(), "x");
  EXPECT_EQ(h.params, p);
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{2, 0, 3}));
  EXPECT_EQ(GetU64(b + h.KeyOffset(2, 1)), 3u);
  EXPECT_THROW(ParseBandSetHeader(b, bytes.size() - 8, "x"), Error);  // truncated
  std::string bad = bytes;
  PutU32(reinterpret_cast<uint8_t*>(bad.data()) + 20, 5000);  // rows: 15 000 hashes
  EXPECT_THROW(ParseBandParams(reinterpret_cast<const uint8_t*>(bad.data()), "x"), Error);
  EXPECT_NEAR(BandMissProbability(0.8, BandParams{}), 3.5606e-4, 1e-8);  // (1 - 0.8^5)^20

  const std::string set = DocumentSetBytes({Digest{}, Digest{1}});
  EXPECT_EQ(ParseDocumentSetHeader(reinterpret_cast<const uint8_t*>(set.data()), set.size(), "s"),
            2u);
  EXPECT_THROW(
      ParseDocumentSetHeader(reinterpret_cast<const uint8_t*>(set.data()), set.size() - 1, "s"),
      Error);
}

}  // namespace
}  // namespace trail::data
