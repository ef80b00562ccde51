#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "data/inspect.h"
#include "data/manifest.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"
#include "core/test_util.h"

namespace trail::data {
namespace {

using synthetic::MakeCorpus;
using synthetic::SyntheticSource;

StreamConfig SmallStream() {
  StreamConfig c;
  c.seed = 42;
  c.seq_len = 16;
  c.chunking.max_tokens = 24;
  c.chunking.overlap = 4;
  c.schedule = {{0, 4}, {10, 8}};
  c.micro_batch_windows = 2;
  return c;
}

// Rewrites manifest.json with `edit` applied to its JSON and loads it again.
std::string LoadEdited(const TempDir& dir,
                       const std::function<void(nlohmann::ordered_json&)>& edit) {
  const std::string path = dir / "manifest.json";
  auto j = nlohmann::ordered_json::parse(ReadFileToString(path));
  edit(j);
  const std::string edited = dir / "edited.json";
  std::ofstream(edited) << j.dump(2);
  return ErrorOf([&] { CanonicalStream s(LoadManifest(edited)); });
}

TEST(Manifest, RoundTripsThroughJson) {
  TempDir dir;
  const Manifest m = MakeCorpus(dir.path(), {{"web", 0.7}, {"code", 0.3}}, SmallStream());
  EXPECT_EQ(m.sources.size(), 2u);
  EXPECT_EQ(m.stream.chunking.overlap, 4u);
  EXPECT_EQ(m.stream.schedule.size(), 2u);
  EXPECT_EQ(ManifestToJson(m), ReadFileToString(dir / "manifest.json"));
  const Manifest again = ParseManifest(ManifestToJson(m), "x", dir.path());
  EXPECT_EQ(ManifestToJson(again), ManifestToJson(m));
}

TEST(Manifest, BadManifestsAreClearErrors) {
  TempDir dir;
  MakeCorpus(dir.path(), {{"web", 0.7}, {"code", 0.3}}, SmallStream());
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["sources"][0]["weight"] = 1; })
                .find("unknown key 'weight' in sources[0]"),
            std::string::npos);
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["stream"]["seqlen"] = 5; })
                .find("unknown key 'seqlen' in stream"),
            std::string::npos);
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["stream"]["semantics"] = "packed"; })
                .find("expected one of: independent, continuous"),
            std::string::npos);
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["tokenizer"].erase("vocab_size"); })
                .find("missing 'vocab_size' in tokenizer"),
            std::string::npos);
  EXPECT_NE(
      LoadEdited(dir, [](auto& j) { j["sources"][1]["target_share"] = -1; }).find("target_share"),
      std::string::npos);
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["stream"]["chunking"]["overlap"] = 24; })
                .find("overlap must be smaller"),
            std::string::npos);
  EXPECT_NE(LoadEdited(dir, [](auto& j) { j["stream"]["batch_schedule"][0]["from_step"] = 3; })
                .find("must start with from_step 0"),
            std::string::npos);
  // A manifest pointing at a missing file names that file.
  std::string err =
      LoadEdited(dir, [](auto& j) { j["sources"][1]["shards"][0]["path"] = "gone.tshard"; });
  EXPECT_NE(err.find("gone.tshard: cannot open"), std::string::npos) << err;
  // Token counts that disagree with the shard.
  err = LoadEdited(dir, [](auto& j) { j["sources"][0]["shards"][1]["tokens"] = 1; });
  EXPECT_NE(err.find("web-1.tshard: the manifest says"), std::string::npos) << err;
  // A shard hash that disagrees with the manifest.
  err = LoadEdited(dir,
                   [](auto& j) { j["sources"][0]["shards"][0]["sha256"] = std::string(64, 'a'); });
  EXPECT_NE(err.find("web-0.tshard: the manifest expects sha256"), std::string::npos) << err;
  // Another tokenizer contract.
  err = LoadEdited(dir, [](auto& j) { j["tokenizer"]["contract"] = std::string(64, 'b'); });
  EXPECT_NE(err.find("tokenized under contract"), std::string::npos) << err;
  // Not JSON at all.
  std::ofstream(dir / "broken.json") << "{\"format\": ";
  EXPECT_NE(ErrorOf([&] { LoadManifest(dir / "broken.json"); }).find("broken.json: not valid JSON"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] { LoadManifest(dir / "absent.json"); }).find("absent.json: manifest not found"),
      std::string::npos);
}

// Data annealing in the manifest: a mixture phase round-trips, starts at the first window of its
// step (steps 0..9 take 4 windows, then 8: step 12 starts at window 56), and the windows of
// each phase follow its shares; bad phases are refused naming the field.
TEST(Manifest, MixturePhasesStartAtTheirStepsWindowAndFollowTheirShares) {
  TempDir dir;
  StreamConfig sc = SmallStream();
  sc.mixture_phases = {{12, {{"code", 1.0}}}};
  const Manifest m = MakeCorpus(dir.path(), {{"web", 0.7}, {"code", 0.3}}, sc);
  EXPECT_EQ(ManifestToJson(ParseManifest(ManifestToJson(m), "x", dir.path())), ManifestToJson(m));
  EXPECT_NE(ManifestToJson(m).find("\"mixture_phases\""), std::string::npos);
  CanonicalStream s(LoadManifest(dir / "manifest.json"));
  const std::vector<uint64_t> at = s.mixture().CountsBefore(56),
                              later = s.mixture().CountsBefore(200);
  EXPECT_EQ(at[0] + at[1], 56u);
  EXPECT_NEAR(double(at[0]) / 56, 0.7, 3.0 / 56);  // within 1 + S windows
  EXPECT_EQ(later[0], at[0]);                      // only code from window 56 on
  EXPECT_EQ(later[1], at[1] + 144);
  // inspect names the step and the mixture phase of a window: window 55 is step 11's (phase 0),
  // window 56 step 12's (the phase from step 12).
  EXPECT_EQ(InspectWindow(s, 55, nullptr).mixture_phase_from_step, 0);
  EXPECT_EQ(InspectWindow(s, 56, nullptr).step, 12);
  EXPECT_EQ(InspectWindow(s, 56, nullptr).mixture_phase_from_step, 12);
  EXPECT_EQ(ToJson(InspectWindow(s, 56, nullptr))["source"], "code");
  const MixturePhase bad_step{0, {{"code", 1.0}}}, unknown{3, {{"wiki", 1.0}}},
      zero{3, {{"code", 0.0}}};
  auto error = [&](const MixturePhase& p) {
    return LoadEdited(dir, [&](nlohmann::ordered_json& j) {
      j["stream"]["mixture_phases"] = nlohmann::ordered_json::array(
          {{{"from_step", p.from_step}, {"shares", {{p.shares[0].first, p.shares[0].second}}}}});
    });
  };
  EXPECT_NE(error(bad_step).find("mixture_phases[0].from_step must be > 0"), std::string::npos);
  EXPECT_NE(error(unknown).find("names 'wiki', which is not a source"), std::string::npos);
  EXPECT_NE(error(zero).find("shares sum to zero"), std::string::npos);
}

// The sequence-length curriculum in the manifest: a length phase round-trips, starts at the
// first window of its step (window 56 for step 12), and every window from there on is of its
// length, each source continuing where its last window ended; inspect shows the window's length,
// its offset in the source and the phase, and the step report the new L and the LR clock
// (steps 0..9: 4 windows of 16; steps 10, 11: 8 of 16; so step 12 starts after 896 tokens and
// step 13 after 896 + 8·40). Bad phases are refused naming the field.
TEST(Manifest, LengthPhasesStartAtTheirStepsWindow) {
  TempDir dir;
  StreamConfig sc = SmallStream();
  sc.seq_len_phases = {{12, 40}};
  const Manifest m = MakeCorpus(dir.path(), {{"web", 0.7}, {"code", 0.3}}, sc);
  EXPECT_EQ(ManifestToJson(ParseManifest(ManifestToJson(m), "x", dir.path())), ManifestToJson(m));
  EXPECT_NE(ManifestToJson(m).find("\"seq_len_phases\""), std::string::npos);
  CanonicalStream s(LoadManifest(dir / "manifest.json"));
  EXPECT_EQ(s.max_seq_len(), 40);
  EXPECT_EQ(s.SeqLenAtStep(11), 16);
  EXPECT_EQ(s.SeqLenAtStep(12), 40);
  const std::vector<uint64_t> counts = s.mixture().CountsBefore(56),
                              offsets = s.mixture().OffsetsBefore(56);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(offsets[k], counts[k] * 16);
  const Json w = ToJson(InspectWindow(s, 56, nullptr));
  EXPECT_EQ(w["seq_len"], 40);
  EXPECT_EQ(w["tokens"].size(), 41u);
  EXPECT_EQ(w["seq_len_phase_from_step"], 12);
  EXPECT_EQ(w["source_offset"], offsets[w["source"] == "web" ? 0 : 1]);
  EXPECT_EQ(ToJson(InspectWindow(s, 55, nullptr))["seq_len"], 16);
  EXPECT_EQ(ToJson(InspectStep(s, 12, 2, -1))["tokens_before"], 896);
  EXPECT_EQ(ToJson(InspectStep(s, 12, 2, -1))["B_input"], 8 * 40);
  EXPECT_EQ(ToJson(InspectStep(s, 13, 2, -1))["tokens_before"], 896 + 8 * 40);
  auto error = [&](int64_t from, int64_t L) {
    return LoadEdited(dir, [&](nlohmann::ordered_json& j) {
      j["stream"]["seq_len_phases"] =
          nlohmann::ordered_json::array({{{"from_step", from}, {"seq_len", L}}});
    });
  };
  EXPECT_NE(error(0, 32).find("seq_len_phases[0].from_step must be > 0"), std::string::npos);
  EXPECT_NE(error(5, 16).find("a phase must change the length"), std::string::npos);
  EXPECT_NE(error(5, 0).find("seq_len_phases[0].seq_len 0 out of range"), std::string::npos);
}

}  // namespace
}  // namespace trail::data
