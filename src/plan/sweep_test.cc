// The IsoFLOP sweep: every run spends its budget (the first step count at or over it), its recipe
// reads back as the base with the run's width, steps and schedule, and what cannot run is left
// out or refused with the reason.
#include "plan/sweep.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/file_util.h"
#include "core/test_util.h"
#include "model/config.h"

namespace trail::plan {
namespace {

constexpr char kBase[] = R"([model]
d_model = 32
n_layers = 2
n_heads = 2
d_ff = 96
max_seq_len = 64
[optimizer]
lr = 2e-3
[schedule]
decay = "cosine"
warmup_tokens = 1000
total_tokens = 10000
[train]
steps = 5
eval_every = 7
)";

TEST(Sweep, EachRunSpendsItsBudgetAndReadsBackAsTheBaseWithItsShape) {
  TempDir dir;
  WriteFileAtomic(dir / "base.toml", kBase);
  data::StreamConfig stream;
  stream.seq_len = 64;
  stream.schedule = {{0, 4}, {30, 8}};  // 256 tokens per step, 512 from step 30
  const Sweep s = PlanSweep({dir / "base.toml", {2e9, 8e9}, {16, 32, 64}, 10}, stream, 300);
  ASSERT_FALSE(s.runs.empty());
  for (const SweepRun& r : s.runs) {
    const train::Recipe got = train::ParseRecipe(r.recipe_text, r.name, 300);
    EXPECT_EQ(got.model.d_model, r.d_model) << r.name;
    EXPECT_EQ(got.model.d_ff, 3 * r.d_model) << r.name;  // the base's d_ff / d_model = 3
    EXPECT_EQ(got.model.n_layers, 2);
    EXPECT_EQ(got.loop.steps, r.steps);
    EXPECT_EQ(got.loop.eval_every, 7);  // the rest of the base is kept
    EXPECT_FLOAT_EQ(got.schedule.peak_lr, 2e-3f);
    EXPECT_EQ(got.schedule.total_tokens, static_cast<int64_t>(r.tokens));
    EXPECT_EQ(got.schedule.warmup_tokens, std::llround(1000 * r.tokens / 10000));
    const model::ModelCost cost = model::Cost(got.model, 64);
    EXPECT_EQ(cost.parameters, r.parameters);
    EXPECT_DOUBLE_EQ(r.flops, r.tokens * cost.flops_per_token);
    // The first step count at or over the budget: one step fewer falls short.
    const double last_step = (r.steps > 30 ? 512.0 : 256.0) * cost.flops_per_token;
    EXPECT_GE(r.flops, r.budget) << r.name;
    EXPECT_LT(r.flops - last_step, r.budget) << r.name;
    EXPECT_GE(r.steps, 10);
  }
  EXPECT_EQ(s.runs.size() + s.skipped.size(), 6u);
}

TEST(Sweep, LeavesOutTooShortRunsAndRefusesBadWidths) {
  TempDir dir;
  WriteFileAtomic(dir / "base.toml", kBase);
  data::StreamConfig stream;
  stream.seq_len = 64;
  stream.schedule = {{0, 4}};
  const Sweep s = PlanSweep({dir / "base.toml", {1e8, 1e10}, {16, 64}, 10}, stream, 300);
  bool skipped_small = false;
  for (const std::string& why : s.skipped) skipped_small |= why.find("c1.0e+08") == 0;
  EXPECT_TRUE(skipped_small);
  EXPECT_NE(ErrorOf([&] {
              PlanSweep({dir / "base.toml", {1e10}, {18}, 10}, stream, 300);
            }).find("not a multiple of 2 x 2 heads"),
            std::string::npos);
  // Budgets that print alike (two significant digits) or a width given twice would share a run
  // directory.
  EXPECT_NE(ErrorOf([&] {
              PlanSweep({dir / "base.toml", {1.01e10, 1.04e10}, {16}, 10}, stream, 300);
            }).find("would both be c1.0e+10-d16"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              PlanSweep({dir / "base.toml", {1e10}, {16, 16}, 10}, stream, 300);
            }).find("give each budget and width once"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              PlanSweep({dir / "base.toml", {1e3}, {16}, 10}, stream, 300);
            }).find("raise the budgets"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::plan
