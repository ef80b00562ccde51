#include "plan/scaling_fit.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "plan/robust_fit.h"

namespace trail::plan {
namespace {

constexpr int kPolished = 10;  // starts run to convergence

// x = (a, b, e, α, β).
ScalingLaw LawOf(const std::vector<double>& x) {
  return {std::exp(x[2]), std::exp(x[0]), std::exp(x[1]), x[3], x[4]};
}

ResidualFunction LogResiduals(const std::vector<LossPoint>& points) {
  return [&points](const std::vector<double>& x, std::vector<double>& r, std::vector<double>* J) {
    for (size_t i = 0; i < points.size(); ++i) {
      const double t[3] = {x[0] - x[3] * std::log(points[i].params),
                           x[1] - x[4] * std::log(points[i].tokens), x[2]};
      const double m = std::max({t[0], t[1], t[2]});
      const double s[3] = {std::exp(t[0] - m), std::exp(t[1] - m), std::exp(t[2] - m)};
      const double sum = s[0] + s[1] + s[2];
      r[i] = m + std::log(sum) - std::log(points[i].loss);
      if (!J) continue;
      double* row = &(*J)[i * 5];  // d LSE / d t_j = softmax_j
      row[0] = s[0] / sum;
      row[1] = s[1] / sum;
      row[2] = s[2] / sum;
      row[3] = -row[0] * std::log(points[i].params);
      row[4] = -row[1] * std::log(points[i].tokens);
    }
  };
}

std::vector<std::vector<double>> StartGrid() {
  std::vector<std::vector<double>> out;
  for (int ai = 0; ai <= 5; ++ai)
    for (int bi = 0; bi <= 5; ++bi)
      for (int ei = 0; ei <= 4; ++ei)
        for (int al = 0; al <= 4; ++al)
          for (int be = 0; be <= 4; ++be)
            out.push_back({5.0 * ai, 5.0 * bi, -1 + 0.5 * ei, 0.5 * al, 0.5 * be});
  return out;
}

struct Candidate {
  RobustFitResult fit;
  size_t order;
};

// The best fit from `starts`: a short run from each, the best kPolished run to convergence.
RobustFitResult BestFit(const std::vector<LossPoint>& points,
                        const std::vector<std::vector<double>>& starts, double delta,
                        int short_iterations, std::vector<std::vector<double>>* best_starts) {
  const ResidualFunction f = LogResiduals(points);
  RobustFitOptions quick{delta, short_iterations, 1e-15};
  std::vector<Candidate> c;
  for (size_t i = 0; i < starts.size(); ++i)
    c.push_back({MinimizeHuber(f, starts[i], points.size(), quick), i});
  auto better = [](const Candidate& l, const Candidate& r) {
    return l.fit.objective != r.fit.objective ? l.fit.objective < r.fit.objective
                                              : l.order < r.order;
  };
  const size_t keep = std::min<size_t>(kPolished, c.size());
  std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(keep), c.end(), better);
  c.resize(keep);
  if (best_starts) {
    best_starts->clear();
    for (const Candidate& k : c) best_starts->push_back(starts[k.order]);
  }
  RobustFitOptions full{delta, 2000, 1e-15};
  for (Candidate& k : c) k.fit = MinimizeHuber(f, k.fit.x, points.size(), full);
  return std::min_element(c.begin(), c.end(), better)->fit;
}

// Over the finite values only (an optimum can overflow even when the law's parameters do not).
Interval Percentiles(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return {NAN, NAN};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {  // linear interpolation between order statistics
    const double pos = q * double(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
  };
  return {at(0.025), at(0.975)};
}

void CheckPoints(const std::vector<LossPoint>& points) {
  TRAIL_CHECK(points.size() >= 5, "fitting E, A, B, alpha and beta needs at least 5 runs; got ",
              points.size());
  for (const LossPoint& p : points) {
    TRAIL_CHECK(std::isfinite(p.params) && p.params > 0 && std::isfinite(p.tokens) &&
                    p.tokens > 0 && std::isfinite(p.loss) && p.loss > 0,
                "a loss point needs positive finite parameters, tokens and loss; got N=", p.params,
                " D=", p.tokens, " L=", p.loss);
  }
}

}  // namespace

ScalingFit FitScalingLaw(const std::vector<LossPoint>& points, const ScalingFitOptions& options) {
  CheckPoints(points);
  ScalingFit out;
  std::vector<std::vector<double>> best_starts;
  const RobustFitResult fit = BestFit(points, StartGrid(), options.huber_delta, 8, &best_starts);
  out.law = LawOf(fit.x);
  out.objective = fit.objective;
  double sq = 0;
  for (const LossPoint& p : points)
    sq += std::pow(std::log(out.law.Loss(p.params, p.tokens) / p.loss), 2);
  out.rms_log_error = std::sqrt(sq / double(points.size()));

  std::vector<std::vector<double>> starts = {fit.x};
  starts.insert(starts.end(), best_starts.begin(), best_starts.end());
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<double>> samples(5 + 2 * options.budgets.size());
  for (int b = 0; b < options.bootstrap; ++b) {
    std::vector<LossPoint> resampled(points.size());
    for (LossPoint& p : resampled) p = points[rng() % points.size()];
    const ScalingLaw law = LawOf(BestFit(resampled, starts, options.huber_delta, 8, nullptr).x);
    const double values[5] = {law.E, law.A, law.B, law.alpha, law.beta};
    if (!(law.alpha > 0 && law.beta > 0) ||
        !std::all_of(values, values + 5, [](double v) { return std::isfinite(v); })) {
      ++out.degenerate_fits;
      continue;
    }
    for (int i = 0; i < 5; ++i) samples[i].push_back(values[i]);
    for (size_t j = 0; j < options.budgets.size(); ++j) {
      const Allocation a = AnalyticOptimum(law, options.budgets[j], options.k);
      samples[5 + 2 * j].push_back(a.params);
      samples[6 + 2 * j].push_back(a.tokens);
    }
    ++out.bootstrap_fits;
  }
  out.E = Percentiles(samples[0]);
  out.A = Percentiles(samples[1]);
  out.B = Percentiles(samples[2]);
  out.alpha = Percentiles(samples[3]);
  out.beta = Percentiles(samples[4]);
  for (size_t j = 0; j < options.budgets.size(); ++j) {
    out.budgets.push_back({options.budgets[j],
                           AnalyticOptimum(out.law, options.budgets[j], options.k),
                           Percentiles(samples[5 + 2 * j]), Percentiles(samples[6 + 2 * j])});
  }
  return out;
}

}  // namespace trail::plan
