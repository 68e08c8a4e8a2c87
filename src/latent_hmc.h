// A joint gradient move of the latent values and the likelihood's positive parameters in
// full-Bayes Gibbs (no R API here).
//
// Target: the un-augmented posterior of (f, x) given the kernel hyperparameters,
//   p(f, x | y, theta) propto p(y | f, x) prod_j N(f_j; mu0_j, K_j) prod_k p(x_k),
// in the coordinates u = (t, z): t_k = log x_k for the moved elements (their log priors
// carry the Jacobians of the logs: lik_param_log_prior) and the whitened latent values
// z_j = L_j^-1 (f_j - mu0_j), L_j the lower Cholesky factor of K_j (a linear map with a
// constant Jacobian |L_j|, so the density of z is N(z; 0, I) times the likelihood at
// f_j = mu0_j + L_j z_j). log pi(u) = log p(y | f(z), e^t) + sum_k log p(t_k) - ||z||^2 / 2,
// with the gradient d/dz_j = L_j' d log p(y | f) / df_j - z_j and d/dt_k the likelihood's
// derivative in t_k (Likelihood::loglik_gradient) plus that of the log prior (central
// differences of lik_param_log_prior).
//
// The move: Hamiltonian Monte Carlo (Duane et al. 1987; Neal 2011) with a fixed number of
// leapfrog steps and the metric u = m + R w (R the lower Cholesky factor of a covariance
// Sigma of u, w with an identity mass): momentum p ~ N(0, I) in w, each leapfrog step
// p += (eps / 2) R' grad, u += eps R p, p += (eps / 2) R' grad, and a Metropolis accept of the
// end point with the change of log pi(u) - ||p||^2 / 2. The leapfrog map is volume preserving
// and reversible (with the momentum flipped) for any position-only gradient field, so the
// move leaves pi exactly invariant whatever the accuracy of the gradient; the step size is
// drawn uniformly from [0.9, 1.1] eps each time. The auxiliaries of the augmentation are not
// in the target: they are drawn afresh from p(aux | f, x, y) after the move (before anything
// reads them), a partially collapsed Gibbs step as for the other non-centred moves.
//
// Adaptation, in warmup only: eps by dual averaging (Hoffman and Gelman 2014) of the
// acceptance probability toward kTargetAccept; Sigma from the draws of u (Welford) in
// windows ending at warmup iterations 100, 200, 400, 800, ... (each at most 0.85 of the
// warmup), the covariance shrunk toward 1e-3 I as Stan does (weights n / (n + 5) and
// 5 / (n + 5)), after which the dual averaging restarts. After warmup eps (the dual
// average) and Sigma are frozen, so the kept draws come from one fixed Markov kernel.
#ifndef AUGP_LATENT_HMC_H
#define AUGP_LATENT_HMC_H

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "dual_averaging.h"
#include "likelihood.h"
#include "param_sampler.h"
#include "rng.h"

namespace augp {

class LatentHmc {
 public:
  static constexpr double kTargetAccept = 0.75;
  LatentHmc() = default;
  // steps leapfrog steps per move (0: off); the moved elements are the positive ones in
  // priors. The move is on only when the likelihood gives the gradient of its
  // log-likelihood in f and in the log of each moved element at f (loglik_gradient) and
  // there is at least one such element.
  LatentHmc(const Likelihood& lik, const std::vector<LikParamPrior>& priors, const Eigen::MatrixXd& f,
            int steps, int warmup);
  bool active() const { return steps_ > 0; }
  // One move of (f, the moved elements) at the current kernel factors LK (one per latent
  // column, or shared). warmup_it: 1-based warmup iteration (adapts after the move) or 0
  // after warmup. Returns the acceptance probability of the move (0 when the trajectory
  // left the target's support). The likelihood keeps the accepted parameter values.
  double step(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
              const Eigen::MatrixXd& mu0, const KernelSet& LK, Rng& rng, int warmup_it);
  double eps() const { return eps_; }

 private:
  int steps_ = 0, warmup_ = 0;
  std::vector<int> el_;  // the moved elements' positions in priors
  std::vector<std::string> names_;  // their parameter names and indices (loglik_gradient)
  std::vector<int> index_;
  // the metric: R_ when dense_, else the identity; the current window's draws
  Eigen::MatrixXd R_;
  bool dense_ = false;
  long wn_ = 0;
  Eigen::VectorXd wmean_;
  Eigen::MatrixXd wm2_;
  int next_ = 100;
  // step size and its dual averaging
  double eps_ = 0.1;
  DualAveraging da_;
  void restart_dual_averaging();
  // log pi at u and its gradient; -Inf (grad unspecified) outside the support
  double log_target(Likelihood& lik, const std::vector<LikParamPrior>& priors, const Eigen::VectorXd& u,
                    const Eigen::MatrixXd& mu0, const KernelSet& LK, Eigen::MatrixXd& f,
                    Eigen::VectorXd& grad) const;
};

}  // namespace augp

#endif
