// Hamiltonian Monte Carlo on the un-augmented posterior of the latent values,
//   p(f | y) proportional to prod_j N(f_j; mu0_j, K) p(y | f),
// one kernel matrix K shared by the q latent columns, as one Markov move of a Gibbs
// sweep (GibbsChain::run; the auxiliaries, when the sweep has them, are drawn afresh
// from f after it). The coordinates are those of a fixed Gaussian approximation of the
// posterior (RotatedGaussian in likelihood.h): G = f Q, G_c = mean_c + L_c z_c, and the
// move runs HMC on z with an identity mass matrix (so L_c L_c' is the inverse mass
// matrix of G_c). Potential energy, up to a constant,
//   U(z) = 1/2 sum_c (G_c - m0_c)' K^-1 (G_c - m0_c) - log p(y | G Q'),  m0 = mu0 Q
// (Q is orthonormal, so the columns of G have independent N(m0_c, K) priors; the map
// z -> f is linear, its Jacobian constant), with gradient
//   dU / dz_c = L_c' (K^-1 (G_c - m0_c) - (grad_f Q)_c),
// grad_f the gradient of log p(y | f) from Likelihood::expected_loglik_derivs() at
// zero variances. A trajectory of `leapfrog` steps of size eps (jittered uniformly
// by +-10% per trajectory) is accepted with probability min(1, exp(-dH)), which keeps
// p(f | y) exactly invariant for every fixed eps and approximation. The step size
// is adapted during warm-up only, by dual averaging of the acceptance probability
// towards `target`, and frozen at its averaged value from the first sweep after
// warm-up on.
#ifndef AUGP_GRADIENT_MOVE_H
#define AUGP_GRADIENT_MOVE_H

#include <Eigen/Dense>
#include <vector>

#include "dual_averaging.h"
#include "likelihood.h"
#include "rng.h"

namespace augp {

class GradientMove {
 public:
  explicit GradientMove(double eps0 = 0.1, double target = 0.75);

  // One trajectory of `leapfrog` steps from f (n x q), updating f on acceptance. LK: the
  // lower Cholesky factor of K. warmup_it: the sweep's 1-based index in warm-up (adapts
  // the step size), or 0 after warm-up (the step size is frozen). Returns the acceptance
  // probability (0 when the trajectory met a non-finite energy).
  double step(const Likelihood& lik, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
              const Eigen::MatrixXd& LK, const RotatedGaussian& g, int leapfrog, Rng& rng,
              int warmup_it);

  double step_size() const;
  double mean_accept() const { return n_ ? acc_sum_ / n_ : 0.0; }

  // Plans the low-rank metric adaptation for a warm-up of `warmup` sweeps with `rank`
  // leading kernel eigenvectors per column (0: none). Call before the first step.
  void set_adaptation(int warmup, int rank);
  // The adapted metric's variances lambda (empty when none was adapted).
  const Eigen::VectorXd& metric_variances() const { return lam_; }

 private:
  double log_eps_;
  DualAveraging da_;  // the step size's adaptation in warm-up
  bool frozen_ = false;
  long n_ = 0;
  double acc_sum_ = 0.0;
  // U(z) and dU/dz at z (n x q); false when not finite
  bool energy(const Likelihood& lik, const Eigen::MatrixXd& z, const Eigen::MatrixXd& m0,
              const Eigen::MatrixXd& LK, const RotatedGaussian& g, double* U,
              Eigen::MatrixXd& grad, Eigen::MatrixXd* f_out) const;

  // the metric adaptation (see the header comment)
  int rank_ = 0, win_start_ = 0, win_end_ = 0;
  std::vector<Eigen::MatrixXd> B_;  // per column: n x r orthonormal basis of the window's subspace
  std::vector<Eigen::VectorXd> Y_;  // the window's projections B' z
  std::vector<Eigen::MatrixXd> V_;  // per column: n x d rows of the metric's directions
  Eigen::VectorXd lam_;             // their variances
  void make_basis(const Eigen::MatrixXd& LK, const RotatedGaussian& g, int n, int q);
  void adapt_metric();
  // V' x and x + V diag(a) V' x for an n x q matrix x
  Eigen::VectorXd project(const Eigen::MatrixXd& x) const;
  void add_low_rank(Eigen::MatrixXd& x, const Eigen::VectorXd& a) const;
};

}  // namespace augp

#endif
