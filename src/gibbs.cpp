// The Gibbs sampler for augmented GP models: alternate
//   aux | f  (the likelihood's sample_aux)   and   f | aux ~ N(m, S)  (the shared Gaussian step),
// or, with the kernel hyperparameters sampled, aux | f and then (theta, f) | aux per
// hyperparameter block (hyper_sampler.h), then the non-centred move of the kernels'
// variances (jointly with the likelihood's positive parameters when they are sampled). With
// sampled likelihood parameters every sweep starts with their moves given f, among them the
// likelihood's parameter flow when it has one (param_flow_move in param_sampler.h) and the
// joint gradient move of f and the positive parameters when the likelihood gives the
// gradients (latent_hmc.h).
// For a likelihood with sequential_columns() the latent columns (or their blocks) are
// updated one after another, each from auxiliaries drawn given the columns updated
// before it.
// With a fixed kernel shared by the latent columns and a likelihood that asks for it
// (Likelihood::gradient_leapfrog()), every sweep starts with the gradient move
// (gradient_move.h: HMC on p(f | y), the auxiliaries integrated out) in the coordinates
// of the likelihood's reference.
#include <cstdint>
#include <utility>
#include <stdexcept>
#include <vector>

#include "engine.h"
#include "parallel.h"

namespace augp {

GibbsChain::GibbsChain(const KernelSet& K, const KernelSet& LK,
                       const Likelihood& lik, const Eigen::MatrixXd& mu0,
                       const Eigen::MatrixXd& f_init, Rng rng, int warmup, int iter, int thin,
                       double* out, int out_stride, int threads)
    : K_(K), LK_(LK), lik_(&lik), mu0_(mu0), f_(f_init), rng_(rng), warmup_(warmup),
      iter_(iter), thin_(thin), out_(out), stride_(out_stride), threads_(threads) {
  if (mu0_.rows() != lik.n_obs() || mu0_.cols() != lik.n_latent())
    throw std::invalid_argument("the prior mean has the wrong size");
  K_.check(lik.n_obs(), lik.n_latent());
  LK_.check(lik.n_obs(), lik.n_latent());
  if (K_.size() != LK_.size())
    throw std::invalid_argument("K and its Cholesky factors must both be shared or per column");
}

void GibbsChain::sample_params(std::vector<LikParamPrior> priors, double* out) {
  if (priors.empty()) return;
  std::vector<int> all(lik_->n_obs());
  for (int i = 0; i < lik_->n_obs(); ++i) all[i] = i;
  own_lik_ = lik_->subset(all);
  lik_ = own_lik_.get();
  lik_param_values(*own_lik_, priors);  // checks every name and index
  lik_priors_ = std::move(priors);
  param_out_ = out;
  setup_joint();
}

void GibbsChain::setup_joint() {
  // the parameter flow moves the kernel's variance with it (when asked) when one block with
  // a sampled variance serves every latent column
  flow_ = DirectionalSlice(flow_variance_ && blocks_.size() == 1 && blocks_[0].has_scale() ? 2 : 1);
  joint_idx_ = JointScaleIndex();
  hmc_ = own_lik_ ? LatentHmc(*own_lik_, lik_priors_, f_, hmc_steps_, warmup_) : LatentHmc();
  if (!own_lik_ || blocks_.empty()) return;
  const JointScaleIndex idx = joint_scale_index(blocks_, lik_priors_, lik_->n_latent());
  if (idx.dim() == 0) return;
  joint_idx_ = idx;
  for (DirectionalSlice& d : joint_) d = DirectionalSlice(idx.dim());
}

void GibbsChain::sample_hyper(std::vector<HyperBlock> blocks, double* theta_out) {
  std::vector<int> served(lik_->n_latent(), 0);
  for (const HyperBlock& b : blocks)
    for (int j : b.cols()) {
      if (j < 0 || j >= lik_->n_latent()) throw std::invalid_argument("a block serves an unknown column");
      ++served[j];
    }
  for (int s : served)
    if (s != 1) throw std::invalid_argument("every latent column needs exactly one hyperparameter block");
  if (lik_->n_latent() > 1 && lik_->sequential_columns())
    for (const HyperBlock& b : blocks)
      if (b.cols().size() != 1)
        throw std::invalid_argument("this likelihood updates its latent columns in turn: sampled kernel "
                                    "hyperparameters need one kernel per latent column");
  blocks_ = std::move(blocks);
  theta_out_ = theta_out;
  setup_joint();
}

// (theta, f) | aux for every block. Random numbers: one seed per block, then one per
// latent column, from the chain's stream; block g moves on stream q + g of its seed and
// column j's f draw on stream j of its seed, so blocks may run in parallel.
bool GibbsChain::sweep_hyper() {
  const int q = lik_->n_latent();
  const int nb = static_cast<int>(blocks_.size());
  std::vector<std::uint64_t> bseeds(nb), cseeds(q);
  for (int g = 0; g < nb; ++g) bseeds[g] = rng_.next();
  for (int j = 0; j < q; ++j) cseeds[j] = rng_.next();
  const int warmup_it = it_ < warmup_ ? it_ + 1 : 0;
  std::vector<int> ok(nb, 1);
  auto block_step = [&](int g) {
    HyperBlock& b = blocks_[g];
    Rng rb(bseeds[g], static_cast<std::uint64_t>(q + g));
    std::vector<Rng> cr;
    for (int j : b.cols()) cr.emplace_back(cseeds[j], static_cast<std::uint64_t>(j));
    ok[g] = b.step(kappa_, omega_, mu0_, f_, rb, cr, warmup_it) ? 1 : 0;
  };
  if (q > 1 && lik_->sequential_columns()) {
    // block by block (one column each), its auxiliaries drawn given the columns before
    for (int g = 0; g < nb; ++g) {
      lik_->sample_aux_column(blocks_[g].cols()[0], f_, rng_, kappa_, omega_);
      block_step(g);
      if (!ok[g]) return false;
    }
  } else {
    parallel_items(nb, threads_, block_step);
  }
  for (int g = 0; g < nb; ++g)
    if (!ok[g]) return false;
  // The non-centred moves, the auxiliaries integrated out. With sampled positive likelihood
  // parameters (dispersion, maximal rate, noise scale, ...): the joint move of those
  // parameters, the kernels' overall variances and (one latent column) the latent level,
  // the rest of the latent values held fixed (joint_scale_move in param_sampler.h: in the
  // eigenbasis of the kernel's correlation part, the jitter being absolute). It
  // moves along the ridges where a larger variance or a shifted level with another
  // parameter value gives nearly the same likelihood (a maximal rate far above the counts
  // trades off with the level of f, one near them with the variance).
  // Invariance: each run of it is a Markov update of (f, theta, params) that leaves their
  // marginal posterior p(f, theta, params | y) invariant. It changes coordinates, (f, t,
  // log params) -> (x, fixed part) with x = (t, level, log params), by a map whose Jacobian
  // the target includes (for the whitened f, |S(t)| cancels the normaliser of N(f; mu0, K);
  // the log priors carry the Jacobians of the logs), and updates x by slice
  // sampling along fixed lines, which leaves its conditional given the fixed part invariant.
  // The auxiliaries of this sweep are stale after it, but nothing reads them before the next
  // sweep draws them afresh from p(aux | f, params, y) (the parameters' slice given f, the
  // location shift and the likelihood's own move use f and y alone): a partially collapsed
  // Gibbs sampler (van Dyk and Park 2008) whose every step keeps p(f, theta, params | y)
  // invariant, the auxiliaries a temporary of the sweep. The directions adapt in warmup only.
  // With the level (one column) the move runs three times, the level scaled with the
  // variance, apart from it and with the shape fixed in the units of f (centred), each with
  // its own adapted directions and stream.
  if (joint_idx_.dim() > 0) {
    Rng rs(rng_.next(), static_cast<std::uint64_t>(q + 2 * nb));
    joint_scale_move(*own_lik_, lik_priors_, blocks_, joint_idx_, f_, mu0_, kLevelScaled,
                     joint_[kLevelScaled], rs, warmup_it);
    if (joint_idx_.shift) {
      for (int m = 1; m < 3; ++m) {
        Rng ra(rng_.next(), static_cast<std::uint64_t>(q + 2 * nb + m));
        joint_scale_move(*own_lik_, lik_priors_, blocks_, joint_idx_, f_, mu0_, m, joint_[m], ra,
                         warmup_it);
      }
    }
    return true;
  }
  // otherwise interweaving moves on the kernels' scales alone, one block after another (the
  // likelihood couples the columns), each on a stream of its own
  for (int g = 0; g < nb; ++g) {
    if (!blocks_[g].has_scale()) continue;
    Rng rs(rng_.next(), static_cast<std::uint64_t>(q + nb + g));
    block_scale_move(*lik_, blocks_[g], f_, mu0_, rs);
  }
  return true;
}

KernelSet GibbsChain::hyper_factors() const {
  if (blocks_.size() == 1) return KernelSet(blocks_[0].LK());
  // one block per latent column, in column order (see sample_hyper's callers)
  std::vector<const Eigen::MatrixXd*> factors;
  for (const HyperBlock& b : blocks_) factors.push_back(&b.LK());
  return KernelSet(factors);
}

// Saved draw s (0-based) of latent column j goes to out_[s + stride * (i + n * j)].
bool GibbsChain::run(int count) {
  const int n = lik_->n_obs(), q = lik_->n_latent();
  const int total = warmup_ + iter_ * thin_;
  const bool sequential = q > 1 && lik_->sequential_columns();
  for (int c = 0; c < count && it_ < total; ++c, ++it_) {
    // the likelihood's parameters given f (full Bayes), then the sweep at the new values
    if (own_lik_) {
      sample_lik_params(*own_lik_, lik_priors_, f_, rng_);
      // the joint shift of f and the location parameters (a direction the likelihood
      // does not see, along which the one-at-a-time updates crawl)
      bool location = false;
      for (const LikParamPrior& pr : lik_priors_) location = location || pr.location;
      if (q == 1 && location)
        shift_location(*own_lik_, lik_priors_, f_, mu0_,
                       blocks_.empty() ? LK_[0] : blocks_[0].LK(), rng_);
      // the likelihood's parameter flow (a curved direction along which the likelihood is
      // constant, e.g. the maximal rate against the latent values at fixed rates), with the
      // kernel's variance, the auxiliaries integrated out as for the moves above
      if (flow_updates_ > 0) {
        HyperBlock* vb = flow_.dim() == 2 ? &blocks_[0] : nullptr;
        // with the variance the move works in the block's eigenbasis and needs no factor
        param_flow_move(*own_lik_, lik_priors_, f_, mu0_,
                        blocks_.empty() || vb ? LK_ : hyper_factors(), vb, flow_, rng_,
                        it_ < warmup_ ? it_ + 1 : 0, flow_updates_);
      }
      // the joint gradient move of f and the positive parameters at the current kernels
      // (the un-augmented posterior; the auxiliaries are drawn below, given its end point)
      if (hmc_.active())
        hmc_.step(*own_lik_, lik_priors_, f_, mu0_, blocks_.empty() ? LK_ : hyper_factors(), rng_,
                  it_ < warmup_ ? it_ + 1 : 0);
    }
    // the gradient move on p(f | y) (with a fixed kernel shared by the latent columns and
    // the likelihood's reference as its metric); the auxiliaries below are drawn given
    // the f it leaves
    if (blocks_.empty() && ref_ && LK_.shared() && lik_->gradient_leapfrog() > 0) {
      const RotatedGaussian g = ref_->gaussian();
      if (g.Q != nullptr && it_ == 0) grad_.set_adaptation(warmup_, lik_->gradient_metric_rank());
      if (g.Q != nullptr)
        for (int t = 0; t < lik_->gradient_trajectories(); ++t)
          grad_.step(*lik_, f_, mu0_, LK_[0], g, lik_->gradient_leapfrog(), rng_,
                     it_ < warmup_ ? it_ + 1 : 0);
    }
    if (!blocks_.empty()) {
      // full Bayes: the likelihood's own move (if any) at the current kernels, then the
      // auxiliaries and the (theta, f) | aux moves of every block
      if (lik_->has_gibbs_move()) lik_->gibbs_move(f_, mu0_, hyper_factors(), ref_.get(), rng_);
      if (sequential) {
        kappa_.setZero(n, q);
        omega_.setZero(n, q);
      } else {
        lik_->sample_aux(f_, rng_, kappa_, omega_);
      }
      if (!sweep_hyper()) return false;
    } else if (!lik_->gibbs_move(f_, mu0_, LK_, ref_.get(), rng_)) {  // the likelihood's own move, or:
      if (sequential) {
        // column by column: column j's auxiliaries given the columns updated before it
        if (kappa_.rows() != n || kappa_.cols() != q) {
          kappa_.setZero(n, q);
          omega_.setZero(n, q);
        }
        for (int j = 0; j < q; ++j) {
          lik_->sample_aux_column(j, f_, rng_, kappa_, omega_);
          if (!step_.factor(K_[j], omega_.col(j))) return false;
          const Eigen::VectorXd m0 = mu0_.col(j);
          f_.col(j) = step_.draw(K_[j], LK_[j], kappa_.col(j), m0, rng_);
        }
      } else {
        lik_->sample_aux(f_, rng_, kappa_, omega_);
        if (q == 1) {
          if (!step_.factor(K_[0], omega_.col(0))) return false;
          const Eigen::VectorXd m0 = mu0_.col(0);
          f_.col(0) = step_.draw(K_[0], LK_[0], kappa_.col(0), m0, rng_);
        } else {
          std::vector<std::uint64_t> seeds(q);
          for (int j = 0; j < q; ++j) seeds[j] = rng_.next();
          std::vector<int> ok(q, 1);
          parallel_items(q, threads_, [&](int j) {
            GaussianStep step;
            if (!step.factor(K_[j], omega_.col(j))) {
              ok[j] = 0;
              return;
            }
            Rng r(seeds[j], static_cast<std::uint64_t>(j));
            const Eigen::VectorXd m0 = mu0_.col(j);
            f_.col(j) = step.draw(K_[j], LK_[j], kappa_.col(j), m0, r);
          });
          for (int j = 0; j < q; ++j)
            if (!ok[j]) return false;
        }
      }
    }
    const int after = it_ - warmup_;
    if (after >= 0 && (after + 1) % thin_ == 0) {
      const int s = after / thin_;
      for (int j = 0; j < q; ++j)
        for (int i = 0; i < n; ++i) out_[s + static_cast<long>(stride_) * (i + n * j)] = f_(i, j);
      long k = 0;
      for (const HyperBlock& b : blocks_)
        for (double th : b.theta()) theta_out_[s + static_cast<long>(stride_) * k++] = th;
      if (own_lik_) {
        const std::vector<double> pv = lik_param_values(*own_lik_, lik_priors_);
        for (std::size_t e = 0; e < pv.size(); ++e) param_out_[s + static_cast<long>(stride_) * e] = pv[e];
      }
    }
  }
  return true;
}

}  // namespace augp
