#include "cli/plan_cmd.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "plan/run_points.h"
#include "plan/scaling_fit.h"

namespace trail::cli {
namespace {

// Kaplan et al. (2020): compute-optimal growth N ∝ C^0.73, D ∝ C^0.27, from another law (fitted
// to early-stopped runs at a fixed learning-rate schedule); shown beside, never mixed in.
constexpr double kKaplanParamsExponent = 0.73, kKaplanTokensExponent = 0.27;

void AddFit(CLI::App* plan, PlanCommand& c) {
  c.fit = plan->add_subcommand(
      "fit", "Fit L(N, D) = E + A/N^alpha + B/D^beta to finished runs (Huber on ln L, many "
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

nlohmann::ordered_json IntervalJson(double value, const plan::Interval& i) {
  return {{"value", value}, {"low", i.low}, {"high", i.high}};
}

nlohmann::ordered_json FitJson(const std::vector<plan::SourcedPoint>& points, const plan::ScalingFit& f) {
  nlohmann::ordered_json j;
  j["format"] = "trail.plan.fit.v1";
  for (const plan::SourcedPoint& p : points) {
    j["points"].push_back({{"source", p.source}, {"params", p.point.params},
                           {"tokens", p.point.tokens}, {"loss", p.point.loss},
                           {"fitted_loss", f.law.Loss(p.point.params, p.point.tokens)}});
  }
  j["law"] = {{"E", IntervalJson(f.law.E, f.E)}, {"A", IntervalJson(f.law.A, f.A)},
              {"B", IntervalJson(f.law.B, f.B)}, {"alpha", IntervalJson(f.law.alpha, f.alpha)},
              {"beta", IntervalJson(f.law.beta, f.beta)}};
  j["huber_objective"] = f.objective;
  j["rms_log_error"] = f.rms_log_error;
  j["bootstrap_fits"] = f.bootstrap_fits;
  const double s = f.law.alpha + f.law.beta;
  j["optimal_exponents"] = {{"params", f.law.beta / s}, {"tokens", f.law.alpha / s},
                            {"kaplan_params", kKaplanParamsExponent},
                            {"kaplan_tokens", kKaplanTokensExponent}};
  for (const plan::BudgetOptimum& b : f.budgets) {
    j["budgets"].push_back({{"flops", b.flops},
                            {"params", IntervalJson(b.optimum.params, b.params)},
                            {"tokens", IntervalJson(b.optimum.tokens, b.tokens)},
                            {"tokens_per_param", b.optimum.tokens / b.optimum.params}});
  }
  return j;
}

void PrintFit(const std::vector<plan::SourcedPoint>& points, const plan::ScalingFit& f) {
  std::printf("%-40s %12s %12s %9s %9s\n", "run", "N params", "D tokens", "L", "fitted");
  for (const plan::SourcedPoint& p : points) {
    std::printf("%-40s %12.4g %12.4g %9.4f %9.4f\n", p.source.c_str(), p.point.params,
                p.point.tokens, p.point.loss, f.law.Loss(p.point.params, p.point.tokens));
  }
  std::printf("\nL(N, D) = E + A/N^alpha + B/D^beta  (Huber delta 1e-3 on ln L; rms error of ln L "
              "%.4g; 95%% intervals from %d bootstrap fits)\n", f.rms_log_error, f.bootstrap_fits);
  const std::pair<const char*, std::pair<double, plan::Interval>> rows[] = {
      {"E", {f.law.E, f.E}}, {"A", {f.law.A, f.A}}, {"B", {f.law.B, f.B}},
      {"alpha", {f.law.alpha, f.alpha}}, {"beta", {f.law.beta, f.beta}}};
  for (const auto& [name, v] : rows) {
    std::printf("  %-6s %12.5g   [%.5g, %.5g]\n", name, v.first, v.second.low, v.second.high);
  }
  const double s = f.law.alpha + f.law.beta;
  std::printf("\ncompute-optimal growth (C = 6ND): N* ~ C^%.3f, D* ~ C^%.3f  (Kaplan et al. 2020, "
              "another law: N ~ C^%.2f, D ~ C^%.2f)\n", f.law.beta / s, f.law.alpha / s,
              kKaplanParamsExponent, kKaplanTokensExponent);
  for (const plan::BudgetOptimum& b : f.budgets) {
    std::printf("  C = %.3g FLOPs: N* = %.4g [%.3g, %.3g], D* = %.4g [%.3g, %.3g], %.1f tokens/param\n",
                b.flops, b.optimum.params, b.params.low, b.params.high, b.optimum.tokens,
                b.tokens.low, b.tokens.high, b.optimum.tokens / b.optimum.params);
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
    for (const plan::SourcedPoint& p : points) largest = std::max(largest, 6 * p.point.params * p.point.tokens);
    o.budgets = {largest, 100 * largest};
  }
  std::vector<plan::LossPoint> bare;
  for (const plan::SourcedPoint& p : points) bare.push_back(p.point);
  const plan::ScalingFit fit = plan::FitScalingLaw(bare, o);
  if (c.json) {
    std::printf("%s\n", FitJson(points, fit).dump(2).c_str());
  } else {
    PrintFit(points, fit);
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, PlanCommand& c) {
  c.plan = app.add_subcommand("plan", "Plan runs: fit scaling laws to finished runs");
  c.plan->require_subcommand(1);
  AddFit(c.plan, c);
}

int RunPlanCommand(const PlanCommand& c) {
  if (*c.fit) return RunFit(c);
  return 2;
}

}  // namespace trail::cli
