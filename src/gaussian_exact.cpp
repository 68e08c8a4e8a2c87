// The exact Gaussian GP regression model (see gaussian_exact.h for the formulas).
#include "gaussian_exact.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tri_inverse.h"

namespace augp {

namespace {

const double LOG_2PI = 1.8378770664093454836;

}  // namespace

GaussianExactModel::GaussianExactModel(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                       const Eigen::VectorXd& t, const Eigen::VectorXd& mu0,
                                       double jitter, const KernelSpec& spec, int threads)
    : X_(X), y_(y), t_(t), mu0_(mu0), spec_(spec), jitter_(jitter), threads_(std::max(1, threads)) {
  const int n = X.rows();
  if (n < 1) throw std::invalid_argument("the Gaussian model needs at least one row");
  if (y.size() != n || t.size() != n || mu0.size() != n)
    throw std::invalid_argument("y, the weights and the prior mean need one value per row of X");
  if (!y.allFinite() || !mu0.allFinite() || !X.allFinite())
    throw std::invalid_argument("y, X and the prior mean must be finite");
  for (int i = 0; i < n; ++i)
    if (!(t[i] > 0) || !std::isfinite(t[i])) throw std::invalid_argument("the weights must be positive");
  if (!(jitter >= 0) || !std::isfinite(jitter)) throw std::invalid_argument("the jitter must be >= 0");
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  set_level(all);
}

void GaussianExactModel::set_kernel(const KernelSpec& spec) {
  spec_ = spec;
  kept_par_.clear();
  factored_par_.clear();
}

void GaussianExactModel::set_level(const std::vector<int>& rows) {
  const int m = static_cast<int>(rows.size()), n = X_.rows();
  if (m < 1) throw std::invalid_argument("a level needs at least one row");
  Xs_.resize(m, X_.cols());
  ys_.resize(m);
  ts_.resize(m);
  mu0s_.resize(m);
  for (int k = 0; k < m; ++k) {
    const int i = rows[k];
    if (i < 0 || i >= n) throw std::invalid_argument("a level row is out of range");
    Xs_.row(k) = X_.row(i);
    ys_[k] = y_[i];
    ts_[k] = t_[i];
    mu0s_[k] = mu0_[i];
  }
  kept_par_.clear();
  factored_par_.clear();
}

double GaussianExactModel::constant(double sigma2) const {
  double c = 0.0;
  for (int i = 0; i < ts_.size(); ++i)
    c += 0.5 * ((ts_[i] - 1.0) * (LOG_2PI + std::log(sigma2)) + std::log(ts_[i]));
  return c;
}

bool GaussianExactModel::factor(const std::vector<double>& par, double* sigma2) {
  if (static_cast<int>(par.size()) != n_params())
    throw std::invalid_argument("the parameters must be the kernel's log parameters and log sigma");
  KernelSpec s = spec_;
  s.theta.assign(par.begin(), par.end() - 1);
  const double s2 = std::exp(2.0 * par.back());
  if (!(s2 > 0) || !std::isfinite(s2)) return false;
  *sigma2 = s2;
  const int n = level_size();
  A_ = kernel_eval(s, Xs_, Xs_, nullptr);
  for (int i = 0; i < n; ++i) A_(i, i) += jitter_ + s2 / ts_[i];
  // The factorisation stays on one thread: a threaded blocked form synchronises the
  // threads at every block column, which costs more than it gains on a busy machine.
  {
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(A_);
    if (llt.info() != Eigen::Success) return false;
  }
  logdet_ = 2.0 * A_.diagonal().array().log().sum();
  alpha_ = ys_ - mu0s_;
  A_.triangularView<Eigen::Lower>().solveInPlace(alpha_);
  A_.triangularView<Eigen::Lower>().transpose().solveInPlace(alpha_);
  return std::isfinite(logdet_) && alpha_.allFinite();
}

bool GaussianExactModel::factor_at(const std::vector<double>& par, double* sigma2, double* value) {
  if (!factored_par_.empty() && factored_par_ == par) {
    *sigma2 = factored_s2_;
    *value = factored_value_;
    return true;
  }
  factored_par_.clear();
  kept_par_.clear();
  double s2 = 0.0;
  if (!factor(par, &s2)) return false;
  const int n = level_size();
  const Eigen::VectorXd r = ys_ - mu0s_;
  const double v = -0.5 * r.dot(alpha_) - 0.5 * logdet_ - 0.5 * n * LOG_2PI - constant(s2);
  if (!std::isfinite(v)) return false;
  factored_par_ = par;
  factored_s2_ = s2;
  factored_value_ = v;
  *sigma2 = s2;
  *value = v;
  return true;
}

GaussianExactEval GaussianExactModel::evaluate(const std::vector<double>& par, bool grad) {
  GaussianExactEval out;
  double s2 = 0.0;
  if (!factor_at(par, &s2, &out.value)) return out;
  if (!grad) {
    out.ok = true;
    return out;
  }
  const int n = level_size();
  factored_par_.clear();              // A_ is overwritten below
  lower_tri_invert(A_, threads_);     // L^-1
  lower_tri_crossprod(A_, threads_);  // A^-1 = L^-T L^-1, full
  dinv_ = A_.diagonal();
  // M = alpha alpha' - A^-1, in place
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A_(i, j) = alpha_[i] * alpha_[j] - A_(i, j);
  KernelSpec s = spec_;
  s.theta.assign(par.begin(), par.end() - 1);
  out.grad = kernel_grad_contract(s, Xs_, A_);
  for (double& g : out.grad) g *= 0.5;
  double gs = 0.0;
  for (int i = 0; i < n; ++i) gs += s2 / ts_[i] * A_(i, i) - (ts_[i] - 1.0);
  out.grad.push_back(gs);
  for (double g : out.grad)
    if (!std::isfinite(g)) return out;
  out.ok = true;
  kept_par_ = par;
  kept_value_ = out.value;
  return out;
}

GaussianExactPosterior GaussianExactModel::posterior(const std::vector<double>& par) {
  const int n = level_size();
  GaussianExactPosterior p;
  double s2 = std::exp(2.0 * par.back());
  if (kept_par_.empty() || kept_par_ != par) {
    double value = 0.0;
    if (!factor_at(par, &s2, &value)) throw std::runtime_error("K + sigma^2 I has no Cholesky factor");
    factored_par_.clear();  // A_ is overwritten below
    lower_tri_invert(A_, threads_);
    dinv_.resize(n);
    // (A^-1)_jj = sum_{k >= j} (L^-1)_kj^2: the lower triangle of column j of L^-1
    for (int j = 0; j < n; ++j) dinv_[j] = A_.col(j).tail(n - j).squaredNorm();
    kept_par_ = par;
    kept_value_ = value;
  }
  p.value = kept_value_;
  p.alpha = alpha_;
  p.m.resize(n);
  p.v.resize(n);
  p.kappa.resize(n);
  p.omega.resize(n);
  double elik = 0.0;
  p.loo = 0.0;
  for (int i = 0; i < n; ++i) {
    p.loo += 0.5 * (std::log(dinv_[i]) - LOG_2PI - alpha_[i] * alpha_[i] / dinv_[i]);
    const double s = s2 / ts_[i];
    p.m[i] = ys_[i] - s * alpha_[i];
    p.v[i] = std::max(s - s * s * dinv_[i], 0.0);
    p.kappa[i] = ts_[i] * ys_[i] / s2;
    p.omega[i] = ts_[i] / s2;
    const double d = ys_[i] - p.m[i];
    elik += ts_[i] * (-0.5 * (LOG_2PI + std::log(s2)) - 0.5 * (d * d + p.v[i]) / s2);
  }
  p.kl = elik - p.value;
  return p;
}

}  // namespace augp
