#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/test_util.h"
#include "data/inspect.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"
#include "train/checkpoint.h"
#include "train/lr_schedule.h"
#include "train/recipe.h"
#include "train/test_run.h"
#include "train/run_dir.h"
#include "train/spike_monitor.h"
#include "train/step.h"
#include "collectives/thread_group.h"
#include "train/trainer.h"
#include "train/trajectory.h"

namespace trail::train {
namespace {
namespace fs = std::filesystem;

// ---------------------------------------------------------------- LR schedule

TEST(LrSchedule, WarmupCosineAndWsdAreFunctionsOfTokens) {
  LrSchedule s;
  s.peak_lr = 1e-3f, s.warmup_tokens = 1000, s.decay = DecayKind::kCosine, s.total_tokens = 11000;
  s.min_lr_ratio = 0.1f;
  EXPECT_FLOAT_EQ(s.At(0), 1e-6f);
  EXPECT_FLOAT_EQ(s.At(499), 5e-4f);
  EXPECT_FLOAT_EQ(s.At(1000), 1e-3f);
  EXPECT_NEAR(s.At(6000), 0.55e-3, 1e-9);  // half way: floor + (peak - floor) / 2
  EXPECT_FLOAT_EQ(s.At(11000), 1e-4f);
  EXPECT_FLOAT_EQ(s.At(50000), 1e-4f);
  for (int64_t t = 1000; t < 11000; t += 500) EXPECT_GE(s.At(t), s.At(t + 500));
  s.decay = DecayKind::kWsd, s.wsd_decay_tokens = 2000;
  EXPECT_FLOAT_EQ(s.At(8999), 1e-3f);
  EXPECT_NEAR(s.At(10000), 0.55e-3, 1e-9);
  EXPECT_FLOAT_EQ(s.At(11000), 1e-4f);
  s.wsd_decay_tokens = 20000;
  EXPECT_THROW(s.Validate(), Error);
}

// ---------------------------------------------------------------- loss-spike monitor

std::vector<Alert> Feed(SpikeMonitor& m, const std::vector<double>& xs, int64_t first = 0) {
  std::vector<Alert> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    for (const Alert& a : m.Observe(first + int64_t(i), xs[i])) out.push_back(a);
  }
  return out;
}

TEST(SpikeMonitor, OnlyTheLastPointOfTheReferenceSequenceIsFlagged) {
  SpikeMonitor m;
  const auto alerts = Feed(m, {2.00, 2.02, 1.98, 2.01, 1.99, 2.00, 2.03, 1.97, 3.00});
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].step, 8);
  EXPECT_EQ(alerts[0].kind, "anomaly");
}

TEST(SpikeMonitor, NoFalseAlarmOnASmoothDecline) {
  SpikeMonitor m;
  std::vector<double> xs;
  for (int i = 0; i < 400; ++i)
    xs.push_back(2.0 + 8.0 * std::exp(-i / 60.0) + 0.002 * ((i * 7) % 5));
  EXPECT_TRUE(Feed(m, xs).empty());
}

TEST(SpikeMonitor, SameJumpIsASpikeWhenItFallsBackAndAShiftWhenItStays) {
  const std::vector<double> base = {2.00, 2.02, 1.98, 2.01, 1.99, 2.00, 2.03, 1.97};
  std::vector<double> spike = base, shift = base;
  for (double x : {3.0, 2.01, 1.99, 2.00, 2.02}) spike.push_back(x);
  for (double x : {3.0, 3.01, 2.99, 3.02, 3.00}) shift.push_back(x);
  SpikeMonitor a, b;
  const auto sa = Feed(a, spike), sb = Feed(b, shift);
  ASSERT_EQ(sa.size(), 2u);
  EXPECT_EQ(sa[0].kind, "anomaly");
  EXPECT_EQ(sa[1].kind, "spike");
  EXPECT_EQ(sa[1].step, 8);
  ASSERT_EQ(sb.size(), 2u);
  EXPECT_EQ(sb[1].kind, "sustained_shift");
  EXPECT_EQ(sb[1].step, 8);
  // After a shift the new level is the baseline: staying there raises nothing more.
  EXPECT_TRUE(Feed(b, {3.01, 2.99, 3.0, 3.02}, 13).empty());
}

TEST(SpikeMonitor, NonFiniteIsFlaggedImmediatelyAndUnconditionally) {
  SpikeMonitor m;
  auto a = Feed(m, {NAN});  // even with no history
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "non_finite");
  a = Feed(m, {2.0, 2.0, INFINITY, 2.0, -INFINITY}, 1);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].step, 3);
  EXPECT_EQ(a[1].step, 5);
  EXPECT_EQ(a[1].kind, "non_finite");
  EXPECT_NE(a[0].ToJson().find("\"inf\""), std::string::npos);
}

TEST(SpikeMonitor, StateRoundTripsExactly) {
  SpikeMonitor a, b;
  Feed(a, {2.00, 2.02, 1.98, 2.01, 1.99, 2.00, 2.03, 1.97, 3.00, 2.0});  // a pending anomaly
  b.RestoreState(a.StateJson());
  EXPECT_EQ(a.StateJson(), b.StateJson());
  const auto x = Feed(a, {2.0, 2.01}, 10), y = Feed(b, {2.0, 2.01}, 10);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0].ToJson(), y[0].ToJson());
}

// ---------------------------------------------------------------- recipes

// ---------------------------------------------------------------- the step

TEST(Step, LogicalMeshesReduceTheSameGradientInTheirOwnOrder) {
  TempDir a, b;
  const data::Manifest m12 = Corpus(a.path(), 12, 1);
  const OneStep flat = RunOneStep(m12, SmallRecipe(1, 1, "micro_batches = 12\n"));
  const OneStep mesh = RunOneStep(m12, SmallRecipe(3, 2, "micro_batches = 2\n"));
  EXPECT_EQ(flat.result.batch_hash == mesh.result.batch_hash, false);  // windows dealt to ranks
  EXPECT_LT(RelDiff(*mesh.grad, *flat.grad), 1e-5);
  EXPECT_NE(flat.result.grads_hash, mesh.result.grads_hash);  // the order is part of the bits
  // The mesh is asserted against the data: 12 windows over 6 ranks is 2 micro-batches, not 3.
  EXPECT_NE(ErrorOf([&] {
              RunOneStep(m12, SmallRecipe(3, 2, "micro_batches = 3\n"));
            }).find("has 2 micro-batches but the recipe's mesh says 3"),
            std::string::npos);
}

TEST(Step, AnyProcessCountGivesTheSameBits) {
  TempDir a;
  // 12 windows a step over 3 replicas x 2 shards: 2 micro-batches per logical rank. d_ff =
  // 1040 makes each MLP matrix 66,560 elements, two state-hash chunks, so process ranges also
  // begin inside a tensor.
  const data::Manifest m = Corpus(a.path(), 12, 1);
  const std::string recipe =
      "[model]\nd_model = 64\nn_layers = 1\nn_heads = 2\nd_ff = 1040\nmax_seq_len = 32\n"
      "init_seed = 3\n[optimizer]\nlr = 1e-2\nclip_norm = 0.05\n"
      "[mesh]\nreplicas = 3\nshards = 2\nmicro_batches = 2\n";
  const std::vector<std::string> one = RunOnProcesses(m, recipe, 1, 3);
  for (int P : {2, 3, 4, 6}) {
    EXPECT_EQ(RunOnProcesses(m, recipe, P, 3), one) << "P=" << P;
  }
  // Sharded moments, collectives and the gather on the guarded device (docs/devices.md).
  EXPECT_EQ(RunOnProcesses(m, recipe, 3, 3, "guarded"), one) << "guarded, P=3";
  EXPECT_NE(ErrorOf([&] { RunOnProcesses(m, recipe, 7, 1); }).find("at most that many processes"),
            std::string::npos);
}

TEST(Step, TheSpikeProtocolSkipsAndRecordsTheUpdate) {
  TempDir a;
  const data::Manifest m = Corpus(a.path(), 4, 2);
  data::CanonicalStream stream(m);
  // A hair-trigger protocol: any norm above 1.0001 x the median of the accepted ones skips.
  const Recipe r = ParseRecipe(SmallRecipe(1, 1), "r.toml", kVocab);
  Recipe rc = r;
  rc.optimizer.spike_skip_factor = 1.0001f, rc.optimizer.spike_min_history = 1;
  StepEngine engine(rc, stream);
  TrainState st(rc.model, engine.backend());
  st.params.InitRandom(rc.model);
  int skipped = 0;
  for (int s = 0; s < 12; ++s) {
    const Digest before = st.params.StateHash();
    const Digest opt_before = st.OptimizerHash();
    const int64_t updates = st.optimizer_updates, tokens = st.tokens;
    const StepResult res = engine.Run(st);
    EXPECT_EQ(st.tokens, tokens + res.input_tokens);  // the batch is consumed either way
    if (res.skipped()) {
      ++skipped;
      EXPECT_EQ(res.skip, SkipReason::kSpike);
      EXPECT_EQ(st.params.StateHash(), before);  // no update, no moment change
      EXPECT_EQ(st.OptimizerHash(), opt_before);
      EXPECT_EQ(st.optimizer_updates, updates);
      EXPECT_NE(TrajectoryBody(res).find("\"skipped\":\"spike\""), std::string::npos);
    } else {
      EXPECT_NE(st.params.StateHash(), before);
      EXPECT_EQ(st.optimizer_updates, updates + 1);
    }
  }
  EXPECT_GT(skipped, 0);
  EXPECT_LT(skipped, 12);  // the first step has no history, and accepted norms move the median
}

// ---------------------------------------------------------------- the trainer: resume

TEST(Resume, StopAndResumeEqualsAStraightRun) {
  const auto straight = MakeRun(12, 4);
  const TrainSummary s = Train(*straight, false);
  EXPECT_EQ(s.steps_done, 12);
  const auto split = MakeRun(12, 4);
  // Interrupted after step 6 (newest checkpoint: 4): steps 4 and 5 are re-executed on resume
  // and must reproduce their records.
  Train(*split, false, 6);
  const TrainSummary r = Train(*split, true);
  EXPECT_EQ(r.steps_verified_on_resume, 2);
  EXPECT_EQ(r.final_chain, s.final_chain);
  EXPECT_EQ(r.final_params, s.final_params);
  EXPECT_EQ(ReadFileToString(split->run + "/trajectory.jsonl"),
            ReadFileToString(straight->run + "/trajectory.jsonl"));
  // Checkpoint files are byte-identical too.
  EXPECT_EQ(ReadFileToString(CheckpointDir(split->run, 12) + "/optim.safetensors"),
            ReadFileToString(CheckpointDir(straight->run, 12) + "/optim.safetensors"));
}

// A run's lifecycle: two sources half and half, then from step 5 only "late" (data annealing);
// windows of L = 8, four per step, then from step 6 windows of L = 24, two per step (the
// sequence-length curriculum). Every document is 11 tokens + EOS, so the stream of either source
// is periodic in pieces of 12 tokens and a window's targets can be counted by hand.
std::unique_ptr<RunFiles> LifecycleRun() {
  auto f = MakeRun(10, 4);
  data::StreamConfig sc;
  sc.seed = 5, sc.seq_len = 8, sc.schedule = {{0, 4}, {6, 2}}, sc.micro_batch_windows = 2;
  sc.chunking.max_tokens = 24;  // never cuts an 11-token document; positions stay below 32
  sc.mixture_phases = {{5, {{"late", 1.0}}}};
  sc.seq_len_phases = {{6, 24}};
  data::synthetic::MakeCorpus(
      f->dir.path(), {{"early", 0.5, 2, 40, 11, 11}, {"late", 0.5, 2, 40, 11, 11}}, sc, 2, kVocab);
  return f;
}

// A run stopped after step 7 (newest checkpoint 4, before both switches) resumes across the
// mixture phase and the length switch onto the straight run's bits.
TEST(Resume, AcrossAMixturePhaseAndALengthSwitchEqualsAStraightRun) {
  const auto straight = LifecycleRun();
  const TrainSummary s = Train(*straight, false);
  const auto split = LifecycleRun();
  Train(*split, false, 7);
  const TrainSummary r = Train(*split, true);
  EXPECT_EQ(r.steps_verified_on_resume, 3);
  EXPECT_EQ(r.final_chain, s.final_chain);
  EXPECT_EQ(ReadFileToString(split->run + "/trajectory.jsonl"),
            ReadFileToString(straight->run + "/trajectory.jsonl"));
  data::CanonicalStream stream(data::LoadManifest(straight->manifest));
  std::set<uint32_t> before, after;
  for (uint64_t w = 0; w < 28; ++w)
    (w < 20 ? before : after).insert(stream.mixture().Owner(w).source);
  EXPECT_EQ(before, (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(after, (std::set<uint32_t>{1}));
}

// Both sides of the switch, counted by hand: step s reads windows of L(s) = 8 (s < 6) or 24,
// four or two of them, so B_input = 32 or 48 and the consumed-token counter (the LR clock) after
// step s is 32(s+1) for s < 6 and 192 + 48(s-5) after. A window at offset o of its source's
// stream covers tokens [o, o+L]; label i is a target unless token i is an EOS (i ≡ 11 mod 12),
// so it has L - (⌊(o+L)/12⌋ - ⌊o/12⌋) targets, and each source's next window starts at o + L.
TEST(Lifecycle, BatchAccountingAndTheLrClockFollowTheLengthSwitch) {
  const auto f = LifecycleRun();
  Train(*f, false);
  data::CanonicalStream stream(data::LoadManifest(f->manifest));
  std::vector<uint64_t> offset(2, 0);
  uint64_t w = 0;
  int64_t tokens = 0;
  const Recipe recipe = LoadRecipe(f->recipe, kVocab);
  std::ifstream metrics(f->run + "/metrics.jsonl");
  std::string line;
  for (int64_t step = 0; step < 10; ++step) {
    const int64_t L = step < 6 ? 8 : 24, windows = step < 6 ? 4 : 2;
    int64_t targets = 0;
    for (int64_t k = 0; k < windows; ++k, ++w) {
      const data::WindowOwner o = stream.Owner(w);
      ASSERT_EQ(o.seq_len, L) << "window " << w;
      ASSERT_EQ(o.token_offset, offset[o.source]) << "window " << w;
      const uint64_t a = offset[o.source], b = a + uint64_t(L);
      targets += L - int64_t(b / 12 - a / 12);
      offset[o.source] = b;
    }
    ASSERT_TRUE(std::getline(metrics, line));
    const nlohmann::json m = nlohmann::json::parse(line);
    EXPECT_EQ(m["step"].get<int64_t>(), step);
    EXPECT_EQ(m["targets"].get<int64_t>(), targets) << "step " << step;  // B_target
    EXPECT_EQ(m["lr"].get<float>(), recipe.schedule.At(tokens)) << "step " << step;
    tokens += windows * L;  // B_input
    EXPECT_EQ(m["tokens"].get<int64_t>(), step < 6 ? 32 * (step + 1) : 192 + 48 * (step - 5));
    EXPECT_EQ(m["tokens"].get<int64_t>(), tokens);
  }
  // The per-phase report: token shares of each mixture phase against its targets, and the length
  // phases' windows and tokens.
  const data::Json shares = data::ToJson(data::SourceShares(stream, w));
  const data::Json& phases = shares["mixture_phases"];
  EXPECT_NEAR(phases[0]["measured_share"]["early"].get<double>(), 0.5, 1.0 / 20);
  EXPECT_EQ(phases[1]["measured_share"]["late"].get<double>(), 1.0);
  EXPECT_EQ(shares["seq_len_phases"][0]["tokens"].get<uint64_t>(), 24u * 8u);
  EXPECT_EQ(shares["seq_len_phases"][1]["tokens"].get<uint64_t>(), 8u * 24u);
  EXPECT_EQ(shares["tokens"].get<uint64_t>(), offset[0] + offset[1]);
}

// A length phase beyond the model's RoPE table is refused before any step, naming both lengths.
TEST(Lifecycle, ALengthPhaseLongerThanTheModelIsAClearError) {
  const auto f = MakeRun(4, 4);
  data::StreamConfig sc;
  sc.seed = 5, sc.seq_len = 16, sc.schedule = {{0, 4}}, sc.micro_batch_windows = 2;
  sc.positions = data::PositionMode::kWindow;
  sc.seq_len_phases = {{2, 48}};  // the small recipe's max_seq_len is 32
  data::synthetic::MakeCorpus(f->dir.path(), {{"a", 1.0, 2, 40, 1, 30}}, sc, 2, kVocab);
  const std::string err = ErrorOf([&] { Train(*f, false); });
  EXPECT_NE(err.find("the data's longest windows of 48 tokens exceed the model's max_seq_len 32"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(f->run + "/trajectory.jsonl"));
}

// Parameter and optimizer state hashes are recorded where the recipe commits state: before
// each checkpoint (every 4 steps here), every state_hash_every (default 10) steps and at the end.
TEST(Trajectory, StateHashesAtCommitPointsGradientHashesEveryStep) {
  const auto f = MakeRun(12, 4);
  Train(*f, false);
  const RunDirectory rd(f->run);
  std::set<int64_t> committed;
  for (const TrajectoryRecord& r : rd.ReadTrajectory(rd.ReadInfo().genesis, false)) {
    const nlohmann::json j = nlohmann::json::parse(r.line);
    EXPECT_TRUE(j["grads"].is_string());
    EXPECT_EQ(j["params"].is_string(), j["optim"].is_string());
    if (j["params"].is_string()) committed.insert(r.step);
  }
  EXPECT_EQ(committed, (std::set<int64_t>{3, 7, 9, 11}));
  EXPECT_NE(ErrorOf([] {
              ParseRecipe(SmallRecipe(1, 1, "[train]\nstate_hash_every = -1\n"), "r.toml", kVocab);
            }).find("state_hash_every >= 0"),
            std::string::npos);
}

// A resume that starts from a state which lost its window cursor or its token count (here the
// checkpoint's meta.json says 0 for it, as a broken resume would have it) is caught at its first
// re-executed step.
TEST(Resume, ABrokenResumeIsDetectedAtItsFirstStep) {
  for (const char* field : {"window_cursor", "tokens_consumed"}) {
    const auto f = MakeRun(10, 4);
    Train(*f, false, 7);
    const std::string before = ReadFileToString(f->run + "/trajectory.jsonl");
    const std::string meta_path = CheckpointDir(f->run, 4) + "/" + kCheckpointMetaFile;
    const std::string meta = ReadFileToString(meta_path);
    nlohmann::json broken = nlohmann::json::parse(meta);
    broken[field] = 0;
    WriteFileAtomic(meta_path, broken.dump(2) + "\n");
    const bool cursor = std::string(field) == "window_cursor";
    const std::string err = ErrorOf([&] { Train(*f, true); });
    EXPECT_NE(err.find(cursor ? "cursor" : "resume diverged at step 4"), std::string::npos) << err;
    if (!cursor) {
      EXPECT_NE(err.find("tokens (expected"), std::string::npos) << err;  // the LR clock was reset
    }
    // Nothing recorded is lost, and an honest resume still completes the run.
    EXPECT_EQ(ReadFileToString(f->run + "/trajectory.jsonl"), before);
    WriteFileAtomic(meta_path, meta);
    EXPECT_EQ(Train(*f, true).steps_done, 10);
  }
}

TEST(Resume, DamagedCheckpointsAreSkippedOtherRunsRefused) {
  const auto ref = MakeRun(10, 4);
  const TrainSummary want = Train(*ref, false);
  for (int damage = 0; damage < 2; ++damage) {
    const auto f = MakeRun(10, 4);
    Train(*f, false, 9);  // checkpoints 0, 4, 8
    const std::string model = CheckpointDir(f->run, 8) + "/model.safetensors";
    std::string bytes = ReadFileToString(model);
    if (damage == 0)
      bytes[bytes.size() / 2] ^= 0x10;  // one flipped bit
    else
      bytes.resize(bytes.size() - 100);  // truncated
    WriteFileAtomic(model, bytes);
    const std::string err = ErrorOf([&] {
      TrainState st(ParseRecipe(ReadFileToString(f->recipe), "r", kVocab).model, TestCpu());
      LoadCheckpoint(
          CheckpointDir(f->run, 8),
          {ParseRecipe(ReadFileToString(f->recipe), "r", kVocab).sha256,
           ToHex(Sha256({reinterpret_cast<const uint8_t*>(ReadFileToString(f->manifest).data()),
                         ReadFileToString(f->manifest).size()}))},
          st);
    });
    EXPECT_NE(err.find("SHA-256 differs from meta.json (corrupted)"), std::string::npos) << err;
    // Resume falls back to checkpoint 4, keeps the damaged one aside, ends on the same bits.
    const TrainSummary s = Train(*f, true);
    EXPECT_EQ(s.final_chain, want.final_chain);
    EXPECT_TRUE(fs::exists(CheckpointDir(f->run, 8) + ".invalid"));
  }
  // A checkpoint written under another recipe is refused, and nothing is overwritten.
  const auto f = MakeRun(10, 4);
  Train(*f, false, 5);
  const std::string traj = ReadFileToString(f->run + "/trajectory.jsonl");
  std::string other = ReadFileToString(f->recipe);
  other.replace(other.find("lr = 1e-2"), 9, "lr = 2e-2");
  WriteFileAtomic(f->run + "/recipe.toml", other);
  const std::string err = ErrorOf([&] {
    TrainOptions o;
    o.manifest_path = f->manifest, o.run_dir = f->run, o.resume = true, o.quiet = true;
    RunTraining(o);
  });
  EXPECT_NE(err.find("checkpoint of another recipe"), std::string::npos) << err;
  EXPECT_EQ(ReadFileToString(f->run + "/trajectory.jsonl"), traj);
  EXPECT_FALSE(fs::exists(CheckpointDir(f->run, 4) + ".invalid"));
  // A fresh run into an existing run directory is refused.
  EXPECT_NE(ErrorOf([&] { Train(*f, false); }).find("already holds a run"), std::string::npos);
}

// The layout meta.json records for a checkpoint that several processes wrote is checked: ranges
// contiguous from 0, one per writer, ending at flat_elements, which is the model's size.
TEST(Resume, ACheckpointLayoutThatDoesNotCoverTheStateIsRefused) {
  const auto f = MakeRun(10, 4);
  Train(*f, false, 5);  // checkpoints 0 and 4
  const std::string dir = CheckpointDir(f->run, 4), meta_path = dir + "/meta.json";
  const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(meta_path));
  const train::Recipe r = ParseRecipe(ReadFileToString(f->recipe), "r", kVocab);
  const std::string manifest = ReadFileToString(f->manifest);
  const RunIdentity id{
      r.sha256,
      ToHex(Sha256({reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size()}))};
  TrainState probe(r.model, TestCpu());
  const int64_t n = probe.params.numel();
  auto with_layout = [&](const nlohmann::json& layout) {
    nlohmann::json m = meta;
    m["layout"] = layout;
    WriteFileAtomic(meta_path, m.dump(2));
  };
  with_layout({{"writers", 2}, {"flat_elements", n}, {"flat_ranges", {{0, 10}, {10, n}}}});
  EXPECT_NO_THROW(VerifyCheckpointFiles(dir));
  TrainState st(r.model, TestCpu());
  EXPECT_NO_THROW(LoadCheckpoint(dir, id, st));
  with_layout({{"writers", 2}, {"flat_elements", n}, {"flat_ranges", {{0, 10}, {11, n}}}});
  EXPECT_NE(ErrorOf([&] { VerifyCheckpointFiles(dir); }).find("not contiguous"), std::string::npos);
  with_layout({{"writers", 3}, {"flat_elements", n}, {"flat_ranges", {{0, 10}, {10, n}}}});
  EXPECT_NE(ErrorOf([&] { VerifyCheckpointFiles(dir); }).find("3 writers and 2 ranges"),
            std::string::npos);
  with_layout({{"writers", 1}, {"flat_elements", n + 1}, {"flat_ranges", {{0, n + 1}}}});
  EXPECT_NE(ErrorOf([&] { LoadCheckpoint(dir, id, st); }).find("this model has"),
            std::string::npos);
}

TEST(RunDirectory, OneWriterAtATime) {
  TempDir d;
  {
    RunLock first(d.path());
    EXPECT_NE(ErrorOf([&] { RunLock second(d.path()); }).find("another trail process"),
              std::string::npos);
  }
  RunLock again(d.path());  // released with its holder
}

TEST(RunDirectory, LayoutInfoAndMetricsTrim) {
  TempDir dir;
  const RunDirectory rd(dir / "run");
  EXPECT_FALSE(rd.HoldsRun());
  EXPECT_NE(ErrorOf([&] { rd.ReadInfo(); }).find("is not a trail run directory"),
            std::string::npos);
  WriteFileAtomic(dir / "r.toml", "recipe");
  rd.Create(dir / "r.toml", "recipe",
            {{"format", "trail.run.v1"},
             {"genesis", std::string(64, 'c')},
             {"data_manifest", "/m.json"}});
  // Laid out but not started: a fresh run may still reuse the directory.
  EXPECT_FALSE(rd.HoldsRun() || rd.CanResume());
  rd.MarkStarted();
  EXPECT_TRUE(rd.HoldsRun() && rd.CanResume());
  EXPECT_EQ(ReadFileToString(rd.recipe_path()), "recipe");
  const RunInfo info = rd.ReadInfo();
  EXPECT_EQ(info.data_manifest, "/m.json");
  EXPECT_EQ(ToHex(info.genesis), std::string(64, 'c'));
  WriteFileAtomic(rd.metrics_path(),
                  "{\"step\": 0}\n{\"step\": 1}\nnot json\n{\"step\": 2}\n{\"st");
  rd.TrimMetrics(2);
  EXPECT_EQ(ReadFileToString(rd.metrics_path()), "{\"step\": 0}\n{\"step\": 1}\n");
  WriteFileAtomic(rd.info_path(), "{\"genesis\": 5}");
  EXPECT_NE(ErrorOf([&] { rd.ReadInfo(); }).find("run.json: malformed"), std::string::npos);
  EXPECT_NE(ErrorOf([] { RunDirectory(""); }).find("--run DIR"), std::string::npos);
}

TEST(RunDirectory, VerifyFindsEachTamperingWithoutExecutingAStep) {
  const auto f = MakeRun(8, 4);
  Train(*f, false);
  const RunDirectory rd(f->run);
  RunCheck c = rd.Verify();
  EXPECT_TRUE(c.ok()) << c.problems.front();
  EXPECT_EQ(c.steps, 8);
  EXPECT_EQ(c.checkpoints, (std::vector<int64_t>{0, 4, 8}));
  auto flip = [](const std::string& path, size_t at) {
    std::string b = ReadFileToString(path);
    b[at] ^= 1;
    WriteFileAtomic(path, b);
  };
  // One bit of a checkpoint's weights: that checkpoint, and nothing else.
  const std::string model = CheckpointDir(f->run, 4) + "/model.safetensors";
  flip(model, ReadFileToString(model).size() - 3);
  c = rd.Verify();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("step_00000004/model.safetensors: SHA-256 differs"),
            std::string::npos)
      << c.problems[0];
  EXPECT_EQ(c.checkpoints, (std::vector<int64_t>{0, 8}));
  flip(model, ReadFileToString(model).size() - 3);
  // One trajectory record: its chain breaks there.
  const std::string traj = ReadFileToString(rd.trajectory_path());
  std::string tampered = traj;
  const size_t at = traj.find("\"loss_bits\":\"", traj.find("\"step\":5,")) + 20;
  tampered[at] = tampered[at] == '0' ? '1' : '0';
  WriteFileAtomic(rd.trajectory_path(), tampered);
  c = rd.Verify();
  ASSERT_EQ(c.problems.size(), 1u);  // the broken chain alone, not every checkpoint after it
  EXPECT_NE(c.problems[0].find("step 5"), std::string::npos) << c.problems[0];
  WriteFileAtomic(rd.trajectory_path(), traj);
  // The recipe copy.
  WriteFileAtomic(rd.recipe_path(), ReadFileToString(rd.recipe_path()) + "\n");
  c = rd.Verify();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("recipe.toml: SHA-256 differs from run.json"), std::string::npos);
}

}  // namespace
}  // namespace trail::train
