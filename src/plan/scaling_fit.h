// Fitting the Chinchilla law L(N, D) = E + A/N^α + B/D^β to measured losses, as Hoffmann et al.
// (2022, approach 3) do: in the parameters (a, b, e, α, β) with A = e^a, B = e^b, E = e^e,
//
//   minimize  Σ_i huber_δ( LSE(a − α·ln N_i, b − β·ln D_i, e) − ln L_i ),   δ = 1e-3,
//
// (LSE = log-sum-exp, so the prediction is ln L(N_i, D_i)), from every start of a grid
// (α, β ∈ {0, 0.5, …, 2}, e ∈ {−1, −0.5, …, 1}, a, b ∈ {0, 5, …, 25}: 4,500 starts), each run a
// few Levenberg–Marquardt iterations; the best ten are run to convergence and the lowest
// objective wins (ties: the earlier start). Uncertainty: `bootstrap` refits on points resampled
// with replacement (a seeded generator: the same seed gives the same intervals), each started
// from the full fit and the ten best starts; intervals are the 2.5% and 97.5% percentiles of the
// fits that are not degenerate (below).
#pragma once

#include <cstdint>
#include <vector>

#include "plan/scaling_law.h"

namespace trail::plan {

struct ScalingFitOptions {
  double huber_delta = 1e-3;
  int bootstrap = 200;  // resamples; 0 = none
  uint64_t seed = 1;
  std::vector<double> budgets;  // FLOPs at which to report the compute-optimal N*, D*
  double k = 6;                 // C = k·N·D
};

struct Interval {
  double low = 0, high = 0;  // 2.5% and 97.5% percentiles of the bootstrap fits
};

struct BudgetOptimum {
  double flops = 0;
  Allocation optimum;
  Interval params, tokens;  // over the bootstrap fits
};

struct ScalingFit {
  ScalingLaw law;
  double objective = 0;      // the Huber objective at the fit
  double rms_log_error = 0;  // sqrt(mean (ln L̂ − ln L)²) over the points
  int bootstrap_fits = 0;
  // Bootstrap fits with an exponent ≤ 0 or a non-finite parameter: their compute optimum is
  // undefined and they are left out of the intervals. Many mean the points do not pin the law
  // down (too few runs, too narrow a range of N or D).
  int degenerate_fits = 0;
  Interval E, A, B, alpha, beta;
  std::vector<BudgetOptimum> budgets;
};

// Throws trail::Error when there are fewer than 5 points, or a point is not positive and finite.
ScalingFit FitScalingLaw(const std::vector<LossPoint>& points, const ScalingFitOptions& options);

}  // namespace trail::plan
