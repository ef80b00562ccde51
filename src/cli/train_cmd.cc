#include "cli/train_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/checks.h"

#include <cstdio>

#include "cli/device_option.h"
#include "core/thread_pool.h"
#include "repops/kernels.h"
#include "collectives/launch.h"
#include "train/step_report.h"
#include "train/run_dir.h"
#include "train/trainer.h"

namespace trail::cli {

void AddTrainCommand(CLI::App& app, TrainCommand& c) {
  c.train =
      app.add_subcommand("train",
                         "Train a model (bit-reproducible) and record its trajectory, metrics and "
                         "checkpoints in a run directory");
  c.train->add_option("--recipe", c.recipe, "The training recipe (TOML)");
  c.train->add_option("--data", c.data,
                      "The data manifest (JSON); on --resume the run's by default");
  c.train->add_option("--run", c.run, "The run directory");
  c.train->add_option("--init-from", c.init_from,
                      "Start from the model `trail import` wrote in this folder (the recipe's "
                      "[init] must name it)");
  c.train->add_flag("--resume", c.resume,
                    "Continue the run from its newest valid checkpoint, re-checking the steps "
                    "recorded after it");
  c.train->add_option("--stop-after", c.stop_after, "Stop once this many steps are done");
  c.train->add_option("--threads", c.threads, "Kernel threads (default: all CPUs)")
      ->check(CLI::Range(1, 1024));
  c.train->add_flag("--quiet", c.quiet, "No progress lines");
  c.train->add_flag("--no-verify", c.no_verify, "Do not rehash the data shards when opening");
  c.train
      ->add_option("--trace-every", c.trace_every,
                   "Record an operation trace of every K-th step in <run>/traces/ (for "
                   "`trail audit bisect`)")
      ->check(kNonNegative);
  c.train->add_option("--key", c.key,
                      "Ed25519 private key (from `trail audit keygen`) that signs the run's "
                      "attestation.json when it finishes");
  AddDeviceOption(c.train, c.device);
  c.verify = c.train->add_subcommand(
      "verify",
      "Check a run's files without executing a step: recipe and manifest hashes, the "
      "trajectory's chain, every checkpoint's files and chain");
  c.verify->add_option("--run", c.run, "The run directory")->required();
}

namespace {

int RunVerify(const std::string& run) {
  const train::RunCheck r = train::RunDirectory(run).Verify();
  for (const std::string& p : r.problems) std::printf("FAIL %s\n", p.c_str());
  std::printf(
      "%s: %lld trajectory records chained from genesis, %zu checkpoints verified, %zu "
      "problems\n",
      run.c_str(), static_cast<long long>(r.steps), r.checkpoints.size(), r.problems.size());
  return r.ok() ? 0 : 1;
}

}  // namespace

int RunTrainCommand(const TrainCommand& c) {
  if (*c.verify) return RunVerify(c.run);
  if (c.threads > 0) SetKernelThreads(static_cast<size_t>(c.threads));
  repops::UseDefaultSimdTarget();
  train::TrainOptions o;
  o.recipe_path = c.recipe, o.manifest_path = c.data, o.run_dir = c.run;
  o.init_from = c.init_from;
  o.resume = c.resume, o.stop_after = c.stop_after, o.quiet = c.quiet;
  o.verify_shards = !c.no_verify, o.sign_key = c.key, o.trace_every = c.trace_every;
  o.device = repops::ParseDevice(c.device);
  o.comm = &collectives::JobCommunicator();  // MPI under mpirun / srun, else this process alone
  const train::TrainSummary s = train::RunTraining(o);
  if (o.comm->rank() != 0) return 0;  // process 0 reports for the job
  if (s.steps_verified_on_resume > 0) {
    std::printf("resume: %lld re-executed steps matched their records\n",
                static_cast<long long>(s.steps_verified_on_resume));
  }
  std::printf("steps %lld  trajectory %s  params %s\n", static_cast<long long>(s.steps_done),
              s.final_chain.c_str(), s.final_params.c_str());
  std::string peaks;
  for (uint64_t b : s.peak_resident_bytes)
    peaks += train::FormatNumber(" %.1f", double(b) / 1048576.0);
  train::Say(c.quiet, "memory: peak resident MiB by process:" + peaks +
                          (s.gathered_param_bytes > 0
                               ? train::FormatNumber(" (gathered parameter units %.1f MiB each)",
                                                     double(s.gathered_param_bytes) / 1048576.0)
                               : ""));
  return 0;
}

}  // namespace trail::cli
