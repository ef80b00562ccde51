// The training step on P processes: a model of train_bench — configuration B (L=6, d=384,
// 6 heads, vocab 16384, T=256, GELU MLP 4d, tied head, AdamW) or gpt2-small (T=128) — with 8
// windows a step on a 2 × 1 logical mesh (one micro-batch of 4 windows per logical rank), run
// by however many processes mpirun starts (1 or 2), with whole or sharded parameters
// ([mesh] shard_params) and with or without activation recomputation. Prints one JSON object
// from process 0: median step seconds, the time in collectives and in state hashing (median,
// and mean over the steps: one in 10 also hashes the parameters and moments), bytes each
// process sends per step, every process's peak memory, and the final trajectory chain (equal
// for every P and setting). bench/run_dist_bench.sh compares them.
//   mpirun -np P dist_bench [steps] [threads per process] [B|gpt2-small] [whole|sharded]
//                           [none|layers]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"
#include "collectives/launch.h"
#include "repops/kernels.h"
#include "train/recipe.h"
#include "train/step.h"
#include "train/trajectory.h"

using namespace trail;

namespace {

struct PerProcess {
  double step_s, comm_s, hash_s;
  double bytes, peak_rss_mb;
};

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::string model = argc > 3 ? argv[3] : "B";
  const std::string params = argc > 4 ? argv[4] : "whole";
  const std::string recompute = argc > 5 ? argv[5] : "none";
  if ((model != "B" && model != "gpt2-small") || (params != "whole" && params != "sharded") ||
      (recompute != "none" && recompute != "layers")) {
    std::fprintf(stderr,
                 "dist_bench [steps] [threads] [B|gpt2-small] [whole|sharded] [none|layers]\n");
    return 2;
  }
  const bool gpt2 = model == "gpt2-small";
  const std::string recipe =
      (gpt2 ? bench::Gpt2SmallRecipe(2, 1, 128) : bench::ConfigBRecipe(2, 1)) +
      "micro_batches = 1\nshard_params = " + (params == "sharded" ? "true" : "false") +
      "\n[train]\nrecompute = \"" + recompute + "\"\n";
  const uint32_t vocab = gpt2 ? 50257 : 16384;
  collectives::Communicator& comm = collectives::JobCommunicator();
  SetKernelThreads(static_cast<size_t>(threads));
  repops::UseDefaultSimdTarget();
  TempDir dir;  // every process builds the same corpus in its own folder
  data::StreamConfig sc;
  sc.seed = 1;
  sc.seq_len = gpt2 ? 128 : 256;
  sc.schedule = {{0, 8}};
  sc.micro_batch_windows = 4;
  sc.positions = data::PositionMode::kWindow;
  const data::Manifest m =
      data::synthetic::MakeCorpus(dir.path(), {{"web", 1.0, 2, 400, 50, 2000}}, sc, 2, vocab);
  data::CanonicalStream stream(m);
  const train::Recipe r = train::ParseRecipe(recipe, "bench", vocab);
  train::StepEngine engine(r, stream, comm);
  train::TrainState st(r.model, engine.backend());
  st.params.InitRandom(r.model);
  engine.AdoptState(st);
  train::StepResult res;
  train::StepAndChain(engine, st, res);  // warm-up: first touch of every buffer
  std::vector<double> t, c, h, b;
  for (int s = 0; s < steps; ++s) {
    train::StepAndChain(engine, st, res);
    t.push_back(res.seconds), c.push_back(res.comm_seconds), h.push_back(res.hash_seconds);
    b.push_back(static_cast<double>(res.bytes_sent));
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const PerProcess mine{bench::Median(t), bench::Median(c), bench::Median(h), bench::Median(b),
                        double(ru.ru_maxrss) / 1024.0};
  const auto all = comm.AllGather(std::span(reinterpret_cast<const uint8_t*>(&mine), sizeof mine));
  if (comm.rank() == 0) {
    std::string per;
    for (const auto& bytes : all) {
      PerProcess p;
      std::memcpy(&p, bytes.data(), sizeof p);
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "%s{\"step_s\": %.4f, \"comm_s\": %.4f, \"hash_s\": %.4f, "
                    "\"sent_bytes\": %.0f, \"peak_rss_mb\": %.1f}",
                    per.empty() ? "" : ", ", p.step_s, p.comm_s, p.hash_s, p.bytes, p.peak_rss_mb);
      per += buf;
    }
    double hash_mean = 0;  // steps that commit state hash more: the mean is the cost over a run
    for (double x : h) hash_mean += x / double(h.size());
    std::printf(
        "{\"processes\": %d, \"threads\": %d, \"backend\": \"%s\", \"step_s\": %.4f, "
        "\"comm_s\": %.4f, \"hash_s\": %.4f, \"hash_mean_s\": %.4f, \"sent_bytes\": %.0f, "
        "\"peak_rss_mb\": %.1f, \"model\": \"%s\", \"params\": \"%s\", \"recompute\": \"%s\", "
        "\"parameters\": %lld, "
        "\"chain\": \"%s\", \"per_process\": [%s]}\n",
        comm.size(), threads, repops::ActiveKernels().name, mine.step_s, mine.comm_s, mine.hash_s,
        hash_mean, mine.bytes, mine.peak_rss_mb, model.c_str(), params.c_str(), recompute.c_str(),
        static_cast<long long>(st.params.numel()), ToHex(st.chain).c_str(), per.c_str());
  }
  ShutdownKernelPool();
  return 0;
}
