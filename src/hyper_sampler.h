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
// accepted, the factor of K at it (when none is and a move of the kernel's variance
// changed K since its last factor, the factor of K at the current theta instead).
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
// (that would factor K again after two acceptances).
//
// Blocks with many sampled parameters (at least kHmcMinParams = 5 in hyper_sampler.cpp, as
// with one lengthscale per input and four or more inputs) move by Hamiltonian Monte Carlo
// instead, in warmup and after: an independence proposal fitted to the warmup draws is
// then almost always rejected and a random walk crawls. The gradient of the
// log marginal: with C = K + W^-1 the covariance of the pseudo-data z = kappa / omega,
//   d/dtheta log N(z; mu0, C) = tr((a a' - C^-1) dK/dtheta) / 2,   a = C^-1 (z - mu0),
// and C = W^-1/2 B W^-1/2 gives C^-1 = W^1/2 B^-1 W^1/2, a = W^1/2 B^-1 r (r as above), so
// the factor of B serves the gradient too: B^-1 from the inverse of its factor, then
// kernel_grad_contract() contracts M = sum_j (a_j a_j' - C_j^-1) with dK/dtheta without
// forming the derivative matrices (the jitter is absolute and has no share). The log
// prior's gradient is analytic (hyper_log_prior_grad). HMC works in whitened coordinates x, theta = Lm x on the
// sampled coordinates with Lm Lm' = Sigma (identity mass in x, i.e. inverse mass Sigma
// on theta): momentum rho ~ N(0, I), leapfrog steps of size eps jittered uniformly in
// [0.8, 1.2] eps per trajectory, a number of steps ceil(kHmcLength / eps) (at most
// kHmcMaxSteps) so that a trajectory covers about the same distance whatever eps is,
// then a Metropolis accept on the change of the Hamiltonian. Each leapfrog step costs
// the factor of B at its position and two triangular passes for B^-1 (both n^3 / 3
// flops), an accepted trajectory the factor of K at its end; the end point's factors of
// B serve the f draw. Warmup: the step size adapts by dual averaging (Nesterov 2009, in
// the form of Hoffman and Gelman 2014) toward an acceptance rate of kHmcTarget; Sigma is
// the covariance of the draws of windows that double in length between an initial and
// a final buffer (shrunk toward a small multiple of the identity), the dual averaging
// restarting at each new Sigma; at the end of warmup eps becomes the dual-averaging
// average.
//
// Everything is frozen after warmup, so the kept draws come from one fixed Markov
// kernel; adaptation uses only the chain's own draws, so it depends on the seed alone.
#ifndef AUGP_HYPER_SAMPLER_H
#define AUGP_HYPER_SAMPLER_H

#include <Eigen/Dense>
#include <cmath>
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

// d/dtheta of hyper_log_prior (0 for FIXED).
double hyper_log_prior_grad(const HyperPrior& p, double theta);

// Checks a prior's family and parameters; throws std::invalid_argument naming `what`.
void hyper_check_prior(const HyperPrior& p, const char* what);

// One kernel's hyperparameters and the latent columns they serve, for one chain.
class HyperBlock {
 public:
  // spec: the kernel at its starting log parameters; priors: one per log parameter of
  // spec; cols: the latent columns (0-based) with this kernel; X: the inputs (must
  // outlive the block); jitter: added to the diagonal of every kernel matrix (absolute:
  // the same whatever theta).
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

  // The kernel's overall scale, when it has one (a single leaf or a product of leaves,
  // whose first variance v multiplies the whole kernel part, and that variance is
  // sampled): K = v C + jitter I with C free of v and the jitter absolute (fixed for the
  // run), so that the jitter stays a numerical device and never acts as a nugget whose
  // variance grows with v. K is therefore not proportional to v: the moves of v with the
  // latent values (param_sampler.h) work in the eigenbasis of C, C = U diag(lam) U', in
  // which K(t) = U diag(e^t lam + jitter) U' for every t = log v.
  bool has_scale() const { return scale_index_ >= 0; }
  // The log variance t = log v (has_scale() only) and its log prior (with the Jacobian, as
  // hyper_log_prior).
  double scale_theta() const { return spec_.theta[scale_index_]; }
  double scale_log_prior(double t) const { return hyper_log_prior(priors_[scale_index_], t); }
  double jitter() const { return jitter_; }
  // Sets t: K changes in O(n^2) (the kernel part rescaled, the jitter kept); its factor is
  // made when next needed (LK(), or the draw of f in step()), one factorisation.
  void set_scale(double t);
  // The eigenvectors U and eigenvalues lam (those within rounding of 0, below n eps times
  // the largest, set to 0) of C = (K - jitter I) / v at the
  // current parameters other than v (has_scale() only), made from K when those parameters
  // changed since the last call (an eigendecomposition of n x n, counted in
  // eigendecompositions()), else cached; the pointers stay valid until the next call.
  void spectrum(const Eigen::MatrixXd** U, const Eigen::VectorXd** lam);
  long eigendecompositions() const { return n_eig_; }

  // Cholesky factorisations of n x n matrices (B or K) made so far (step(), and K's
  // factor after set_scale()).
  long factorisations() const { return n_chol_; }

  const std::vector<double>& theta() const { return spec_.theta; }
  const std::vector<int>& cols() const { return cols_; }
  // The kernel matrix at theta: its lower triangle only (see kernel_at).
  const Eigen::MatrixXd& K() const { return K_; }
  // Its lower Cholesky factor (made here after set_scale(); throws std::runtime_error when
  // K is not numerically positive definite).
  const Eigen::MatrixXd& LK() const;
  int n_params() const { return spec_.n_params(); }
  // Proposals and acceptances counted after warmup (HMC: one proposal per trajectory).
  long proposed() const { return proposed_; }
  long accepted() const { return accepted_; }
  // Whether the block moves by HMC (see the header comment).
  bool uses_hmc() const { return hmc_; }
  // The frozen HMC step size and number of leapfrog steps (after warmup).
  double hmc_step() const { return std::exp(log_eps_); }
  int hmc_steps() const { return n_leap_; }

  // log p(theta | aux) up to a constant, the log marginal above plus the log prior of the
  // sampled parameters, at the log parameters theta (all of them; the fixed ones as in the
  // block), and its gradient in the sampled ones (in their order) into *grad when grad is
  // not null. -Inf when a factorisation fails or theta is outside the prior's support.
  // Factors into the proposal buffers (tests; step() uses the same code).
  double log_target_grad(const std::vector<double>& theta, const Eigen::MatrixXd& kappa,
                         const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                         Eigen::VectorXd* grad);

 private:
  // Factor B for every column at kernel matrix K into steps; returns the summed
  // log marginal (-Inf when a factor fails).
  double log_marginal(const Eigen::MatrixXd& K, const Eigen::MatrixXd& kappa,
                      const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                      std::vector<GaussianStep>& steps) const;
  double log_prior(const std::vector<double>& theta) const;
  // The gradient of the log marginal in the sampled parameters at theta, from the factors
  // of B in steps (made by log_marginal at the kernel matrix of theta).
  Eigen::VectorXd marginal_grad(const std::vector<double>& theta, const Eigen::MatrixXd& kappa,
                                const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                                const std::vector<GaussianStep>& steps) const;
  // HMC: the move (moves_ trajectories) and the warmup adaptation after each trajectory.
  bool hmc_moves(const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                 const Eigen::MatrixXd& mu0, Rng& rng, int warmup_it, double* cur);
  void hmc_adapt(const std::vector<double>& theta, double accept_prob, int warmup_it);
  void hmc_reset_dual(double log_eps);
  int hmc_n_steps(double log_eps) const;
  bool hmc_ = false;
  Eigen::MatrixXd hmc_chol_;  // Lm: lower factor of Sigma (the inverse mass)
  double log_eps_ = 0.0, log_eps_bar_ = 0.0, da_h_ = 0.0, da_mu_ = 0.0;
  int da_t_ = 0, n_leap_ = 1;
  int hmc_init_ = 0, hmc_last_ = 0;   // warmup: first and last iteration of the windows
  std::vector<int> win_ends_;         // warmup iterations at which Sigma is re-estimated
  long wn_ = 0;                       // Welford sums over the current window
  Eigen::VectorXd wmean_;
  Eigen::MatrixXd wm2_;
  void adapt(const std::vector<double>& theta, double accept_prob, int warmup_it);
  void set_proposal(const Eigen::MatrixXd& cov);

  KernelSpec spec_;
  std::vector<HyperPrior> priors_;
  std::vector<int> cols_, free_;  // free_: indices of the sampled parameters
  const Eigen::MatrixXd& X_;
  double jitter_;
  int moves_, warmup_;
  mutable long n_chol_ = 0;
  long n_eig_ = 0;
  // whether LK_ is out of date after set_scale(), and making it
  mutable bool lk_stale_ = false;
  bool refresh_factor() const;
  // the eigendecomposition of C (spectrum()) and the parameters it belongs to (v set to 0)
  bool have_eig_ = false;
  std::vector<double> eig_key_;
  Eigen::MatrixXd eig_vec_;
  Eigen::VectorXd eig_val_;
  int scale_index_ = -1;  // the log parameter that scales the whole kernel, or -1
  Eigen::MatrixXd K_, Kp_, LKp_;
  mutable Eigen::MatrixXd LK_;
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
  // The kernel matrix at theta with the jitter into K; false when an entry
  // is not finite. A single squared-exponential leaf, v exp(-sum_c (x_c - x'_c)^2 /
  // (2 l_c^2)) with one lengthscale or one per input, is computed from the squared
  // distances (or squared differences per input) of the pairs cached at construction: the
  // lower triangle packed by columns, one block per lengthscale, so that a proposal costs
  // one vectorised exp per pair. Only K's lower triangle is written then: every reader of
  // K_ and Kp_ (the factorisations of K and of B, the symmetric products of the f draw,
  // set_scale, spectrum) reads the lower triangle alone.
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
