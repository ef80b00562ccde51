// Robust nonlinear least squares for small problems (a handful of parameters, tens to thousands
// of residuals): minimize  Σ_i huber_δ(r_i(x))  with  huber_δ(r) = r²/2 for |r| ≤ δ, else
// δ(|r| − δ/2)  — quadratic near zero, linear in the tails, so a few bad points pull less.
//
// Method: Levenberg–Marquardt on iteratively reweighted least squares. At x, each residual gets
// the weight w_i = 1 (|r_i| ≤ δ) or δ/|r_i| (the Huber gradient divided by r), the step solves
// (JᵀWJ + λ·diag(JᵀWJ)) Δ = −JᵀW r, and is taken when the Huber objective decreases (then
// λ /= 3, else λ *= 4). It stops when a taken step changes the objective by less than
// `tolerance` relative, when λ grows past 1e16, or after `max_iterations`.
#pragma once

#include <functional>
#include <vector>

namespace trail::plan {

// Fills r (one per residual) and, when J is not null, the Jacobian row-major: J[i * n + j] =
// ∂r_i/∂x_j for n = x.size().
using ResidualFunction = std::function<void(const std::vector<double>& x, std::vector<double>& r,
                                            std::vector<double>* J)>;

struct RobustFitOptions {
  double huber_delta = 1e-3;
  int max_iterations = 200;
  double tolerance = 1e-15;
};

struct RobustFitResult {
  std::vector<double> x;
  double objective = 0;  // Σ huber_δ(r_i) at x
  int iterations = 0;
};

double HuberLoss(double r, double delta);

// Starts at x0; x0.size() ≤ 16.
RobustFitResult MinimizeHuber(const ResidualFunction& f, std::vector<double> x0, size_t residuals,
                              const RobustFitOptions& options);

// Solves the symmetric positive definite n×n system A x = b (row-major) by Cholesky; false
// when A is not positive definite.
bool SolveSpd(std::vector<double> A, std::vector<double> b, std::vector<double>& x);

}  // namespace trail::plan
