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

// The coordinates of a joint scale move: the blocks whose kernel has an overall variance
// (HyperBlock::has_scale), whether the latent level moves too (shift: one latent column,
// so one block), and the positive elements of priors, in order.
struct JointScaleIndex {
  std::vector<int> blocks, params;
  bool shift = false;
  int dim() const { return static_cast<int>(blocks.size() + params.size()) + (shift ? 1 : 0); }
};
// Empty (dim 0) unless priors has a positive element and there is a variance or a level
// to move with it.
JointScaleIndex joint_scale_index(const std::vector<HyperBlock>& blocks,
                                  const std::vector<LikParamPrior>& priors, int n_latent);

// The coordinate systems of the level in joint_scale_move.
enum { kLevelScaled = 0, kLevelApart = 1, kLevelCentred = 2 };

// The joint move of the kernels' variances, the latent level and the likelihood's positive
// parameters, the auxiliaries integrated out. The coordinates
//   x = (t_b = log v_b for b in idx.blocks, c when idx.shift, log p for p in idx.params)
// move given the rest of the latent values, which are held fixed in one of the systems
// below; in each, the map from x and the fixed part to (f, theta, params) has a Jacobian
// that is accounted for, so the density of x given the fixed part is the posterior times
// it, and slice updates along lines (sampler) leave it invariant. Each log prior carries
// the Jacobian of its log (hyper_log_prior, lik_param_log_prior). The kernel matrix is
// K(t) = v C + jitter I with the jitter absolute (not proportional to v), so the maps
// work in the eigenbasis of C (HyperBlock::spectrum): C = U diag(lam) U',
// K(t) = S(t)^2 with S(t) = U diag(s(t)) U', s(t)^2 = e^t lam + jitter (the symmetric square
// root). Write w = f - mu0 and t0 the current t; u-hat = U'1, w-hat = U'w.
// * Without the level (several columns): the whitened z_j = S(t)^-1 w_j are fixed
//   (a priori N(0, I) whatever t: the Jacobian |S(t)| cancels the normaliser of
//   N(f; mu0, K(t))), f_j(x) = mu0_j + U diag(s(t) / s(t0)) U' w_j, and the density adds
//   nothing. Along the directions where v lam is far above the jitter this scales w by
//   sqrt(v / v0), as a pure rescaling would; along those where the jitter dominates, w
//   keeps its scale, as its prior N(0, jitter) asks.
// * Level scaled (kLevelScaled): z = S(t)^-1 w = h + g 1 with h fixed and the level g =
//   mean(z) (the moving coordinate c); f(x) = mu0 + S(t)(z0 + e 1), e = g - g0, and the
//   density adds -||z0 + e 1||^2 / 2 = const - (n e^2 + 2 e 1'z0) / 2.
// * Level apart (kLevelApart): w = c 1 + S(t) h with h fixed and 1'h = 0, so that
//   c = 1'S(t)^-1 w / 1'S(t)^-1 1; for each t the map (c, h) -> w has determinant
//   |S(t)| 1'S(t)^-1 1 (times a constant), so the density of (t, c, h) is p(t)
//   1'S(t)^-1 1 N(c S(t)^-1 1 + h; 0, I). f(x) = mu0 + c 1 + S(t) h, and the density adds
//   log(1'S(t)^-1 1) - ||c S(t)^-1 1 + h||^2 / 2.
// * Centred (kLevelCentred): w = c 1 + H with the shape H (1'H = 0) fixed in the units of
//   f and c = mean(w) (a translation, unit Jacobian; t does not enter the map). f(x) =
//   f + (c - c0) 1, and the density adds log N(w + (c - c0) 1; 0, K(t)).
// Without a variance to move (idx.blocks empty, one column) the three systems coincide:
// f(x) = f + (c - c0) 1 with the density's term log N(w + (c - c0) 1; 0, L L'), L the
// block's factor. Level apart, the ridge of a maximal rate far above the counts
// (log lambda + c nearly constant) is a line; level scaled, that of a maximal rate near
// the largest counts (a larger variance with a smaller rate); centred, the variance moves
// with the level while the shape stays. The target at x is loglik(f(x)) plus the log
// priors and the term above. Cost per move: the eigendecomposition of C when the block's
// other parameters changed since the last one (HyperBlock::spectrum), U'w (O(n^2));
// per evaluation one likelihood evaluation and, where f(x) needs S(t), one product with U
// (O(n^2)); centred, O(n). Afterwards K_b is updated in O(n^2) and its factor is made
// when next needed (HyperBlock::set_scale). The likelihood keeps the new parameter values.
void joint_scale_move(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                      std::vector<HyperBlock>& blocks, const JointScaleIndex& idx,
                      Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, int level,
                      DirectionalSlice& sampler, Rng& rng, int warmup_it);

// The interweaving move on the overall variance of one block (has_scale()) when no
// likelihood parameter moves with it: the whitened z_j = S(t)^-1 (f_j - mu0_j) of the
// block's columns held fixed (as joint_scale_move without the level), log v moves by a
// slice sampler (stepping out, width 1) on log p(log v) + log p(y | f(v)), the likelihood
// itself (lik.loglik), the auxiliaries integrated out: a partially collapsed step, valid
// because the auxiliaries are drawn afresh from their full conditional at the start of the
// next sweep before anything uses them. Alternating it with the centred move of the block
// (f integrated out given the auxiliaries) is an ancillarity-sufficiency interweaving.
void block_scale_move(const Likelihood& lik, HyperBlock& block, Eigen::MatrixXd& f,
                      const Eigen::MatrixXd& mu0, Rng& rng);

// The likelihood's parameter flow (Likelihood::param_flow) as a Markov move of (x, f) and,
// with `block`, of the kernel's overall variance v with them, at fixed rates: x is the
// flow's parameter element (t = log x), the auxiliaries are integrated out.
// Coordinates: (t, s = log v, u) with u = G(f) + t 1, the flow's invariant (for
// poisson_logistic the log rates log(lambda sigma(f_i))): f = G^-1(u - t) and the
// likelihood depends on u alone. The map (t, s, u) -> (x, v, f) is a fixed bijection with
// Jacobian x v prod_ij 1 / G'(f_ij) (f_ij depends on u_ij and t only), so the posterior
// density in these coordinates is
//   p~(t, s, u) = p(t) p(s) N(f; mu0, K(s)) p(y | u) prod_ij 1 / G'(f_ij)
// (p(t), p(s) with the Jacobians of the logs: lik_param_log_prior, scale_log_prior;
// K(s) = e^s C + jitter I, the jitter absolute). At fixed u, with d = t - t0:
//   log p~ = log p(t) + log p(s) + sum_j log N(phi_d(f_j); mu0_j, K(s))
//            + sum_ij log phi_d'(f_ij) + const
// (sum log phi_d' = sum log G'(f) - sum log G'(phi_d(f)), the first sum a constant), on the
// flow's range of d; with the block, log N(.; ., K(s)) in the eigenbasis of C
// (HyperBlock::spectrum: -(sum log s2 + ||U'(phi_d(f_j) - mu0_j) / s||^2) / 2, s2 = e^s lam +
// jitter). Slice updates along lines in (t, s) at fixed u (sampler: directions adapted in
// warmup and frozen after it, `updates` passes) leave p~ invariant, hence the posterior of
// (x, v, f) given the other parameters and hyperparameters. Without block (sampler of
// dimension 1), v stays and LK holds the current factors per latent column. Each
// evaluation costs one product with U (with the block) or one triangular solve per latent
// column (O(n^2)) and the map (O(n q)); with the block, the eigendecomposition of C when
// its other parameters changed. No-op when the likelihood has no flow or its element is
// not sampled (not in priors with a positive family). block (has_scale(), serving every
// latent column) takes the new variance (HyperBlock::set_scale), the likelihood the new
// value.
void param_flow_move(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                     const Eigen::MatrixXd& mu0, const KernelSet& LK, HyperBlock* block,
                     DirectionalSlice& sampler, Rng& rng, int warmup_it, int updates);

// The current values of the elements in priors, in order.
std::vector<double> lik_param_values(const Likelihood& lik, const std::vector<LikParamPrior>& priors);

}  // namespace augp

#endif
