// Kernel hyperparameters sampled inside the Gibbs sweep: see hyper_sampler.h.
#include "hyper_sampler.h"
#include "param_sampler.h"

#include "likelihood.h"
#include "kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace augp {

namespace {
const double kNegInf = -std::numeric_limits<double>::infinity();
const double kLog2 = 0.69314718055994530942;
const double kLogSqrt2Pi = 0.91893853320467274178;
const double kLogPi = 1.14472988584940017414;
const double kTargetAccept = 0.3;
// Independence proposals: multivariate t with kIndDf degrees of freedom, centred at the
// mean of the second half of the warmup draws, scale kIndScale times their covariance.
const double kIndDf = 4.0;
const double kIndScale = 1.2;
// HMC (blocks with at least kHmcMinParams sampled parameters): target acceptance of the
// step-size adaptation, trajectory length in whitened units and the most leapfrog steps
// per trajectory; dual-averaging constants (gamma, t0, kappa); warmup buffers before the
// first and after the last window of the inverse-mass estimate (fractions of warmup) and
// the first window's length.
const int kHmcMinParams = 5;
const double kHmcTarget = 0.75;
const double kHmcLength = 1.5;
const int kHmcMaxSteps = 16;
const double kDaGamma = 0.05, kDaT0 = 10.0, kDaKappa = 0.75;
const double kHmcInitBuf = 0.15, kHmcTermBuf = 0.1;
const int kHmcFirstWindow = 25;
// The largest number of input pairs whose squared distances a block caches (8 bytes
// each).
const long kMaxCachedPairs = 2500000;
}  // namespace

double hyper_log_prior(const HyperPrior& p, double theta) {
  if (!std::isfinite(theta)) return kNegInf;
  // x and log |dx / dtheta|
  const double lx = p.on_sd ? theta / 2.0 : theta;
  const double x = std::exp(lx);
  const double jac = p.on_sd ? lx - kLog2 : lx;
  if (!(x > 0.0) || !std::isfinite(x)) return kNegInf;
  double lp;
  switch (p.family) {
    case HyperPrior::INV_GAMMA:
      lp = p.a * std::log(p.b) - std::lgamma(p.a) - (p.a + 1.0) * lx - p.b / x;
      break;
    case HyperPrior::HALF_T: {
      const double z = x / p.b;
      lp = kLog2 + std::lgamma((p.a + 1.0) / 2.0) - std::lgamma(p.a / 2.0) -
           0.5 * (std::log(p.a) + kLogPi) - std::log(p.b) -
           (p.a + 1.0) / 2.0 * std::log1p(z * z / p.a);
      break;
    }
    case HyperPrior::LOG_NORMAL: {
      const double z = (lx - p.a) / p.b;
      lp = -lx - std::log(p.b) - kLogSqrt2Pi - 0.5 * z * z;
      break;
    }
    case HyperPrior::GAMMA:
      lp = p.a * std::log(p.b) - std::lgamma(p.a) + (p.a - 1.0) * lx - p.b * x;
      break;
    case HyperPrior::HALF_NORMAL: {
      const double z = x / p.b;
      lp = kLog2 - std::log(p.b) - kLogSqrt2Pi - 0.5 * z * z;
      break;
    }
    default:
      return kNegInf;
  }
  return lp + jac;
}

double hyper_log_prior_grad(const HyperPrior& p, double theta) {
  if (p.family == HyperPrior::FIXED || !std::isfinite(theta)) return 0.0;
  // chain rule through lx = log x: dlx / dtheta, and d(log density of x + lx) / dlx
  const double c = p.on_sd ? 0.5 : 1.0;
  const double lx = p.on_sd ? theta / 2.0 : theta;
  const double x = std::exp(lx);
  double d;
  switch (p.family) {
    case HyperPrior::INV_GAMMA:
      d = -(p.a + 1.0) + p.b / x;
      break;
    case HyperPrior::HALF_T: {
      const double z2 = (x / p.b) * (x / p.b) / p.a;
      d = -(p.a + 1.0) * z2 / (1.0 + z2);
      break;
    }
    case HyperPrior::LOG_NORMAL:
      d = -1.0 - (lx - p.a) / (p.b * p.b);
      break;
    case HyperPrior::GAMMA:
      d = (p.a - 1.0) - p.b * x;
      break;
    case HyperPrior::HALF_NORMAL:
      d = -(x / p.b) * (x / p.b);
      break;
    default:
      return 0.0;
  }
  return c * (d + 1.0);
}

void hyper_check_prior(const HyperPrior& p, const char* what) {
  const std::string w(what);
  const bool finite = std::isfinite(p.a) && std::isfinite(p.b);
  switch (p.family) {
    case HyperPrior::FIXED:
      return;
    case HyperPrior::INV_GAMMA:
    case HyperPrior::HALF_T:
    case HyperPrior::GAMMA:
      if (!finite || !(p.a > 0.0) || !(p.b > 0.0))
        throw std::invalid_argument(w + ": both prior parameters must be positive and finite");
      return;
    case HyperPrior::LOG_NORMAL:
    case HyperPrior::HALF_NORMAL:
      if (!finite || !(p.b > 0.0))
        throw std::invalid_argument(w + ": the prior's scale must be positive and finite");
      return;
    default:
      throw std::invalid_argument(w + ": unknown prior family " + std::to_string(p.family));
  }
}

Eigen::MatrixXd kernel_matrix_jitter(const KernelSpec& spec, const Eigen::MatrixXd& X,
                                     double jitter) {
  Eigen::MatrixXd K = kernel_eval(spec, X, X, nullptr);
  K.diagonal().array() += jitter;
  return K;
}

namespace {
// Lower Cholesky factor of K into L; false if K is not numerically positive definite.
// Reads K's lower triangle only.
bool chol_lower(const Eigen::MatrixXd& K, Eigen::MatrixXd& L) {
  const long n = K.rows();
  if (L.rows() != n || L.cols() != n) L.resize(n, n);
  for (long j = 0; j < n; ++j) L.col(j).tail(n - j) = K.col(j).tail(n - j);
  if (!chol_lower_inplace(L)) return false;
  L.triangularView<Eigen::StrictlyUpper>().setZero();
  return true;
}
}  // namespace

HyperBlock::HyperBlock(const KernelSpec& spec, const std::vector<HyperPrior>& priors,
                       const std::vector<int>& cols, const Eigen::MatrixXd& X, double jitter,
                       int moves, int warmup)
    : spec_(spec), priors_(priors), cols_(cols), X_(X), jitter_(jitter), moves_(moves),
      warmup_(warmup) {
  if (moves_ < 1) throw std::invalid_argument("at least one Metropolis move per sweep is needed");
  if (static_cast<int>(priors_.size()) != spec_.n_params())
    throw std::invalid_argument("one prior per kernel parameter is needed");
  if (cols_.empty()) throw std::invalid_argument("a hyperparameter block serves no column");
  for (int k = 0; k < spec_.n_params(); ++k) {
    hyper_check_prior(priors_[k], "prior");
    if (priors_[k].family != HyperPrior::FIXED) free_.push_back(k);
  }
  bool has_sum = false;
  for (int c : spec_.code) has_sum = has_sum || c == K_SUM;
  if (!has_sum && spec_.n_params() > 0 && priors_[0].family != HyperPrior::FIXED &&
      priors_[0].on_sd)
    scale_index_ = 0;
  const long n = X_.rows(), d = X_.cols(), pairs = n * (n + 1) / 2;
  if (spec_.code.size() == 1 && spec_.code[0] == K_SE && spec_.all_inputs() &&
      (spec_.nls[0] == 1 || spec_.nls[0] == d) && pairs * spec_.nls[0] <= kMaxCachedPairs) {
    // one block of pairs per lengthscale: the squared distance, or the squared
    // difference in each input for one lengthscale per input
    const long nb = spec_.nls[0];
    d2_.resize(pairs * nb);
    long k = 0;
    for (long j = 0; j < n; ++j)
      for (long i = j; i < n; ++i, ++k) {
        if (nb == 1) {
          d2_[k] = (X_.row(i) - X_.row(j)).squaredNorm();
        } else {
          for (long c = 0; c < d; ++c) {
            const double t = X_(i, c) - X_(j, c);
            d2_[c * pairs + k] = t * t;
          }
        }
      }
  }
  if (!kernel_at(spec_.theta, K_) || !chol_lower(K_, LK_))
    throw std::runtime_error("the starting kernel matrix is not positive definite");
  cur_.resize(cols_.size());
  prop_.resize(cols_.size());
  const int p = static_cast<int>(free_.size());
  log_s_ = p > 0 ? std::log(2.38 / std::sqrt(static_cast<double>(p))) : 0.0;
  set_proposal(0.04 * Eigen::MatrixXd::Identity(p, p));
  mean_ = Eigen::VectorXd::Zero(p);
  m2_ = Eigen::MatrixXd::Zero(p, p);
  lmean_ = Eigen::VectorXd::Zero(p);
  lm2_ = Eigen::MatrixXd::Zero(p, p);
  hmc_ = p >= kHmcMinParams;
  if (hmc_) {
    hmc_chol_ = 0.2 * Eigen::MatrixXd::Identity(p, p);
    wmean_ = Eigen::VectorXd::Zero(p);
    wm2_ = Eigen::MatrixXd::Zero(p, p);
    hmc_reset_dual(0.0);
    // windows of the inverse-mass estimate: doubling from kHmcFirstWindow between the
    // buffers, the last one stretched to the final buffer
    hmc_init_ = static_cast<int>(kHmcInitBuf * warmup_);
    hmc_last_ = warmup_ - static_cast<int>(kHmcTermBuf * warmup_);
    int start = hmc_init_, len = kHmcFirstWindow;
    while (start + len <= hmc_last_) {
      int end = start + len;
      if (end + 2 * len > hmc_last_) end = hmc_last_;
      win_ends_.push_back(end);
      start = end;
      len *= 2;
    }
    n_leap_ = hmc_n_steps(log_eps_);
  }
}

void HyperBlock::hmc_reset_dual(double log_eps) {
  log_eps_ = log_eps;
  log_eps_bar_ = log_eps;
  da_mu_ = std::log(10.0) + log_eps;
  da_h_ = 0.0;
  da_t_ = 0;
}

int HyperBlock::hmc_n_steps(double log_eps) const {
  const double L = std::ceil(kHmcLength * std::exp(-log_eps));
  return static_cast<int>(std::min(std::max(L, 1.0), static_cast<double>(kHmcMaxSteps)));
}

void HyperBlock::hmc_adapt(const std::vector<double>& theta, double accept_prob, int warmup_it) {
  const int p = static_cast<int>(free_.size());
  // dual averaging on log eps
  ++da_t_;
  const double t = static_cast<double>(da_t_);
  const double w = 1.0 / (t + kDaT0);
  da_h_ = (1.0 - w) * da_h_ + w * (kHmcTarget - accept_prob);
  log_eps_ = da_mu_ - std::sqrt(t) / kDaGamma * da_h_;
  log_eps_ = std::min(std::max(log_eps_, std::log(1e-4)), std::log(10.0));
  const double eta = std::pow(t, -kDaKappa);
  log_eps_bar_ = eta * log_eps_ + (1.0 - eta) * log_eps_bar_;
  if (warmup_it > hmc_init_ && warmup_it <= hmc_last_ && !win_ends_.empty()) {
    Eigen::VectorXd x(p);
    for (int k = 0; k < p; ++k) x[k] = theta[free_[k]];
    ++wn_;
    const Eigen::VectorXd d = x - wmean_;
    wmean_ += d / static_cast<double>(wn_);
    wm2_ += d * (x - wmean_).transpose();
    if (std::find(win_ends_.begin(), win_ends_.end(), warmup_it) != win_ends_.end()) {
      if (wn_ > 2) {
        // the window's covariance shrunk toward 1e-3 I (weight 5 / (n + 5))
        const double nw = static_cast<double>(wn_);
        Eigen::MatrixXd cov = wm2_ / (nw - 1.0) * (nw / (nw + 5.0));
        cov.diagonal().array() += 1e-3 * 5.0 / (nw + 5.0);
        Eigen::MatrixXd L;
        if (!chol_lower(cov, L)) L = cov.diagonal().cwiseMax(1e-8).cwiseSqrt().asDiagonal();
        hmc_chol_ = L;
        hmc_reset_dual(log_eps_);
      }
      wn_ = 0;
      wmean_.setZero();
      wm2_.setZero();
    }
  }
  if (warmup_it == warmup_) log_eps_ = log_eps_bar_;
  n_leap_ = hmc_n_steps(log_eps_);
}

Eigen::VectorXd HyperBlock::marginal_grad(const std::vector<double>& theta,
                                          const Eigen::MatrixXd& kappa,
                                          const Eigen::MatrixXd& omega,
                                          const Eigen::MatrixXd& mu0,
                                          const std::vector<GaussianStep>& steps) const {
  const long n = X_.rows();
  // M = sum_j (a_j a_j' - C_j^-1), a_j = W^1/2 B^-1 r_j, C_j^-1 = W^1/2 B^-1 W^1/2
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (std::size_t k = 0; k < cols_.size(); ++k) {
    const int j = cols_[k];
    const Eigen::VectorXd& sw = steps[k].sqrt_omega();
    Eigen::VectorXd r(n);
    for (long i = 0; i < n; ++i)
      r[i] = sw[i] > 0.0 ? (kappa(i, j) - sw[i] * sw[i] * mu0(i, j)) / sw[i] : 0.0;
    const Eigen::VectorXd a = steps[k].solve_B(r).cwiseProduct(sw);
    const Eigen::MatrixXd Bi = steps[k].Binv_from_factor();
    M.noalias() += a * a.transpose();
    M -= sw.asDiagonal() * Bi * sw.asDiagonal();
  }
  const std::vector<double> g =
      kernel_grad_contract(spec_.with_theta(theta), X_, M);
  const int p = static_cast<int>(free_.size());
  Eigen::VectorXd out(p);
  for (int k = 0; k < p; ++k) {
    const int i = free_[k];
    out[k] = 0.5 * g[i];
  }
  return out;
}

double HyperBlock::log_target_grad(const std::vector<double>& theta, const Eigen::MatrixXd& kappa,
                                   const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                                   Eigen::VectorXd* grad) {
  const double lp = log_prior(theta);
  if (!std::isfinite(lp)) return kNegInf;
  if (!kernel_at(theta, Kp_)) return kNegInf;
  const double marg = log_marginal(Kp_, kappa, omega, mu0, prop_);
  if (!std::isfinite(marg)) return kNegInf;
  if (grad != nullptr) {
    *grad = marginal_grad(theta, kappa, omega, mu0, prop_);
    for (int k = 0; k < grad->size(); ++k)
      (*grad)[k] += hyper_log_prior_grad(priors_[free_[k]], theta[free_[k]]);
    if (!grad->allFinite()) return kNegInf;
  }
  return marg + lp;
}

bool HyperBlock::hmc_moves(const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                           const Eigen::MatrixXd& mu0, Rng& rng, int warmup_it, double* cur) {
  const int p = static_cast<int>(free_.size());
  // the gradient at the current theta, from the factors of B that step() just made
  Eigen::VectorXd g0 = marginal_grad(spec_.theta, kappa, omega, mu0, cur_);
  for (int k = 0; k < p; ++k) g0[k] += hyper_log_prior_grad(priors_[free_[k]], spec_.theta[free_[k]]);
  if (!g0.allFinite()) return false;
  const Eigen::MatrixXd& Lm = hmc_chol_;
  for (int m = 0; m < moves_; ++m) {
    const double eps = std::exp(log_eps_) * (0.8 + 0.4 * rng.unif());
    const int steps = n_leap_;
    Eigen::VectorXd rho(p);
    for (int k = 0; k < p; ++k) rho[k] = rng.norm();
    const double u = rng.unif();
    const double h0 = -(*cur + log_prior(spec_.theta)) + 0.5 * rho.squaredNorm();
    std::vector<double> th = spec_.theta;
    Eigen::VectorXd g = g0;
    double lt = kNegInf;
    // leapfrog in x (theta = Lm x): the force on x is Lm' grad
    rho += 0.5 * eps * (Lm.transpose() * g);
    for (int l = 0; l < steps; ++l) {
      const Eigen::VectorXd dth = eps * (Lm * rho);
      for (int k = 0; k < p; ++k) th[free_[k]] += dth[k];
      lt = log_target_grad(th, kappa, omega, mu0, &g);
      n_chol_ += static_cast<long>(cols_.size());
      if (!std::isfinite(lt)) break;
      rho += (l + 1 < steps ? 1.0 : 0.5) * eps * (Lm.transpose() * g);
    }
    double log_ratio = kNegInf;
    if (std::isfinite(lt)) log_ratio = h0 - (-lt + 0.5 * rho.squaredNorm());
    if (!std::isfinite(log_ratio)) log_ratio = kNegInf;
    const double accept_prob = std::exp(std::min(0.0, log_ratio));
    bool accept = false;
    if (std::log(u) < log_ratio) {
      // move to the end point: its factors of B are in prop_, its K in Kp_
      ++n_chol_;
      if (chol_lower(Kp_, LKp_)) {
        spec_.theta = th;
        K_.swap(Kp_);
        LK_.swap(LKp_);
        lk_stale_ = false;
        std::swap(cur_, prop_);
        *cur = lt - log_prior(th);
        g0 = g;
        accept = true;
      }
    }
    if (warmup_it > 0) {
      hmc_adapt(spec_.theta, accept_prob, warmup_it);
    } else {
      ++proposed_;
      if (accept) ++accepted_;
    }
  }
  return true;
}

void HyperBlock::set_proposal(const Eigen::MatrixXd& cov) {
  Eigen::MatrixXd L;
  if (!chol_lower(cov, L)) {
    // a degenerate covariance: keep its diagonal
    L = cov.diagonal().cwiseMax(1e-8).cwiseSqrt().asDiagonal();
  }
  prop_chol_ = L;
}

double HyperBlock::log_prior(const std::vector<double>& theta) const {
  double lp = 0.0;
  for (int k : free_) lp += hyper_log_prior(priors_[k], theta[k]);
  return lp;
}

double HyperBlock::log_marginal(const Eigen::MatrixXd& K, const Eigen::MatrixXd& kappa,
                                const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0,
                                std::vector<GaussianStep>& steps) const {
  double total = 0.0;
  for (std::size_t k = 0; k < cols_.size(); ++k) {
    const int j = cols_[k];
    const Eigen::VectorXd om = omega.col(j);
    if (!steps[k].factor(K, om)) return kNegInf;
    const Eigen::VectorXd& sw = steps[k].sqrt_omega();
    Eigen::VectorXd r(om.size());
    for (int i = 0; i < r.size(); ++i)
      r[i] = sw[i] > 0.0 ? (kappa(i, j) - om[i] * mu0(i, j)) / sw[i] : 0.0;
    const Eigen::VectorXd u = steps[k].solve_factor(r);
    total += -0.5 * steps[k].logdet_B() - 0.5 * u.squaredNorm();
  }
  return std::isfinite(total) ? total : kNegInf;
}

double HyperBlock::ind_log_density(const std::vector<double>& theta) const {
  const int p = static_cast<int>(free_.size());
  Eigen::VectorXd d(p);
  for (int k = 0; k < p; ++k) d[k] = theta[free_[k]] - lmean_[k];
  ind_chol_.triangularView<Eigen::Lower>().solveInPlace(d);
  return -0.5 * (kIndDf + p) * std::log1p(d.squaredNorm() / kIndDf);
}

void HyperBlock::adapt(const std::vector<double>& theta, double accept_prob, int warmup_it) {
  const int p = static_cast<int>(free_.size());
  const double gain = 1.0 / std::sqrt(static_cast<double>(warmup_it - reset_at_));
  log_s_ += gain * (accept_prob - kTargetAccept);
  log_s_ = std::min(std::max(log_s_, std::log(1e-3)), std::log(50.0));
  // Welford update of the free coordinates
  Eigen::VectorXd x(p);
  for (int k = 0; k < p; ++k) x[k] = theta[free_[k]];
  ++n_seen_;
  const Eigen::VectorXd d = x - mean_;
  mean_ += d / static_cast<double>(n_seen_);
  m2_ += d * (x - mean_).transpose();
  if (warmup_it > warmup_ / 2) {
    ++ln_;
    const Eigen::VectorXd e = x - lmean_;
    lmean_ += e / static_cast<double>(ln_);
    lm2_ += e * (x - lmean_).transpose();
  }
  if (warmup_it == warmup_ && ln_ > 2 * p + 5) {
    Eigen::MatrixXd cov = lm2_ / static_cast<double>(ln_ - 1);
    cov *= kIndScale * kIndScale;
    cov.diagonal().array() += 1e-6;
    Eigen::MatrixXd L;
    if (chol_lower(cov, L)) {
      ind_chol_ = L;
      have_ind_ = true;
    }
  }
  if (warmup_it == next_cov_) {
    next_cov_ *= 2;
    if (n_seen_ > 2 * p + 5) {
      Eigen::MatrixXd cov = m2_ / static_cast<double>(n_seen_ - 1);
      cov.diagonal().array() += 1e-6;
      set_proposal(cov);
      log_s_ = std::log(2.38 / std::sqrt(static_cast<double>(p)));
      reset_at_ = warmup_it - 1;
    }
  }
}

bool HyperBlock::step(const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                      const Eigen::MatrixXd& mu0, Eigen::MatrixXd& f, Rng& rng,
                      std::vector<Rng>& col_rngs, int warmup_it) {
  const int p = static_cast<int>(free_.size());
  double cur = log_marginal(K_, kappa, omega, mu0, cur_);
  n_chol_ += static_cast<long>(cols_.size());
  if (!std::isfinite(cur)) return false;
  if (hmc_ && !hmc_moves(kappa, omega, mu0, rng, warmup_it, &cur)) return false;
  const bool indep = warmup_it == 0 && have_ind_;
  // a proposal: the independence t after warmup, else the adaptive random walk
  auto propose = [&]() {
    Eigen::VectorXd z(p);
    for (int k = 0; k < p; ++k) z[k] = rng.norm();
    std::vector<double> th = spec_.theta;
    if (indep) {
      const double g = 2.0 * (rng.exp1() + rng.exp1());  // chi-square with 4 df
      Eigen::VectorXd t = ind_chol_.triangularView<Eigen::Lower>() * z;
      t *= std::sqrt(kIndDf / g);
      for (int k = 0; k < p; ++k) th[free_[k]] = lmean_[k] + t[k];
    } else {
      Eigen::VectorXd step = prop_chol_.triangularView<Eigen::Lower>() * z;
      step *= std::exp(log_s_);
      for (int k = 0; k < p; ++k) th[free_[k]] += step[k];
    }
    return th;
  };
  // log p(theta | aux) up to a constant (the marginal into prop_, its K into Kp_), or
  // -Inf; *marg receives the log marginal alone
  auto log_target = [&](const std::vector<double>& th, double* marg) {
    *marg = kNegInf;
    const double lp = log_prior(th);
    if (!std::isfinite(lp)) return kNegInf;
    if (!kernel_at(th, Kp_)) return kNegInf;
    *marg = log_marginal(Kp_, kappa, omega, mu0, prop_);
    n_chol_ += static_cast<long>(cols_.size());
    return std::isfinite(*marg) ? *marg + lp : kNegInf;
  };
  // moves to th (log marginal marg, factors in Kp_ / prop_) once K has a factor there
  auto move_to = [&](const std::vector<double>& th, double marg) {
    ++n_chol_;
    if (!chol_lower(Kp_, LKp_)) return false;
    spec_.theta = th;
    K_.swap(Kp_);
    LK_.swap(LKp_);
    lk_stale_ = false;
    std::swap(cur_, prop_);
    cur = marg;
    return true;
  };
  for (int m = 0; m < (p > 0 && !hmc_ ? moves_ : 0); ++m) {
    const double lt_x = cur + log_prior(spec_.theta);
    // log weights w = target / proposal density of the independence proposal
    const double lq_x = indep ? ind_log_density(spec_.theta) : 0.0;
    const std::vector<double> y1 = propose();
    const double u = rng.unif();
    double marg1;
    const double lt1 = log_target(y1, &marg1);
    const double lq1 = indep ? ind_log_density(y1) : 0.0;
    const double log_ratio = std::isfinite(lt1) ? (lt1 - lq1) - (lt_x - lq_x) : kNegInf;
    const double accept_prob = std::isfinite(log_ratio) ? std::exp(std::min(0.0, log_ratio)) : 0.0;
    const bool mh_accept = std::log(u) < log_ratio;
    const bool accept = mh_accept && move_to(y1, marg1);
    if (warmup_it > 0) {
      adapt(spec_.theta, accept_prob, warmup_it);
      continue;
    }
    ++proposed_;
    if (accept) ++accepted_;
    if (mh_accept || !indep) continue;
    // Delayed rejection (Tierney and Mira 1999) after a rejected independence proposal:
    // a second draw y2 from the same proposal, accepted with probability
    //   min(1, w(y2) / w(x) (1 - min(1, w(y1) / w(y2))) / (1 - min(1, w(y1) / w(x)))),
    // w = p(theta | aux) / q(theta), which keeps detailed balance for the two-stage
    // move. It needs no target value beyond those at x, y1 and y2, and a rejected
    // stage costs only the factor of B at its proposal.
    const std::vector<double> y2 = propose();
    const double u2 = rng.unif();
    double marg2;
    const double lt2 = log_target(y2, &marg2);
    ++proposed_;
    if (!std::isfinite(lt2)) continue;
    const double lw_x = lt_x - lq_x, lw1 = std::isfinite(lt1) ? lt1 - lq1 : kNegInf;
    const double lw2 = lt2 - ind_log_density(y2);
    if (!(lw2 > lw1)) continue;  // 1 - min(1, w(y1) / w(y2)) = 0
    const double log_ratio2 = (lw2 - lw_x) + std::log1p(-std::exp(lw1 - lw2)) -
                              std::log1p(-std::exp(lw1 - lw_x));
    if (std::log(u2) < log_ratio2 && move_to(y2, marg2)) ++accepted_;
  }
  if (lk_stale_ && !refresh_factor()) return false;
  for (std::size_t k = 0; k < cols_.size(); ++k) {
    const int j = cols_[k];
    const Eigen::VectorXd m0 = mu0.col(j);
    f.col(j) = cur_[k].draw(K_, LK_, kappa.col(j), m0, col_rngs[k]);
  }
  return true;
}

void HyperBlock::set_scale(double t) {
  const double r = std::exp(t - spec_.theta[scale_index_]);
  spec_.theta[scale_index_] = t;
  // K = v C + j I: the kernel part scales by v' / v, the jitter stays; the factor is
  // made when next needed
  const long n = K_.rows();
  for (long c = 0; c < n; ++c) K_.col(c).tail(n - c) *= r;
  K_.diagonal().array() += (1.0 - r) * jitter_;
  lk_stale_ = true;
}

bool HyperBlock::refresh_factor() const {
  ++n_chol_;
  if (!chol_lower(K_, LK_)) return false;
  lk_stale_ = false;
  return true;
}

const Eigen::MatrixXd& HyperBlock::LK() const {
  if (lk_stale_ && !refresh_factor())
    throw std::runtime_error("the kernel matrix is not numerically positive definite");
  return LK_;
}

void HyperBlock::spectrum(const Eigen::MatrixXd** U, const Eigen::VectorXd** lam) {
  std::vector<double> key = spec_.theta;
  key[scale_index_] = 0.0;
  if (!(have_eig_ && key == eig_key_)) {
    // C = (K - j I) / v from K's lower triangle (the kernel part at the current
    // parameters other than v)
    const long n = K_.rows();
    const double v = std::exp(spec_.theta[scale_index_]);
    Eigen::MatrixXd C(n, n);
    for (long c = 0; c < n; ++c) C.col(c).tail(n - c) = K_.col(c).tail(n - c) / v;
    C.diagonal().array() -= jitter_ / v;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C);  // reads the lower triangle
    eig_vec_ = es.eigenvectors();
    // C is positive semi-definite; eigenvalues within rounding of 0 (below n eps times
    // the largest) are set to 0, so that the jitter alone holds those directions whatever
    // v (otherwise a large v would inflate rounding noise into prior variance there)
    const double cut = static_cast<double>(n) * std::numeric_limits<double>::epsilon() *
                       std::max(es.eigenvalues().maxCoeff(), 0.0);
    eig_val_ = es.eigenvalues();
    for (long i = 0; i < n; ++i)
      if (!(eig_val_[i] > cut)) eig_val_[i] = 0.0;
    eig_key_ = key;
    have_eig_ = true;
    ++n_eig_;
  }
  *U = &eig_vec_;
  *lam = &eig_val_;
}

bool HyperBlock::kernel_at(const std::vector<double>& theta, Eigen::MatrixXd& K) const {
  if (d2_.size() == 0) {
    K = kernel_matrix_jitter(spec_.with_theta(theta), X_, jitter_);
    return K.allFinite();
  }
  const long n = X_.rows(), pairs = n * (n + 1) / 2, nb = spec_.nls[0];
  const double v = std::exp(theta[0]);
  // the exponent -sum_c d2_c / (2 l_c^2), then v exp(.) in one vectorised pass
  if (nb == 1) {
    kv_ = (-0.5 * std::exp(-2.0 * theta[1]) * d2_.head(pairs)).exp() * v;
  } else {
    kv_ = -0.5 * std::exp(-2.0 * theta[1]) * d2_.head(pairs);
    for (long c = 1; c < nb; ++c)
      kv_ -= 0.5 * std::exp(-2.0 * theta[1 + c]) * d2_.segment(c * pairs, pairs);
    kv_ = kv_.exp() * v;
  }
  if (!kv_.allFinite()) return false;
  if (K.rows() != n || K.cols() != n) K.setZero(n, n);
  long k = 0;
  for (long j = 0; j < n; ++j) {
    K.col(j).tail(n - j) = kv_.segment(k, n - j).matrix();
    k += n - j;
  }
  K.diagonal().array() += jitter_;
  return true;
}

}  // namespace augp
