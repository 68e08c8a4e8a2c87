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

// Slice sampling on R^d along a set of directions: one univariate slice update (stepping
// out, then shrinkage) of s in x + s u_k for every direction u_k in turn, with width w_k.
// Each leaves the target invariant (the restriction of a density to a line through x is
// its conditional along that line), so the cycle does too. The directions start as the
// coordinate axes with width 1. During warmup the draws' mean and covariance accumulate
// (Welford), and at warmup iterations 50, 100, 200, 400, ... Sigma becomes their
// covariance shrunk toward 1e-3 I (weights n / (n + 5) and 5 / (n + 5)); the directions
// become its eigenvectors with widths 2.5 sqrt(eigenvalue), so that a ridge of the target
// (two coordinates that trade off) is crossed along it in one update. Everything is frozen
// after warmup, so the kept draws come from one fixed Markov kernel.
class DirectionalSlice {
 public:
  DirectionalSlice() = default;
  explicit DirectionalSlice(int d);
  int dim() const { return static_cast<int>(w_.size()); }
  // cycles passes over the directions from x; warmup_it: 1-based warmup iteration
  // (adapts after the move) or 0 after warmup.
  void step(const std::function<double(const Eigen::VectorXd&)>& log_target, Eigen::VectorXd& x,
            Rng& rng, int warmup_it, int cycles);
  const Eigen::MatrixXd& directions() const { return U_; }
  const Eigen::VectorXd& widths() const { return w_; }
  // Passes per update: `full` while the draws so far show a ridge (some pair of
  // coordinates with |correlation| >= kRidgeCorr at the last adaptation; before the first
  // adaptation too), one pass otherwise: there the lines are close to the coordinate axes,
  // and further passes add cost without moving along anything the other updates miss. The
  // last adaptation is in warmup, so the kept draws come from one Markov kernel.
  static constexpr double kRidgeCorr = 0.8;
  int cycles(int full) const { return max_corr_ >= kRidgeCorr ? full : 1; }

 private:
  Eigen::MatrixXd U_;
  Eigen::VectorXd w_;
  long n_ = 0;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd m2_;
  double max_corr_ = 1.0;
  int next_ = 50;
};

// The indices of the positive elements of priors, in order.
std::vector<int> positive_params(const std::vector<LikParamPrior>& priors);

// The joint move of the latent level and the likelihood's positive parameters (priors
// indexed by params) in a one-column model, the auxiliaries integrated out, at the current
// kernel (prior N(mu0, L L')): the coordinates x = (c, log p for p in params), c0 = mean(f -
// mu0) at the start, and f(x) = f + (c - c0) 1 (a translation, unit Jacobian), so the
// density of x is the posterior: loglik(f(x)) + the log priors (with the Jacobians of the
// logs, lik_param_log_prior) + log N(f(x); mu0, L L') = const - (a e^2 + 2 b e) / 2, e = c - c0,
// u = L^-1 1, z = L^-1 (f - mu0), a = u'u, b = u'z. Slice updates along lines (sampler, of
// dimension 1 + params.size()) leave it invariant. It moves along the ridge of a maximal
// rate far above the counts (log lambda + c nearly constant). Each evaluation costs one
// likelihood evaluation, O(n), after two triangular solves (once per move). The likelihood
// keeps the new parameter values. No-op with several columns or no parameter.
void level_param_move(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                      const std::vector<int>& params, Eigen::MatrixXd& f,
                      const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L,
                      DirectionalSlice& sampler, Rng& rng, int warmup_it);

// An adaptive Gaussian random-walk proposal on R^d for whitened_scale_move: N(x, s^2
// Sigma). During warmup log s follows a Robbins-Monro recursion (gain 1 / sqrt(t), t from
// the last reset) toward an acceptance rate of 0.44 (d = 1) or 0.3, and at warmup
// iterations 50, 100, 200, ... Sigma becomes the covariance of the warmup states so far
// (shrunk toward 1e-2 I, weights n / (n + 5) and 5 / (n + 5)) and s restarts at
// 2.38 / sqrt(d); frozen after warmup.
class ScaleWalk {
 public:
  ScaleWalk() = default;
  explicit ScaleWalk(int d);
  int dim() const { return static_cast<int>(mean_.size()); }
  Eigen::VectorXd propose(const Eigen::VectorXd& x, Rng& rng) const;
  // warmup_it: 1-based warmup iteration, or 0 after warmup (no adaptation)
  void adapt(const Eigen::VectorXd& x, double accept_prob, int warmup_it);

 private:
  Eigen::MatrixXd L_;
  double log_s_ = 0.0;
  long n_ = 0;
  int next_ = 50, reset_at_ = 0;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd m2_;
};

// The non-centred move of a block's kernel variance v = e^t (HyperBlock::has_scale), jointly
// with the likelihood's positive parameters indexed by params (may be empty), the
// auxiliaries integrated out. Coordinates (t, log p, z) with z_j = L(t)^-1 (f_j - mu0_j) for
// the block's columns j, L(t) the lower Cholesky factor of K(t) = e^t C + jitter I: a
// priori z ~ N(0, I) whatever t (the Jacobian of z -> f, |L(t)|, cancels the normaliser of
// N(f; mu0, K(t))), so at fixed z the density of (t, log p) is
//   log p(t) + sum_k log p(log p_k) + loglik(mu0 + L(t) z)
// (log priors with the Jacobians of the logs). One Metropolis-Hastings step with the
// symmetric proposal of walk keeps it invariant, hence the posterior of (v, params, f)
// given the rest. Because the jitter does not scale with v, z's components along the
// directions where the kernel part of K is below the jitter keep their scale as v moves
// (L(t) / sqrt(v) is not fixed), which a plain rescaling of f - mu0 by sqrt(v' / v) would
// not do. The auxiliaries of the sweep are stale afterwards; nothing reads them before
// the next sweep draws them afresh (a partially collapsed Gibbs step).
// Cost: one factorisation of K at the proposal (HyperBlock::propose_scale; it becomes the
// block's factor on acceptance), two triangular passes per column, one likelihood
// evaluation. The likelihood keeps the accepted parameter values.
// own: the chain's own copy of lik (the same object), needed when params is not empty.
void whitened_scale_move(const Likelihood& lik, Likelihood* own,
                         const std::vector<LikParamPrior>& priors, const std::vector<int>& params,
                         HyperBlock& block, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
                         ScaleWalk& walk, Rng& rng, int warmup_it);

// The likelihood's parameter flow (Likelihood::param_flow) as a Markov move of (x, f) at
// fixed rates and fixed kernels, the auxiliaries integrated out: x is the flow's parameter
// element (t = log x).
// Coordinates: (t, u) with u = G(f) + t 1, the flow's invariant (for poisson_logistic the
// log rates log(lambda sigma(f_i))): f = G^-1(u - t) and the likelihood depends on u
// alone. The map (t, u) -> (x, f) is a fixed bijection with Jacobian
// x prod_ij 1 / G'(f_ij) (f_ij depends on u_ij and t only), so the posterior density in
// these coordinates is
//   p~(t, u) = p(t) N(f; mu0, K) p(y | u) prod_ij 1 / G'(f_ij)
// (p(t) with the Jacobian of the log: lik_param_log_prior). At fixed u, with d = t - t0
// and the factors L of the kernel matrices K:
//   log p~ = log p(t) - ||L^-1 (phi_d(f) - mu0)||^2 / 2 + sum_ij log phi_d'(f_ij) + const
// (sum log phi_d' = sum log G'(f) - sum log G'(phi_d(f)), the first sum a constant), on the
// flow's range of d. Slice updates of t at fixed u (sampler, of dimension 1: width adapted
// in warmup and frozen after it, `updates` passes) leave p~ invariant, hence the
// posterior of (x, f) given the other parameters and hyperparameters. The kernel's
// variance does not move with it: with the absolute jitter K is not proportional to the
// variance, and the density at another variance would need a factorisation per
// evaluation (whitened_scale_move moves the variance with the rate instead). LK holds the
// current factors per latent column. Each evaluation costs one triangular solve per
// latent column (O(n^2)) and the map (O(n q)); no factorisation. No-op when the likelihood
// has no flow or its element is not sampled (not in priors with a positive family).
void param_flow_move(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                     const Eigen::MatrixXd& mu0, const KernelSet& LK, DirectionalSlice& sampler,
                     Rng& rng, int warmup_it, int updates);

// The current values of the elements in priors, in order.
std::vector<double> lik_param_values(const Likelihood& lik, const std::vector<LikParamPrior>& priors);

}  // namespace augp

#endif
