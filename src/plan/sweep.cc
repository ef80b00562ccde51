#include "plan/sweep.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/file_util.h"
#include "core/toml_text.h"
#include "data/batch_schedule.h"
#include "model/config.h"

namespace trail::plan {
namespace {

struct StepsAndCost {
  int64_t steps = 0;
  double tokens = 0, flops = 0;
};

// The smallest step count whose windows cost at least `budget` FLOPs (FLOPs per token at each
// step's window length), with their input positions and FLOPs.
StepsAndCost StepsFor(double budget, const model::ModelConfig& c, const data::StreamConfig& stream,
                      int64_t max_steps) {
  const data::BatchSchedule schedule(stream.schedule);
  std::map<int64_t, std::pair<double, double>> by_length;  // L -> (tokens, FLOPs per token)
  StepsAndCost out;
  while (out.flops < budget && out.steps < max_steps) {
    const int64_t L = data::SeqLenAtStep(stream, out.steps);
    if (!by_length.contains(L)) by_length[L] = {0.0, model::Cost(c, L).flops_per_token};
    by_length[L].first += double(schedule.WindowsAt(out.steps++)) * double(L);
    out.tokens = out.flops = 0;
    for (const auto& [len, tf] : by_length)
      out.tokens += tf.first, out.flops += tf.first * tf.second;
  }
  return out;
}

std::string RunName(double budget, int64_t width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "c%.1e-d%lld", budget, static_cast<long long>(width));
  return buf;
}

toml::table& SectionOf(toml::table& root, const char* name) {
  if (!root.contains(name)) root.insert(name, toml::table{});
  toml::table* t = root[name].as_table();
  TRAIL_CHECK(t != nullptr, "the base recipe's ", name, " is not a table");
  return *t;
}

std::string RecipeText(const std::string& base_text, const std::string& path,
                       const train::Recipe& base, const SweepRun& run) {
  toml::table root = ParseTomlText(base_text, path);
  toml::table& m = SectionOf(root, "model");
  m.insert_or_assign("d_model", run.d_model);
  m.insert_or_assign("d_ff", run.d_ff);
  SectionOf(root, "train").insert_or_assign("steps", run.steps);
  if (base.schedule.decay != train::DecayKind::kConstant && base.schedule.total_tokens > 0) {
    const double scale = run.tokens / double(base.schedule.total_tokens);
    toml::table& s = SectionOf(root, "schedule");
    s.insert_or_assign("total_tokens", static_cast<int64_t>(run.tokens));
    s.insert_or_assign(
        "warmup_tokens",
        static_cast<int64_t>(std::llround(double(base.schedule.warmup_tokens) * scale)));
    if (base.schedule.wsd_decay_tokens > 0) {
      s.insert_or_assign(
          "wsd_decay_tokens",
          static_cast<int64_t>(std::llround(double(base.schedule.wsd_decay_tokens) * scale)));
    }
  }
  std::ostringstream out;
  out << "# " << run.name << ": written by `trail plan sweep` from " << path << "\n"
      << root << "\n";
  return out.str();
}

}  // namespace

Sweep PlanSweep(const SweepSpec& spec, const data::StreamConfig& stream, int64_t vocab) {
  TRAIL_CHECK(!spec.budgets.empty() && !spec.widths.empty(),
              "a sweep needs at least one budget and one width");
  const std::string text = ReadFileToString(spec.base_recipe);
  const train::Recipe base = train::ParseRecipe(text, spec.base_recipe, vocab);
  const model::ModelConfig& b = base.model;
  // Runs are named by budget (two significant digits) and width: two that share a name would
  // write the same directory.
  std::set<std::string> names;
  for (double budget : spec.budgets) {
    for (int64_t width : spec.widths) {
      TRAIL_CHECK(names.insert(RunName(budget, width)).second,
                  "two runs of the sweep would both be ", RunName(budget, width),
                  ": give each budget and width once, budgets differing in "
                  "their first two digits");
    }
  }
  Sweep out;
  for (double budget : spec.budgets) {
    TRAIL_CHECK(budget > 0 && std::isfinite(budget), "budget ", budget,
                " is not a positive FLOP count");
    for (int64_t width : spec.widths) {
      model::ModelConfig c = b;
      c.d_model = width;
      c.d_ff =
          std::max<int64_t>(1, std::llround(double(b.d_ff) * double(width) / double(b.d_model)));
      // Heads split each width, unless the recipe fixes their size (head_dim: they stay).
      TRAIL_CHECK(b.head_size > 0 || (width % b.n_heads == 0 && (width / b.n_heads) % 2 == 0),
                  "width ", width, " is not a multiple of 2 x ", b.n_heads,
                  " heads (RoPE needs an even head size)");
      SweepRun run;
      run.name = RunName(budget, width);
      run.budget = budget, run.d_model = width, run.d_ff = c.d_ff;
      run.parameters = model::Cost(c, stream.seq_len).parameters;
      constexpr int64_t kMaxSteps = 10 * 1000 * 1000;
      const StepsAndCost got = StepsFor(budget, c, stream, kMaxSteps);
      run.steps = got.steps, run.tokens = got.tokens, run.flops = got.flops;
      if (run.flops < budget) {
        out.skipped.push_back(run.name + ": more than 10,000,000 steps");
        continue;
      }
      if (run.steps < spec.min_steps) {
        out.skipped.push_back(run.name + ": " + std::to_string(run.steps) + " steps (fewer than " +
                              std::to_string(spec.min_steps) +
                              "): the budget is too small for this width");
        continue;
      }
      run.recipe_text = RecipeText(text, spec.base_recipe, base, run);
      out.runs.push_back(std::move(run));
    }
  }
  TRAIL_CHECK(!out.runs.empty(),
              "every (budget, width) of the sweep was left out: ", out.skipped.front(),
              " (raise the budgets or lower the widths)");
  return out;
}

}  // namespace trail::plan
