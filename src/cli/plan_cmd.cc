#include "cli/plan_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/checks.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/inspect.h"
#include "data/manifest.h"
#include "data/stream.h"
#if TRAIL_WITH_CORPUS
#include "corpus/pipeline/effective_data.h"
#endif
#include "plan/plan_json.h"
#include "plan/run_cost.h"
#include "plan/run_points.h"
#include "core/file_util.h"
#include "plan/scaling_fit.h"
#include "plan/sweep.h"

namespace trail::cli {
namespace {

void AddFit(CLI::App* plan, PlanCommand& c) {
  c.fit = plan->add_subcommand(
      "fit",
      "Fit L(N, D) = E + A/N^alpha + B/D^beta to finished runs (Huber on ln L, many "
      "starts), with bootstrap intervals and the compute-optimal N*, D* per budget");
  c.fit->add_option("runs", c.runs, "Run directories (final validation loss, tokens, parameters)");
  c.fit->add_option("--points", c.points, "CSV files with columns params,tokens,loss");
  c.fit->add_option("--budget", c.budgets,
                    "Training FLOPs to allocate (default: the largest run's 6ND, and 100x it)");
  c.fit->add_option("--bootstrap", c.bootstrap, "Bootstrap resamples (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  c.fit->add_option("--seed", c.seed, "Seed of the resampling")->capture_default_str();
  c.fit->add_flag("--json", c.json, "Print the fit as JSON");
}

void AddCost(CLI::App* plan, PlanCommand& c) {
  c.cost = plan->add_subcommand(
      "cost",
      "What a recipe costs before it runs: parameters by kind, FLOPs per token and in "
      "all, tokens per parameter, memory per process");
  c.cost->add_option("--recipe", c.recipe, "The recipe (recipe.toml)")->required();
  auto* data = c.cost->add_option("--data", c.data,
                                  "The data manifest: vocabulary, sequence length, batch schedule");
  c.cost->add_option("--processes", c.processes, "Processes the mesh runs on")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  auto* vocab = c.cost
                    ->add_option("--vocab", c.vocab,
                                 "Vocabulary size (without --data, when "
                                 "the recipe has none)")
                    ->check(kPositive);
  auto* seq = c.cost
                  ->add_option("--seq-len", c.seq_len,
                               "Sequence length (without --data; "
                               "default the model's max_seq_len)")
                  ->check(kPositive);
  auto* windows = c.cost->add_option("--windows", c.windows, "Windows per step (without --data)")
                      ->check(kPositive)
                      ->capture_default_str();
  auto* micro = c.cost
                    ->add_option("--micro-batch-windows", c.micro_batch_windows,
                                 "Windows per micro-batch (without --data)")
                    ->check(kPositive)
                    ->capture_default_str();
  for (auto* o : {vocab, seq, windows, micro}) data->excludes(o);
  c.cost
      ->add_option("--measure", c.measure,
                   "Train this many real steps (in a temporary run, on this machine, one "
                   "process) and estimate the run's time from the measured rate; needs --data")
      ->check(CLI::Range(2, 100000))
      ->needs(data);
  c.cost->add_flag("--json", c.json, "Print the cost as JSON");
}

void PrintCost(const plan::RunCost& r) {
  const model::ModelCost& n = r.model;
  auto mib = [](int64_t b) { return double(b) / 1048576.0; };
  std::printf(
      "parameters %lld: embedding %lld, blocks %lld, LM head %lld%s, norm gains %lld; "
      "multiplied per token %lld\n",
      (long long)n.parameters, (long long)n.embedding, (long long)n.blocks, (long long)n.lm_head,
      n.lm_head == 0 ? " (tied)" : "", (long long)n.norm_gains, (long long)n.matmul_parameters);
  std::printf("FLOPs per token at T = %lld: %.4g (6N %.4g + attention %.4g)\n",
              (long long)r.seq_len, n.flops_per_token,
              n.flops_per_token - n.attention_flops_per_token, n.attention_flops_per_token);
  if (r.lengths.size() > 1) {
    std::printf("sequence-length curriculum:");
    for (const train::LengthFlops& l : r.lengths) {
      std::printf("  T = %lld: %.4g tokens at %.4g FLOPs/token;", (long long)l.seq_len, l.tokens,
                  l.flops_per_token);
    }
    std::printf("\n");
  }
  std::printf(
      "%lld steps, %.4g tokens: %.4g FLOPs, %.2f tokens per parameter (Chinchilla's "
      "compute-optimal runs: about 20)\n",
      (long long)r.steps, r.tokens, r.total_flops, r.tokens_per_parameter);
  std::printf("memory per process (MiB) on %lld process(es):\n", (long long)r.processes);
  std::printf("  %7s %10s %10s %10s %11s %10s\n", "process", "params", "gradients", "moments",
              "activations", "total");
  for (size_t p = 0; p < r.memory.size(); ++p) {
    const plan::ProcessMemory& m = r.memory[p];
    std::printf("  %7zu %10.1f %10.1f %10.1f %11.1f %10.1f\n", p, mib(m.parameters),
                mib(m.gradients), mib(m.moments), mib(m.activations), mib(m.total()));
  }
  if (!r.memory.empty()) {
    const plan::ProcessMemory& m = r.memory[0];
    std::printf(
        "activations a process, [train] recompute = \"none\": %.1f MiB; \"layers\": %.1f MiB "
        "(about one more forward of the blocks a step)\n",
        mib(m.activations_kept), mib(m.activations_recomputed));
    std::printf(
        "parameters process 0, [mesh] shard_params = false: %.1f MiB; true: %.1f MiB (its range "
        "and the gathered layers)\n",
        mib(m.parameters_whole), mib(m.parameters_sharded));
  }
}

void AddMeasurement(const PlanCommand& c, const plan::RunCost& cost, nlohmann::ordered_json* j) {
  if (c.measure == 0) return;
  std::fprintf(stderr, "measuring: training %lld steps of %s in a temporary run...\n",
               (long long)c.measure, c.recipe.c_str());
  const plan::StepRate r = plan::MeasureStepRate(c.recipe, c.data, c.measure);
  const double seconds = r.seconds_per_token * cost.tokens;
  if (j != nullptr) {
    (*j)["measured"] = plan::MeasuredJson(r, cost);
    return;
  }
  const bool hours = seconds >= 7200, minutes = seconds >= 120;
  std::printf(
      "measured on this machine (one process, %lld steps after the first): median step "
      "%.4g s, %.4g tokens/s -> %lld steps of %.4g tokens in about %.3g %s\n",
      (long long)r.steps, r.median_step_seconds, 1.0 / r.seconds_per_token, (long long)cost.steps,
      cost.tokens,
      hours     ? seconds / 3600
      : minutes ? seconds / 60
                : seconds,
      hours     ? "h"
      : minutes ? "min"
                : "s");
}

int RunCostCommand(const PlanCommand& c) {
  data::StreamConfig stream;
  int64_t vocab = c.vocab;
  if (!c.data.empty()) {
    const data::Manifest m = data::LoadManifest(c.data);
    stream = m.stream;
    vocab = m.tokenizer.vocab_size;
  }
  train::Recipe recipe;
  try {
    recipe = train::LoadRecipe(c.recipe, vocab);
  } catch (const Error& e) {
    if (!c.data.empty() || vocab > 0) throw;
    TRAIL_FAIL(e.what(), "; without --data, give the vocabulary size with --vocab");
  }
  if (c.data.empty()) {
    stream.seq_len = c.seq_len > 0 ? c.seq_len : recipe.model.max_seq_len;
    stream.schedule = {{0, c.windows}};
    stream.micro_batch_windows = c.micro_batch_windows;
  }
  const plan::RunCost cost = plan::EstimateRunCost(recipe, stream, c.processes);
  if (c.json) {
    nlohmann::ordered_json j = plan::CostJson(cost);
    AddMeasurement(c, cost, &j);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    PrintCost(cost);
    AddMeasurement(c, cost, nullptr);
  }
  return 0;
}

void AddSweep(CLI::App* plan, PlanCommand& c) {
  c.sweep = plan->add_subcommand(
      "sweep",
      "Write the recipes of an IsoFLOP grid (each budget x each width) and run.sh, "
      "which trains them and fits the law to their final losses");
  c.sweep->add_option("--recipe", c.recipe, "The base recipe")->required();
  c.sweep->add_option("--data", c.data, "The data manifest the runs train on")->required();
  c.sweep->add_option("--budget", c.budgets, "Training FLOPs per run (repeat)")->required();
  c.sweep->add_option("--widths", c.widths, "d_model values (comma-separated)")
      ->required()
      ->delimiter(',');
  c.sweep->add_option("--min-steps", c.min_steps, "Leave out runs shorter than this")
      ->check(kPositive)
      ->capture_default_str();
  c.sweep->add_option("--out", c.out, "Directory for the recipes, sweep.json and run.sh")
      ->required();
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

int RunSweepCommand(const PlanCommand& c) {
  const data::Manifest m = data::LoadManifest(c.data);
  plan::SweepSpec spec{c.recipe, c.budgets, c.widths, c.min_steps};
  const plan::Sweep sweep = plan::PlanSweep(spec, m.stream, m.tokenizer.vocab_size);
  std::filesystem::create_directories(c.out);
  const std::string data = std::filesystem::absolute(c.data).string();
  std::string script =
      "#!/bin/sh\n# Trains every run of the sweep, then fits the law. Written by "
      "`trail plan sweep`.\nset -e\ncd \"$(dirname \"$0\")\"\ntrail=${TRAIL:-trail}\n";
  std::string runs;
  std::printf("%-18s %8s %8s %12s %8s %12s %12s\n", "run", "d_model", "d_ff", "parameters", "steps",
              "tokens", "FLOPs");
  for (const plan::SweepRun& r : sweep.runs) {
    std::filesystem::create_directories(c.out + "/" + r.name);
    WriteFileAtomic(c.out + "/" + r.name + "/recipe.toml", r.recipe_text);
    script += "\"$trail\" train --recipe " + r.name + "/recipe.toml --data " + ShellQuote(data) +
              " --run " + r.name + "/run --quiet\n";
    runs += " " + r.name + "/run";
    std::printf("%-18s %8lld %8lld %12lld %8lld %12.4g %12.4g\n", r.name.c_str(),
                (long long)r.d_model, (long long)r.d_ff, (long long)r.parameters,
                (long long)r.steps, r.tokens, r.flops);
  }
  for (const std::string& s : sweep.skipped) std::printf("left out %s\n", s.c_str());
  script += "\"$trail\" plan fit" + runs + "\n";
  WriteFileAtomic(c.out + "/sweep.json", plan::SweepJson(sweep, data).dump(2) + "\n");
  WriteFileAtomic(c.out + "/run.sh", script);
  std::filesystem::permissions(c.out + "/run.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  std::printf("%zu recipes under %s; train and fit them with %s/run.sh\n", sweep.runs.size(),
              c.out.c_str(), c.out.c_str());
  return 0;
}

#if TRAIL_WITH_CORPUS
void AddDataView(CLI::App* plan, PlanCommand& c) {
  c.data_view = plan->add_subcommand(
      "data",
      "Effective data: per source, documents and bytes read, dropped as exact or near "
      "duplicates or by filters, kept, their tokens, and the epochs a run sees");
  c.data_view->add_option("--lineage", c.lineage, "The corpus build's lineage.sqlite")->required();
  auto* data =
      c.data_view->add_option("--data", c.data, "A data manifest over the corpus's shards");
  c.data_view->add_option("--steps", c.steps, "Steps of the run (with --data): epochs per source")
      ->check(kPositive)
      ->needs(data);
  c.data_view->add_flag("--json", c.json, "Print JSON");
}

// Epochs per manifest source over the windows of `steps` steps (data::SourceShares).
std::map<std::string, double> EpochsBySource(const std::string& manifest, int64_t steps) {
  std::map<std::string, double> out;
  if (manifest.empty() || steps == 0) return out;
  data::CanonicalStream stream(data::LoadManifest(manifest));
  const data::SourceShareReport shares =
      data::SourceShares(stream, data::WindowsBeforeStep(stream.manifest(), steps));
  for (const data::SourceShare& r : shares.sources) out[r.source] = r.epochs;
  return out;
}

int RunDataView(const PlanCommand& c) {
  const std::vector<corpus::SourceEffectiveData> sources = corpus::EffectiveData(c.lineage);
  const std::map<std::string, double> epochs = EpochsBySource(c.data, c.steps);
  if (c.json) {
    std::printf("%s\n", corpus::EffectiveDataJson(sources, epochs).dump(2).c_str());
    return 0;
  }
  std::printf("%-14s %9s %11s %9s %9s %9s %11s %12s %13s %7s %8s\n", "source", "docs read",
              "bytes read", "exact dup", "near dup", "filtered", "kept bytes", "kept tokens",
              "nominal (est)", "kept %", "epochs");
  for (const corpus::SourceEffectiveData& s : sources) {
    const auto e = epochs.find(s.source);
    const double kept_share = s.read.bytes ? double(s.kept.bytes) / double(s.read.bytes) : 0.0;
    std::printf("%-14s %9lld %11lld %9lld %9lld %9lld %11lld %12lld %13.4g %6.1f%% %8s\n",
                s.source.c_str(), (long long)s.read.documents, (long long)s.read.bytes,
                (long long)s.exact_dup.bytes, (long long)s.near_dup.bytes,
                (long long)s.filtered.bytes, (long long)s.kept.bytes, (long long)s.total_tokens(),
                s.nominal_tokens(), 100 * kept_share,
                e == epochs.end() ? "-" : std::to_string(e->second).substr(0, 6).c_str());
  }
  std::printf(
      "(dup and filter columns in bytes; nominal tokens: bytes read at the kept bytes per "
      "token)\n");
  return 0;
}
#endif

void PrintFit(const std::vector<plan::SourcedPoint>& points, const plan::ScalingFit& f) {
  std::printf("%-40s %12s %12s %9s %9s\n", "run", "N params", "D tokens", "L", "fitted");
  for (const plan::SourcedPoint& p : points) {
    std::printf("%-40s %12.4g %12.4g %9.4f %9.4f\n", p.source.c_str(), p.point.params,
                p.point.tokens, p.point.loss, f.law.Loss(p.point.params, p.point.tokens));
  }
  std::printf(
      "\nL(N, D) = E + A/N^alpha + B/D^beta  (Huber delta 1e-3 on ln L; rms error of ln L "
      "%.4g; 95%% intervals from %d bootstrap fits)\n",
      f.rms_log_error, f.bootstrap_fits);
  const std::pair<const char*, std::pair<double, plan::Interval>> rows[] = {
      {"E", {f.law.E, f.E}},
      {"A", {f.law.A, f.A}},
      {"B", {f.law.B, f.B}},
      {"alpha", {f.law.alpha, f.alpha}},
      {"beta", {f.law.beta, f.beta}}};
  for (const auto& [name, v] : rows) {
    std::printf("  %-6s %12.5g   [%.5g, %.5g]\n", name, v.first, v.second.low, v.second.high);
  }
  if (f.degenerate_fits > 0) {
    std::printf(
        "  (%d more bootstrap fits had an exponent <= 0 and are left out: the runs do not "
        "pin the law down; add runs over a wider range of N and D)\n",
        f.degenerate_fits);
  }
  const double s = f.law.alpha + f.law.beta;
  std::printf(
      "\ncompute-optimal growth (C = 6ND): N* ~ C^%.3f, D* ~ C^%.3f  (Kaplan et al. 2020, "
      "another law: N ~ C^%.2f, D ~ C^%.2f)\n",
      f.law.beta / s, f.law.alpha / s, plan::kKaplanParamsExponent, plan::kKaplanTokensExponent);
  for (const plan::BudgetOptimum& b : f.budgets) {
    std::printf(
        "  C = %.3g FLOPs: N* = %.4g [%.3g, %.3g], D* = %.4g [%.3g, %.3g], %.1f tokens/param\n",
        b.flops, b.optimum.params, b.params.low, b.params.high, b.optimum.tokens, b.tokens.low,
        b.tokens.high, b.optimum.tokens / b.optimum.params);
  }
}

int RunFit(const PlanCommand& c) {
  std::vector<plan::SourcedPoint> points;
  for (const std::string& run : c.runs) points.push_back(plan::LossPointOfRun(run));
  for (const std::string& csv : c.points) {
    for (plan::SourcedPoint& p : plan::LossPointsFromCsv(csv)) points.push_back(std::move(p));
  }
  plan::ScalingFitOptions o;
  o.bootstrap = c.bootstrap;
  o.seed = c.seed;
  o.budgets = c.budgets;
  if (o.budgets.empty()) {
    double largest = 0;
    for (const plan::SourcedPoint& p : points)
      largest = std::max(largest, 6 * p.point.params * p.point.tokens);
    o.budgets = {largest, 100 * largest};
  }
  std::vector<plan::LossPoint> bare;
  for (const plan::SourcedPoint& p : points) bare.push_back(p.point);
  const plan::ScalingFit fit = plan::FitScalingLaw(bare, o);
  if (c.json) {
    std::printf("%s\n", plan::FitJson(points, fit).dump(2).c_str());
  } else {
    PrintFit(points, fit);
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, PlanCommand& c) {
  c.plan = app.add_subcommand("plan",
                              "Plan runs: a recipe's cost, scaling laws fitted to finished runs");
  c.plan->require_subcommand(1);
  AddCost(c.plan, c);
  AddSweep(c.plan, c);
#if TRAIL_WITH_CORPUS
  AddDataView(c.plan, c);
#endif
  AddFit(c.plan, c);
}

int RunPlanCommand(const PlanCommand& c) {
  if (*c.cost) return RunCostCommand(c);
  if (*c.sweep) return RunSweepCommand(c);
#if TRAIL_WITH_CORPUS
  if (*c.data_view) return RunDataView(c);
#endif
  if (*c.fit) return RunFit(c);
  return 2;
}

}  // namespace trail::cli
