// The Chinchilla parametric loss law and what follows from it (docs/plan.md, "Scaling laws").
//
//   L(N, D) = E + A / N^α + B / D^β
//
// N: parameters, D: training tokens, L: validation loss in nats per token. E is the loss floor
// (the data's entropy plus what the model family cannot reach; the fit cannot split the two),
// A/N^α the price of too few parameters, B/D^β of too little data. Training compute is C = k·N·D
// with k = 6 (forward 2, backward 4 FLOPs per parameter and token).
#pragma once

#include <cstdint>
#include <vector>

namespace trail::plan {

struct ScalingLaw {
  double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
  double Loss(double params, double tokens) const;
};

struct LossPoint {
  double params = 0, tokens = 0, loss = 0;
};

// The loss of `law` at every grid point N × D (the order of the loops: N outer, D inner).
std::vector<LossPoint> LossSurface(const ScalingLaw& law, const std::vector<double>& params,
                                   const std::vector<double>& tokens);
// count values from first to last, equally spaced in log (first and last included).
std::vector<double> LogSpace(double first, double last, int count);

// The compute-optimal allocation of a budget of `flops` = k·N·D, by Lagrange multipliers:
//   N* = G · (C/k)^(β/(α+β)),  D* = (C/k)^(α/(α+β)) / G,  G = (αA / (βB))^(1/(α+β)).
struct Allocation {
  double params = 0, tokens = 0;
};
Allocation AnalyticOptimum(const ScalingLaw& law, double flops, double k = 6);
// The same by brute force: N on a log grid of `per_decade` points per decade over
// [min_params, max_params], D = C/(k·N), the lowest loss. Checks the closed form.
Allocation GridOptimum(const ScalingLaw& law, double flops, double k, double min_params,
                       double max_params, int per_decade);

// With α and β known, L is linear in (E, A, B): ordinary least squares on L (the tutorial's
// [D06] check). Throws trail::Error when the points do not determine the three (fewer than 3,
// or all N or all D equal).
ScalingLaw FitLinear(const std::vector<LossPoint>& points, double alpha, double beta);

}  // namespace trail::plan
