// Small runs for tests (of train and of the layers above it): a synthetic corpus on disk, a
// recipe of a tiny model, and a run trained from them.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/thread_group.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "data/synthetic_corpus.h"
#include "repops/cpu_backend.h"
#include "repops/devices.h"
#include "train/recipe.h"
#include "train/step.h"
#include "train/test_access.h"
#include "train/trainer.h"

namespace trail::train {

// A CPU backend for state that tests keep beyond a step engine's life.
inline repops::Backend& TestCpu() {
  static repops::CpuBackend cpu;
  return cpu;
}

constexpr uint32_t kVocab = 96;

// A synthetic corpus on disk with `windows` windows per step of L = 16.
inline data::Manifest Corpus(const std::string& dir, int64_t windows, int64_t micro,
                             int max_len = 30) {
  data::StreamConfig sc;
  sc.seed = 5;
  sc.seq_len = 16;
  sc.schedule = {{0, windows}};
  sc.micro_batch_windows = micro;
  sc.chunking.max_tokens = 24;
  // Documents of 1..max_len tokens: windows hold different numbers of targets.
  return data::synthetic::MakeCorpus(dir, {{"a", 1.0, 2, 40, 1, max_len}}, sc, 2, kVocab);
}

inline std::string SmallRecipe(int64_t R, int64_t S, const std::string& extra = "") {
  return "[model]\nd_model = 32\nn_layers = 2\nn_heads = 2\nd_ff = 48\nmax_seq_len = 32\n"
         "qk_norm = true\nattention_window = 5\ninit_seed = 3\n"
         "[optimizer]\nlr = 1e-2\nclip_norm = 1e30\n"
         "[mesh]\nreplicas = " +
         std::to_string(R) + "\nshards = " + std::to_string(S) + "\n" + extra;
}

struct RunFiles {
  TempDir dir;
  std::string manifest, recipe, run;
};

// mesh: more [mesh] settings (e.g. "shard_params = true\n").
inline std::unique_ptr<RunFiles> MakeRun(int64_t steps, int64_t checkpoint_every,
                                         const std::string& mesh = "") {
  auto f = std::make_unique<RunFiles>();
  Corpus(f->dir.path() + "", 4, 2);
  f->manifest = f->dir.path() + "/manifest.json";
  f->recipe = f->dir.path() + "/recipe.toml";
  f->run = f->dir.path() + "/run";
  WriteFileAtomic(f->recipe,
                  SmallRecipe(2, 1,
                              mesh + "[train]\nsteps = " + std::to_string(steps) +
                                  "\ncheckpoint_every = " + std::to_string(checkpoint_every) +
                                  "\nkeep_checkpoints = 10\nlog_every = 1\n"
                                  "[schedule]\ndecay = \"cosine\"\n"
                                  "warmup_tokens = 64\ntotal_tokens = 2000\n"));
  return f;
}

inline TrainSummary Train(const RunFiles& f, bool resume, int64_t stop_after = -1) {
  TrainOptions o;
  o.recipe_path = f.recipe, o.manifest_path = f.manifest, o.run_dir = f.run;
  o.resume = resume, o.stop_after = stop_after, o.quiet = true;
  return RunTraining(o);
}

// ---------------------------------------------------------------- one step

// ||a - b|| / ||b|| over every gradient tensor.
inline double RelDiff(const model::ParameterSet& a, const model::ParameterSet& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const float* x = a.tensors()[i].data<float>();
    const float* y = b.tensors()[i].data<float>();
    for (int64_t j = 0; j < a.tensors()[i].numel(); ++j) {
      num += (double(x[j]) - y[j]) * (double(x[j]) - y[j]);
      den += double(y[j]) * y[j];
    }
  }
  return std::sqrt(num / den);
}

struct OneStep {
  StepResult result;
  std::unique_ptr<model::ParameterSet> grad;
};

inline OneStep RunOneStep(const data::Manifest& m, const std::string& recipe_text) {
  data::CanonicalStream stream(m);
  const Recipe r = ParseRecipe(recipe_text, "r.toml", kVocab);
  StepEngine engine(r, stream);
  TrainState st(r.model, engine.backend());
  st.params.InitRandom(r.model);
  OneStep out;
  out.result = engine.Run(st);
  out.grad = std::make_unique<model::ParameterSet>(r.model, TestCpu());
  TrainTestAccess::CopyLastGradient(engine, *out.grad);
  return out;
}

// ---------------------------------------------------------------- several processes

// Trajectory lines of `steps` steps run by a job of P processes (threads), from process 0,
// with every process's final state hashes.
inline std::vector<std::string> RunOnProcesses(const data::Manifest& m,
                                               const std::string& recipe_text, int P, int steps,
                                               const char* device = "cpu") {
  const Recipe r = ParseRecipe(recipe_text, "r.toml", kVocab);
  std::vector<std::string> lines;
  std::mutex mu;
  std::vector<std::string> finals(P);
  collectives::ThreadGroup group(P);
  group.Run([&](collectives::Communicator& comm) {
    data::CanonicalStream stream(m);
    StepEngine engine(r, stream, comm, repops::ParseDevice(device));
    TrainState st(r.model, engine.backend());
    st.params.InitRandom(r.model);
    engine.AdoptState(st);
    for (int s = 0; s < steps; ++s) {
      StepResult res;
      const std::string line = StepAndChain(engine, st, res);
      if (comm.rank() == 0) lines.push_back(line);
    }
    TrainTestAccess::GatherMoments(engine, st);
    const std::string params = ToHex(engine.ParamsHash(st));  // every process: collective
    std::lock_guard<std::mutex> lock(mu);
    finals[comm.rank()] = params + (comm.rank() == 0 ? " " + ToHex(st.OptimizerHash()) : "");
  });
  // Every process holds the same parameters; process 0 the whole optimizer state.
  for (int p = 1; p < P; ++p) {
    TRAIL_CHECK(finals[p] == finals[0].substr(0, 64), "process ", p, "'s parameters differ");
  }
  lines.push_back(finals[0]);
  return lines;
}

// The lines without their chain (which hashes the recipe's bytes).
inline std::vector<std::string> WithoutChain(std::vector<std::string> lines) {
  for (std::string& l : lines) {
    if (l.empty() || l[0] != '{') continue;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(l);
    j.erase("chain");
    l = j.dump();
  }
  return lines;
}

}  // namespace trail::train
