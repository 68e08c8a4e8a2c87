// The joint gradient move of the latent values and the likelihood's positive parameters
// (see latent_hmc.h).
#include "latent_hmc.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "engine.h"

namespace augp {

namespace {
const double kNegInf = -std::numeric_limits<double>::infinity();

void element_names(const std::vector<LikParamPrior>& priors, const std::vector<int>& el,
                   std::vector<std::string>& names, std::vector<int>& index) {
  names.clear();
  index.clear();
  for (int k : el) {
    names.push_back(priors[k].name);
    index.push_back(priors[k].index);
  }
}

// Sets element (name, index) of lik's parameters to x (the others unchanged).
void set_element(Likelihood& lik, const LikParamPrior& pr, double x) {
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  Eigen::MatrixXd& m = p.at(pr.name);
  m(pr.index) = x;
  lik.set_params({{pr.name, m}});
}
}  // namespace

LatentHmc::LatentHmc(const Likelihood& lik, const std::vector<LikParamPrior>& priors,
                     const Eigen::MatrixXd& f, int steps, int warmup)
    : warmup_(warmup) {
  if (steps <= 0) return;
  for (std::size_t k = 0; k < priors.size(); ++k)
    if (priors[k].positive()) el_.push_back(static_cast<int>(k));
  if (el_.empty()) return;
  element_names(priors, el_, names_, index_);
  double ll = 0.0;
  Eigen::MatrixXd gf;
  Eigen::VectorXd gt;
  if (!lik.loglik_gradient(f, names_, index_, &ll, gf, gt)) {
    el_.clear();
    return;
  }
  steps_ = steps;
  restart_dual_averaging();
}

void LatentHmc::restart_dual_averaging() {
  da_.target = kTargetAccept;
  da_.restart(eps_);
}

double LatentHmc::log_target(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                             const Eigen::VectorXd& u, const Eigen::MatrixXd& mu0, const KernelSet& LK,
                             Eigen::MatrixXd& f, Eigen::VectorXd& grad) const {
  const int P = static_cast<int>(el_.size());
  const int n = static_cast<int>(mu0.rows()), q = static_cast<int>(mu0.cols());
  grad.resize(u.size());
  double lp = 0.0;
  for (int k = 0; k < P; ++k) {
    const LikParamPrior& pr = priors[el_[k]];
    const double t = u[k], x = std::exp(t);
    if (!std::isfinite(t) || !(x > 0) || !std::isfinite(x)) return kNegInf;
    const double l0 = lik_param_log_prior(pr, t);
    if (!std::isfinite(l0)) return kNegInf;
    lp += l0;
    const double h = 1e-5;
    const double dl = (lik_param_log_prior(pr, t + h) - lik_param_log_prior(pr, t - h)) / (2 * h);
    grad[k] = std::isfinite(dl) ? dl : 0.0;
    try {
      set_element(lik, pr, x);
    } catch (std::invalid_argument&) {
      return kNegInf;
    }
  }
  f.resize(n, q);
  for (int j = 0; j < q; ++j) {
    const Eigen::Map<const Eigen::VectorXd> z(u.data() + P + static_cast<long>(n) * j, n);
    f.col(j) = mu0.col(j) + LK[j].triangularView<Eigen::Lower>() * z;
    lp -= 0.5 * z.squaredNorm();
  }
  double ll = 0.0;
  Eigen::MatrixXd gf;
  Eigen::VectorXd gt;
  if (!lik.loglik_gradient(f, names_, index_, &ll, gf, gt) || !std::isfinite(ll)) return kNegInf;
  for (int k = 0; k < P; ++k) grad[k] += gt[k];
  for (int j = 0; j < q; ++j) {
    const Eigen::Map<const Eigen::VectorXd> z(u.data() + P + static_cast<long>(n) * j, n);
    grad.segment(P + static_cast<long>(n) * j, n) =
        LK[j].triangularView<Eigen::Lower>().transpose() * gf.col(j) - z;
  }
  if (!grad.allFinite()) return kNegInf;
  return lp + ll;
}

double LatentHmc::step(Likelihood& lik, const std::vector<LikParamPrior>& priors, Eigen::MatrixXd& f,
                       const Eigen::MatrixXd& mu0, const KernelSet& LK, Rng& rng, int warmup_it) {
  if (!active()) return 0.0;
  const int P = static_cast<int>(el_.size());
  const int n = static_cast<int>(f.rows()), q = static_cast<int>(f.cols());
  const int d = P + n * q;
  // the current point in u
  const std::map<std::string, Eigen::MatrixXd> p0 = lik.params();
  Eigen::VectorXd u0(d);
  for (int k = 0; k < P; ++k) {
    const LikParamPrior& pr = priors[el_[k]];
    u0[k] = std::log(p0.at(pr.name)(pr.index));
  }
  for (int j = 0; j < q; ++j)
    u0.segment(P + static_cast<long>(n) * j, n) =
        LK[j].triangularView<Eigen::Lower>().solve(f.col(j) - mu0.col(j));
  Eigen::MatrixXd fx;
  Eigen::VectorXd g;
  const double l0 = log_target(lik, priors, u0, mu0, LK, fx, g);
  double acc = 0.0;
  if (std::isfinite(l0)) {
    Eigen::VectorXd p(d);
    for (int i = 0; i < d; ++i) p[i] = rng.norm();
    const double h0 = l0 - 0.5 * p.squaredNorm();
    const double e = eps_ * (0.9 + 0.2 * rng.unif());
    Eigen::VectorXd u = u0;
    double l = l0;
    auto metric_t = [&](const Eigen::VectorXd& v) -> Eigen::VectorXd {
      return dense_ ? Eigen::VectorXd(R_.triangularView<Eigen::Lower>().transpose() * v) : v;
    };
    auto metric = [&](const Eigen::VectorXd& v) -> Eigen::VectorXd {
      return dense_ ? Eigen::VectorXd(R_.triangularView<Eigen::Lower>() * v) : v;
    };
    for (int s = 0; s < steps_ && std::isfinite(l); ++s) {
      p += 0.5 * e * metric_t(g);
      u += e * metric(p);
      l = log_target(lik, priors, u, mu0, LK, fx, g);
      if (std::isfinite(l)) p += 0.5 * e * metric_t(g);
    }
    if (std::isfinite(l)) {
      const double dh = l - 0.5 * p.squaredNorm() - h0;
      acc = std::isfinite(dh) ? (dh >= 0 ? 1.0 : std::exp(dh)) : 0.0;
      if (std::log(rng.unif()) < dh) {
        f = fx;  // the likelihood holds the end point's parameter values
        u0 = u;
      } else {
        lik.set_params(p0);
      }
    } else {
      lik.set_params(p0);
    }
  }
  if (warmup_it > 0) {
    eps_ = std::exp(da_.update(acc));
    // the metric's window
    ++wn_;
    if (wn_ == 1) {
      wmean_ = Eigen::VectorXd::Zero(d);
      wm2_ = Eigen::MatrixXd::Zero(d, d);
    }
    const Eigen::VectorXd dx = u0 - wmean_;
    wmean_ += dx / static_cast<double>(wn_);
    wm2_.selfadjointView<Eigen::Lower>().rankUpdate(dx, (wn_ - 1.0) / wn_);
    if (warmup_it == next_ && next_ <= 0.85 * warmup_) {
      const double nn = static_cast<double>(wn_);
      Eigen::MatrixXd S = wm2_.selfadjointView<Eigen::Lower>();
      S /= (nn - 1.0);
      S *= nn / (nn + 5.0);
      S.diagonal().array() += 1e-3 * 5.0 / (nn + 5.0);
      Eigen::LLT<Eigen::MatrixXd> llt(S);
      if (llt.info() == Eigen::Success) {
        R_ = llt.matrixL();
        dense_ = true;
        eps_ = 0.5 * eps_;
        restart_dual_averaging();
      }
      wn_ = 0;
      next_ *= 2;
    }
    if (warmup_it == warmup_) eps_ = std::exp(da_.log_eps_bar);
  }
  return acc;
}

}  // namespace augp
