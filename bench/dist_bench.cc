// The training step on P processes: the benchmark configuration of train_bench (L=6, d=384,
// 6 heads, vocab 16384, T=256, 8 windows a step, GELU MLP 4d, tied head, AdamW) on a 2 × 1
// logical mesh (one micro-batch of 4 windows per logical rank), run by however many processes
// mpirun starts (1 or 2). Prints one JSON object from process 0: median step seconds, the time
// in collectives and in state hashing (median, and mean over the steps: one in 10 also hashes
// the parameters and moments), bytes each process sends per step, peak memory, and the final
// trajectory chain (equal for every P). bench/run_dist_bench.sh compares P = 1 and P = 2.
//   mpirun -np P dist_bench [steps] [threads per process]
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

const std::string kRecipe = bench::ConfigBRecipe(2, 1) + "micro_batches = 1\n";

struct PerProcess {
  double step_s, comm_s, hash_s;
  double bytes, peak_rss_mb;
};

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  collectives::Communicator& comm = collectives::JobCommunicator();
  SetKernelThreads(static_cast<size_t>(threads));
  repops::UseDefaultSimdTarget();
  TempDir dir;  // every process builds the same corpus in its own folder
  data::StreamConfig sc;
  sc.seed = 1;
  sc.seq_len = 256;
  sc.schedule = {{0, 8}};
  sc.micro_batch_windows = 4;
  sc.positions = data::PositionMode::kWindow;
  const data::Manifest m =
      data::synthetic::MakeCorpus(dir.path(), {{"web", 1.0, 2, 400, 50, 2000}}, sc, 2, 16384);
  data::CanonicalStream stream(m);
  const train::Recipe r = train::ParseRecipe(kRecipe, "bench", 16384);
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
        "\"peak_rss_mb\": %.1f, "
        "\"parameters\": %lld, "
        "\"chain\": \"%s\", \"per_process\": [%s]}\n",
        comm.size(), threads, repops::ActiveKernels().name, mine.step_s, mine.comm_s, mine.hash_s,
        hash_mean, mine.bytes, mine.peak_rss_mb, static_cast<long long>(st.params.numel()),
        ToHex(st.chain).c_str(), per.c_str());
  }
  ShutdownKernelPool();
  return 0;
}
