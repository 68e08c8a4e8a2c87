// The interface every augmented likelihood implements (no R API here).
//
// Conditioned on its auxiliary variables, every likelihood is, in each latent
// value f_ij, proportional to exp(kappa_ij f_ij - omega_ij f_ij^2 / 2). The
// latent values form an n x q matrix (q = 1 for Bernoulli/binomial, one column
// per class or stick otherwise); column j has its own Gaussian step. A likelihood
// owns its data (y, trials, ...) and works on whole matrices: one virtual call
// per sweep. Implementations must be thread-safe for concurrent const calls.
#ifndef AUGP_LIKELIHOOD_H
#define AUGP_LIKELIHOOD_H

#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "rng.h"

namespace augp {

class Likelihood {
 public:
  virtual ~Likelihood() {}
  virtual int n_obs() const = 0;
  virtual int n_latent() const = 0;

  // Gibbs: draw the auxiliary variables given f; return kappa and omega (n x q).
  virtual void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                          Eigen::MatrixXd& omega) const = 0;

  // CAVI: optimal q(aux) given q(f) with means m and marginal variances v (n x q);
  // return kappa and E[omega] (n x q).
  virtual void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                          Eigen::MatrixXd& kappa, Eigen::MatrixXd& omega) const = 0;

  // E_q[log p(y, aux | f)] - E_q[log q(aux)] summed over observations, with q(aux)
  // the optimum given (m, v). The ELBO is this minus the KL terms of q(f).
  virtual double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const = 0;

  // log p(y | f) summed over observations.
  virtual double loglik(const Eigen::MatrixXd& f) const = 0;
};

// Registry: one line per likelihood (see lik_*.cpp).
std::unique_ptr<Likelihood> make_bernoulli(const std::vector<double>& y,
                                           const std::vector<double>& trials);
// Y: n x K class counts (one-hot rows for classification, times frequency weights);
// bijective: K - 1 latent columns, the last class's latent fixed at 0; theta: K weights > 0.
std::unique_ptr<Likelihood> make_logistic_softmax(const Eigen::MatrixXd& Y, bool bijective,
                                                  const std::vector<double>& theta);
// Y: n x K category counts; K - 1 latent columns (one per stick).
std::unique_ptr<Likelihood> make_stick_breaking(const Eigen::MatrixXd& Y);

}  // namespace augp

#endif
