// Dual averaging of an HMC step size towards a target acceptance probability (Nesterov's
// primal-dual averaging as Hoffman and Gelman (2014) use it for step sizes): after the
// t-th trajectory with acceptance alpha,
//   hbar = (1 - w) hbar + w (target - alpha),  w = 1 / (t + t0),
//   log eps = mu - sqrt(t) / gamma * hbar,
//   log eps_bar = t^-kappa log eps + (1 - t^-kappa) log eps_bar,
// with mu = log(10 eps0) for the step size eps0 at the (re)start. During warm-up the
// sampler uses eps; afterwards it freezes eps_bar.
#ifndef AUGP_DUAL_AVERAGING_H
#define AUGP_DUAL_AVERAGING_H

#include <cmath>

namespace augp {

struct DualAveraging {
  static constexpr double kGamma = 0.05, kT0 = 10.0, kKappa = 0.75;
  double target = 0.75;
  double mu = 0.0, hbar = 0.0, log_eps_bar = 0.0;
  int t = 0;

  // Starts (again) from step size eps0.
  void restart(double eps0) {
    mu = std::log(10.0 * eps0);
    hbar = 0.0;
    log_eps_bar = std::log(eps0);
    t = 0;
  }

  // One trajectory's acceptance probability; returns the new log step size.
  double update(double alpha) {
    ++t;
    const double w = 1.0 / (t + kT0);
    hbar = (1.0 - w) * hbar + w * (target - alpha);
    const double le = mu - std::sqrt(static_cast<double>(t)) / kGamma * hbar;
    const double eta = std::pow(static_cast<double>(t), -kKappa);
    log_eps_bar = eta * le + (1.0 - eta) * log_eps_bar;
    return le;
  }
};

}  // namespace augp

#endif
