// Sampling the kernel hyperparameters inside the Gibbs sweep (no R API here).
//
// Given the auxiliary variables, latent column j enters the likelihood through
// exp(kappa_j' f_j - f_j' W_j f_j / 2), W_j = diag(omega_j): Gaussian pseudo-data
// kappa_j / omega_j with noise variances 1 / omega_j. With f_j ~ N(mu0_j, K_theta)
// integrated out,
//   log p(kappa_j | theta, omega_j) = c(kappa_j, omega_j) - log|B| / 2 - r' B^-1 r / 2,
//   B = I + W^1/2 K_theta W^1/2,   r = (kappa_j - omega_j mu0_j) / sqrt(omega_j),
// where c does not depend on theta (expanding the Gaussian integral: the quadratic form
// is b' S b with b = kappa_j - W mu0_j and S = (K^-1 + W)^-1; b' S b = r'r - r' B^-1 r).
// A kernel shared by several latent columns sums this over them.
//
// One block of hyperparameters (the log parameters theta of one kernel and the latent
// columns it serves) moves by Metropolis-Hastings on this marginal times the prior,
// then those columns' f_j are drawn from N(m, S) at the new theta. The pair is the
// blocked move (theta, f) | aux: it leaves p(f, theta, aux | y) invariant, and the
// Cholesky factor of B at the accepted theta (or at the current one, on rejection) is
// the one the f draw needs. Per sweep a block costs the factor of B at the current
// theta (the auxiliaries changed), one at each proposal and, when a proposal is
// accepted, the factor of K at it.
// The factor of K cannot be avoided when theta changes: a draw from
// N(m, S), S = (K^-1 + W)^-1, needs a square root of K or of K^-1 besides the factor of
// B (Matheron's rule takes a prior draw N(0, K); B alone gives only S W^1/2 z, whose
// covariance S W S falls short of S by S K^-1 S). Nor can the factor of B at the current
// theta: the Metropolis ratio needs the marginal there at the new auxiliaries. A move
// needing only the factor of K at the proposal (theta with the whitened f fixed,
// f = mu0 + LK g) mixes the lengthscales far more slowly on binary data, so the
// collapsed move stays.
//
// Proposals. During warmup: N(theta, s^2 Sigma) on the sampled coordinates, s adapting
// toward an acceptance rate of 0.3 (Robbins-Monro on log s with gain 1/sqrt(t), t counted
// from the last reset) and Sigma becoming the covariance of the warmup draws so far at
// warmup iterations 50, 100, 200, 400, ... (s then restarts at 2.38 / sqrt(p)). After
// warmup: an independence proposal q, a multivariate t with 4 degrees of freedom centred
// at the mean of the second half of the warmup draws with 1.2^2 times their covariance;
// when it is rejected, a second draw from q is tried with the delayed-rejection
// acceptance of Tierney and Mira (1999), which needs the target only at the current
// point and the two proposals. A rejected proposal costs one factorisation, so the
// second stage moves theta in more sweeps for less than a second full step would cost
// (that would factor K again after two acceptances). Everything is frozen after warmup,
// so the kept draws come from one fixed Markov kernel; adaptation uses only the chain's
// own draws, so it depends on the seed alone.
#ifndef AUGP_HYPER_SAMPLER_H
#define AUGP_HYPER_SAMPLER_H

#include <Eigen/Dense>
#include <vector>

#include "gaussian_step.h"
#include "kernel.h"
#include "rng.h"

namespace augp {

// The prior of one log parameter theta. The density is on x = exp(theta), or on
// x = exp(theta / 2) when on_sd (the standard deviation of a variance parameter);
// hyper_log_prior adds the Jacobian, so it is the log density of theta itself.
struct HyperPrior {
  enum Family {
    FIXED = 0,        // not sampled
    INV_GAMMA = 1,    // shape a, scale b:   b^a / Gamma(a) x^(-a-1) exp(-b / x)
    HALF_T = 2,       // df a, scale b:      2 t_a(x / b) / b on x > 0
    LOG_NORMAL = 3,   // meanlog a, sdlog b
    GAMMA = 4,        // shape a, rate b
    HALF_NORMAL = 5   // scale b
  };
  int family = FIXED;
  double a = 0.0, b = 1.0;
  bool on_sd = false;
};

// log p(theta) with the Jacobian of x(theta); -Inf outside the support or for FIXED.
double hyper_log_prior(const HyperPrior& p, double theta);

// Checks a prior's family and parameters; throws std::invalid_argument naming `what`.
void hyper_check_prior(const HyperPrior& p, const char* what);

// One kernel's hyperparameters and the latent columns they serve, for one chain.
class HyperBlock {
 public:
  // spec: the kernel at its starting log parameters; priors: one per log parameter of
  // spec; cols: the latent columns (0-based) with this kernel; X: the inputs (must
  // outlive the block); jitter: added to the diagonal of every kernel matrix.
  // Throws std::invalid_argument on inconsistent sizes and std::runtime_error when the
  // starting kernel matrix has no Cholesky factor.
  // moves: Metropolis-Hastings steps per sweep (after warmup each may take a second,
  // delayed-rejection stage); each proposal costs the factor of B at it, and of K when
  // accepted.
  HyperBlock(const KernelSpec& spec, const std::vector<HyperPrior>& priors,
             const std::vector<int>& cols, const Eigen::MatrixXd& X, double jitter,
             int moves = 1, int warmup = 0);

  // `moves` Metropolis steps on theta given the auxiliaries (n x q, all columns; only this
  // block's are used), then fills f's columns of this block with a draw given theta.
  // warmup_it: 1-based warmup iteration (adapts the proposal), or 0 after warmup.
  // col_rngs[k]: the stream of the k-th column of this block for the f draw.
  // Returns false on a numerical failure at the current theta.
  bool step(const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
            const Eigen::MatrixXd& mu0, Eigen::MatrixXd& f, Rng& rng,
            std::vector<Rng>& col_rngs, int warmup_it);

  // The interweaving move on the kernel's overall scale (when the kernel has one: a
  // single leaf or a product of leaves, whose first variance multiplies the whole
  // kernel, and that variance is sampled). With g = (f_j - mu0_j) / sqrt(v) held fixed
  // for the block's columns (the non-centred parametrisation, f_j = mu0_j + sqrt(v) g),
  // log v moves by a slice sampler (stepping out, width 1) on
  //   log p(log v) + log p(y | f(v)),
  // the likelihood itself (lik.loglik), the auxiliaries integrated out: a partially
  // collapsed step, valid because the auxiliaries are drawn afresh from their full
  // conditional at the start of the next sweep before anything uses them. K and its
  // factor are rescaled with v. Costs a few likelihood evaluations (O(n q) each), no
  // factorisation. (So that K scales exactly with v, a kernel with such a scale gets the
  // jitter v * jitter rather than jitter; see block_jitter.) Alternating it with the centred move above (f integrated out given
  // the auxiliaries) is an ancillarity-sufficiency interweaving: the centred move is slow
  // when the auxiliaries pin down the scale of f, the non-centred one is not.
  void scale_move(const class Likelihood& lik, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
                  Rng& rng);
  bool has_scale() const { return scale_index_ >= 0; }

  // Cholesky factorisations of n x n matrices (B or K) made by step() so far.
  long factorisations() const { return n_chol_; }

  const std::vector<double>& theta() const { return spec_.theta; }
  const std::vector<int>& cols() const { return cols_; }
  // The kernel matrix at theta: its lower triangle only (see kernel_at).
  const Eigen::MatrixXd& K() const { return K_; }
  const Eigen::MatrixXd& LK() const { return LK_; }
  int n_params() const { return spec_.n_params(); }
  // Proposals and acceptances counted after warmup.
  long proposed() const { return proposed_; }
  long accepted() const { return accepted_; }

 private:
  // Factor B for every column at kernel matrix K into steps; returns the summed
  // log marginal (-Inf when a factor fails).
  double log_marginal(const Eigen::MatrixXd& K, const Eigen::MatrixXd& kappa,
                      const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                      std::vector<GaussianStep>& steps) const;
  double log_prior(const std::vector<double>& theta) const;
  void adapt(const std::vector<double>& theta, double accept_prob, int warmup_it);
  void set_proposal(const Eigen::MatrixXd& cov);

  KernelSpec spec_;
  std::vector<HyperPrior> priors_;
  std::vector<int> cols_, free_;  // free_: indices of the sampled parameters
  const Eigen::MatrixXd& X_;
  double jitter_;
  int moves_, warmup_;
  long n_chol_ = 0;
  int scale_index_ = -1;  // the log parameter that scales the whole kernel, or -1
  Eigen::MatrixXd K_, LK_, Kp_, LKp_;
  std::vector<GaussianStep> cur_, prop_;
  // proposal N(0, s^2 Sigma) on the free coordinates: lower factor of Sigma, log s
  Eigen::MatrixXd prop_chol_;
  double log_s_;
  int reset_at_ = 0;  // warmup iteration of the last reset of the gain
  int next_cov_ = 50;
  // Welford sums of the free coordinates over the warmup draws
  long n_seen_ = 0;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd m2_;
  long proposed_ = 0, accepted_ = 0;
  // Welford sums over the second half of warmup, and the independence proposal
  long ln_ = 0;
  Eigen::VectorXd lmean_;
  Eigen::MatrixXd lm2_, ind_chol_;
  bool have_ind_ = false;
  double ind_log_density(const std::vector<double>& theta) const;
  // The diagonal jitter of the kernel matrix at theta: jitter times the overall scale v
  // for kernels that have one (K = v (C + jitter I)), else jitter.
  double block_jitter(const std::vector<double>& theta) const;
  // The kernel matrix at theta with its jitter (block_jitter) into K; false when an entry
  // is not finite. A single squared-exponential leaf, v exp(-sum_c (x_c - x'_c)^2 /
  // (2 l_c^2)) with one lengthscale or one per input, is computed from the squared
  // distances (or squared differences per input) of the pairs cached at construction: the
  // lower triangle packed by columns, one block per lengthscale, so that a proposal costs
  // one vectorised exp per pair. Only K's lower triangle is written then: every reader of
  // K_ and Kp_ (the factorisations of K and of B, the symmetric products of the f draw,
  // the rescaling of scale_move) reads the lower triangle alone.
  // d2_ is empty for other kernels (and very large n), which go through kernel_eval.
  bool kernel_at(const std::vector<double>& theta, Eigen::MatrixXd& K) const;
  Eigen::ArrayXd d2_;
  mutable Eigen::ArrayXd kv_;
};

// The kernel matrix k(X, X) + jitter I of spec.
Eigen::MatrixXd kernel_matrix_jitter(const KernelSpec& spec, const Eigen::MatrixXd& X,
                                     double jitter);

}  // namespace augp

#endif
