// Small numerical building blocks shared by the likelihoods (no R API): the
// logistic function and its logs, Gauss-Hermite rules for a standard normal
// weight, and the standard normal quantile.
#ifndef AUGP_NUMERICS_H
#define AUGP_NUMERICS_H

#include <Eigen/Dense>

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

// Phi^-1(p) for 0 < p < 1, to about machine precision.
double normal_quantile(double p);

}  // namespace augp

#endif
