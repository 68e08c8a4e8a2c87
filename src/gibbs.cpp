// The Gibbs sampler for augmented GP models: alternate
//   aux | f  (the likelihood's sample_aux)   and   f | aux ~ N(m, S)  (the shared Gaussian step).
#include <stdexcept>

#include "engine.h"

namespace augp {

GibbsChain::GibbsChain(const Eigen::MatrixXd& K, const Eigen::MatrixXd& LK,
                       const Likelihood& lik, const Eigen::VectorXd& mu0,
                       const Eigen::MatrixXd& f_init, Rng rng, int warmup, int iter, int thin,
                       double* out, int out_stride)
    : K_(K), LK_(LK), lik_(lik), mu0_(mu0), f_(f_init), rng_(rng), warmup_(warmup),
      iter_(iter), thin_(thin), out_(out), stride_(out_stride) {}

// Saved draw s (0-based) of latent column j goes to out_[s + stride * (i + n * j)].
bool GibbsChain::run(int count) {
  const int n = lik_.n_obs(), q = lik_.n_latent();
  const int total = warmup_ + iter_ * thin_;
  for (int c = 0; c < count && it_ < total; ++c, ++it_) {
    lik_.sample_aux(f_, rng_, kappa_, omega_);
    for (int j = 0; j < q; ++j) {
      if (!step_.factor(K_, omega_.col(j))) return false;
      f_.col(j) = step_.draw(K_, LK_, kappa_.col(j), mu0_, rng_);
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
