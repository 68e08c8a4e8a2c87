// Small numerical building blocks shared by the likelihoods (no R API): the
// logistic function and its logs, Gauss-Hermite rules for a standard normal
// weight and expectations by them, the standard normal quantile, and a 1-D
// maximiser for the likelihoods' scalar parameters.
#ifndef AUGP_NUMERICS_H
#define AUGP_NUMERICS_H

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>

namespace augp {

// sigma(x) = 1 / (1 + e^-x), without overflow for any x.
inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// log(1 + e^x), stable.
inline double log1pexp(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// log sigma(x) = -log(1 + e^-x), stable.
inline double log_sigmoid(double x) { return -log1pexp(-x); }

// Nodes x and weights w with sum_k w_k g(x_k) ~ E[g(Z)], Z ~ N(0, 1).
struct GaussHermite {
  Eigen::VectorXd x, w;
};

// The n-point rule (Golub-Welsch: the eigenvalues of the Jacobi matrix of the
// probabilists' Hermite recurrence, weights the squared first components of its
// normalised eigenvectors); computed once per n, thread-safe.
const GaussHermite& gauss_hermite(int n);

// E[g(f)] for f ~ N(m, v) by the rule gh: sum_k w_k g(m + sqrt(v) x_k), with a
// negative v (rounding) read as 0.
template <class G>
double normal_expectation(const GaussHermite& gh, double m, double v, G&& g) {
  const double s = std::sqrt(std::max(v, 0.0));
  double e = 0.0;
  for (int k = 0; k < gh.x.size(); ++k) e += gh.w[k] * g(m + s * gh.x[k]);
  return e;
}

// The result of maximise_grid_golden: the refined maximiser x and f(x), and
// the best point of the grid with its value.
struct Argmax1D {
  double x, value;
  double grid_x, grid_value;
};

// Maximises a 1-D objective f over [lo, hi] (for a positive parameter, f takes
// its log). Two stages:
//  - a grid: f at lo + (hi - lo) g / grid, g = 0..grid; the first best point
//    g* wins ties, and a non-finite value other than +Inf never wins against a
//    finite one seen before (the comparison is val > best);
//  - golden-section search on the cells either side of g*, [g* - 1, g* + 1]
//    clipped to [lo, hi]: the bracket [a, b] keeps two interior points
//    c = b - r (b - a) < d = a + r (b - a), r = (sqrt 5 - 1) / 2, and each step
//    drops the end beyond the worse of them, so one new evaluation per step
//    shrinks the bracket by the factor r. It stops after max_iter steps or
//    once b - a <= tol (a negative tol: always max_iter steps).
// The bracket holds the global maximiser when f is unimodal at the grid's
// resolution; otherwise the search settles on a local maximum near g*. x is the
// better of the final c and d (d on a tie). f must be deterministic: the same
// argument gives the same value.
Argmax1D maximise_grid_golden(const std::function<double(double)>& f, double lo, double hi,
                              int grid, int max_iter, double tol);

// Phi^-1(p) for 0 < p < 1, to about machine precision.
double normal_quantile(double p);

// The digamma function psi(x) = d log Gamma(x) / dx for x > 0 (NaN otherwise): the
// recurrence psi(x) = psi(x + 1) - 1 / x up to x >= 10, then the asymptotic series
// log x - 1 / (2x) - sum_k B_2k / (2k x^2k) to x^-12 (error below 1e-14 there).
double digamma(double x);

// psi(y + r) - psi(r) for y >= 0, r > 0: sum_{k < y} 1 / (r + k) for a whole y up to 64
// (exact, and free of the cancellation of the difference at large r), else the difference.
double digamma_diff(double y, double r);

}  // namespace augp

#endif
