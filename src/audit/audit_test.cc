#include <bit>
#include <filesystem>
#include <functional>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/published_run.h"
#include "audit/replay.h"
#include "audit/step_selection.h"
#include "core/file_util.h"
#include "core/test_util.h"
#include "core/thread_pool.h"
#include "repops/kernels.h"
#include "train/checkpoint.h"
#include "train/recipe.h"
#include "train/run_attestation.h"
#include "train/test_run.h"
#include "train/trajectory.h"

namespace trail::audit {
namespace {

using train::MakeRun;
using train::RunFiles;

ReplayReport Replay(const RunFiles& f, std::vector<int64_t> steps) {
  ReplayOptions o;
  o.run_dir = f.run, o.data = f.manifest, o.steps = std::move(steps), o.quiet = true;
  return ReplaySteps(o);
}

// The chains the replay computed for the requested steps, "verdict:chain" each.
std::vector<std::string> Outcome(const ReplayReport& r) {
  std::vector<std::string> out;
  for (const StepVerdict& v : r.steps) {
    if (v.requested) out.push_back(std::string(VerdictName(v.verdict)) + ":" + v.chain);
  }
  return out;
}

TEST(StepSelection, RangesAndSeededSamples) {
  EXPECT_EQ(ParseSteps("7"), std::vector<int64_t>{7});
  EXPECT_EQ(ParseSteps("3:6"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_NE(ErrorOf([] { ParseSteps("6:3"); }).find("holds no step"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseSteps("x"); }).find("is not a step"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseSteps("-1"); }).find("is not a step"), std::string::npos);
  const std::vector<int64_t> a = SampleSteps(1000, 10, 42), b = SampleSteps(1000, 10, 42);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 10u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_NE(SampleSteps(1000, 10, 43), a);
  EXPECT_EQ(SampleSteps(5, 10, 1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(Replay, EveryStepMatchesFromTheNearestStartingPoint) {
  const auto f = MakeRun(12, 4);
  train::Train(*f, false);
  const ReplayReport all = Replay(*f, ParseSteps("0:12"));
  EXPECT_TRUE(all.ok()) << ReportText(all);
  ASSERT_EQ(all.steps.size(), 12u);
  const PublishedRun run = OpenPublishedRun(f->run);
  for (const StepVerdict& v : all.steps) {
    EXPECT_EQ(v.verdict, Verdict::kMatch);
    EXPECT_EQ(v.chain, ToHex(run.records[v.step].chain));
  }
  // Step 10 alone: from the checkpoint at 8, step 9 replayed on the way.
  const ReplayReport one = Replay(*f, {10});
  EXPECT_TRUE(one.ok()) << ReportText(one);
  ASSERT_EQ(one.steps.size(), 3u);
  EXPECT_EQ(one.steps[0].step, 8);
  EXPECT_FALSE(one.steps[0].requested);
  EXPECT_TRUE(one.steps[2].requested);
  EXPECT_EQ(ReportJson(one)["verdict"], "match");
  EXPECT_NE(ErrorOf([&] { Replay(*f, {12}); }).find("beyond the 12 steps"), std::string::npos);
}

// The verdicts (and replayed chains) do not depend on the thread count or SIMD target.
TEST(Replay, SameVerdictsOnEveryBackendAndThreadCount) {
  const auto f = MakeRun(6, 3);
  train::Train(*f, false);
  std::vector<std::string> first;
  for (const repops::Backend& b : repops::AvailableBackends()) {
    for (size_t threads : {1, 2, 7}) {
      repops::UseBackend(b);
      SetKernelThreads(threads);
      const std::vector<std::string> got = Outcome(Replay(*f, {1, 4, 5}));
      if (first.empty()) first = got;
      EXPECT_EQ(got, first) << b.name << " with " << threads << " threads";
    }
  }
  repops::UseDefaultBackend();
  EXPECT_EQ(first.size(), 3u);
  for (const std::string& s : first) EXPECT_EQ(s.substr(0, 6), "match:");
}

// ------------------------------------------------------------------ tampering
// Each forgery recomputes every hash it can without the trainer's key: the trajectory's chain
// from the altered record on, the checkpoints' meta.json, and the (unsigned) attestation.

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileToString(path));
}

// Rewrites the trajectory with `edit` applied to record `step`'s body, chains it again from
// there, and makes every later checkpoint's meta.json and the attestation agree.
void ForgeRecord(const RunFiles& f, int64_t step,
                 const std::function<void(nlohmann::json&)>& edit) {
  const train::RunDirectory rd(f.run);
  const train::RunInfo info = rd.ReadInfo();
  const std::vector<train::TrajectoryRecord> recs = rd.ReadTrajectory(info.genesis, false);
  std::string text;
  Digest chain = info.genesis;
  std::map<int64_t, Digest> chain_after;
  for (const train::TrajectoryRecord& r : recs) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.line);
    j.erase("chain");
    if (r.step == step) {
      nlohmann::json plain = j;
      edit(plain);
      for (auto& [k, v] : plain.items()) j[k] = v;
    }
    const std::string body = j.dump();
    chain = train::ChainNext(chain, body);
    chain_after[r.step] = chain;
    text += train::TrajectoryLine(body, chain) + "\n";
  }
  WriteFileAtomic(rd.trajectory_path(), text);
  for (int64_t c : train::ListCheckpoints(f.run)) {
    if (c <= step) continue;
    const std::string meta = train::CheckpointDir(f.run, c) + "/meta.json";
    nlohmann::json m = ReadJson(meta);
    m["trajectory_chain"] = ToHex(chain_after[c - 1]);
    WriteFileAtomic(meta, m.dump(2));
  }
  train::WriteRunAttestation(rd, train::RunStatement(rd, f.manifest), nullptr);
}

TEST(Tampering, AnAlteredRecordIsLocalizedToItsStep) {
  const auto f = MakeRun(12, 4);
  train::Train(*f, false);
  ForgeRecord(*f, 6, [](nlohmann::json& j) {
    std::string bits = j["loss_bits"];
    bits[7] = bits[7] == '0' ? '1' : '0';
    j["loss_bits"] = bits;
  });
  EXPECT_TRUE(train::RunDirectory(f->run).Verify().ok());  // the files alone look consistent
  const ReplayReport r = Replay(*f, ParseSteps("0:12"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure(), 6) << ReportText(r);
  EXPECT_EQ(r.Find(6)->verdict, Verdict::kDiffers);
  EXPECT_NE(r.Find(6)->detail.find("loss_bits: the run records"), std::string::npos);
  // Later steps are replayed again from the checkpoint after the difference.
  EXPECT_EQ(r.Find(7)->verdict, Verdict::kUnverified) << r.Find(7)->detail;
  EXPECT_EQ(r.Find(8)->verdict, Verdict::kMatch);
  EXPECT_EQ(r.Find(11)->verdict, Verdict::kMatch);
}

TEST(Tampering, AnUnchainedRecordIsAFindingAtItsStep) {
  const auto f = MakeRun(8, 4);
  train::Train(*f, false);
  std::string traj = ReadFileToString(f->run + "/trajectory.jsonl");
  const size_t at = traj.find("\"loss_bits\":\"", traj.find("\"step\":5,")) + 13;
  traj[at + 7] = traj[at + 7] == '0' ? '1' : '0';
  WriteFileAtomic(f->run + "/trajectory.jsonl", traj);
  const ReplayReport r = Replay(*f, ParseSteps("0:8"));
  EXPECT_EQ(r.first_failure(), 5) << ReportText(r);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings[0].what.find("chained hash of step 5 does not match"), std::string::npos);
  EXPECT_EQ(r.Find(4)->verdict, Verdict::kMatch);
  EXPECT_EQ(r.Find(6)->verdict, Verdict::kUnverified);
}

// One bit of a checkpoint's weights, with its meta.json rewritten to match (file and state
// hashes): the checkpoint disagrees with the trajectory at its step; the steps themselves still
// verify from the starting point before it.
TEST(Tampering, OneBitOfACheckpointIsLocalizedToItsStep) {
  const auto f = MakeRun(12, 4);
  train::Train(*f, false);
  const std::string recipe = ReadFileToString(f->recipe);
  const train::Recipe rc = train::ParseRecipe(recipe, "r.toml", train::kVocab);
  const train::RunInfo info = train::RunDirectory(f->run).ReadInfo();
  const train::RunIdentity id{rc.sha256, info.json["manifest_sha256"]};
  train::TrainState st(rc.model);
  train::LoadCheckpoint(train::CheckpointDir(f->run, 8), id, st);
  float* w = st.params.tensors()[3].data<float>();
  w[17] = std::bit_cast<float>(std::bit_cast<uint32_t>(w[17]) ^ 1u);
  train::SaveCheckpoint(f->run, st, id);  // every hash in meta.json recomputed
  EXPECT_TRUE(train::RunDirectory(f->run).Verify().ok());
  const ReplayReport r = Replay(*f, {9});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure(), 8) << ReportText(r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NE(r.findings[0].what.find("parameter state hash"), std::string::npos);
  EXPECT_NE(r.findings[0].what.find("after step 7"), std::string::npos);
  EXPECT_EQ(r.Find(9)->verdict, Verdict::kMatch);  // replayed from checkpoint 4
  EXPECT_EQ(r.Find(4)->verdict, Verdict::kMatch);
}

}  // namespace
}  // namespace trail::audit
