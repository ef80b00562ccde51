#include "plan/plan_json.h"

namespace trail::plan {

nlohmann::ordered_json CostJson(const RunCost& r) {
  const model::ModelCost& n = r.model;
  nlohmann::ordered_json j;
  j["format"] = "trail.plan.cost.v1";
  j["parameters"] = {{"embedding", n.embedding}, {"blocks", n.blocks},
                     {"lm_head", n.lm_head},     {"norm_gains", n.norm_gains},
                     {"total", n.parameters},    {"matmul", n.matmul_parameters}};
  j["seq_len"] = r.seq_len;
  j["steps"] = r.steps;
  j["tokens"] = r.tokens;
  j["flops_per_token"] = n.flops_per_token;
  j["attention_flops_per_token"] = n.attention_flops_per_token;
  j["total_flops"] = r.total_flops;
  j["tokens_per_parameter"] = r.tokens_per_parameter;
  j["lengths"] = nlohmann::ordered_json::array();
  for (const train::LengthFlops& l : r.lengths) {
    j["lengths"].push_back(
        {{"seq_len", l.seq_len}, {"tokens", l.tokens}, {"flops_per_token", l.flops_per_token}});
  }
  j["processes"] = r.processes;
  for (const ProcessMemory& m : r.memory) {
    j["memory_bytes"].push_back(
        {{"parameters", m.parameters},
         {"parameters_by_sharding",
          {{"whole", m.parameters_whole}, {"sharded", m.parameters_sharded}}},
         {"gradients", m.gradients},
         {"gradient_buffers", m.gradient_buffers},
         {"moments", m.moments},
         {"activations", m.activations},
         {"activations_by_recompute",
          {{"none", m.activations_kept}, {"layers", m.activations_recomputed}}},
         {"total", m.total()}});
  }
  return j;
}

namespace {

nlohmann::ordered_json IntervalJson(double value, const Interval& i) {
  return {{"value", value}, {"low", i.low}, {"high", i.high}};
}

}  // namespace

nlohmann::ordered_json MeasuredJson(const StepRate& r, const RunCost& cost) {
  return {{"steps", r.steps},
          {"median_step_seconds", r.median_step_seconds},
          {"seconds_per_token", r.seconds_per_token},
          {"tokens_per_second", 1.0 / r.seconds_per_token},
          {"estimated_seconds", r.seconds_per_token * cost.tokens}};
}

nlohmann::ordered_json SweepJson(const Sweep& sweep, const std::string& data) {
  nlohmann::ordered_json j;
  j["format"] = "trail.plan.sweep.v1";
  j["data"] = data;
  for (const SweepRun& r : sweep.runs) {
    j["runs"].push_back({{"name", r.name},
                         {"budget", r.budget},
                         {"d_model", r.d_model},
                         {"d_ff", r.d_ff},
                         {"parameters", r.parameters},
                         {"steps", r.steps},
                         {"tokens", r.tokens},
                         {"flops", r.flops}});
  }
  for (const std::string& s : sweep.skipped) j["skipped"].push_back(s);
  return j;
}

nlohmann::ordered_json FitJson(const std::vector<SourcedPoint>& points, const ScalingFit& f) {
  nlohmann::ordered_json j;
  j["format"] = "trail.plan.fit.v1";
  for (const SourcedPoint& p : points) {
    j["points"].push_back({{"source", p.source},
                           {"params", p.point.params},
                           {"tokens", p.point.tokens},
                           {"loss", p.point.loss},
                           {"fitted_loss", f.law.Loss(p.point.params, p.point.tokens)}});
  }
  j["law"] = {{"E", IntervalJson(f.law.E, f.E)},
              {"A", IntervalJson(f.law.A, f.A)},
              {"B", IntervalJson(f.law.B, f.B)},
              {"alpha", IntervalJson(f.law.alpha, f.alpha)},
              {"beta", IntervalJson(f.law.beta, f.beta)}};
  j["huber_objective"] = f.objective;
  j["rms_log_error"] = f.rms_log_error;
  j["bootstrap_fits"] = f.bootstrap_fits;
  j["degenerate_fits"] = f.degenerate_fits;
  const double s = f.law.alpha + f.law.beta;
  j["optimal_exponents"] = {{"params", f.law.beta / s},
                            {"tokens", f.law.alpha / s},
                            {"kaplan_params", kKaplanParamsExponent},
                            {"kaplan_tokens", kKaplanTokensExponent}};
  for (const BudgetOptimum& b : f.budgets) {
    j["budgets"].push_back({{"flops", b.flops},
                            {"params", IntervalJson(b.optimum.params, b.params)},
                            {"tokens", IntervalJson(b.optimum.tokens, b.tokens)},
                            {"tokens_per_param", b.optimum.tokens / b.optimum.params}});
  }
  return j;
}

}  // namespace trail::plan
