// Hamiltonian Monte Carlo on p(f | y) in the coordinates of a fixed Gaussian
// approximation (see gradient_move.h).
#include "gradient_move.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

namespace augp {

GradientMove::GradientMove(double eps0, double target) : log_eps_(std::log(eps0)) {
  da_.target = target;
  da_.restart(eps0);
}

void GradientMove::set_adaptation(int warmup, int rank) {
  if (rank < 0) throw std::invalid_argument("the metric's rank must be >= 0");
  rank_ = rank;
  win_start_ = static_cast<int>(std::floor(0.3 * warmup)) + 1;
  win_end_ = static_cast<int>(std::floor(0.8 * warmup));
  // too short a window estimates nothing: keep the approximation's metric
  if (win_end_ - win_start_ + 1 < 20) rank_ = 0;
}

void GradientMove::make_basis(const Eigen::MatrixXd& LK, const RotatedGaussian& g, int n, int q) {
  const int r = std::min(rank_, n);
  Eigen::MatrixXd K = LK.triangularView<Eigen::Lower>() * LK.transpose();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(K);
  if (es.info() != Eigen::Success) return;  // no adaptation
  const Eigen::MatrixXd U = es.eigenvectors().rightCols(r);  // the r largest
  B_.assign(q, Eigen::MatrixXd());
  for (int c = 0; c < q; ++c) {
    Eigen::MatrixXd W = (*g.L)[c].triangularView<Eigen::Lower>().transpose() * U;
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(W);
    B_[c] = qr.householderQ() * Eigen::MatrixXd::Identity(n, r);
  }
}

Eigen::VectorXd GradientMove::project(const Eigen::MatrixXd& x) const {
  const int q = static_cast<int>(V_.size()), d = static_cast<int>(lam_.size());
  Eigen::VectorXd a = Eigen::VectorXd::Zero(d);
  for (int c = 0; c < q; ++c) a.noalias() += V_[c].transpose() * x.col(c);
  return a;
}

void GradientMove::add_low_rank(Eigen::MatrixXd& x, const Eigen::VectorXd& a) const {
  const Eigen::VectorXd s = project(x).cwiseProduct(a);
  for (int c = 0; c < static_cast<int>(V_.size()); ++c) x.col(c).noalias() += V_[c] * s;
}

void GradientMove::adapt_metric() {
  const int N = static_cast<int>(Y_.size());
  if (N < 10 || B_.empty()) {
    B_.clear();
    Y_.clear();
    return;
  }
  const int d = static_cast<int>(Y_[0].size()), q = static_cast<int>(B_.size()), r = d / q;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
  for (const Eigen::VectorXd& y : Y_) mean += y;
  mean /= N;
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(d, d);
  for (const Eigen::VectorXd& y : Y_) C.noalias() += (y - mean) * (y - mean).transpose();
  C /= (N - 1);
  // shrunk towards the approximation's metric (the identity in these coordinates)
  C = (N * C + 5.0 * Eigen::MatrixXd::Identity(d, d)) / (N + 5.0);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C);
  if (es.info() == Eigen::Success) {
    lam_ = es.eigenvalues().cwiseMax(1e-4).cwiseMin(1e4);
    V_.assign(q, Eigen::MatrixXd());
    for (int c = 0; c < q; ++c) V_[c] = B_[c] * es.eigenvectors().middleRows(c * r, r);
  }
  B_.clear();
  Y_.clear();
}

double GradientMove::step_size() const { return std::exp(frozen_ ? da_.log_eps_bar : log_eps_); }

bool GradientMove::energy(const Likelihood& lik, const Eigen::MatrixXd& z, const Eigen::MatrixXd& m0,
                          const Eigen::MatrixXd& LK, const RotatedGaussian& g, double* U,
                          Eigen::MatrixXd& grad, Eigen::MatrixXd* f_out) const {
  const int n = static_cast<int>(z.rows()), q = static_cast<int>(z.cols());
  const std::vector<Eigen::MatrixXd>& L = *g.L;
  Eigen::MatrixXd G = *g.mean;
  for (int c = 0; c < q; ++c) G.col(c).noalias() += L[c].triangularView<Eigen::Lower>() * z.col(c);
  Eigen::MatrixXd f = G * g.Q->transpose();
  const Eigen::MatrixXd R = G - m0;
  Eigen::MatrixXd A = LK.triangularView<Eigen::Lower>().solve(R);
  LK.transpose().triangularView<Eigen::Upper>().solveInPlace(A);
  const double prior = 0.5 * (R.array() * A.array()).sum();
  Eigen::MatrixXd gf, nh;
  Eigen::VectorXd ell;
  if (!lik.expected_loglik_derivs(f, Eigen::MatrixXd::Zero(n, q), Eigen::MatrixXd::Zero(1, q), gf, nh,
                                  ell))
    throw std::invalid_argument("the gradient move needs a likelihood with expected_loglik_derivs()");
  *U = prior - ell.sum();
  if (!std::isfinite(*U)) return false;
  A.noalias() -= gf * (*g.Q);
  grad.resize(n, q);
  for (int c = 0; c < q; ++c)
    grad.col(c).noalias() = L[c].triangularView<Eigen::Lower>().transpose() * A.col(c);
  if (!grad.allFinite()) return false;
  if (f_out) f_out->swap(f);
  return true;
}

double GradientMove::step(const Likelihood& lik, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
                          const Eigen::MatrixXd& LK, const RotatedGaussian& g, int leapfrog, Rng& rng,
                          int warmup_it) {
  const int n = static_cast<int>(f.rows()), q = static_cast<int>(f.cols());
  if (leapfrog <= 0) return 0.0;
  if (g.Q == nullptr || g.mean == nullptr || g.L == nullptr || g.Q->rows() != q ||
      g.mean->rows() != n || g.mean->cols() != q || static_cast<int>(g.L->size()) != q)
    throw std::invalid_argument("the gradient move's approximation does not match the latent values");
  if (warmup_it == 0 && !frozen_) {
    frozen_ = true;
    log_eps_ = da_.log_eps_bar;
  }
  const Eigen::MatrixXd m0 = mu0 * (*g.Q);
  // the current point in the approximation's coordinates
  Eigen::MatrixXd z = f * (*g.Q) - *g.mean;
  for (int c = 0; c < q; ++c) (*g.L)[c].triangularView<Eigen::Lower>().solveInPlace(z.col(c));
  // the metric's adaptation window (warm-up only)
  if (rank_ > 0 && warmup_it > 0 && !frozen_) {
    if (warmup_it == win_start_) make_basis(LK, g, n, q);
    if (warmup_it >= win_start_ && warmup_it <= win_end_ && !B_.empty()) {
      const int r = static_cast<int>(B_[0].cols());
      Eigen::VectorXd y(q * r);
      for (int c = 0; c < q; ++c) y.segment(c * r, r).noalias() = B_[c].transpose() * z.col(c);
      Y_.push_back(y);
    }
    if (warmup_it == win_end_) {
      adapt_metric();
      if (lam_.size() > 0) da_.restart(std::exp(log_eps_));
    }
  }
  const bool metric = lam_.size() > 0;
  Eigen::MatrixXd p(n, q);
  for (int c = 0; c < q; ++c)
    for (int i = 0; i < n; ++i) p(i, c) = rng.norm();
  if (metric) add_low_rank(p, (lam_.cwiseInverse().cwiseSqrt().array() - 1.0).matrix());
  const Eigen::VectorXd lam1 = metric ? Eigen::VectorXd(lam_.array() - 1.0) : Eigen::VectorXd();
  // p' M^-1 p and M^-1 p
  auto kinetic = [&](const Eigen::MatrixXd& x) {
    double k = x.squaredNorm();
    if (metric) k += project(x).cwiseAbs2().dot(lam1);
    return 0.5 * k;
  };
  auto velocity = [&](const Eigen::MatrixXd& x) {
    Eigen::MatrixXd v = x;
    if (metric) add_low_rank(v, lam1);
    return v;
  };
  const double eps = std::exp(log_eps_) * (0.9 + 0.2 * rng.unif());
  double U0, U;
  Eigen::MatrixXd grad;
  double alpha = 0.0;
  Eigen::MatrixXd fnew;
  if (energy(lik, z, m0, LK, g, &U0, grad, nullptr)) {
    const double H0 = U0 + kinetic(p);
    bool ok = true;
    p.noalias() -= 0.5 * eps * grad;
    for (int s = 0; s < leapfrog && ok; ++s) {
      if (metric)
        z.noalias() += eps * velocity(p);
      else
        z.noalias() += eps * p;
      ok = energy(lik, z, m0, LK, g, &U, grad, s + 1 == leapfrog ? &fnew : nullptr);
      if (ok) p.noalias() -= (s + 1 == leapfrog ? 0.5 : 1.0) * eps * grad;
    }
    if (ok) {
      const double dH = U + kinetic(p) - H0;
      alpha = std::isfinite(dH) ? (dH <= 0.0 ? 1.0 : std::exp(-dH)) : 0.0;
      if (alpha > 0.0 && rng.unif() < alpha) f.swap(fnew);
    }
  }
  acc_sum_ += alpha;
  ++n_;
  if (warmup_it > 0 && !frozen_) log_eps_ = da_.update(alpha);
  return alpha;
}

}  // namespace augp
