// Training-step time of trail on the benchmark configuration (L=6, d=384, 6 heads, vocab 16384,
// T=256, B=8, GELU MLP 4d, tied head, AdamW): median seconds per step, tokens/s, the share of
// the step spent hashing state (gradients, parameters, optimizer), peak memory, and the
// logical-mesh overhead (the same 8 windows as 2 replicas × 2 shards). Prints one JSON object;
// bench/run_train_bench.sh runs it beside PyTorch and prints ratios.
//   train_bench [steps] [threads] [fp32|int8|int8-fp32bw] [OPTIONS|-] [B|gpt2-small|gpt2-1024]
//               [DEVICE]
// The third argument is the block matrices' arithmetic. OPTIONS, comma-separated: `profile`, a
// table of where the step's time goes (by operation and output, summed over layers) on stderr;
// `recompute`, the recipe with [train] recompute = "layers" (activation recomputation); `kv=N`,
// grouped-query attention with N key/value heads (config B has 6 query heads). The
// fifth picks the model: configuration B above, or the gpt2-small preset (12 × 768, vocabulary
// 50257) at T = 128, B = 8 (gpt2-1024: at T = 1024, the GPU benchmark's shape), then without
// the mesh measurement. DEVICE (default cpu) is where the step runs, e.g. cuda.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "data/stream.h"
#include "data/synthetic_corpus.h"
#include "collectives/communicator.h"
#include "core/device.h"
#include "repops/devices.h"
#include "repops/kernels.h"
#include "train/recipe.h"
#include "train/step.h"

using namespace trail;

namespace {

struct Timing {
  double median = 0, hash = 0;
  int64_t activation_bytes = 0;
};

// Times each operation as the interval since the previous one's output (or the micro-batch's
// start): what the transformer did to produce this output, glue (head split, residual add)
// included. Summed by "op tensor" over layers and steps.
class OpClock : public train::StepObserver {
 public:
  void BeginMicroBatch(int64_t, int64_t, const Digest&) override { last_ = Now(); }
  void Output(const char* op, int64_t, const char* tensor, const model::OpOutput&) override {
    const double t = Now();
    seconds_[std::string(op) + " " + tensor] += t - last_;
    last_ = t;
  }
  void Print(double step_seconds, int steps) const {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [k, v] : seconds_) rows.push_back({v / steps, k}), total += v / steps;
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "%-32s %9s %6s\n", "operation output", "s/step", "share");
    for (const auto& [v, k] : rows)
      if (v >= 0.002 * step_seconds)
        std::fprintf(stderr, "%-32s %9.4f %5.1f%%\n", k.c_str(), v, 100 * v / step_seconds);
    std::fprintf(stderr, "%-32s %9.4f %5.1f%%  (the rest: reduction, clipping, AdamW, hashing)\n",
                 "forward + backward", total, 100 * total / step_seconds);
  }

 private:
  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double last_ = 0;
  std::map<std::string, double> seconds_;
};

struct BenchModel {
  std::string recipe;  // [model] section
  int64_t vocab, seq_len;
};

BenchModel ModelOf(const std::string& name, int replicas, int shards, const std::string& quant) {
  if (name == "gpt2-small" || name == "gpt2-1024") {
    const int64_t T = name == "gpt2-small" ? 128 : 1024;
    return {bench::Gpt2SmallRecipe(replicas, shards, T, quant), 50257, T};
  }
  return {bench::ConfigBRecipe(replicas, shards, quant), 16384, 256};
}

Timing TimeSteps(const std::string& dir, int micro, int replicas, int shards, int steps,
                 const std::string& quant, const std::string& model, const Device& device,
                 bool recompute, int64_t kv_heads, OpClock* clock = nullptr) {
  BenchModel bm = ModelOf(model, replicas, shards, quant);
  if (recompute) bm.recipe += "[train]\nrecompute = \"layers\"\n";
  if (kv_heads > 0) {  // right after the [model] header
    const size_t at = bm.recipe.find("[model]\n") + 8;
    bm.recipe.insert(at, "n_kv_heads = " + std::to_string(kv_heads) + "\n");
  }
  data::StreamConfig sc;
  sc.seed = 1;
  sc.seq_len = bm.seq_len;
  sc.schedule = {{0, 8}};
  sc.micro_batch_windows = micro;
  sc.positions = data::PositionMode::kWindow;
  const data::Manifest m = data::synthetic::MakeCorpus(dir, {{"web", 1.0, 2, 400, 50, 2000}}, sc, 2,
                                                       static_cast<uint32_t>(bm.vocab));
  data::CanonicalStream stream(m);
  const train::Recipe r = train::ParseRecipe(bm.recipe, "bench", bm.vocab);
  train::StepEngine engine(r, stream, collectives::SingleProcess(), device);
  train::TrainState st(r.model, engine.backend());
  st.params.InitRandom(r.model);
  engine.Run(st);  // warm-up: first touch of every buffer
  engine.set_observer(clock);
  std::vector<double> t, h;
  for (int s = 0; s < steps; ++s) {
    const train::StepResult res = engine.Run(st);
    t.push_back(res.seconds);
    h.push_back(res.hash_seconds);
  }
  return {bench::Median(t), bench::Median(h), engine.activation_bytes()};
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const std::string mode = argc > 3 ? argv[3] : "fp32";
  if (mode != "fp32" && mode != "int8" && mode != "int8-fp32bw") {
    std::fprintf(stderr, "train_bench: the arithmetic must be fp32, int8 or int8-fp32bw\n");
    return 2;
  }
  const std::string quant = mode == "fp32"   ? ""
                            : mode == "int8" ? "linear = \"int8-lsq\"\n"
                                             : "linear = \"int8-lsq\"\nbackward = \"fp32\"\n";
  SetKernelThreads(static_cast<size_t>(threads));
  repops::UseDefaultSimdTarget();
  TempDir a, b;
  const std::string options = argc > 4 ? argv[4] : "-";
  const bool profile = options.find("profile") != std::string::npos;
  const bool recompute = options.find("recompute") != std::string::npos;
  const size_t kv_at = options.find("kv=");
  const int64_t kv_heads = kv_at == std::string::npos ? 0 : std::atoll(options.c_str() + kv_at + 3);
  const std::string model = argc > 5 ? argv[5] : "B";
  if (model != "B" && model != "gpt2-small" && model != "gpt2-1024") {
    std::fprintf(stderr, "train_bench: the model must be B, gpt2-small or gpt2-1024\n");
    return 2;
  }
  const Device device = repops::ParseDevice(argc > 6 ? argv[6] : "cpu");
  OpClock clock;
  const Timing flat = TimeSteps(a.path(), 8, 1, 1, steps, quant, model, device, recompute, kv_heads,
                                profile ? &clock : nullptr);
  if (profile) clock.Print(flat.median, steps);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_mb = double(ru.ru_maxrss) / 1024.0;
  const Timing mesh =
      model == "B" ? TimeSteps(b.path(), 2, 2, 2, steps, quant, model, device, recompute, kv_heads)
                   : Timing{flat.median, 0, 0};
  const double tokens = 8.0 * ModelOf(model, 1, 1, "").seq_len;
  const std::unique_ptr<repops::Backend> be = repops::MakeBackend(device);
  const std::string backend =
      be->allocator().is_host_memory() ? be->host_kernels().name : be->description();
  std::printf(
      "{\"model\": \"%s\", \"arithmetic\": \"%s\", \"backend\": \"%s\", \"threads\": %d, "
      "\"step_s\": %.4f, \"tok_s\": %.1f, "
      "\"hash_s\": %.4f, \"hash_share\": %.4f, \"peak_rss_mb\": %.1f, "
      "\"activations_mb\": %.1f, \"recompute\": %s, \"kv_heads\": %lld, "
      "\"mesh_2x2_step_s\": %.4f, \"mesh_overhead\": %.4f}\n",
      model.c_str(), mode.c_str(), backend.c_str(), threads, flat.median, tokens / flat.median,
      flat.hash, flat.hash / flat.median, peak_mb, double(flat.activation_bytes) / 1048576.0,
      recompute ? "true" : "false", static_cast<long long>(kv_heads), mesh.median,
      mesh.median / flat.median - 1.0);
  ShutdownKernelPool();
  return 0;
}
