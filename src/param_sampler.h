// Sampling a likelihood's own parameters (noise scale, dispersion, cut points, ...) inside
// the Gibbs sweep (no R API here).
//
// Given the latent values f, a likelihood parameter's full conditional is
//   p(x | f, y) propto p(y | f, x) p(x),
// the un-augmented likelihood (loglik(f), O(n) per evaluation) times its prior: no
// auxiliary variable is needed, and the move is exact whatever the augmentation. Each
// sampled element moves in turn by one univariate slice-sampling update (Neal 2003:
// stepping out with width 1, then shrinkage), on log x for a positive parameter and on x
// for a real one. A slice update leaves its conditional invariant, so the sweep
// (parameters | f, then aux | f, then f | aux) keeps the joint posterior invariant.
#ifndef AUGP_PARAM_SAMPLER_H
#define AUGP_PARAM_SAMPLER_H

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "hyper_sampler.h"
#include "likelihood.h"
#include "rng.h"

namespace augp {

// The prior of one sampled element of a likelihood parameter. Families below REAL_T
// are HyperPrior families of a positive x, sampled on t = log x (the density includes
// the Jacobian, as hyper_log_prior); REAL_T and REAL_NORMAL are densities of a real x
// sampled as it is.
struct LikParamPrior {
  enum { REAL_T = 10, REAL_NORMAL = 11 };
  std::string name;  // the parameter's name in Likelihood::params()
  int index = 0;     // its element (0-based, column-major)
  int family = HyperPrior::GAMMA;
  double a = 1.0, b = 1.0;  // REAL_T: df a, scale b, centred at 0; REAL_NORMAL: mean a, sd b
  // A location element (real): the likelihood of a one-column model depends on f and it
  // only through f - x, so shifting f and every location element together leaves it unchanged.
  bool location = false;
  bool positive() const { return family < REAL_T; }
};

// Checks a prior's family and parameters; throws std::invalid_argument naming `what`.
void lik_param_check_prior(const LikParamPrior& p, const char* what);

// log p(t), t = log x for a positive parameter, x otherwise; -Inf outside the support.
double lik_param_log_prior(const LikParamPrior& p, double t);

// One univariate slice-sampling update of t0 under log_target (stepping out with width w
// at most 20 steps each way, then shrinkage); log_target may return -Inf.
double slice_update(const std::function<double(double)>& log_target, double t0, double w, Rng& rng);

// The joint shift of f (n x 1, prior N(mu0, L L')) and of the location elements of priors by a
// common d: the likelihood is unchanged, so d's target is the GP prior of f + d times the
// elements' priors at their shifted values; one slice update of d from 0, then f and the
// likelihood's parameters take the shift. A translation leaves Lebesgue measure unchanged,
// so the move keeps the joint posterior of (f, parameters) invariant. No-op without a
// location element or with several latent columns.
void shift_location(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                    const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L, Rng& rng);

// One slice update of every element in priors, in order, given f (n x q at the
// likelihood's observations); the likelihood keeps the new values (set_params).
// Throws std::invalid_argument when a name or index is not a parameter of lik.
void sample_lik_params(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                       const Eigen::MatrixXd& f, Rng& rng);

// The current values of the elements in priors, in order.
std::vector<double> lik_param_values(const Likelihood& lik, const std::vector<LikParamPrior>& priors);

}  // namespace augp

#endif
