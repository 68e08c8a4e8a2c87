// The exact GP regression model with a Gaussian likelihood, for the search of the kernel
// hyperparameters and the noise scale by the log marginal likelihood (no R API here).
//
// Model: y_i | f ~ N(f_i, sigma^2 / t_i) (t_i the frequency weight of row i: t_i copies
// of y_i at the same input), f ~ N(mu0, K_theta + jitter I). With r = y - mu0,
// S = diag(s_i), s_i = sigma^2 / t_i, and A = K_theta + jitter I + S = L L':
//   log p(y) = -r' A^-1 r / 2 - log|A| / 2 - n log(2 pi) / 2 - c(sigma),
//   c(sigma) = sum_i ((t_i - 1) log(2 pi sigma^2) + log t_i) / 2,
// where c turns N(y_i | f_i, sigma^2 / t_i) into the t_i copies' likelihood
// N(y_i | f_i, sigma^2)^t_i (they differ by a factor free of f). This is the ELBO of
// the variational fit at its optimum (src/lik_gaussian.cpp), to rounding.
//
// Gradient, with alpha = A^-1 r and M = alpha alpha' - A^-1:
//   d log p / d theta_j   = tr(M dK / d theta_j) / 2       (kernel_grad_contract, no
//                                                             n x n derivative matrices),
//   d log p / d log sigma = sum_i s_i M_ii - sum_i (t_i - 1)  (dA / d log sigma = 2 S).
// One evaluation with the gradient costs the Cholesky factor (n^3 / 3 flops) and the
// inverse from it (2 n^3 / 3: lower_tri_invert then lower_tri_crossprod), plus O(n^2 p)
// for the kernel and the contraction.
//
// Posterior at the same hyperparameters, from alpha and diag(A^-1) alone: with
// Kp = K_theta + jitter I = A - S,
//   E[f] = mu0 + Kp alpha = y - S alpha,
//   Cov(f) = Kp - Kp A^-1 Kp = S - S A^-1 S,   so   Var(f_i) = s_i - s_i^2 (A^-1)_ii.
#ifndef AUGP_GAUSSIAN_EXACT_H
#define AUGP_GAUSSIAN_EXACT_H

#include <Eigen/Dense>
#include <vector>

#include "kernel.h"

namespace augp {

// One evaluation: the log marginal likelihood and, when asked, its gradient in the
// kernel's log parameters followed by log sigma. ok is false when A has no Cholesky
// factor or a value is not finite.
struct GaussianExactEval {
  double value = 0.0;
  std::vector<double> grad;
  bool ok = false;
};

// The exact posterior at the current level's rows and the hyperparameters of an
// evaluation: the moments of f (m, v), alpha = Kp^-1 (m - mu0), the Gaussian sites
// (kappa = t y / sigma^2, omega = t / sigma^2) and KL(q(f) || p(f)) = E_q[log p(y | f)]
// - log p(y), the value of the evaluation; and the leave-one-out log predictive density
// of the rows, sum_i log N(y_i | mu_i, s2_i) with s2_i = 1 / (A^-1)_ii and
// mu_i = y_i - alpha_i s2_i (the predictive law of y_i given the other rows at the same
// hyperparameters; Rasmussen and Williams, Gaussian Processes for Machine Learning,
// eqs. 5.10-5.12), which needs nothing beyond alpha and diag(A^-1).
struct GaussianExactPosterior {
  Eigen::VectorXd m, v, alpha, kappa, omega;
  double value = 0.0, kl = 0.0, loo = 0.0;
};

class GaussianExactModel {
 public:
  // X: n x d inputs; y, t, mu0: n-vectors (t > 0); spec: the kernel structure (its
  // theta is replaced by each evaluation's); jitter: added to the kernel's diagonal;
  // threads: for the inverse from the Cholesky factor (tri_inverse.h).
  GaussianExactModel(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& t,
                     const Eigen::VectorXd& mu0, double jitter, const KernelSpec& spec,
                     int threads = 1);

  // A new kernel structure (e.g. the same kernel with one lengthscale per input).
  void set_kernel(const KernelSpec& spec);
  // The rows (0-based, of the full data) the evaluations use: a nested subset or all.
  void set_level(const std::vector<int>& rows);

  int n_params() const { return spec_.n_params() + 1; }
  int level_size() const { return static_cast<int>(ys_.size()); }

  // par: the kernel's log parameters, then log sigma. With grad, also the gradient; the
  // evaluation then keeps alpha and diag(A^-1) for posterior() at the same par. Without
  // grad it keeps the Cholesky factor, which a following evaluation with the gradient or
  // posterior() at the same par reuse (a search can ask for the value at trial points
  // and for the gradient at the accepted one only).
  GaussianExactEval evaluate(const std::vector<double>& par, bool grad);

  // The posterior at par on the current level (from the kept pieces when par is the
  // last evaluation, otherwise from a new factorisation). Throws when A has no
  // Cholesky factor.
  GaussianExactPosterior posterior(const std::vector<double>& par);

 private:
  // Factorises A at par into A_ (lower Cholesky factor) and sets alpha_, logdet_; false
  // when the factorisation fails.
  bool factor(const std::vector<double>& par, double* sigma2);
  double constant(double sigma2) const;

  Eigen::MatrixXd X_, Xs_;
  Eigen::VectorXd y_, t_, mu0_, ys_, ts_, mu0s_;
  KernelSpec spec_;
  double jitter_;
  int threads_;
  // Workspace: A_ holds the Cholesky factor at factored_par_ (empty when A_ holds
  // something else), with alpha_, logdet_ and its value; kept_par_: the parameters of
  // the last evaluation with a gradient, whose alpha_ and dinv_ = diag(A^-1) are kept.
  Eigen::MatrixXd A_;
  Eigen::VectorXd alpha_, dinv_;
  double logdet_ = 0.0, factored_value_ = 0.0, factored_s2_ = 0.0;
  std::vector<double> factored_par_, kept_par_;
  double kept_value_ = 0.0;
  // The factor and value at par (reusing the kept factor); false when A has none.
  bool factor_at(const std::vector<double>& par, double* sigma2, double* value);
};

}  // namespace augp

#endif
