// Recipe costs against counts worked out by hand from each preset's shape (written out below),
// and the memory terms against the layouts the trainer allocates.
#include "plan/run_cost.h"

#include <gtest/gtest.h>

#include "core/test_util.h"
#include "model/transformer.h"

namespace trail::plan {
namespace {

train::Recipe PresetRecipe(const std::string& preset, int64_t vocab) {
  train::Recipe r;
  r.model = model::Preset(preset);
  r.model.vocab_size = vocab;
  return r;
}

data::StreamConfig Stream(int64_t seq_len, std::vector<data::BatchPhase> schedule) {
  data::StreamConfig s;
  s.seq_len = seq_len;
  s.schedule = std::move(schedule);
  return s;
}

TEST(RunCost, TinyPresetByHand) {
  // d = 128, 4 layers, SwiGLU d_ff = 352, tied head, V = 4096:
  //   embedding 4096·128 = 524,288; per layer 4·128² + 3·128·352 = 65,536 + 135,168 = 200,704;
  //   blocks 4 × 200,704 = 802,816; gains (2·4 + 1)·128 = 1,152.
  train::Recipe r = PresetRecipe("tiny", 4096);
  r.loop.steps = 120;
  // The demo's schedule: 8 windows from step 0, 16 from step 100, T = 128:
  //   tokens = 100·8·128 + 20·16·128 = 102,400 + 40,960 = 143,360.
  const RunCost c = EstimateRunCost(r, Stream(128, {{0, 8}, {100, 16}}), 1);
  EXPECT_EQ(c.model.embedding, 524288);
  EXPECT_EQ(c.model.blocks, 802816);
  EXPECT_EQ(c.model.lm_head, 0);
  EXPECT_EQ(c.model.norm_gains, 1152);
  EXPECT_EQ(c.model.parameters, 1328256);
  EXPECT_EQ(c.model.matmul_parameters, 802816 + 524288);
  EXPECT_EQ(c.tokens, 143360.0);
  // Attention: 12·d·(mean keys per query summed over layers) = 12·128·4·(129/2) = 396,288.
  EXPECT_EQ(c.model.attention_flops_per_token, 396288.0);
  EXPECT_EQ(c.model.flops_per_token, 6.0 * 1327104 + 396288);
  EXPECT_DOUBLE_EQ(c.total_flops, c.model.flops_per_token * 143360);
  EXPECT_DOUBLE_EQ(c.tokens_per_parameter, 143360.0 / 1328256);
}

TEST(RunCost, Open1bStylePresetByHandWithItsWindowPattern) {
  // d = 256, 10 layers, SwiGLU d_ff = 688, QK-norm (no gains), embedding norm, V = 50,000:
  //   embedding 12,800,000; per layer 4·256² + 3·256·688 = 262,144 + 528,384 = 790,528;
  //   blocks 7,905,280; gains (2·10 + 1 + 1)·256 = 5,632.
  const RunCost c = EstimateRunCost(PresetRecipe("open1b-style", 50000), Stream(2048, {{0, 1}}), 1);
  EXPECT_EQ(c.model.embedding, 12800000);
  EXPECT_EQ(c.model.blocks, 7905280);
  EXPECT_EQ(c.model.norm_gains, 5632);
  EXPECT_EQ(c.model.parameters, 20710912);
  // At T = 2048, layers 5 and 10 attend fully ((2048 + 1)/2 = 1024.5 keys per query on average),
  // the other 8 within 512 keys: (Σ_{k=1..512} k + 1536·512)/2048 = (131,328 + 786,432)/2048
  // = 448.125. Summed: 8·448.125 + 2·1024.5 = 5,634; × 12·256 = 17,307,648.
  EXPECT_EQ(c.model.attention_flops_per_token, 17307648.0);
  EXPECT_EQ(c.model.flops_per_token, 6.0 * (7905280 + 12800000) + 17307648);
}

TEST(RunCost, Gpt2SmallPresetByHand) {
  // d = 768, 12 layers, GELU d_ff = 3072, tied head, V = 50,257:
  //   embedding 38,597,376; per layer 4·768² + 2·768·3072 = 7,077,888; blocks 84,934,656;
  //   gains 25·768 = 19,200; total 123,551,232 — GPT-2 small's 124,439,808 less its learned
  //   position embeddings (1024·768 = 786,432; RoPE here), linear biases (12·6,912 = 82,944) and
  //   LayerNorm biases (25·768 = 19,200).
  const RunCost c = EstimateRunCost(PresetRecipe("gpt2-small", 50257), Stream(1024, {{0, 1}}), 1);
  EXPECT_EQ(c.model.embedding, 38597376);
  EXPECT_EQ(c.model.blocks, 84934656);
  EXPECT_EQ(c.model.norm_gains, 19200);
  EXPECT_EQ(c.model.parameters, 123551232);
  EXPECT_EQ(c.model.parameters, 124439808 - 786432 - 82944 - 19200);
  // Full causal attention at T = 1024: 12 · 512.5 keys per query; × 12·768 = 56,678,400.
  EXPECT_EQ(c.model.attention_flops_per_token, 56678400.0);
}

// The sequence-length curriculum: T = 128 for steps 0..99 (8 windows), then T = 256 (16 windows
// from step 100, 8 from step 110 — the same 2,048 tokens per step as 16 × 128).
//   tokens at 128: 100·8·128 = 102,400; at 256: 10·16·256 + 10·8·256 = 40,960 + 20,480 = 61,440.
// Attention at T = 256: 12·128·4·(257/2) = 789,504 FLOPs per token (mean keys per query 257/2).
// Activations are planned for the longest windows.
TEST(RunCost, ALengthCurriculumIsCostedPerPhase) {
  train::Recipe r = PresetRecipe("tiny", 4096);
  r.loop.steps = 120;
  data::StreamConfig s = Stream(128, {{0, 8}, {100, 16}, {110, 8}});
  s.seq_len_phases = {{100, 256}};
  const RunCost c = EstimateRunCost(r, s, 1);
  ASSERT_EQ(c.lengths.size(), 2u);
  EXPECT_EQ(c.lengths[0].seq_len, 128);
  EXPECT_EQ(c.lengths[0].tokens, 102400.0);
  EXPECT_EQ(c.lengths[1].seq_len, 256);
  EXPECT_EQ(c.lengths[1].tokens, 61440.0);
  const double f128 = 6.0 * 1327104 + 396288, f256 = 6.0 * 1327104 + 789504;
  EXPECT_EQ(c.lengths[0].flops_per_token, f128);
  EXPECT_EQ(c.lengths[1].flops_per_token, f256);
  EXPECT_EQ(c.tokens, 163840.0);
  EXPECT_DOUBLE_EQ(c.total_flops, 102400 * f128 + 61440 * f256);
  EXPECT_EQ(c.memory[0].activations, model::Activations::PlannedBytes(r.model, 1, 256));
  EXPECT_DOUBLE_EQ(train::MeanFlopsPerToken(r.model, s, 120), c.total_flops / c.tokens);
  EXPECT_EQ(train::MeanFlopsPerToken(r.model, s, 100), f128);  // the switch not reached
}

TEST(RunCost, MemoryPerProcessFollowsTheMeshShardingAndTheActivationLayout) {
  train::Recipe r = PresetRecipe("tiny", 4096);
  r.mesh.replicas = 4;
  data::StreamConfig s = Stream(128, {{0, 8}});
  s.micro_batch_windows = 2;
  const int64_t bytes = 4 * 1328256;
  // One process folds ranks 0..3: (0+1) then 2, then (2+3) joins (0+1): at most two partial
  // sums at once, plus the micro-batch gradient buffer. It holds all moments (2 floats each).
  const RunCost one = EstimateRunCost(r, s, 1);
  ASSERT_EQ(one.memory.size(), 1u);
  EXPECT_EQ(one.memory[0].parameters, bytes);
  EXPECT_EQ(one.memory[0].gradient_buffers, 3);
  EXPECT_EQ(one.memory[0].moments, 2 * bytes);
  EXPECT_EQ(one.memory[0].activations, model::Activations::PlannedBytes(r.model, 2, 128));
  EXPECT_EQ(one.memory[0].activations_kept, one.memory[0].activations);
  EXPECT_EQ(one.memory[0].activations_recomputed,
            model::Activations::PlannedBytes(r.model, 2, 128, model::Recompute::kLayers));
  EXPECT_LT(one.memory[0].activations_recomputed, one.memory[0].activations_kept);
  r.loop.recompute = model::Recompute::kLayers;  // the recipe's setting is the one in the total
  EXPECT_EQ(EstimateRunCost(r, s, 1).memory[0].activations, one.memory[0].activations_recomputed);
  r.loop.recompute = model::Recompute::kNone;
  // Two processes: ranks {0,1} and {2,3} each fold to one partial sum; moments split in half.
  const RunCost two = EstimateRunCost(r, s, 2);
  ASSERT_EQ(two.memory.size(), 2u);
  for (const ProcessMemory& m : two.memory) {
    EXPECT_EQ(m.gradient_buffers, 2);
    EXPECT_EQ(m.moments, bytes);
  }
  // Sharded parameters: each process's half, plus one gathered buffer per unit size — the
  // embedding (4096 x 128), a layer (4 x 128^2 + 3 x 128 x 352 + 2 x 128 gains) and the head
  // (the final norm's 128; the head is tied), every tensor a multiple of 16 floats — and a
  // second layer's (the next one gathered ahead).
  const int64_t gathered = 4 * (4096 * 128 + 2 * (4 * 128 * 128 + 3 * 128 * 352 + 2 * 128) + 128);
  EXPECT_EQ(gathered, 4 * (1328256 - 2 * 200960));  // the embedding, two layers, the final norm
  for (const ProcessMemory& m : two.memory) {
    EXPECT_EQ(m.parameters_whole, bytes);
    EXPECT_EQ(m.parameters_sharded, bytes / 2 + gathered);
    EXPECT_EQ(m.parameters, bytes);  // the recipe does not shard
  }
  r.mesh.shard_params = true;
  EXPECT_EQ(EstimateRunCost(r, s, 2).memory[1].parameters, bytes / 2 + gathered);
  r.mesh.micro_batches = 1;  // one micro-batch a rank: no second gradient buffer
  EXPECT_EQ(EstimateRunCost(r, s, 2).memory[1].gradient_buffers, 1);
  EXPECT_NE(ErrorOf([&] { EstimateRunCost(r, s, 5); }).find("1..4"), std::string::npos);
  r.model.vocab_size = 0;
  EXPECT_NE(ErrorOf([&] { EstimateRunCost(r, s, 1); }).find("vocabulary size"), std::string::npos);
}

}  // namespace
}  // namespace trail::plan
