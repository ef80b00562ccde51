// The step's one average: loss and gradient normalized by the whole step's target count.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <set>

#include "core/file_util.h"
#include "data/batcher.h"
#include "data/stream.h"
#include "model/transformer.h"
#include "train/test_run.h"
#include "train/trajectory.h"

namespace trail::train {
namespace {

// The step's gradient as the mean of per-micro-batch means, which trail does not do: each
// micro-batch's gradient scaled by 1 / (its targets · micro-batches), summed in order, on the
// step's first parameters.
std::unique_ptr<model::ParameterSet> MeanOfMeansGradient(const data::Manifest& m, const Recipe& r) {
  data::CanonicalStream stream(m);
  data::Batcher batcher(stream);
  repops::Backend& be = TestCpu();
  model::Transformer model(r.model, be);
  model::Activations acts(r.model, stream.manifest().stream.micro_batch_windows,
                          stream.max_seq_len(), be);
  model::ParameterSet params(r.model, be), g(r.model, be);
  params.InitRandom(r.model);
  auto acc = std::make_unique<model::ParameterSet>(r.model, be);
  const int64_t M = batcher.NumMicroBatches(0, 0, 1);
  data::PackedBatch pb;
  for (int64_t i = 0; i < M; ++i) {
    batcher.MicroBatch(0, 0, 1, i, pb);
    const float scale =
        (1.0f / static_cast<float>(pb.target_tokens)) * (1.0f / static_cast<float>(M));
    model.ForwardBackward(params, ViewOf(pb), scale, acts, i == 0 ? *acc : g);
    if (i > 0) model::AddParameterSets(*acc, g);
  }
  return acc;
}

TEST(Step, MicroBatchesWithDifferentTargetCountsEqualOneBigBatch) {
  TempDir a, b;
  // The same 8 windows: as one micro-batch of 8, and as 8 micro-batches of 1.
  const data::Manifest big = Corpus(a.path(), 8, 8, 6), small = Corpus(b.path(), 8, 1, 6);
  {
    // The windows do hold different numbers of targets.
    data::CanonicalStream s(small);
    data::Batcher batcher(s);
    data::PackedBatch pb;
    std::set<int64_t> counts;
    for (int64_t m = 0; m < batcher.NumMicroBatches(0, 0, 1); ++m) {
      batcher.MicroBatch(0, 0, 1, m, pb);
      counts.insert(pb.target_tokens);
    }
    ASSERT_GE(counts.size(), 3u);
  }
  const OneStep one = RunOneStep(big, SmallRecipe(1, 1));
  const OneStep many = RunOneStep(small, SmallRecipe(1, 1));
  const auto mom = MeanOfMeansGradient(small, ParseRecipe(SmallRecipe(1, 1), "r.toml", kVocab));
  EXPECT_EQ(one.result.batch_hash == many.result.batch_hash, false);  // batched differently
  EXPECT_EQ(one.result.target_tokens, many.result.target_tokens);
  // Loss and gradient agree to fp32 summation-order noise (measured ~1e-7): a different
  // grouping of the same sums, not different math.
  EXPECT_NEAR(one.result.loss, many.result.loss, 1e-6 * one.result.loss);
  EXPECT_LT(RelDiff(*many.grad, *one.grad), 1e-5);
  // Averaging per-micro-batch means weighs short windows' targets up: a real difference.
  EXPECT_GT(RelDiff(*mom, *one.grad), 1e-3);
}

// One schema (TrajectoryFields) drives the record's bytes and the auditor's comparison: the
// body holds exactly the table's fields in its order, and a change to any compared field is
// reported as that field.
TEST(Trajectory, OneSchemaDrivesTheRecordAndTheComparison) {
  StepResult r;
  r.step = 7, r.window_begin = 70, r.window_end = 80, r.tokens_before = 900, r.target_tokens = 99;
  r.lr = 0.25f, r.loss = 3.5f, r.z_loss = 0.125f, r.grad_norm = 1.5f, r.clip_coef = 0.5f;
  r.skip = SkipReason::kSpike, r.state_hashed = true;
  const std::string body = TrajectoryBody(r);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(body);
  std::vector<std::string> keys, table;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  for (const TrajectoryField& f : TrajectoryFields()) {
    if (f.value != nullptr) table.push_back(f.key);
  }
  EXPECT_EQ(keys, table);
  EXPECT_EQ(j["skipped"], "spike");
  const std::string line = TrajectoryLine(body, Digest{});
  for (const TrajectoryField& f : TrajectoryFields()) {
    if (f.compare_order < 0) continue;
    nlohmann::ordered_json changed = nlohmann::ordered_json::parse(line);
    changed[f.key] = "changed";
    EXPECT_EQ(DifferingField(line, changed.dump()).field, f.key);
  }
}

}  // namespace
}  // namespace trail::train
