#include <bit>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/attestation.h"
#include "audit/bisect.h"
#include "audit/certify.h"
#include "audit/collect.h"
#include "audit/plan.h"
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
#include "train/step_trace.h"
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
  for (const repops::SimdTarget& b : repops::AvailableSimdTargets()) {
    for (size_t threads : {1, 2, 7}) {
      repops::UseSimdTarget(b);
      SetKernelThreads(threads);
      const std::vector<std::string> got = Outcome(Replay(*f, {1, 4, 5}));
      if (first.empty()) first = got;
      EXPECT_EQ(got, first) << b.name << " with " << threads << " threads";
    }
  }
  repops::UseDefaultSimdTarget();
  EXPECT_EQ(first.size(), 3u);
  for (const std::string& s : first) EXPECT_EQ(s.substr(0, 6), "match:");
}

// A CPU-trained run audited on the guarded test device (whose memory host code outside its
// backend cannot touch): the same verdicts and chains, and a trace with the CPU trace's hashes.
TEST(Replay, GuardedDeviceGivesTheCpuVerdictsAndTraces) {
  const auto f = MakeRun(6, 3);
  train::Train(*f, false);
  ReplayOptions o;
  o.run_dir = f->run, o.data = f->manifest, o.steps = {1, 4, 5}, o.quiet = true;
  const std::vector<std::string> cpu = Outcome(ReplaySteps(o));
  o.device = repops::ParseDevice("guarded");
  const std::vector<std::string> guarded = Outcome(ReplaySteps(o));
  EXPECT_EQ(guarded, cpu);
  ASSERT_EQ(cpu.size(), 3u);
  for (const std::string& s : cpu) EXPECT_EQ(s.substr(0, 6), "match:");
  o.steps = {4}, o.trace_step = 4, o.bisect = false;
  o.device = {};
  const train::StepTrace a = ReplaySteps(o).trace;
  o.device = repops::ParseDevice("guarded");
  const train::StepTrace b = ReplaySteps(o).trace;
  ASSERT_EQ(a.ops.size(), b.ops.size());
  EXPECT_GT(a.ops.size(), 50u);
  for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].hash, b.ops[i].hash) << i;
}

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileToString(path));
}

TEST(RunAttestation, TheTrainerSignsTheFinishedRunAndAlterationsAreFound) {
  const auto f = MakeRun(6, 3);
  TempDir keys;
  SigningKey::Generate().Save(keys.path() + "/trainer");
  train::TrainOptions o;
  o.recipe_path = f->recipe, o.manifest_path = f->manifest, o.run_dir = f->run, o.quiet = true;
  o.sign_key = keys.path() + "/trainer.pub";
  EXPECT_NE(ErrorOf([&] { train::RunTraining(o); }).find("is a public key"), std::string::npos);
  o.sign_key = keys.path() + "/trainer.key", o.stop_after = 4;
  train::RunTraining(o);
  EXPECT_FALSE(std::filesystem::exists(f->run + "/attestation.json"));  // not finished yet
  o.resume = true, o.stop_after = -1;
  const train::TrainSummary s = train::RunTraining(o);
  const PublishedRun run = OpenPublishedRun(f->run);
  EXPECT_TRUE(run.attestation.present);
  EXPECT_TRUE(run.attestation.is_signed);
  EXPECT_TRUE(run.attestation.problems.empty());
  EXPECT_EQ(run.attestation.signer, SigningKey::Load(keys.path() + "/trainer.pub").fingerprint());
  const nlohmann::json doc = ReadJson(f->run + "/attestation.json");
  EXPECT_EQ(doc["statement"]["final_chain"], s.final_chain);
  EXPECT_EQ(doc["statement"]["final_params"], s.final_params);
  EXPECT_EQ(doc["statement"]["steps"], 6);
  // Altered after signing: the signature no longer verifies, and the replay says so.
  std::string text = ReadFileToString(f->run + "/attestation.json");
  text.replace(text.find("\"steps\": 6"), 10, "\"steps\": 5");
  WriteFileAtomic(f->run + "/attestation.json", text);
  const ReplayReport r = Replay(*f, {5});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.attestation.problems.size(), 2u) << ReportText(r);
  EXPECT_NE(r.attestation.problems[0].find("signature does not verify"), std::string::npos);
  EXPECT_NE(r.attestation.problems[1].find("attests 5 steps but the trajectory holds 6"),
            std::string::npos);
}

// ------------------------------------------------------------------ tampering
// Each forgery recomputes every hash it can without the trainer's key: the trajectory's chain
// from the altered record on, the checkpoints' meta.json, and the (unsigned) attestation.

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
  train::TrainState st(rc.model, train::TestCpu());
  train::LoadCheckpoint(train::CheckpointDir(f->run, 8), id, st);
  float* w = st.params.tensors()[3].data<float>();  // on the cpu device
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

// ------------------------------------------------------------------ traces and bisection

// A test-only backend: the active kernels, except that every square 32×32×32 GEMM (the model's
// q, k, v and o projections here) flips the lowest bit of element 37 of its output.
const repops::Kernels* g_base = nullptr;
void PerturbedGemm(const repops::GemmArgs& a) {
  g_base->gemm(a);
  if (!a.accumulate && a.M == 32 && a.N == 32 && a.K == 32) {
    float& x = a.c[(37 / a.N) * a.ldc + 37 % a.N];
    x = std::bit_cast<float>(std::bit_cast<uint32_t>(x) ^ 1u);
  }
}

std::unique_ptr<RunFiles> TracedRun() {
  auto f = MakeRun(6, 3);
  train::TrainOptions o;
  o.recipe_path = f->recipe, o.manifest_path = f->manifest, o.run_dir = f->run, o.quiet = true;
  o.trace_every = 3;
  train::RunTraining(o);
  return f;
}

TEST(Trace, ReplayedTracesEqualTheRecordedOnEveryBackendAndThreadCount) {
  const auto f = TracedRun();
  EXPECT_TRUE(std::filesystem::exists(train::TracePath(f->run, 0)));
  EXPECT_TRUE(std::filesystem::exists(train::TracePath(f->run, 3)));
  EXPECT_FALSE(std::filesystem::exists(train::TracePath(f->run, 4)));
  const train::StepTrace recorded = train::ReadStepTrace(train::TracePath(f->run, 3));
  // Every micro-batch of both logical ranks: a batch entry, then the same operations; then
  // the step's state hashes.
  std::vector<size_t> starts;
  for (size_t i = 0; i < recorded.ops.size(); ++i) {
    if (recorded.ops[i].op == "batch") starts.push_back(i);
  }
  ASSERT_GE(starts.size(), 2u);
  EXPECT_EQ(recorded.ops[starts.back()].rank, 1);
  const size_t per_micro = starts[1] - starts[0];
  EXPECT_GT(per_micro, 40u);
  // Step 3 of a run with checkpoints every 3 steps commits no state: the gradient's hash only.
  EXPECT_EQ(recorded.ops.size(), starts.size() * per_micro + 1);
  EXPECT_EQ(recorded.ops[0].op, "batch");
  EXPECT_EQ(recorded.ops[2].tensor, "h1");
  EXPECT_EQ(recorded.ops.back().tensor, "grads");
  for (const repops::SimdTarget& b : repops::AvailableSimdTargets()) {
    for (size_t threads : {1, 7}) {
      repops::UseSimdTarget(b);
      SetKernelThreads(threads);
      ReplayOptions o;
      o.run_dir = f->run, o.data = f->manifest, o.steps = {3}, o.quiet = true, o.trace_step = 3;
      const ReplayReport r = ReplaySteps(o);
      EXPECT_TRUE(r.ok());
      EXPECT_FALSE(Bisect(recorded, r.trace).found) << b.name << " " << threads;
    }
  }
  repops::UseDefaultSimdTarget();
  SetKernelThreads(2);
}

TEST(Trace, APerturbedKernelIsNamedOpLayerTensorAndElement) {
  const auto f = TracedRun();
  repops::Kernels perturbed = repops::ActiveKernels();
  g_base = &repops::ActiveKernels();
  perturbed.gemm = PerturbedGemm;
  perturbed.name = "perturbed";
  repops::UseKernels(perturbed);
  ReplayOptions o;
  o.run_dir = f->run, o.data = f->manifest, o.steps = {3}, o.quiet = true;
  const ReplayReport r = ReplaySteps(o);
  // The auditor's own trace, hashes only: the operation is named, not yet the element.
  ReplayOptions t = o;
  t.trace_step = 3, t.bisect = false;
  const train::StepTrace mine = ReplaySteps(t).trace;
  repops::UseDefaultSimdTarget();

  EXPECT_EQ(r.Find(3)->verdict, Verdict::kDiffers);
  EXPECT_NE(r.divergence.find("first diverging operation: entry 3: matmul, layer 0, tensor q_proj "
                              "(logical rank 0, micro-batch 0), shape [32,32]"),
            std::string::npos)
      << r.divergence;
  EXPECT_NE(r.divergence.find("first differing element 37 [1,5]"), std::string::npos)
      << r.divergence;
  EXPECT_NE(r.divergence.find("trace A holds the value the specification"), std::string::npos);
  EXPECT_NE(r.Find(3)->detail.find("q_proj"), std::string::npos);

  const train::StepTrace recorded = train::ReadStepTrace(train::TracePath(f->run, 3));
  const Divergence d = Bisect(recorded, mine);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.index, 3);
  EXPECT_EQ(d.a.tensor, "q_proj");
  EXPECT_FALSE(d.element_known);
  // With values captured on both sides the element and both values are named.
  train::StepTrace a = recorded, b = mine;
  for (auto* side : {&a, &b}) {
    ReplayOptions c = o;
    c.trace_step = 3, c.capture = 3, c.bisect = false;
    if (side == &b) repops::UseKernels(perturbed);
    *side = ReplaySteps(c).trace;
    repops::UseDefaultSimdTarget();
  }
  const Divergence e = Bisect(a, b);
  ASSERT_TRUE(e.element_known);
  EXPECT_EQ(e.element, 37);
  EXPECT_EQ(e.coords, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(e.a_bits ^ e.b_bits, 1u);
  EXPECT_EQ(DivergenceJson(e)["element"]["index"], 37);
}

// Hostile trace and plan files get a clear error, never an overflow or a huge allocation.
TEST(Trace, HostileFilesAreRefused) {
  TempDir dir;
  const std::string header =
      "{\"format\":\"trail.trace.v1\",\"genesis\":\"g\",\"step\":0,"
      "\"chain\":\"c\",\"backend\":\"b\",\"threads\":1,\"processes\":1,"
      "\"ops\":1}\n";
  auto entry = [](const std::string& shape, const std::string& values) {
    return "{\"i\":0,\"rank\":0,\"micro\":0,\"op\":\"matmul\",\"layer\":0,\"tensor\":\"q\","
           "\"shape\":" +
           shape + ",\"hash\":\"h\"" + values + "}\n";
  };
  const std::string path = dir.path() + "/t.trace";
  WriteFileAtomic(path, header + entry("[4611686018427387904,4]", ""));
  EXPECT_NE(ErrorOf([&] { train::ReadStepTrace(path); }).find("t.trace:2: a trace entry of more"),
            std::string::npos);
  WriteFileAtomic(path, header + entry("[2,2]", ",\"values\":\"00\""));
  EXPECT_NE(ErrorOf([&] { train::ReadStepTrace(path); }).find("values hold 1 bytes for 4"),
            std::string::npos);
  WriteFileAtomic(path, header + entry("[2,2]", "") + entry("[2]", ""));
  EXPECT_NE(ErrorOf([&] { train::ReadStepTrace(path); }).find("where entry 1 belongs"),
            std::string::npos);
  const RunBinding run{std::string(64, 'a'), std::string(64, 'b'), 10};
  EXPECT_NE(ErrorOf([&] { MakePlan(run, int64_t{1} << 40, 1, 10); }).find("number of auditors"),
            std::string::npos);
  // A validly signed attestation whose fields have the wrong types.
  const SigningKey k = SigningKey::Generate();
  const nlohmann::json st = {{"format", kAttestationFormat},
                             {"run", {{"genesis", "g"}, {"final_chain", "c"}, {"steps", 1}}},
                             {"plan_sha256", "p"},
                             {"auditor", "zero"},
                             {"steps", {}}};
  const nlohmann::json doc = {
      {"statement", st},
      {"public_key", k.public_hex()},
      {"signature", k.Sign(std::string(kAttestationFormat) + "\n" + st.dump())}};
  WriteFileAtomic(dir.path() + "/a.json", doc.dump());
  EXPECT_NE(ErrorOf([&] {
              ReadSignedAttestation(dir.path() + "/a.json");
            }).find("a.json: auditor must be an integer, not \"zero\""),
            std::string::npos);
}

// ------------------------------------------------------------------ verifying a run together

TEST(Plan, EveryStepToRDistinctAuditorsBalancedAndBoundToTheRun) {
  const RunBinding run{std::string(64, 'a'), std::string(64, 'b'), 100};
  const AuditPlan p = MakePlan(run, 7, 3, 100);
  std::map<int64_t, std::set<int64_t>> who;
  for (int64_t a = 0; a < 7; ++a) {
    const auto& steps = p.assignments[a];
    EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
    EXPECT_GE(steps.size(), 300u / 7);
    EXPECT_LE(steps.size(), 300u / 7 + 1);
    for (int64_t s : steps) EXPECT_TRUE(who[s].insert(a).second);
  }
  EXPECT_EQ(who.size(), 100u);
  for (const auto& [s, auditors] : who) EXPECT_EQ(auditors.size(), 3u) << s;
  EXPECT_EQ(MakePlan(run, 7, 3, 100), p);
  RunBinding other = run;
  other.final_chain[0] = 'c';
  EXPECT_NE(MakePlan(other, 7, 3, 100).assignments, p.assignments);
  EXPECT_EQ(MakePlan(run, 4, 2, 10).assignments.size(), 4u);
  EXPECT_NE(ErrorOf([&] { MakePlan(run, 2, 3, 10); }).find("redundancy"), std::string::npos);
}

struct Auditors {
  TempDir dir;
  std::vector<std::string> keys;  // private key paths
  std::string pubs;               // directory of the trusted public keys
};

std::unique_ptr<Auditors> MakeAuditors(int n) {
  auto owned = std::make_unique<Auditors>();
  Auditors& a = *owned;
  a.pubs = a.dir.path() + "/trusted";
  std::filesystem::create_directories(a.pubs);
  for (int i = 0; i < n; ++i) {
    const std::string base = a.dir.path() + "/auditor" + std::to_string(i);
    SigningKey::Generate().Save(base);
    std::filesystem::copy_file(base + ".pub", a.pubs + "/auditor" + std::to_string(i) + ".pub");
    a.keys.push_back(base + ".key");
  }
  return owned;
}

std::string WritePlan(const RunFiles& f, const std::string& path, int64_t K, int64_t r) {
  WriteFileAtomic(path, PlanJson(PlanForRun(f.run, K, r, -1)).dump(2));
  return path;
}

std::string CertifyAs(const RunFiles& f, const std::string& plan, const Auditors& a, int slot,
                      const std::string& out) {
  CertifyOptions o;
  o.run_dir = f.run, o.plan_path = plan, o.key_path = a.keys[slot], o.data = f.manifest;
  o.auditor = slot, o.quiet = true;
  WriteFileAtomic(out, Certify(o).attestation.dump(2));
  return out;
}

// Re-signs an attestation's (edited) statement with `key`, as its holder could.
void Resign(const std::string& path, const std::string& key,
            const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = ReadJson(path);
  edit(doc["statement"]);
  const SigningKey k = SigningKey::Load(key);
  doc["public_key"] = k.public_hex();
  doc["signature"] = k.Sign(std::string(kAttestationFormat) + "\n" + doc["statement"].dump());
  WriteFileAtomic(path, doc.dump(2));
}

TEST(Collective, FourAuditorsCoverARunAndForgeriesAreCaughtOrRejected) {
  const auto f = MakeRun(40, 10);
  train::Train(*f, false);
  const auto owned = MakeAuditors(5);  // the fifth is trusted but not in the plan
  const Auditors& a = *owned;
  const std::string dir = a.dir.path();
  const std::string plan = WritePlan(*f, dir + "/plan.json", 4, 2);
  std::vector<std::string> att;
  for (int i = 0; i < 4; ++i) {
    att.push_back(CertifyAs(*f, plan, a, i, dir + "/att" + std::to_string(i) + ".json"));
  }
  const CollectReport good = Collect(f->run, plan, att, a.pubs);
  EXPECT_EQ(good.verdict, "verified") << CollectText(good);
  EXPECT_EQ(good.steps.size(), 40u);
  EXPECT_EQ(good.CoveredBy(2), 40);
  EXPECT_TRUE(good.rejected.empty());

  // Auditor 2 forges one verdict of its own and signs it: a disagreement, named.
  const int64_t forged_step = ReadJson(att[2])["statement"]["steps"][1]["step"];
  Resign(att[2], a.keys[2], [](nlohmann::json& st) {
    st["steps"][1]["verdict"] = "differs";
    st["steps"][1]["detail"] = "loss_bits: made up";
  });
  // An attestation for another run, by a trusted auditor.
  const auto other = MakeRun(6, 3);
  train::Train(*other, false);
  const std::string other_plan = WritePlan(*other, dir + "/other_plan.json", 4, 2);
  const std::string foreign = CertifyAs(*other, other_plan, a, 1, dir + "/foreign.json");
  // An altered attestation, re-signed by a key no one trusts; one altered and not re-signed.
  std::filesystem::copy_file(att[1], dir + "/resigned.json");
  SigningKey::Generate().Save(dir + "/mallory");
  Resign(dir + "/resigned.json", dir + "/mallory.key",
         [](nlohmann::json& st) { st["auditor"] = 1; });
  std::string altered = ReadFileToString(att[0]);
  altered.replace(altered.find("\"match\""), 7, "\"matcH\"");
  WriteFileAtomic(dir + "/altered.json", altered);
  // Auditor 3 adds a step the plan did not assign to it.
  std::filesystem::copy_file(att[3], dir + "/unassigned.json");
  const AuditPlan p = PlanForRun(f->run, 4, 2, -1);
  int64_t unassigned = 0;
  while (std::binary_search(p.assignments[3].begin(), p.assignments[3].end(), unassigned)) {
    ++unassigned;
  }
  Resign(dir + "/unassigned.json", a.keys[3], [&](nlohmann::json& st) {
    st["steps"].push_back(
        {{"step", unassigned}, {"verdict", "match"}, {"chain", ""}, {"detail", ""}});
  });

  const CollectReport r = Collect(f->run, plan,
                                  {att[0], att[1], att[2], dir + "/unassigned.json", foreign,
                                   dir + "/resigned.json", dir + "/altered.json", att[3]},
                                  a.pubs);
  EXPECT_EQ(r.verdict, "disputed") << CollectText(r);
  std::map<std::string, std::string> why;
  for (const Rejection& x : r.rejected) why[std::filesystem::path(x.path).filename()] = x.reason;
  EXPECT_NE(why["unassigned.json"].find("is not assigned to auditor 3"), std::string::npos);
  EXPECT_NE(why["foreign.json"].find("for another run"), std::string::npos);
  EXPECT_NE(why["resigned.json"].find("not a trusted auditor"), std::string::npos);
  EXPECT_NE(why["altered.json"].find("signature does not verify"), std::string::npos);
  EXPECT_EQ(why.size(), 4u);
  EXPECT_EQ(r.accepted.size(), 4u);  // att[3] itself, after its altered copy was refused
  int disagreements = 0;
  for (const StepTally& t : r.steps) {
    if (!t.disagreement) continue;
    ++disagreements;
    EXPECT_EQ(t.step, forged_step);
    ASSERT_EQ(t.votes.size(), 2u);
  }
  EXPECT_EQ(disagreements, 1);
  EXPECT_EQ(r.CoveredBy(1), 40);
  EXPECT_EQ(r.CoveredBy(2), 39);
  EXPECT_NE(CollectText(r).find("DISAGREEMENT at step " + std::to_string(forged_step)),
            std::string::npos);

  // A plan altered to skip a step is refused outright.
  nlohmann::json pj = ReadJson(plan);
  pj["assignments"][0]["steps"].erase(0);
  WriteFileAtomic(dir + "/bad_plan.json", pj.dump(2));
  EXPECT_NE(ErrorOf([&] {
              Collect(f->run, dir + "/bad_plan.json", att, a.pubs);
            }).find("the plan was altered"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::audit
