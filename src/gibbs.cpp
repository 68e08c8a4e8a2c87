// The Gibbs sampler for augmented GP models: alternate
//   aux | f  (the likelihood's sample_aux)   and   f | aux ~ N(m, S)  (the shared Gaussian step).
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine.h"
#include "parallel.h"

namespace augp {

GibbsChain::GibbsChain(const KernelSet& K, const KernelSet& LK,
                       const Likelihood& lik, const Eigen::MatrixXd& mu0,
                       const Eigen::MatrixXd& f_init, Rng rng, int warmup, int iter, int thin,
                       double* out, int out_stride, int threads)
    : K_(K), LK_(LK), lik_(lik), mu0_(mu0), f_(f_init), rng_(rng), warmup_(warmup),
      iter_(iter), thin_(thin), out_(out), stride_(out_stride), threads_(threads) {
  if (mu0_.rows() != lik.n_obs() || mu0_.cols() != lik.n_latent())
    throw std::invalid_argument("the prior mean has the wrong size");
  K_.check(lik.n_obs(), lik.n_latent());
  LK_.check(lik.n_obs(), lik.n_latent());
  if (K_.size() != LK_.size())
    throw std::invalid_argument("K and its Cholesky factors must both be shared or per column");
}

// Saved draw s (0-based) of latent column j goes to out_[s + stride * (i + n * j)].
bool GibbsChain::run(int count) {
  const int n = lik_.n_obs(), q = lik_.n_latent();
  const int total = warmup_ + iter_ * thin_;
  for (int c = 0; c < count && it_ < total; ++c, ++it_) {
    if (!lik_.gibbs_move(f_, mu0_, LK_, rng_)) {  // the likelihood's own move, or:
      lik_.sample_aux(f_, rng_, kappa_, omega_);
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
    const int after = it_ - warmup_;
    if (after >= 0 && (after + 1) % thin_ == 0) {
      const int s = after / thin_;
      for (int j = 0; j < q; ++j)
        for (int i = 0; i < n; ++i) out_[s + static_cast<long>(stride_) * (i + n * j)] = f_(i, j);
    }
  }
  return true;
}

}  // namespace augp
