// Drivers of the inference engine (no R API here): CAVI and the Gibbs chain.
// They know likelihoods only through the interface in likelihood.h.
#ifndef AUGP_ENGINE_H
#define AUGP_ENGINE_H

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "gaussian_step.h"
#include "gradient_move.h"
#include "hyper_sampler.h"
#include "kernel.h"
#include "latent_hmc.h"
#include "likelihood.h"
#include "param_sampler.h"
#include "refine_step.h"
#include "rng.h"

namespace augp {

struct CaviState {
  Eigen::MatrixXd m, v, alpha;   // q(f): means, marginal variances, K^-1 (m - mu0)
  Eigen::MatrixXd kappa, omega;  // q(aux) summaries used for the next q(f) update
  Eigen::MatrixXd omega_q;       // the omega that produced the current q(f)
  double kl = 0.0;               // KL(q(f) || p(f)) of the current q(f), summed over columns
  bool have_q = false;           // q(f) was computed from sites (false after cavi_init)
  std::vector<double> elbo;
  bool converged = false;
};

// Prior means: mu0 is n x q, one column per latent column.

// The prior covariance of the q latent columns: one kernel matrix shared by all
// columns, or one per column (per-column kernel hyperparameters). Holds pointers:
// the matrices must outlive it. A single matrix converts implicitly (shared).
class KernelSet {
 public:
  KernelSet(const Eigen::MatrixXd& K) : ks_(1, &K) {}  // NOLINT: implicit on purpose
  explicit KernelSet(const std::vector<Eigen::MatrixXd>& Ks) {
    for (const Eigen::MatrixXd& K : Ks) ks_.push_back(&K);
  }
  explicit KernelSet(std::vector<const Eigen::MatrixXd*> ks) : ks_(std::move(ks)) {}
  // The kernel matrix of latent column j.
  const Eigen::MatrixXd& operator[](int j) const { return *ks_[ks_.size() == 1 ? 0 : j]; }
  int size() const { return static_cast<int>(ks_.size()); }
  bool shared() const { return ks_.size() == 1; }
  int rows() const { return ks_.empty() ? 0 : static_cast<int>(ks_[0]->rows()); }
  // Throws std::invalid_argument unless there are 1 or q matrices, all n x n.
  void check(int n, int q) const;

 private:
  std::vector<const Eigen::MatrixXd*> ks_;
};

// The kernel matrices k(X, X) + jitter I of `specs` (one kernel shared by all latent
// columns, or one per column), in the order of specs.
std::vector<Eigen::MatrixXd> kernel_matrices(const std::vector<KernelSpec>& specs,
                                             const Eigen::MatrixXd& X, double jitter);

// The jitter search over the kernel matrices k(X, X) of `specs`: for each, the jitter
// chol_jitter() settles on starting from *jitter (*jitter times powers of ten), and the
// largest of them in *jitter. Returns false, *jitter unchanged, when some matrix has no
// Cholesky factor with any jitter tried.
bool find_jitter(const std::vector<KernelSpec>& specs, const Eigen::MatrixXd& X, double* jitter);

// Initialise q(aux) from the prior q(f_j) = N(mu0_j, K_j).
void cavi_init(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
               CaviState& st);

// Up to maxit sweeps (q(f) update then q(aux) update); stop when the relative ELBO
// change falls below tol. Appends to st.elbo. Returns the number of sweeps run.
// The q latent columns are updated in parallel (threads), deterministically;
// column j uses K[j] (the same matrix for all columns when K is shared). For a
// likelihood with sequential_columns() they are updated in order instead, column j >= 1
// from sites refreshed at the columns updated before it (a sweep from sites alone,
// st.have_q false, first updates every column from the given sites).
int cavi_sweeps(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                int maxit, double tol, CaviState& st, int threads = 1);

// cavi_sweeps accelerated by SQUAREM (Varadhan and Roland 2008) on the sites
// (kappa, log omega): two plain sweeps, an extrapolated point and one sweep from it,
// kept only if its ELBO is at least the second sweep's (so the recorded trace never
// decreases; a failed or worse extrapolation costs one sweep). Up to maxit recorded
// sweeps; converged when a recorded ELBO changes the previous one by at most
// tol * |previous|. Returns the number of sweeps recorded. tick (if set) is called on
// the calling thread before every cycle (interrupt checks by the caller).
int cavi_squarem(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                 int maxit, double tol, CaviState& st, int threads = 1,
                 const std::function<void()>& tick = std::function<void()>());

// Refinement of a Gaussian q(f) by conjugate-computation variational inference (Khan
// and Lin 2017): natural-gradient steps on the direct ELBO
//   D(q) = E_q[log p(y | f)] - KL(q(f) || p(f))
// (the un-augmented likelihood) within the family of CAVI's q(f): q(f_j) proportional
// to N(f_j; mu0_j, K_j) exp(kappa_j' f_j - f_j' diag(omega_j) f_j / 2), one Gaussian site
// per point and latent column. A round with step r replaces the sites by
//   omega <- (1 - r) omega + r P,  kappa <- (1 - r) kappa + r (G + P m),
//   P = max(E_q[-d2 log p / df2], 1e-6),  G = E_q[d log p / df]
// (Likelihood::expected_loglik_derivs over the marginals of q and the draws Z), rebuilds
// q(f) from them (one Gaussian step per column, in parallel) and keeps it only if D does
// not fall; otherwise the step is halved (at most 4 times) and a round that still finds
// no gain ends the refinement, so the recorded trace of D never decreases. The first
// round tries r = step, later ones the step next_rate() gives (refine_step.h). Starts from
// the q(f) of the sites (st.omega_q, st.alpha + st.omega_q m), i.e. st as cavi_sweeps
// leaves it; stops after `rounds` rounds or when a round raises D by at most
// tol * |D|. On return st holds the refined q(f) (m, v, alpha, kl) with its sites in
// kappa, omega and omega_q; *direct receives D before the first round and after every
// accepted one. Returns the number of accepted rounds. Throws std::invalid_argument when
// the likelihood does not provide expected_loglik_derivs. The result depends on Z only,
// not on the thread count.
int cvi_refine(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
               const Eigen::MatrixXd& Z, int rounds, double step, double tol, CaviState& st,
               std::vector<double>* direct, int threads = 1,
               const std::function<void()>& tick = std::function<void()>());

// Hyperparameter objective for fixed q(aux): the ELBO maximised over q(f), up to
// terms that do not depend on K, summed over the q latent columns (kappa, omega,
// mu0 are n x q; the kernel is shared). Per column:
//   sum kappa^2 / (2 omega) - log|B| / 2 - r' B^-1 r / 2,  r = (kappa - omega mu0) / sqrt(omega).
// grad[j] = (a' dK_j a - tr(R dK_j)) / 2, a = W^1/2 B^-1 r, R = W^1/2 B^-1 W^1/2.
double collapsed_bound(const Eigen::MatrixXd& K, const std::vector<Eigen::MatrixXd>* dK,
                       const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                       const Eigen::MatrixXd& mu0, std::vector<double>* grad);

// The same bound for the kernel `spec` on inputs x (K = k(x, x) + jitter I), with the
// gradient from one kernel_grad_contract() with M = a a' - R (no derivative matrices);
// B^-1 comes from the blocked triangular inverse of the Cholesky factor (tri_inverse.h).
// kappa, omega, mu0 are n x q as for collapsed_bound (M summed over the columns).
double collapsed_bound_kernel(const KernelSpec& spec, const Eigen::MatrixXd& x, double jitter,
                              const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                              const Eigen::MatrixXd& mu0, std::vector<double>* grad);

// One Gibbs chain: state, its own random stream, and storage for saved draws.
// Each sweep draws the auxiliary variables from the chain's stream, then one seed
// per latent column from it; the columns' Gaussian steps run in parallel (threads),
// each on its own stream, so draws do not depend on the thread count. K and LK
// (lower Cholesky factors of the K[j]) are shared or per column alike.
class GibbsChain {
 public:
  GibbsChain(const KernelSet& K, const KernelSet& LK, const Likelihood& lik,
             const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& f_init, Rng rng, int warmup,
             int iter, int thin, double* out, int out_stride, int threads = 1);
  // Full Bayes: the kernel hyperparameters are sampled within each sweep
  // (hyper_sampler.h) by `blocks`, which together serve every latent column once; K and
  // LK given to the constructor are then unused. Saved draw s of the k-th log parameter
  // (over the blocks in order) goes to theta_out[s + stride * k].
  void sample_hyper(std::vector<HyperBlock> blocks, double* theta_out);
  const std::vector<HyperBlock>& hyper_blocks() const { return blocks_; }
  // Full Bayes for the likelihood's parameters: at the start of every sweep the elements
  // named by `priors` move given f (param_sampler.h), on a copy of the likelihood owned
  // by the chain. Saved draw s of the k-th element goes to out[s + stride * k].
  // Throws std::invalid_argument when an element is not a parameter of the likelihood.
  void sample_params(std::vector<LikParamPrior> priors, double* out);
  // Passes per sweep of the likelihood's parameter flow over its directions (param_flow_move
  // in param_sampler.h; 0 turns the move off), and whether it
  // moves the kernel's variance too (when one block with a sampled variance serves every
  // latent column). Used when the flow's parameter is sampled.
  void set_flow_updates(int updates, bool with_variance = true) {
    flow_updates_ = updates;
    flow_variance_ = with_variance;
    setup_joint();
  }
  // Leapfrog steps of the joint gradient move of f and the likelihood's positive parameters
  // (latent_hmc.h), run every sweep after the parameters' own moves when the likelihood
  // gives the gradients; 0 turns it off.
  void set_hmc_steps(int steps) {
    hmc_steps_ = steps;
    setup_joint();
  }
  // The likelihood's prepared reference for its Gibbs move (Likelihood::gibbs_reference();
  // nullptr: none), shared read-only with the other chains of the run.
  void set_reference(std::shared_ptr<const MoveReference> ref) { ref_ = std::move(ref); }
  // Run iterations [it, it + count) of the chain; returns false on a numerical failure.
  bool run(int count);
  int done() const { return it_; }
  // The gradient move's state (its step size and mean acceptance probability).
  const GradientMove& gradient_move() const { return grad_; }

 private:
  KernelSet K_;
  KernelSet LK_;
  const Likelihood* lik_;
  std::unique_ptr<Likelihood> own_lik_;  // the chain's copy when its parameters are sampled
  std::vector<LikParamPrior> lik_priors_;
  double* param_out_ = nullptr;
  Eigen::MatrixXd mu0_;
  Eigen::MatrixXd f_, kappa_, omega_;
  Rng rng_;
  GaussianStep step_;  // used when q = 1 (no per-column allocation)
  int warmup_, iter_, thin_, it_ = 0;
  double* out_;
  int stride_;
  int threads_;
  std::vector<HyperBlock> blocks_;
  double* theta_out_ = nullptr;
  std::shared_ptr<const MoveReference> ref_;
  GradientMove grad_;  // HMC on p(f | y) (Likelihood::gradient_leapfrog())
  int flow_updates_ = 2;
  int hmc_steps_ = 0;
  LatentHmc hmc_;  // the joint gradient move (inactive when off or not provided)
  bool flow_variance_ = true;
  DirectionalSlice flow_;  // the parameter flow's (t, log v) or (t) directions
  bool sweep_hyper();
  // the joint move of the kernels' variances and the likelihood's positive parameters
  // (joint_scale_move; dim 0 when it does not apply)
  JointScaleIndex joint_idx_;
  DirectionalSlice joint_[3];  // per level coordinate system (kLevelScaled, ...)
  void setup_joint();
  // The current lower Cholesky factors of the blocks' kernel matrices, as the
  // likelihood's gibbs_move takes them.
  KernelSet hyper_factors() const;
};

}  // namespace augp

#endif
