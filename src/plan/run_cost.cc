#include "plan/run_cost.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/batch_schedule.h"
#include "repops/cpu_backend.h"
#include "train/sharded_params.h"
#include "collectives/mesh_reduce.h"
#include "collectives/reduction_tree.h"
#include "core/file_util.h"
#include "core/median.h"
#include "model/transformer.h"
#include "train/trainer.h"

namespace trail::plan {
namespace {

// The most partial sums process `p` holds at once, found by running its local fold on
// placeholders exactly as the step engine folds its ranks' gradients.
int64_t ResidentPartials(const train::MeshConfig& mesh, int64_t p, int64_t processes) {
  const collectives::ReductionTree tree(mesh.replicas, mesh.shards);
  const collectives::RankRange owned = collectives::LogicalRanksOf(p, processes, mesh.ranks());
  collectives::LocalFold<char> fold(tree, owned, [](char&, char&) {});
  for (int64_t rank = owned.begin; rank < owned.end; ++rank) fold.Push(rank, 0, [](char&&) {});
  return static_cast<int64_t>(fold.max_resident());
}

}  // namespace

StepRate MeasureStepRate(const std::string& recipe_path, const std::string& manifest_path,
                         int64_t steps) {
  TRAIL_CHECK(steps >= 2, "measuring needs at least 2 steps (the first is left out)");
  TempDir dir("trail-measure");
  train::TrainOptions o;
  o.recipe_path = recipe_path, o.manifest_path = manifest_path, o.run_dir = dir / "run";
  o.stop_after = steps, o.quiet = true;
  train::RunTraining(o);
  std::ifstream in(dir / "run/metrics.jsonl");
  std::vector<double> step_s, per_token;
  double tokens_before = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const double tokens = j.at("tokens").get<double>();
    if (j.at("step").get<int64_t>() > 0) {
      step_s.push_back(j.at("step_s").get<double>());
      per_token.push_back(step_s.back() / (tokens - tokens_before));
    }
    tokens_before = tokens;
  }
  TRAIL_CHECK(!step_s.empty(), "the measuring run recorded no step after the first");
  return {static_cast<int64_t>(step_s.size()), Median(step_s), Median(per_token)};
}

RunCost EstimateRunCost(const train::Recipe& recipe, const data::StreamConfig& stream,
                        int64_t processes) {
  const model::ModelConfig& c = recipe.model;
  TRAIL_CHECK(c.vocab_size > 0,
              "the model's vocabulary size is unknown: give the data manifest "
              "or set [model] vocab_size");
  TRAIL_CHECK(processes >= 1 && processes <= recipe.mesh.ranks(), processes,
              " processes for a mesh of ", recipe.mesh.ranks(), " logical ranks: give 1..",
              recipe.mesh.ranks());
  RunCost out;
  out.model = model::Cost(c, stream.seq_len);
  out.seq_len = stream.seq_len;
  out.steps = recipe.loop.steps;
  out.lengths = train::ScheduledFlops(c, stream, out.steps);
  for (const train::LengthFlops& l : out.lengths) {
    out.tokens += l.tokens;
    out.total_flops += l.tokens * l.flops_per_token;
  }
  out.tokens_per_parameter = out.tokens / double(out.model.parameters);
  out.processes = processes;
  const int64_t bytes = 4 * out.model.parameters;
  repops::CpuBackend cpu;  // names and shapes only: an unbound set allocates nothing
  const model::ParameterSet layout(c, cpu, "", model::Memory::kUnbound);
  const int64_t gathered = train::ShardedParameters::PlannedGatheredBytes(layout);
  for (int64_t p = 0; p < processes; ++p) {
    ProcessMemory m;
    // This process's range of the flat state (cut at chunk boundaries, so the even share to
    // within a chunk): its moments, and its parameters when they are sharded.
    const int64_t range = (bytes * (p + 1)) / processes - (bytes * p) / processes;
    m.parameters_whole = bytes;
    m.parameters_sharded = range + gathered;
    m.parameters = recipe.mesh.shard_params ? m.parameters_sharded : m.parameters_whole;
    m.gradient_buffers =
        ResidentPartials(recipe.mesh, p, processes) + (recipe.mesh.micro_batches == 1 ? 0 : 1);
    m.gradients = bytes * m.gradient_buffers;
    m.moments = 2 * range;
    const int64_t rows = stream.micro_batch_windows, seq = data::MaxSeqLen(stream);
    m.activations_kept = model::Activations::PlannedBytes(c, rows, seq, model::Recompute::kNone);
    m.activations_recomputed =
        model::Activations::PlannedBytes(c, rows, seq, model::Recompute::kLayers);
    m.activations = recipe.loop.recompute == model::Recompute::kLayers ? m.activations_recomputed
                                                                       : m.activations_kept;
    out.memory.push_back(m);
  }
  return out;
}

}  // namespace trail::plan
