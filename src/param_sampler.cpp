// Slice-sampling updates of a likelihood's parameters given the latent values (see
// param_sampler.h).
#include "param_sampler.h"

#include "engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace augp {

namespace {
const double kNegInf = -std::numeric_limits<double>::infinity();
const double kLogSqrt2Pi = 0.91893853320467274178;
const double kLogPi = 1.14472988584940017414;
// passes of the level move over its directions per sweep (each update costs a few
// likelihood evaluations, O(n q))
const int kJointCycles = 4;

// The parameter element of a prior, checked against the likelihood.
double& element(std::map<std::string, Eigen::MatrixXd>& p, const LikParamPrior& pr) {
  auto it = p.find(pr.name);
  if (it == p.end()) throw std::invalid_argument("the likelihood has no parameter '" + pr.name + "'");
  if (pr.index < 0 || pr.index >= it->second.size())
    throw std::invalid_argument("parameter '" + pr.name + "' has no element " + std::to_string(pr.index + 1));
  return it->second(pr.index);
}
}  // namespace

void lik_param_check_prior(const LikParamPrior& p, const char* what) {
  if (p.positive()) {
    HyperPrior h;
    h.family = p.family;
    h.a = p.a;
    h.b = p.b;
    if (p.family == HyperPrior::FIXED) throw std::invalid_argument(std::string(what) + ": a sampled parameter needs a prior");
    hyper_check_prior(h, what);
    return;
  }
  const bool ok = (p.family == LikParamPrior::REAL_T && p.a > 0 && p.b > 0) ||
                  (p.family == LikParamPrior::REAL_NORMAL && std::isfinite(p.a) && p.b > 0);
  if (!ok || !std::isfinite(p.b)) throw std::invalid_argument(std::string(what) + ": invalid prior");
}

double lik_param_log_prior(const LikParamPrior& p, double t) {
  if (!std::isfinite(t)) return kNegInf;
  if (p.positive()) {
    HyperPrior h;
    h.family = p.family;
    h.a = p.a;
    h.b = p.b;
    return hyper_log_prior(h, t);
  }
  if (p.family == LikParamPrior::REAL_NORMAL) {
    const double z = (t - p.a) / p.b;
    return -std::log(p.b) - kLogSqrt2Pi - 0.5 * z * z;
  }
  const double z = t / p.b;
  return std::lgamma((p.a + 1.0) / 2.0) - std::lgamma(p.a / 2.0) - 0.5 * (std::log(p.a) + kLogPi) -
         std::log(p.b) - (p.a + 1.0) / 2.0 * std::log1p(z * z / p.a);
}

double slice_update(const std::function<double(double)>& log_target, double t0, double w, Rng& rng) {
  const double h = log_target(t0) - rng.exp1();
  double lo = t0 - w * rng.unif(), hi = lo + w;
  for (int k = 0; k < 20 && log_target(lo) > h; ++k) lo -= w;
  for (int k = 0; k < 20 && log_target(hi) > h; ++k) hi += w;
  for (int k = 0; k < 100; ++k) {
    const double t = lo + (hi - lo) * rng.unif();
    if (log_target(t) > h) return t;
    if (t < t0) lo = t; else hi = t;
  }
  return t0;
}

void sample_lik_params(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                       const Eigen::MatrixXd& f, Rng& rng) {
  for (const LikParamPrior& pr : priors) {
    std::map<std::string, Eigen::MatrixXd> p = lik.params();
    double& x = element(p, pr);
    const double t0 = pr.positive() ? std::log(x) : x;
    auto log_target = [&](double t) {
      const double lp = lik_param_log_prior(pr, t);
      if (!std::isfinite(lp)) return kNegInf;
      x = pr.positive() ? std::exp(t) : t;
      if (pr.positive() && !(x > 0 && std::isfinite(x))) return kNegInf;
      try {
        lik.set_params(p);
      } catch (std::invalid_argument&) {
        return kNegInf;  // outside the parameter's domain (e.g. cut points out of order)
      }
      const double ll = lik.loglik(f);
      return std::isfinite(ll) ? lp + ll : kNegInf;
    };
    const double t1 = slice_update(log_target, t0, 1.0, rng);
    x = pr.positive() ? std::exp(t1) : t1;
    lik.set_params(p);
  }
}

void shift_location(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                    const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L, Rng& rng) {
  if (f.cols() != 1) return;
  std::vector<const LikParamPrior*> loc;
  for (const LikParamPrior& pr : priors)
    if (pr.location) loc.push_back(&pr);
  if (loc.empty()) return;
  const int n = f.rows();
  // log N(f + d; mu0, L L') = const - (a d^2 + 2 b d) / 2 with u = L^-1 1, w = L^-1 (f - mu0)
  const auto tri = L.triangularView<Eigen::Lower>();
  const Eigen::VectorXd u = tri.solve(Eigen::VectorXd::Ones(n));
  const Eigen::VectorXd w = tri.solve((f.col(0) - mu0.col(0)).eval());
  const double a = u.squaredNorm(), b = u.dot(w);
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  std::vector<double> x0;
  for (const LikParamPrior* pr : loc) x0.push_back(element(p, *pr));
  auto log_target = [&](double d) {
    double lp = -0.5 * (a * d * d + 2.0 * b * d);
    for (std::size_t k = 0; k < loc.size(); ++k) lp += lik_param_log_prior(*loc[k], x0[k] + d);
    return std::isfinite(lp) ? lp : kNegInf;
  };
  // step width: the prior sd of the shift (1 / sqrt(a)), kept in a sensible range
  const double width = std::min(10.0, std::max(0.05, 1.0 / std::sqrt(std::max(a, 1e-300))));
  const double d = slice_update(log_target, 0.0, width, rng);
  if (d == 0.0) return;
  for (std::size_t k = 0; k < loc.size(); ++k) element(p, *loc[k]) = x0[k] + d;
  lik.set_params(p);
  f.col(0).array() += d;
}

void param_flow_move(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                     const Eigen::MatrixXd& mu0, const KernelSet& LK, DirectionalSlice& sampler,
                     Rng& rng, int warmup_it, int updates) {
  std::string name;
  int index = 0;
  if (updates < 1 || !lik.param_flow(&name, &index)) return;
  const LikParamPrior* pr = nullptr;
  for (const LikParamPrior& p : priors)
    if (p.name == name && p.index == index && p.positive()) pr = &p;
  if (!pr) return;
  const int q = static_cast<int>(f.cols());
  if (sampler.dim() != 1)
    throw std::invalid_argument("param_flow_move: the sampler's dimension does not match");
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  double& x = element(p, *pr);
  double lo = 0.0, hi = 0.0;
  lik.param_flow_range(f, &lo, &hi);
  if (!(lo < 0.0 && hi > 0.0)) return;
  Eigen::VectorXd y0(1);
  y0[0] = std::log(x);
  Eigen::MatrixXd F;
  Eigen::VectorXd z;
  // the density of t given the rates, relative to t0 (see the header)
  auto log_target = [&](const Eigen::VectorXd& y) {
    const double d = y[0] - y0[0];
    if (!(d > lo && d < hi)) return kNegInf;
    double lp = lik_param_log_prior(*pr, y[0]);
    if (!std::isfinite(lp)) return kNegInf;
    lp += lik.param_flow_map(f, d, F);
    double qf = 0.0;
    for (int j = 0; j < q; ++j) {
      z = LK[j].triangularView<Eigen::Lower>().solve((F.col(j) - mu0.col(j)).eval());
      qf += z.squaredNorm();
    }
    lp -= 0.5 * qf;
    return std::isfinite(lp) ? lp : kNegInf;
  };
  Eigen::VectorXd y = y0;
  sampler.step(log_target, y, rng, warmup_it, updates);
  if (y == y0) return;
  lik.param_flow_map(f, y[0] - y0[0], F);
  f = F;
  x = std::exp(y[0]);
  lik.set_params(p);
}

DirectionalSlice::DirectionalSlice(int d)
    : U_(Eigen::MatrixXd::Identity(d, d)), w_(Eigen::VectorXd::Ones(d)),
      mean_(Eigen::VectorXd::Zero(d)), m2_(Eigen::MatrixXd::Zero(d, d)) {}

void DirectionalSlice::step(const std::function<double(const Eigen::VectorXd&)>& log_target,
                            Eigen::VectorXd& x, Rng& rng, int warmup_it, int cycles) {
  const int d = dim();
  Eigen::VectorXd y(d);
  for (int c = 0; c < cycles; ++c)
    for (int k = 0; k < d; ++k) {
      const Eigen::VectorXd u = U_.col(k);
      auto along = [&](double s) {
        y = x + s * u;
        return log_target(y);
      };
      const double s = slice_update(along, 0.0, w_[k], rng);
      if (s != 0.0) x += s * u;
    }
  if (warmup_it <= 0) return;
  ++n_;
  const Eigen::VectorXd delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_).transpose();
  if (warmup_it != next_) return;
  next_ *= 2;
  const double nn = static_cast<double>(n_);
  const Eigen::MatrixXd cov = m2_ / (nn - 1.0);
  const Eigen::MatrixXd sigma = nn / (nn + 5.0) * cov +
                                5.0 / (nn + 5.0) * 1e-3 * Eigen::MatrixXd::Identity(d, d);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(sigma);
  if (es.info() != Eigen::Success || !es.eigenvalues().allFinite()) return;
  U_ = es.eigenvectors();
  for (int k = 0; k < d; ++k) w_[k] = 2.5 * std::sqrt(std::max(es.eigenvalues()[k], 1e-8));
  max_corr_ = 0.0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < i; ++j)
      max_corr_ = std::max(max_corr_, std::abs(cov(i, j)) / std::sqrt(cov(i, i) * cov(j, j) + 1e-300));
}

std::vector<int> positive_params(const std::vector<LikParamPrior>& priors) {
  std::vector<int> out;
  for (std::size_t k = 0; k < priors.size(); ++k)
    if (priors[k].positive()) out.push_back(static_cast<int>(k));
  return out;
}

void level_param_move(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                      const std::vector<int>& params, Eigen::MatrixXd& f,
                      const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L,
                      DirectionalSlice& sampler, Rng& rng, int warmup_it) {
  const int np = static_cast<int>(params.size());
  if (f.cols() != 1 || np == 0) return;
  if (sampler.dim() != 1 + np)
    throw std::invalid_argument("level_param_move: the sampler's dimension does not match");
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  const std::map<std::string, Eigen::MatrixXd> p0 = p;
  Eigen::VectorXd x(1 + np);
  const double c0 = (f.col(0) - mu0.col(0)).mean();
  x[0] = c0;
  for (int k = 0; k < np; ++k) x[1 + k] = std::log(element(p, priors[params[k]]));
  // log N(f + e 1; mu0, L L') = const - (a e^2 + 2 b e) / 2, u = L^-1 1, z = L^-1 (f - mu0)
  const auto tri = L.triangularView<Eigen::Lower>();
  const Eigen::VectorXd u = tri.solve(Eigen::VectorXd::Ones(f.rows()));
  const Eigen::VectorXd z = tri.solve((f.col(0) - mu0.col(0)).eval());
  const double a = u.squaredNorm(), b = u.dot(z);
  const Eigen::VectorXd x0 = x;
  Eigen::MatrixXd F = f;
  auto log_target = [&](const Eigen::VectorXd& y) {
    const double e = y[0] - c0;
    double lp = -0.5 * (a * e * e + 2.0 * b * e);
    for (int k = 0; k < np; ++k) lp += lik_param_log_prior(priors[params[k]], y[1 + k]);
    if (!std::isfinite(lp)) return kNegInf;
    for (int k = 0; k < np; ++k) {
      const double v = std::exp(y[1 + k]);
      if (!(v > 0 && std::isfinite(v))) return kNegInf;
      element(p, priors[params[k]]) = v;
    }
    try {
      lik.set_params(p);
    } catch (std::invalid_argument&) {
      return kNegInf;
    }
    F.col(0) = f.col(0).array() + e;
    const double ll = lik.loglik(F);
    return std::isfinite(ll) ? lp + ll : kNegInf;
  };
  sampler.step(log_target, x, rng, warmup_it, sampler.cycles(kJointCycles));
  // the state at the accepted x (every evaluation overwrote the parameters and F)
  if (x == x0) {
    lik.set_params(p0);
    return;
  }
  for (int k = 0; k < np; ++k) element(p, priors[params[k]]) = std::exp(x[1 + k]);
  lik.set_params(p);
  f.col(0).array() += x[0] - c0;
}

ScaleWalk::ScaleWalk(int d)
    : L_(0.3 * Eigen::MatrixXd::Identity(d, d)), mean_(Eigen::VectorXd::Zero(d)),
      m2_(Eigen::MatrixXd::Zero(d, d)) {
  log_s_ = 0.0;
}

Eigen::VectorXd ScaleWalk::propose(const Eigen::VectorXd& x, Rng& rng) const {
  Eigen::VectorXd e(dim());
  for (int k = 0; k < dim(); ++k) e[k] = rng.norm();
  const Eigen::VectorXd step = L_.triangularView<Eigen::Lower>() * e;
  return x + std::exp(log_s_) * step;
}

void ScaleWalk::adapt(const Eigen::VectorXd& x, double accept_prob, int warmup_it) {
  if (warmup_it <= 0) return;
  const int d = dim();
  const double target = d == 1 ? 0.44 : 0.3;
  log_s_ += (accept_prob - target) / std::sqrt(static_cast<double>(warmup_it - reset_at_));
  log_s_ = std::min(std::max(log_s_, std::log(1e-3)), std::log(20.0));
  ++n_;
  const Eigen::VectorXd delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_).transpose();
  if (warmup_it != next_) return;
  next_ *= 2;
  const double nn = static_cast<double>(n_);
  Eigen::MatrixXd sigma = nn / (nn + 5.0) * (m2_ / (nn - 1.0));
  sigma.diagonal().array() += 5.0 / (nn + 5.0) * 1e-2;
  Eigen::LLT<Eigen::MatrixXd> llt(sigma);
  if (llt.info() != Eigen::Success || !sigma.allFinite()) return;
  L_ = llt.matrixL();
  log_s_ = std::log(2.38 / std::sqrt(static_cast<double>(d)));
  reset_at_ = warmup_it - 1;
}

void whitened_scale_move(const Likelihood& lik, Likelihood* own,
                         const std::vector<LikParamPrior>& priors, const std::vector<int>& params,
                         HyperBlock& block, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
                         ScaleWalk& walk, Rng& rng, int warmup_it) {
  if (!block.has_scale()) return;
  const int np = static_cast<int>(params.size());
  if (walk.dim() != 1 + np)
    throw std::invalid_argument("whitened_scale_move: the sampler's dimension does not match");
  if (np > 0 && own != &lik)
    throw std::invalid_argument("whitened_scale_move: the parameters need the chain's own likelihood");
  std::map<std::string, Eigen::MatrixXd> p, p0;
  if (np > 0) {
    p = own->params();
    p0 = p;
  }
  Eigen::VectorXd x(1 + np);
  x[0] = block.scale_theta();
  for (int k = 0; k < np; ++k) x[1 + k] = std::log(element(p, priors[params[k]]));
  double lp0 = block.scale_log_prior(x[0]);
  for (int k = 0; k < np; ++k) lp0 += lik_param_log_prior(priors[params[k]], x[1 + k]);
  const double cur = lp0 + lik.loglik(f);
  const Eigen::VectorXd y = walk.propose(x, rng);
  const double u = rng.unif();
  double lp = block.scale_log_prior(y[0]);
  for (int k = 0; k < np; ++k) lp += lik_param_log_prior(priors[params[k]], y[1 + k]);
  double log_ratio = kNegInf;
  bool have_k = false;
  Eigen::MatrixXd F;
  if (std::isfinite(lp) && std::isfinite(cur)) {
    bool ok = true;
    for (int k = 0; k < np && ok; ++k) {
      const double v = std::exp(y[1 + k]);
      ok = v > 0 && std::isfinite(v);
      element(p, priors[params[k]]) = v;
    }
    if (ok && np > 0) {
      try {
        own->set_params(p);
      } catch (std::invalid_argument&) {
        ok = false;
      }
    }
    // f at the proposal: the whitened z = LK^-1 (f - mu0) of every column of the block
    // mapped through the factor at the proposed variance
    if (ok && (have_k = block.propose_scale(y[0]))) {
      F = f;
      const auto L0 = block.LK().triangularView<Eigen::Lower>();
      const auto L1 = block.LK_proposed().triangularView<Eigen::Lower>();
      for (int j : block.cols()) {
        const Eigen::VectorXd z = L0.solve((f.col(j) - mu0.col(j)).eval());
        const Eigen::VectorXd w = L1 * z;
        F.col(j) = mu0.col(j) + w;
      }
      const double ll = lik.loglik(F);
      if (std::isfinite(ll)) log_ratio = lp + ll - cur;
    }
  }
  const bool accept = have_k && std::log(u) < log_ratio;
  if (accept) {
    block.accept_scale(y[0]);
    f = F;
  } else if (np > 0) {
    own->set_params(p0);
  }
  walk.adapt(accept ? y : x,
             std::isfinite(log_ratio) ? std::exp(std::min(0.0, log_ratio)) : 0.0, warmup_it);
}

std::vector<double> lik_param_values(const Likelihood& lik, const std::vector<LikParamPrior>& priors) {
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  std::vector<double> out;
  out.reserve(priors.size());
  for (const LikParamPrior& pr : priors) out.push_back(element(p, pr));
  return out;
}

}  // namespace augp
