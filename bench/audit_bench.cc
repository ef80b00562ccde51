// The audit's costs at the benchmark configuration of train_bench (config B: L=6, d=384, 6 heads,
// vocab 16384, T=256, 8 windows a step, GELU MLP 4d, tied head, AdamW; a 2 × 1 mesh):
//   - a step replayed by `audit replay` against the same step in training (both from the
//     run's records: metrics.jsonl step_s, and the replay's per-step seconds), and the load of
//     the starting point, reported apart;
//   - a traced step (every operation's output hashed) against an untraced one.
// Trains a run of `steps` steps (checkpoint every 2) in a temporary folder, replays steps
// 2..steps-1 from checkpoint 2 and traces one of them. Prints one JSON object with medians.
//   audit_bench [steps] [threads]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/replay.h"
#include "bench/bench_util.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "data/synthetic_corpus.h"
#include "repops/kernels.h"
#include "train/trainer.h"

using namespace trail;

namespace {

const std::string kRecipe = bench::ConfigBRecipe(2, 1) + "micro_batches = 1\n";

// Median of the per-step seconds replay reported for steps ≥ first.
double ReplayedMedian(const audit::ReplayReport& r, int64_t first) {
  std::vector<double> t;
  for (const audit::StepVerdict& v : r.steps) {
    if (v.step >= first && !v.chain.empty()) t.push_back(v.seconds);
  }
  return bench::Median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 6;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  SetKernelThreads(static_cast<size_t>(threads));
  repops::UseDefaultSimdTarget();
  TempDir dir;
  data::StreamConfig sc;
  sc.seed = 1, sc.seq_len = 256, sc.schedule = {{0, 8}}, sc.micro_batch_windows = 4;
  sc.positions = data::PositionMode::kWindow;
  data::synthetic::MakeCorpus(dir.path(), {{"web", 1.0, 2, 400, 50, 2000}}, sc, 2, 16384);
  WriteFileAtomic(dir.path() + "/recipe.toml",
                  kRecipe + "[train]\nsteps = " + std::to_string(steps) +
                      "\ncheckpoint_every = 2\nkeep_checkpoints = 100\neval_every = 0\n");
  train::TrainOptions o;
  o.recipe_path = dir.path() + "/recipe.toml", o.manifest_path = dir.path() + "/manifest.json";
  o.run_dir = dir.path() + "/run", o.quiet = true;
  train::RunTraining(o);
  std::vector<double> trained;
  const std::string metrics = ReadFileToString(o.run_dir + "/metrics.jsonl");
  for (size_t pos = 0, nl; (nl = metrics.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    const nlohmann::json j = nlohmann::json::parse(metrics.substr(pos, nl - pos));
    if (j.value("step", 0) >= 2) trained.push_back(j.at("step_s").get<double>());
  }
  audit::ReplayOptions ro;
  ro.run_dir = o.run_dir, ro.data = o.manifest_path, ro.quiet = true;
  for (int s = 2; s < steps; ++s) ro.steps.push_back(s);
  const audit::ReplayReport replay = audit::ReplaySteps(ro);
  audit::ReplayOptions to = ro;
  to.steps = {3}, to.trace_step = 3, to.bisect = false;
  const audit::ReplayReport traced = audit::ReplaySteps(to);
  const double train_s = bench::Median(trained), replay_s = ReplayedMedian(replay, 2);
  const double traced_s = traced.Find(3)->seconds;
  std::printf(
      "{\"threads\": %d, \"backend\": \"%s\", \"verdict\": \"%s\", \"train_step_s\": %.4f, "
      "\"replay_step_s\": %.4f, \"replay_over_train\": %.3f, \"load_s\": %.3f, "
      "\"traced_step_s\": %.4f, \"trace_cost_s\": %.4f, \"trace_entries\": %zu}\n",
      threads, repops::ActiveKernels().name, replay.ok() ? "match" : "FAIL", train_s, replay_s,
      replay_s / train_s, replay.load_seconds, traced_s, traced_s - replay_s,
      traced.trace.ops.size());
  ShutdownKernelPool();
  return replay.ok() ? 0 : 1;
}
