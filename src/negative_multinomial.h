// Negative-multinomial draws for the logistic-softmax augmentation (no R API;
// thread-safe: all state lives in the caller's Rng).
//
// NM(r, p_1..p_q) with p_0 = 1 - sum_j p_j > 0 has pmf
//   Gamma(r + sum n) / (Gamma(r) prod n_j!) * p_0^r * prod p_j^(n_j),
// mean r p_j / p_0, variance r p_j (p_0 + p_j) / p_0^2, covariance r p_j p_k / p_0^2.
// It is a Gamma mixture of independent Poissons: lambda ~ Gamma(r, 1),
// n_j | lambda ~ Poisson(lambda p_j / p_0), which is how it is drawn here.
#ifndef AUGP_NEGATIVE_MULTINOMIAL_H
#define AUGP_NEGATIVE_MULTINOMIAL_H

#include "rng.h"

namespace augp {
namespace nm {

// r > 0; ratio[j] = p_j / p_0 >= 0 (passing the ratio avoids forming p_0 = 1 - sum p,
// which cancels badly when p_0 is small). Writes q counts to out.
inline void draw(double r, const double* ratio, int q, Rng& rng, double* out) {
  const double lambda = rng.gamma(r);
  for (int j = 0; j < q; ++j) out[j] = ratio[j] > 0.0 ? rng.poisson(lambda * ratio[j]) : 0.0;
}

}  // namespace nm
}  // namespace augp

#endif
