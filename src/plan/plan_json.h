// The JSON documents `trail plan` writes (docs/plan.md): "trail.plan.cost.v1" of a run's cost
// (with "measured" when the step rate was measured), "trail.plan.sweep.v1" of a sweep's runs
// (sweep.json) and "trail.plan.fit.v1" of a scaling-law fit, keys in the order written. The CLI
// prints these; readers of the files use the same keys. ("trail.plan.data.v1", the corpus's
// effective data, is corpus/pipeline/effective_data.h's.)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/run_cost.h"
#include "plan/run_points.h"
#include "plan/scaling_fit.h"
#include "plan/sweep.h"

namespace trail::plan {

// Kaplan et al. (2020): compute-optimal growth N ∝ C^0.73, D ∝ C^0.27, from another law (fitted
// to early-stopped runs at a fixed learning-rate schedule); shown beside, never mixed in.
inline constexpr double kKaplanParamsExponent = 0.73, kKaplanTokensExponent = 0.27;

nlohmann::ordered_json CostJson(const RunCost& cost);
// The cost's "measured" object: the step rate and the run's time at that rate.
nlohmann::ordered_json MeasuredJson(const StepRate& rate, const RunCost& cost);
// `data`: the absolute path of the manifest the runs train on.
nlohmann::ordered_json SweepJson(const Sweep& sweep, const std::string& data);
nlohmann::ordered_json FitJson(const std::vector<SourcedPoint>& points, const ScalingFit& fit);

}  // namespace trail::plan
