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
                     const Eigen::MatrixXd& mu0, const KernelSet& LK, HyperBlock* block,
                     DirectionalSlice& sampler, Rng& rng, int warmup_it, int updates) {
  std::string name;
  int index = 0;
  if (updates < 1 || !lik.param_flow(&name, &index)) return;
  const LikParamPrior* pr = nullptr;
  for (const LikParamPrior& p : priors)
    if (p.name == name && p.index == index && p.positive()) pr = &p;
  if (!pr) return;
  const int q = static_cast<int>(f.cols()), dim = block ? 2 : 1;
  if (sampler.dim() != dim)
    throw std::invalid_argument("param_flow_move: the sampler's dimension does not match");
  if (block && static_cast<int>(block->cols().size()) != q)
    throw std::invalid_argument("param_flow_move: the block must serve every latent column");
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  double& x = element(p, *pr);
  double lo = 0.0, hi = 0.0;
  lik.param_flow_range(f, &lo, &hi);
  if (!(lo < 0.0 && hi > 0.0)) return;
  Eigen::VectorXd y0(dim);
  y0[0] = std::log(x);
  const Eigen::MatrixXd* U = nullptr;
  const Eigen::VectorXd* lam = nullptr;
  double jit = 0.0;
  if (block) {
    y0[1] = block->scale_theta();
    block->spectrum(&U, &lam);
    jit = block->jitter();
  }
  Eigen::MatrixXd F;
  Eigen::VectorXd z, s2;
  // the density of y = (t, log v) given the rates (see the header)
  auto log_target = [&](const Eigen::VectorXd& y) {
    const double d = y[0] - y0[0];
    if (!(d > lo && d < hi)) return kNegInf;
    double lp = lik_param_log_prior(*pr, y[0]);
    if (block) lp += block->scale_log_prior(y[1]);
    if (!std::isfinite(lp)) return kNegInf;
    lp += lik.param_flow_map(f, d, F);
    if (block) {
      // log N(F_j; mu0_j, U diag(s2) U') with s2 = v lam + jitter
      s2 = (std::exp(y[1]) * lam->array() + jit).matrix();
      const double ld = s2.array().log().sum();
      for (int j = 0; j < q; ++j) {
        z.noalias() = U->transpose() * (F.col(j) - mu0.col(j));
        lp -= 0.5 * (ld + (z.array().square() / s2.array()).sum());
      }
    } else {
      for (int j = 0; j < q; ++j) {
        z = LK[j].triangularView<Eigen::Lower>().solve((F.col(j) - mu0.col(j)).eval());
        lp -= 0.5 * z.squaredNorm();
      }
    }
    return std::isfinite(lp) ? lp : kNegInf;
  };
  Eigen::VectorXd y = y0;
  sampler.step(log_target, y, rng, warmup_it, updates);
  if (y == y0) return;
  const double d = y[0] - y0[0];
  if (d != 0.0) {
    lik.param_flow_map(f, d, F);
    f = F;
    x = std::exp(y[0]);
    lik.set_params(p);
  }
  if (block && y[1] != y0[1]) block->set_scale(y[1]);
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

namespace {
// A block's kernel in the eigenbasis of C (HyperBlock::spectrum): K(t) = U diag(s(t)^2) U',
// s(t)^2 = e^t lam + jitter.
struct ScaleFrame {
  const Eigen::MatrixXd* U = nullptr;
  const Eigen::VectorXd* lam = nullptr;
  double jitter = 0.0;
  Eigen::ArrayXd sd(double t) const { return (std::exp(t) * lam->array() + jitter).sqrt(); }
};

ScaleFrame scale_frame(HyperBlock& b) {
  ScaleFrame fr;
  b.spectrum(&fr.U, &fr.lam);
  fr.jitter = b.jitter();
  return fr;
}
}  // namespace

JointScaleIndex joint_scale_index(const std::vector<HyperBlock>& blocks,
                                  const std::vector<LikParamPrior>& priors, int n_latent) {
  JointScaleIndex idx;
  for (std::size_t k = 0; k < priors.size(); ++k)
    if (priors[k].positive()) idx.params.push_back(static_cast<int>(k));
  if (idx.params.empty()) return JointScaleIndex();
  for (std::size_t g = 0; g < blocks.size(); ++g)
    if (blocks[g].has_scale()) idx.blocks.push_back(static_cast<int>(g));
  idx.shift = n_latent == 1 && blocks.size() == 1;
  if (idx.blocks.empty() && !idx.shift) return JointScaleIndex();
  return idx;
}

void joint_scale_move(Likelihood& lik, const std::vector<LikParamPrior>& priors,
                      std::vector<HyperBlock>& blocks, const JointScaleIndex& idx,
                      Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, int level,
                      DirectionalSlice& sampler, Rng& rng, int warmup_it) {
  const int nb = static_cast<int>(idx.blocks.size()), np = static_cast<int>(idx.params.size());
  const int ns = idx.shift ? 1 : 0, kp = nb + ns;  // kp: the first parameter coordinate
  const long n = f.rows();
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  const std::map<std::string, Eigen::MatrixXd> p0 = p;
  Eigen::VectorXd x(kp + np);
  for (int b = 0; b < nb; ++b) x[b] = blocks[idx.blocks[b]].scale_theta();
  for (int k = 0; k < np; ++k) x[kp + k] = std::log(element(p, priors[idx.params[k]]));
  const Eigen::MatrixXd W = f - mu0;
  // per block: its frame, the eigen-coordinates U'(f_j - mu0_j) of its columns and s(t0)
  std::vector<ScaleFrame> fr(nb);
  std::vector<Eigen::MatrixXd> Wh(nb);
  std::vector<Eigen::ArrayXd> s0(nb);
  for (int b = 0; b < nb; ++b) {
    HyperBlock& hb = blocks[idx.blocks[b]];
    fr[b] = scale_frame(hb);
    const std::vector<int>& cols = hb.cols();
    Wh[b].resize(n, cols.size());
    for (std::size_t k = 0; k < cols.size(); ++k) Wh[b].col(k).noalias() = fr[b].U->transpose() * W.col(cols[k]);
    s0[b] = fr[b].sd(x[b]);
  }
  // The level (one column). With the variance (nb = 1), in the eigen-coordinates:
  // uh = U'1, wh = U'w; scaled: zh = wh / s0 (z = S0^-1 w, S(t) = U diag(s(t)) U'), the
  // level g = mean(z) = uh'zh / n; apart: c = 1'S0^-1 w / 1'S0^-1 1, hh = U'h =
  // (wh - c uh) / s0; centred: c = mean(w). Without it (nb = 0) the level is c = mean(w)
  // in every system, with a = u'u, b = u'z (u = L^-1 1, z = L^-1 w).
  const bool apart = level == kLevelApart, centred = level == kLevelCentred;
  Eigen::ArrayXd uh, wh, zh, hh;
  double c0 = 0.0, a = 0.0, b_lin = 0.0, uz = 0.0;
  if (ns) {
    if (nb) {
      uh = (fr[0].U->transpose() * Eigen::VectorXd::Ones(n)).array();
      wh = Wh[0].col(0).array();
      if (centred) {
        c0 = W.col(0).mean();
      } else if (apart) {
        c0 = (uh * wh / s0[0]).sum() / (uh.square() / s0[0]).sum();
        hh = (wh - c0 * uh) / s0[0];
      } else {
        zh = wh / s0[0];
        uz = (uh * zh).sum();
        c0 = uz / static_cast<double>(n);
      }
    } else {
      c0 = W.col(0).mean();
      const auto tri = blocks[0].LK().triangularView<Eigen::Lower>();
      const Eigen::VectorXd u = tri.solve(Eigen::VectorXd::Ones(n));
      const Eigen::VectorXd z = tri.solve(W.col(0));
      a = u.squaredNorm();
      b_lin = u.dot(z);
    }
    x[nb] = c0;
  }
  const Eigen::VectorXd x0 = x;
  Eigen::MatrixXd F = f;
  Eigen::VectorXd tmp(n);
  // F at y
  auto latent_at = [&](const Eigen::VectorXd& y) {
    if (ns) {
      const double e = y[nb] - c0;
      if (!nb || centred) {
        F.col(0) = f.col(0).array() + e;
      } else if (apart) {
        tmp.noalias() = *fr[0].U * (fr[0].sd(y[0]) * hh).matrix();
        F.col(0) = mu0.col(0) + tmp;
        F.col(0).array() += y[nb];
      } else {
        tmp.noalias() = *fr[0].U * (fr[0].sd(y[0]) * (zh + e * uh)).matrix();
        F.col(0) = mu0.col(0) + tmp;
      }
      return;
    }
    for (int b = 0; b < nb; ++b) {
      const Eigen::ArrayXd r = fr[b].sd(y[b]) / s0[b];
      const std::vector<int>& cols = blocks[idx.blocks[b]].cols();
      for (std::size_t k = 0; k < cols.size(); ++k) {
        tmp.noalias() = *fr[b].U * (r * Wh[b].col(k).array()).matrix();
        F.col(cols[k]) = mu0.col(cols[k]) + tmp;
      }
    }
  };
  auto log_target = [&](const Eigen::VectorXd& y) {
    double lp = 0.0;
    for (int b = 0; b < nb; ++b) lp += blocks[idx.blocks[b]].scale_log_prior(y[b]);
    if (ns) {
      const double e = y[nb] - c0;
      if (!nb) {
        lp -= 0.5 * (a * e * e + 2.0 * b_lin * e);
      } else if (centred) {
        // log N(w + e 1; 0, K(t))
        const Eigen::ArrayXd s2 = fr[0].sd(y[0]).square();
        lp -= 0.5 * (s2.log().sum() + ((wh + e * uh).square() / s2).sum());
      } else if (apart) {
        // log(1'S(t)^-1 1) - ||c S(t)^-1 1 + h||^2 / 2
        const Eigen::ArrayXd q = uh / fr[0].sd(y[0]);
        lp += std::log((uh * q).sum()) - 0.5 * (y[nb] * q + hh).square().sum();
      } else {
        // -||z0 + e 1||^2 / 2 up to a constant
        lp -= 0.5 * (static_cast<double>(n) * e * e + 2.0 * e * uz);
      }
    }
    for (int k = 0; k < np; ++k) lp += lik_param_log_prior(priors[idx.params[k]], y[kp + k]);
    if (!std::isfinite(lp)) return kNegInf;
    for (int k = 0; k < np; ++k) {
      const double v = std::exp(y[kp + k]);
      if (!(v > 0 && std::isfinite(v))) return kNegInf;
      element(p, priors[idx.params[k]]) = v;
    }
    try {
      lik.set_params(p);
    } catch (std::invalid_argument&) {
      return kNegInf;
    }
    latent_at(y);
    const double ll = lik.loglik(F);
    return std::isfinite(ll) ? lp + ll : kNegInf;
  };
  sampler.step(log_target, x, rng, warmup_it, sampler.cycles(kJointCycles));
  // the state at the accepted x (every evaluation overwrote the parameters and F)
  if (x == x0) {
    lik.set_params(p0);
    return;
  }
  for (int k = 0; k < np; ++k) element(p, priors[idx.params[k]]) = std::exp(x[kp + k]);
  lik.set_params(p);
  latent_at(x);
  f = F;
  for (int b = 0; b < nb; ++b)
    if (x[b] != x0[b]) blocks[idx.blocks[b]].set_scale(x[b]);
}

void block_scale_move(const Likelihood& lik, HyperBlock& block, Eigen::MatrixXd& f,
                      const Eigen::MatrixXd& mu0, Rng& rng) {
  if (!block.has_scale()) return;
  const double t0 = block.scale_theta();
  const long n = f.rows();
  const ScaleFrame fr = scale_frame(block);
  const std::vector<int>& cols = block.cols();
  Eigen::MatrixXd Wh(n, cols.size());
  for (std::size_t k = 0; k < cols.size(); ++k)
    Wh.col(k).noalias() = fr.U->transpose() * (f.col(cols[k]) - mu0.col(cols[k]));
  const Eigen::ArrayXd s0 = fr.sd(t0);
  Eigen::MatrixXd F = f;
  Eigen::VectorXd tmp(n);
  auto latent_at = [&](double t) {
    const Eigen::ArrayXd r = fr.sd(t) / s0;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      tmp.noalias() = *fr.U * (r * Wh.col(k).array()).matrix();
      F.col(cols[k]) = mu0.col(cols[k]) + tmp;
    }
  };
  auto log_target = [&](double t) {
    const double lp = block.scale_log_prior(t);
    if (!std::isfinite(lp)) return kNegInf;
    latent_at(t);
    const double ll = lik.loglik(F);
    return std::isfinite(ll) ? lp + ll : kNegInf;
  };
  // slice sampling (Neal 2003): stepping out with width 1, then shrinkage
  const double t1 = slice_update(log_target, t0, 1.0, rng);
  if (t1 == t0) return;
  latent_at(t1);
  f = F;
  block.set_scale(t1);
}

std::vector<double> lik_param_values(const Likelihood& lik, const std::vector<LikParamPrior>& priors) {
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  std::vector<double> out;
  out.reserve(priors.size());
  for (const LikParamPrior& pr : priors) out.push_back(element(p, pr));
  return out;
}

}  // namespace augp
