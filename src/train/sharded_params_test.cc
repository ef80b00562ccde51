// Parameter sharding: the gather of a unit, and training with sharded parameters giving the
// bits of whole ones on any number of processes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <mutex>

#include "core/file_util.h"
#include "core/test_util.h"
#include "train/checkpoint.h"
#include "train/sharded_params.h"
#include "train/test_run.h"

namespace trail::train {
namespace {

namespace fs = std::filesystem;

// TRAIL_GATHER_AHEAD set for a scope: whether passes gather ahead on a thread, whatever the CPUs.
class GatherAhead {
 public:
  explicit GatherAhead(bool on) { setenv("TRAIL_GATHER_AHEAD", on ? "1" : "0", 1); }
  ~GatherAhead() { unsetenv("TRAIL_GATHER_AHEAD"); }
};

TEST(Step, ShardedParametersGiveTheBitsOfWholeOnes) {
  TempDir a;
  const data::Manifest m = Corpus(a.path(), 12, 1);
  // d_model 20 and d_ff 36: tensors of 20, 400 and 720 elements, so a unit's tensors do not
  // all start 64-byte aligned and the gathered unit is laid out tensor by tensor.
  for (const char* model : {"d_model = 64\nn_layers = 1\nn_heads = 2\nd_ff = 1040\n",
                            "d_model = 20\nn_layers = 3\nn_heads = 2\nd_ff = 36\n"
                            "tied_embeddings = false\nembed_norm = true\n"}) {
    const std::string base = std::string("[model]\n") + model +
                             "max_seq_len = 32\ninit_seed = 3\n[optimizer]\nlr = 1e-2\n"
                             "clip_norm = 0.05\n[mesh]\nreplicas = 3\nshards = 2\n"
                             "micro_batches = 2\n";
    const std::vector<std::string> whole = WithoutChain(RunOnProcesses(m, base, 1, 3));
    const std::string sharded = base + "shard_params = true\n";
    for (int P : {1, 2, 4, 6}) {  // P = 4: processes of 1 and 2 logical ranks (idle passes)
      const GatherAhead ahead(P % 4 == 0);  // on a thread for P = 4, in line for the others
      EXPECT_EQ(WithoutChain(RunOnProcesses(m, sharded, P, 3)), whole) << model << "P=" << P;
    }
    if (std::string(model).find("d_model = 64") == std::string::npos) continue;
    // Gathers staged through host copies, on memory only the backend reaches (docs/devices.md).
    const std::vector<std::string> one_step = WithoutChain(RunOnProcesses(m, base, 1, 1));
    EXPECT_EQ(WithoutChain(RunOnProcesses(m, sharded, 2, 1, "guarded")), one_step)
        << model << "guarded, P=2";
  }
}

TEST(ShardedParameters, AUnitIsGatheredWholeAndUnboundOnRelease) {
  const model::ModelConfig c = ParseRecipe(SmallRecipe(1, 1), "r.toml", kVocab).model;
  model::ParameterSet full(c, TestCpu());
  full.InitRandom(c);
  const std::vector<Tensor> want = full.ToHost();
  const int P = 3;
  const GatherAhead ahead(true);
  collectives::ThreadGroup group(P);
  std::mutex mu;
  group.Run([&](collectives::Communicator& comm) {
    model::ParameterSet mine(c, TestCpu());
    mine.InitRandom(c);
    // Ranges that cut tensors anywhere (not chunk boundaries: the gather does not care).
    const int64_t n = mine.numel();
    const std::vector<int64_t> bounds = {0, n / 3 + 5, 2 * n / 3 + 1, n};
    ShardedParameters shards(comm, TestCpu(), mine, bounds);
    std::vector<float> flat;
    for (const Tensor& t : want) {
      const float* v = reinterpret_cast<const float*>(t.bytes());
      flat.insert(flat.end(), v, v + t.numel());
    }
    shards.Adopt(mine, std::span(flat).subspan(bounds[comm.rank()],
                                               bounds[comm.rank() + 1] - bounds[comm.rank()]));
    for (const DeviceTensor& t : mine.tensors()) EXPECT_EQ(t.data<float>(), nullptr);
    for (int u = mine.num_units() - 1; u >= 0; --u) {  // any order, as long as all agree
      shards.Acquire(u);
      const auto [t0, t1] = mine.unit_tensors(u);
      for (size_t t = t0; t < t1; ++t) {
        const DeviceTensor& got = mine.tensors()[t];
        std::lock_guard<std::mutex> lock(mu);
        ASSERT_NE(got.data<float>(), nullptr);
        EXPECT_EQ(std::memcmp(got.data<float>(), want[t].bytes(), got.nbytes()), 0) << got.name();
      }
      shards.Release(u);
      for (size_t t = t0; t < t1; ++t) EXPECT_EQ(mine.tensors()[t].data<float>(), nullptr);
    }
    shards.IdlePass(/*backward=*/true);  // gathered ahead on a thread (threads may call)
    EXPECT_TRUE(TrainTestAccess::GathersAhead(shards));
    EXPECT_GT(shards.gathered_bytes(), 0);  // what plan cost counts, at most
    EXPECT_LE(shards.gathered_bytes(), ShardedParameters::PlannedGatheredBytes(mine));
    EXPECT_NE(ErrorOf([&] { shards.Release(0); }).find("released but not held"), std::string::npos);
    // A pass acquires in AcquireOrder: another unit first is refused.
    shards.BeginPass(/*backward=*/false);
    EXPECT_NE(ErrorOf([&] { shards.Acquire(1); }).find("where the pass's order has unit 0"),
              std::string::npos);
    for (int u : model::AcquireOrder(static_cast<int64_t>(mine.layers.size()), true, false)) {
      shards.Acquire(u);
      shards.Release(u);
    }
  });
}

// A run with sharded parameters starts without holding them whole (each process computes its
// range unit by unit and writes its part of checkpoint 0) and resumes from its ranges of the
// files: the bits of the run without sharding; a damaged newest checkpoint is set aside.
TEST(Resume, ShardedRunsResumeFromTheirRangesAndSkipADamagedCheckpoint) {
  const auto whole = MakeRun(10, 4);
  const TrainSummary want = Train(*whole, false);
  const auto sharded = MakeRun(10, 4, "shard_params = true\n");
  const TrainSummary got = Train(*sharded, false);
  EXPECT_EQ(got.final_params, want.final_params);
  for (int64_t c : {0, 4, 8, 10}) {
    for (const char* file : {"/model.safetensors", "/optim.safetensors"}) {
      EXPECT_EQ(ReadFileToString(CheckpointDir(sharded->run, c) + file),
                ReadFileToString(CheckpointDir(whole->run, c) + file))
          << "checkpoint " << c << file;
    }
  }
  const auto f = MakeRun(10, 4, "shard_params = true\n");
  Train(*f, false, 9);  // checkpoints 0, 4, 8
  const std::string optim = CheckpointDir(f->run, 8) + "/optim.safetensors";
  std::string bytes = ReadFileToString(optim);
  bytes[bytes.size() / 2] ^= 0x10;
  WriteFileAtomic(optim, bytes);
  const TrainSummary resumed = Train(*f, true);  // from checkpoint 4's ranges
  EXPECT_EQ(resumed.final_chain, got.final_chain);
  EXPECT_EQ(resumed.steps_verified_on_resume, 5);  // steps 4..8 re-executed against their records
  EXPECT_TRUE(fs::exists(CheckpointDir(f->run, 8) + ".invalid"));
  // meta.json claiming other parameters than the (intact) files hold: the ranges' state hash,
  // formed by the processes together, refuses it, and the run is left as it was.
  const auto g = MakeRun(10, 4, "shard_params = true\n");
  Train(*g, false, 6);  // checkpoints 0, 4
  const std::string meta_path = CheckpointDir(g->run, 4) + "/meta.json";
  nlohmann::json meta = nlohmann::json::parse(ReadFileToString(meta_path));
  meta["params_hash"] = std::string(64, 'a');
  WriteFileAtomic(meta_path, meta.dump());
  const std::string traj = ReadFileToString(g->run + "/trajectory.jsonl");
  EXPECT_NE(ErrorOf([&] { Train(*g, true); }).find("parameter state hash differs from meta.json"),
            std::string::npos);
  EXPECT_EQ(ReadFileToString(g->run + "/trajectory.jsonl"), traj);
}

}  // namespace
}  // namespace trail::train
