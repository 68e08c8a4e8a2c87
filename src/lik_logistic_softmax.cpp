// Categorical likelihood with the logistic-softmax link, augmented by
// negative-multinomial counts n and Polya-Gamma variables omega.
//
// Row i holds class counts y_ik (k = 1..K) with total N_i (N_i observations at one
// input; N_i = 0 rows carry no information). With Z_i = sum_k theta_k sigma(f_ik)
// (bijective: f_iK fixed at C = 0),
//   p(y_i | f_i) = prod_k (theta_k sigma(f_ik))^(y_ik) / Z_i^(N_i).
// Writing Z^(-N) = Gamma(N)^(-1) int lambda^(N-1) e^(-lambda Z) d lambda, sigma(f) =
// 1 - sigma(-f) and expanding exp(lambda theta_j sigma(-f_j)) as a power series gives,
// with T = sum over the non-latent part theta_K sigma(C) (bijective only) plus
// the latent classes' theta_j, and p_j = theta_j / T:
//   p(y, n | f) = prod_k (theta_k s_k)^(y_k) T^(-N) * Gamma(N + sum n) / (Gamma(N) prod n_j!)
//                 * prod_j p_j^(n_j) sigma(-f_j)^(n_j),            j over latent columns,
// where s_k = sigma(f_k) (and sigma(C) for the fixed class). Hence
//   n | f ~ NM(N, p_j sigma(-f_j)),  and  sigma(f)^y sigma(-f)^n is the PG-augmented
//   2^(-b) e^(kappa f) E_{PG(b,0)}[e^(-omega f^2/2)],  b = y + n, kappa = (y - n) / 2.
//
// Mean field: q(n_i) = NM(N_i, p_j sigma~_ij) with sigma~ = e^(-m/2) / (2 cosh(c/2)),
// c^2 = m^2 + v, and q(omega | n) = PG(y + n, c). With these optimal factors every
// term linear in n cancels and the local ELBO of row i is
//   sum_k y_k log theta_k [+ y_K log sigma(C)] - N log T
//   + sum_j y_j log(e^(m_j/2) / (2 cosh(c_j/2))) - N log p0q,
// p0q = 1 - sum_j p_j sigma~_j. At v = 0 it equals log p(y | f) exactly.
//
// The response is the vector of class probabilities theta_k sigma(f_k) / Z.
// Spec fields: Y (n x K counts), bijective (flag), theta (K weights), slice_steps
// (optional, default 0: rounds of elliptical slice updates per Gibbs sweep, see
// gibbs_move() without a reference), ref_steps (optional, default 0: rounds per Gibbs
// sweep with a reference; 0: no reference is made), ref_scale (optional, default 1: the
// scale c of the contrast moves' reference covariances), ref_joint (optional flag,
// default 0: the contrast moves update all contrasts on one ellipse instead of one at a
// time). Settings of the contrast moves' reference (gibbs_reference(), contrast_moves()),
// all optional: ref_df (default 0: the degrees of freedom nu of a multivariate-t
// reference; 0 makes it Gaussian), ref_avg (default 0: the number of fixed draws from the
// approximation's marginals over which the curvatures are averaged; 0 takes them at the
// approximation's mean), ref_full (flag, default 0: one joint reference of all
// contrasts, updated on one ellipse), ref_shift (default 0: a common shift s of the
// latents where the curvatures are taken; s far below 0 takes them in the softmax
// limit), ref_newton (default 0: Newton steps moving the reference's mean to the
// contrasts' conditional mode, newton_mean()) and ref_cond (flag, default 0: per-contrast
// reference means conditional on the other contrasts). hmc_steps (optional, default 0:
// leapfrog steps per trajectory of the gradient move, gradient_move.h, whose metric is
// the contrast moves' reference; it makes a reference also when ref_steps = 0) and
// hmc_moves (optional, default 1: its trajectories per sweep) and hmc_rank (optional,
// default 0: the kernel eigenvectors per column of its low-rank metric adaptation in
// warm-up, GradientMove::set_adaptation()).
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "count_rows.h"
#include "engine.h"
#include "gaussian_step.h"
#include "likelihood.h"
#include "negative_multinomial.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {


class LogisticSoftmax : public Likelihood {
 public:
  LogisticSoftmax(CountRows Y, bool bijective, const std::vector<double>& theta,
                  int slice_steps, int ref_steps, double ref_scale, bool ref_joint,
                  double ref_df, int ref_avg, bool ref_full, double ref_shift, int ref_newton,
                  bool ref_cond, int hmc_steps, int hmc_moves, int hmc_rank)
      : Y_(std::move(Y)), bij_(bijective), slice_steps_(slice_steps), ref_steps_(ref_steps),
        ref_scale_(ref_scale), ref_joint_(ref_joint), ref_df_(ref_df), ref_avg_(ref_avg),
        ref_full_(ref_full), ref_shift_(ref_shift), ref_newton_(ref_newton),
        ref_cond_(ref_cond), hmc_steps_(hmc_steps), hmc_moves_(hmc_moves), hmc_rank_(hmc_rank) {
    if (hmc_steps < 0) throw std::invalid_argument("hmc_steps must be >= 0");
    if (hmc_rank < 0) throw std::invalid_argument("hmc_rank must be >= 0");
    if (hmc_moves < 1) throw std::invalid_argument("hmc_moves must be >= 1");
    if (slice_steps < 0) throw std::invalid_argument("slice_steps must be >= 0");
    if (ref_steps < 0) throw std::invalid_argument("ref_steps must be >= 0");
    if (!(ref_scale > 0) || !std::isfinite(ref_scale))
      throw std::invalid_argument("ref_scale must be positive and finite");
    if (!(ref_df >= 0) || !std::isfinite(ref_df))
      throw std::invalid_argument("ref_df must be non-negative and finite (0: Gaussian reference)");
    if (ref_avg < 0) throw std::invalid_argument("ref_avg must be >= 0");
    if (!std::isfinite(ref_shift)) throw std::invalid_argument("ref_shift must be finite");
    const int K = Y_.cols();
    if (K < 2) throw std::invalid_argument("Y needs at least 2 columns (classes)");
    for (int i = 0; i < Y_.rows(); ++i)
      for (int k = 0; k < K; ++k)
        if (!(Y_(i, k) >= 0) || !std::isfinite(Y_(i, k)))
          throw std::invalid_argument("Y must hold finite non-negative counts");
    q_ = bij_ ? K - 1 : K;
    const int n = Y_.rows();
    N_.assign(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < K; ++k) N_[i] += Y_(i, k);
    set_theta(theta);
  }

  int n_obs() const override { return Y_.rows(); }
  int n_latent() const override { return q_; }
  int n_response() const override { return Y_.cols(); }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"theta", Eigen::Map<const Eigen::VectorXd>(theta_.data(), theta_.size())}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"theta"});
    auto it = p.find("theta");
    if (it == p.end()) return;
    if (it->second.size() != static_cast<Eigen::Index>(theta_.size()))
      throw std::invalid_argument("parameter 'theta' needs one weight per class");
    set_theta(std::vector<double>(it->second.data(), it->second.data() + it->second.size()));
  }

  // The class weights maximising the local ELBO with q(f) fixed. With a_ik = 1 -
  // sigma~_ik for the latent classes and a_iK = sigma(C) for the bijective version's
  // fixed class, the theta-dependent part of elbo_local is
  //   F(phi) = sum_k Y_.k phi_k - sum_i N_i log z_i,  z_i = sum_k e^(phi_k) a_ik,
  // phi = log theta: concave, invariant to phi + c 1 (sum_k Y_.k = sum_i N_i). Newton
  // steps with g_k = Y_.k - sum_i N_i p_ik, -H = sum_i N_i (diag(p_i) - p_i p_i'),
  // p_ik = theta_k a_ik / z_i, solved with 1 1' / K added (the gradient is orthogonal
  // to 1), and halved until F rises; phi stays within 30 of its start. The weights are
  // returned with geometric mean 1.
  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    const int n = n_obs(), K = n_response();
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, K);
    std::vector<double> st(q_);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < q_; ++j) A(i, j) = one_minus_sigma_tilde(m(i, j), v(i, j));
      if (bij_) A(i, K - 1) = sigmoid(kC);
    }
    const Eigen::VectorXd ysum = Y_.col_sums();
    auto objective = [&](const Eigen::VectorXd& phi) {
      const Eigen::VectorXd th = phi.array().exp();
      double F = ysum.dot(phi);
      for (int i = 0; i < n; ++i)
        if (N_[i] > 0) F -= N_[i] * std::log(A.row(i).dot(th));
      return F;
    };
    Eigen::VectorXd phi(K);
    for (int k = 0; k < K; ++k) phi[k] = std::log(theta_[k]);
    phi.array() -= phi.mean();
    const Eigen::VectorXd phi0 = phi;
    const double F0 = objective(phi);
    double F = F0;
    for (int it = 0; it < 100; ++it) {
      const Eigen::VectorXd th = phi.array().exp();
      Eigen::VectorXd g = ysum;
      Eigen::MatrixXd negH = Eigen::MatrixXd::Constant(K, K, 1.0 / K);
      for (int i = 0; i < n; ++i) {
        if (!(N_[i] > 0)) continue;
        const Eigen::VectorXd p = (A.row(i).transpose().array() * th.array()) / A.row(i).dot(th);
        g -= N_[i] * p;
        negH.diagonal() += N_[i] * p;
        negH.noalias() -= N_[i] * p * p.transpose();
      }
      if (g.cwiseAbs().maxCoeff() <= 1e-10 * std::max(1.0, ysum.sum())) break;
      const Eigen::VectorXd d = negH.ldlt().solve(g);
      double t = 1.0;
      bool moved = false;
      for (int h = 0; h < 40; ++h, t *= 0.5) {
        Eigen::VectorXd cand = phi + t * d;
        cand = cand.array().max(phi0.array() - 30.0).min(phi0.array() + 30.0).matrix();
        cand.array() -= cand.mean();
        const double Fc = objective(cand);
        if (std::isfinite(Fc) && Fc > F) {
          phi = cand;
          F = Fc;
          moved = true;
          break;
        }
      }
      if (!moved) break;
    }
    std::vector<double> th(K);
    for (int k = 0; k < K; ++k) th[k] = std::exp(phi[k]);
    set_theta(th);
    return F - F0;
  }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new LogisticSoftmax(Y_.subset(rows), bij_, theta_, slice_steps_, ref_steps_, ref_scale_, ref_joint_, ref_df_, ref_avg_, ref_full_, ref_shift_, ref_newton_, ref_cond_, hmc_steps_, hmc_moves_, hmc_rank_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.setZero(n, q_);
    omega.setZero(n, q_);
    std::vector<double> ratio(q_), cnt(q_);
    for (int i = 0; i < n; ++i) {
      if (!(N_[i] > 0)) continue;
      // p_j / p_0 with p_j = theta_j sigma(-f_j) / T, p_0 = (fixed + sum theta_j sigma(f_j)) / T.
      double z = fixed_;
      for (int j = 0; j < q_; ++j) z += theta_[j] * sigmoid(f(i, j));
      for (int j = 0; j < q_; ++j) ratio[j] = theta_[j] * sigmoid(-f(i, j)) / z;
      nm::draw(N_[i], ratio.data(), q_, rng, cnt.data());
      for (int j = 0; j < q_; ++j) {
        const double b = Y_(i, j) + cnt[j];
        kappa(i, j) = 0.5 * (Y_(i, j) - cnt[j]);
        omega(i, j) = b > 0 ? pg::draw_exact(b, f(i, j), rng) : 0.0;
      }
    }
  }

  // Gibbs moves on the un-augmented posterior
  //   p(f | y) proportional to prod_j N(f_j; mu0_j, K_j) prod_i p(y_i | f_i),
  // rounds of elliptical slice sampling (Murray, Adams and MacKay, 2010).
  // Without a reference (or with one kernel per column), slice_steps rounds, each
  // updating (1) each latent column f_j given the others, the ellipse through f_j and a
  // draw from N(mu0_j, K_j) (column_moves()), and (2) with one shared kernel K, the
  // common part g = (1/q) sum_j f_j given the centred parts e_j = f_j - g, the ellipse
  // through g and a draw from N(gbar, K / q), gbar = (1/q) sum_j mu0_j: under
  // independent N(mu0_j, K) priors g is independent of e with exactly that prior
  // (common_move()). With a reference (gibbs_reference(): non-bijective model, shared
  // kernel), ref_steps rounds, each (1), then generalised elliptical slice updates of
  // the contrasts (contrast_moves()), then (2). The prior-ellipse updates move well
  // where the likelihood is flat or one-sided (small class probabilities), the
  // reference updates where it dominates the prior (many points). Every update leaves
  // its conditional, and so p(f | y), exactly invariant.
  //
  // Without the bijective constraint the likelihood is nearly flat along the common
  // shift of a row's latents when they are all low (it tends to the softmax of f_i),
  // so the posterior puts much of its mass where Z_i = sum_j theta_j sigma(f_ij) is
  // tiny. There the augmentation's negative-multinomial counts (about N_i / Z_i) are
  // huge, a Polya-Gamma draw costs time in proportion to its shape, and the
  // pseudo-observations pin f at its current value: the augmented step neither
  // reaches nor leaves that region. The non-bijective model is therefore sampled by
  // these moves alone (returns true: the engine skips the augmented step); the
  // bijective one, whose Z_i >= theta_K sigma(0) bounds the counts, adds them to the
  // augmented step (returns false).
  bool has_gibbs_move() const override { return true; }
  // The gradient move (gradient_move.h) with the contrast moves' reference as its metric
  // (non-bijective model only: the bijective one makes no reference).
  int gradient_leapfrog() const override { return bij_ ? 0 : hmc_steps_; }
  int gradient_trajectories() const override { return hmc_moves_; }
  int gradient_metric_rank() const override { return hmc_rank_; }
  bool gibbs_move(Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, const KernelSet& LK,
                  const MoveReference* ref, Rng& rng) const override {
    const int n = n_obs();
    if (n == 0) return false;
    const ContrastReference* cref = dynamic_cast<const ContrastReference*>(ref);
    if (cref != nullptr && LK.shared() && q_ >= 2) {
      for (int s = 0; s < ref_steps_; ++s) {
        column_moves(f, mu0, LK, rng);
        contrast_moves(f, mu0, LK[0], *cref, rng);
        common_move(f, mu0, LK[0], rng);
      }
      return !bij_;
    }
    if (slice_steps_ <= 0) return false;
    for (int s = 0; s < slice_steps_; ++s) {
      column_moves(f, mu0, LK, rng);
      if (LK.shared() && q_ >= 2) common_move(f, mu0, LK[0], rng);
    }
    return !bij_;
  }

  // The reference of the contrast moves (see ContrastReference), from the
  // approximation's mean m with one shared kernel K; the site precisions w are not used
  // (the augmentation's precisions stay large where the likelihood is flat, see
  // gibbs_move()). With H_i the negative Hessian of log p(y_i | f_i) at m_i
  // (row_neg_hessian()), the contrasts are the eigenvectors E of sum_i U' H_i U (U the
  // Helmert contrasts), so that the rows' curvatures are decorrelated across contrasts
  // on the whole; contrast c = U e_c then has curvature w_ic = max(0, u_c' H_i u_c) at
  // row i, and reference covariance c^2 S_c, S_c = (K^-1 + diag(w_c))^-1, computed as
  // K - A'A with A = L_B^-1 W^1/2 K, L_B the lower factor of B = I + W^1/2 K W^1/2. Only
  // for the non-bijective model (the bijective one keeps its moves); nullptr otherwise.
  // With ref_avg = S > 0, H_i is instead the average of the negative Hessian over S
  // fixed draws f_i = m_i + sqrt(v_i) z_s (antithetic pairs of standard normals from a
  // fixed stream, the same for every run), v_ij = diag((K^-1 + diag(w_j))^-1)_i the
  // approximation's marginal variances: the expected curvature of a Gaussian
  // approximation's stationarity condition, which is flatter than the curvature at the
  // mean where the likelihood turns. With ref_shift = s the curvatures are taken at
  // m_i + s 1 instead (the contrasts, and so the class probabilities of the softmax
  // limit, unchanged): the likelihood is nearly flat along the common shift where the
  // latents are low, so the posterior puts much of its mass far below the
  // approximation's common part, where log p(y_i | f_i) tends to
  // sum_k y_ik (log theta_k + f_ik) - N_i log sum_k theta_k e^(f_ik), whose negative
  // Hessian N_i (diag(p_i) - p_i p_i') (p_i the softmax probabilities) is what s -> -inf
  // gives. The reference stays fixed for the run, so every choice keeps the moves exact.
  std::shared_ptr<const MoveReference> gibbs_reference(const Eigen::MatrixXd& m,
                                                       const Eigen::MatrixXd& w,
                                                       const KernelSet& K) const override {
    const int n = n_obs();
    if (bij_ || q_ < 2 || !K.shared() || n == 0 || (ref_steps_ <= 0 && hmc_steps_ <= 0)) return nullptr;
    if (m.rows() != n || m.cols() != q_ || w.rows() != n || w.cols() != q_)
      throw std::invalid_argument("the reference's mean and precisions must be n x q");
    if (!m.allFinite())
      throw std::invalid_argument("the reference's mean must be finite");
    auto r = std::make_shared<ContrastReference>();
    const Eigen::MatrixXd Qh = helmert(q_);
    const Eigen::MatrixXd U = Qh.rightCols(q_ - 1);
    std::vector<Eigen::MatrixXd> H(n);
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(q_ - 1, q_ - 1);
    if (ref_avg_ > 0) {
      // the approximation's marginal variances, column by column
      Eigen::MatrixXd v(n, q_);
      for (int j = 0; j < q_; ++j) {
        const Eigen::VectorXd sw = w.col(j).cwiseMax(0.0).cwiseSqrt();
        Eigen::MatrixXd B = sw.asDiagonal() * K[j] * sw.asDiagonal();
        B.diagonal().array() += 1.0;
        Eigen::LLT<Eigen::MatrixXd> llt(B);
        if (llt.info() != Eigen::Success)
          throw std::invalid_argument("the approximation's covariance could not be factored");
        Eigen::MatrixXd A = sw.asDiagonal() * K[j];
        llt.matrixL().solveInPlace(A);
        v.col(j) = (K[j].diagonal() - A.colwise().squaredNorm().transpose()).cwiseMax(0.0);
      }
      Rng zr(0x5eed5eedULL, 0);
      Eigen::MatrixXd Z(ref_avg_, q_);
      for (int s = 0; s + 1 < ref_avg_; s += 2)
        for (int k = 0; k < q_; ++k) Z(s + 1, k) = -(Z(s, k) = zr.norm());
      if (ref_avg_ % 2 == 1) Z.row(ref_avg_ - 1).setZero();
      Eigen::VectorXd fi(q_);
      for (int i = 0; i < n; ++i) {
        H[i] = Eigen::MatrixXd::Zero(q_, q_);
        for (int s = 0; s < ref_avg_; ++s) {
          for (int k = 0; k < q_; ++k) fi[k] = m(i, k) + ref_shift_ + std::sqrt(v(i, k)) * Z(s, k);
          H[i].noalias() += row_neg_hessian(fi, i);
        }
        H[i] /= ref_avg_;
        M.noalias() += U.transpose() * H[i] * U;
      }
    } else {
      for (int i = 0; i < n; ++i) {
        H[i] = row_neg_hessian(m.row(i).transpose().array() + ref_shift_, i);
        M.noalias() += U.transpose() * H[i] * U;
      }
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M);
    r->Q = Qh;
    r->Q.rightCols(q_ - 1) = U * es.eigenvectors();
    r->mean = m * r->Q;
    const Eigen::MatrixXd& K0 = K[0];
    if (ref_newton_ > 0) newton_mean(K0, H, *r);
    if (ref_full_) {
      joint_reference(H, K0, *r);
      return r;
    }
    if (ref_cond_) {
      // the points' cross-contrast curvatures (rotated, made positive semi-definite)
      const Eigen::MatrixXd E = r->Q.rightCols(q_ - 1);
      r->W.assign((q_ - 1) * (q_ - 1), Eigen::VectorXd::Zero(n));
      Eigen::MatrixXd Wp, Ri;
      for (int i = 0; i < n; ++i) {
        psd_block(E.transpose() * H[i] * E, Wp, Ri);
        for (int a = 0; a < q_ - 1; ++a)
          for (int b = 0; b < q_ - 1; ++b) r->W[a * (q_ - 1) + b][i] = Wp(a, b);
      }
    }
    r->LS.assign(q_, Eigen::MatrixXd());
    // LS[0] (the common direction, the same construction) only for the gradient move
    for (int c = hmc_steps_ > 0 ? 0 : 1; c < q_; ++c) {
      const Eigen::VectorXd u = r->Q.col(c);
      Eigen::VectorXd sw(n);
      for (int i = 0; i < n; ++i) sw[i] = std::sqrt(std::max(0.0, u.dot(H[i] * u)));
      Eigen::MatrixXd B = sw.asDiagonal() * K0 * sw.asDiagonal();
      B.diagonal().array() += 1.0;
      Eigen::LLT<Eigen::MatrixXd> llt(B);
      if (llt.info() != Eigen::Success)
        throw std::invalid_argument("the reference's covariance could not be factored");
      Eigen::MatrixXd A = sw.asDiagonal() * K0;
      llt.matrixL().solveInPlace(A);
      Eigen::MatrixXd S = K0;
      S.noalias() -= A.transpose() * A;
      S = 0.5 * (S + S.transpose()).eval();
      S *= ref_scale_ * ref_scale_;
      double jit = 1e-10 * std::max(S.diagonal().mean(), 1e-300);
      if (!chol_jitter(S, &jit, r->LS[c]))
        throw std::invalid_argument("the reference's covariance could not be factored");
    }
    return r;
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.setZero(n, q_);
    omega.setZero(n, q_);
    std::vector<double> st(q_);
    for (int i = 0; i < n; ++i) {
      if (!(N_[i] > 0)) continue;
      const double z = row_q(m, v, i, st.data());  // T * p0q; st = sigma~
      for (int j = 0; j < q_; ++j) {
        const double c = std::sqrt(m(i, j) * m(i, j) + v(i, j));
        const double gam = N_[i] * theta_[j] * st[j] / z;
        const double b = Y_(i, j) + gam;
        kappa(i, j) = 0.5 * (Y_(i, j) - gam);
        omega(i, j) = b > 0 ? pg::mean(b, c) : 0.0;
      }
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    double s = 0.0;
    std::vector<double> st(q_);
    for (int i = 0; i < n_obs(); ++i) {
      if (!(N_[i] > 0)) continue;
      const double z = row_q(m, v, i, st.data());
      double e = const_[i] - N_[i] * std::log(z / T_);
      for (int j = 0; j < q_; ++j) {
        if (!(Y_(i, j) > 0)) continue;
        const double c = std::sqrt(m(i, j) * m(i, j) + v(i, j));
        e += Y_(i, j) * (0.5 * m(i, j) - pg::LOG2 - pg::log_cosh(0.5 * c));
      }
      s += e;
    }
    return s;
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out = Eigen::VectorXd::Zero(n_obs());
    for (int i = 0; i < n_obs(); ++i) {
      if (!(N_[i] > 0)) continue;
      double z = fixed_, e = 0.0;
      for (int j = 0; j < q_; ++j) {
        z += theta_[j] * sigmoid(f(i, j));
        if (Y_(i, j) > 0) e += Y_(i, j) * log_sigmoid(f(i, j));
      }
      out[i] = e + const_[i] + N_[i] * (std::log(T_) - std::log(z));
    }
    return out;
  }

  // E[log p(y_i | f_i)] over f_t = m_i + sqrt(v_i) Z_t, as the default average of
  // loglik_obs, computed row by row on arrays of the S draws: with a = e^(-|f|),
  // sigma(f) = 1 / (1 + a) (f >= 0) or a / (1 + a) (f < 0) and
  // log sigma(f) = min(f, 0) - log(1 + a), one exponential per latent value.
  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd& Z) const override {
    const int n = n_obs(), S = static_cast<int>(Z.rows());
    if (m.rows() != n || m.cols() != q_ || v.rows() != n || v.cols() != q_)
      throw std::invalid_argument("expected_loglik: m and v must be n x q at the likelihood's observations");
    if (Z.cols() != q_ || S < 1) throw std::invalid_argument("expected_loglik: Z must be S x q with S >= 1");
    Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
    Eigen::ArrayXd f(S), a(S), z(S), e(S);
    for (int i = 0; i < n; ++i)
      if (N_[i] > 0) out[i] = row_draws(i, m, v, Z, f, a, z, e, nullptr);
    return out;
  }

  // Row i of expected_loglik() over the S draws f_t = m_i + sqrt(v_i) Z_t (N_i > 0): fills
  // z_t = fixed + sum_j theta_j sigma(f_tj), e_t = sum_j y_j log sigma(f_tj) and, when sg is
  // given, sg(t, j) = sigma(f_tj); returns the row's expected log-likelihood. f and a are
  // work arrays of length S.
  double row_draws(int i, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd& Z,
                   Eigen::ArrayXd& f, Eigen::ArrayXd& a, Eigen::ArrayXd& z, Eigen::ArrayXd& e,
                   Eigen::ArrayXXd* sg) const {
    const int S = static_cast<int>(Z.rows());
    z.setConstant(fixed_);
    e.setZero();
    for (int j = 0; j < q_; ++j) {
      const double sd = std::sqrt(std::max(v(i, j), 0.0));
      f = m(i, j) + sd * Z.col(j).array();
      a = (-f.abs()).exp();
      if (sg) {
        sg->col(j) = (f >= 0.0).select(1.0, a) / (1.0 + a);
        z += theta_[j] * sg->col(j);
      } else {
        z += theta_[j] * (f >= 0.0).select(1.0, a) / (1.0 + a);
      }
      const double y = Y_(i, j);
      if (y > 0)
        for (int t = 0; t < S; ++t) e[t] += y * (std::min(f[t], 0.0) - std::log1p(a[t]));
    }
    double acc = 0.0;
    for (int t = 0; t < S; ++t) acc += e[t] - N_[i] * std::log(z[t]);
    return const_[i] + N_[i] * std::log(T_) + acc / S;
  }

  // The moments of expected_loglik_derivs() over the same draws as expected_loglik().
  // With s_j = sigma(f_j), d_j = s_j (1 - s_j) and z = fixed + sum_j theta_j s_j,
  //   d log p / d f_j = y_j (1 - s_j) - N theta_j d_j / z,
  //   -d2 log p / d f_j^2 = y_j d_j + N theta_j d_j (1 - 2 s_j) / z - N (theta_j d_j / z)^2,
  // averaged over the S draws (the second is not positive everywhere: the link is not
  // log-concave). Rows with N = 0 have zero moments.
  bool expected_loglik_derivs(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                              const Eigen::MatrixXd& Z, Eigen::MatrixXd& grad,
                              Eigen::MatrixXd& neg_hess, Eigen::VectorXd& ell) const override {
    const int n = n_obs(), S = static_cast<int>(Z.rows());
    check_moment_shapes(m, v, n, q_);
    if (Z.cols() != q_ || S < 1) throw std::invalid_argument("expected_loglik_derivs: Z must be S x q with S >= 1");
    grad = Eigen::MatrixXd::Zero(n, q_);
    neg_hess = Eigen::MatrixXd::Zero(n, q_);
    ell = Eigen::VectorXd::Zero(n);
    Eigen::ArrayXXd sg(S, q_);
    Eigen::ArrayXd f(S), a(S), z(S), e(S), d(S);
    for (int i = 0; i < n; ++i) {
      if (!(N_[i] > 0)) continue;
      ell[i] = row_draws(i, m, v, Z, f, a, z, e, &sg);
      const Eigen::ArrayXd Nz = N_[i] / z;
      for (int j = 0; j < q_; ++j) {
        const double y = Y_(i, j);
        d = sg.col(j) * (1.0 - sg.col(j));
        const Eigen::ArrayXd r = theta_[j] * d * Nz;  // N theta_j d_j / z
        grad(i, j) = (y * (1.0 - sg.col(j)) - r).mean();
        neg_hess(i, j) = (y * d + r * (1.0 - 2.0 * sg.col(j)) - r.square() / N_[i]).mean();
      }
    }
    return true;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    const int K = n_response();
    Eigen::MatrixXd P(f.rows(), K);
    for (int i = 0; i < f.rows(); ++i) {
      double tot = 0.0;
      for (int k = 0; k < K; ++k) {
        P(i, k) = theta_[k] * sigmoid(k < q_ ? f(i, k) : kC);
        tot += P(i, k);
      }
      P.row(i) /= tot;
    }
    return P;
  }

  // The default Monte Carlo summary (same draws f_t = m + sqrt(v) Z_t, same estimates),
  // computed a column of draws at a time so that the sigmoids are array operations;
  // with an interval (level > 0) the default's per-point quantiles are used.
  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd& Z,
                        double level, ResponseSummary& out) const override {
    if (level > 0) {
      Likelihood::response_summary(m, v, Z, level, out);
      return;
    }
    const int r = static_cast<int>(m.rows()), S = static_cast<int>(Z.rows()), K = n_response();
    if (m.cols() != q_ || v.rows() != r || v.cols() != q_ || Z.cols() != q_ || S < 1)
      throw std::invalid_argument("response_summary: m, v and Z do not conform");
    size_summary(out, r, K, level);
    Eigen::ArrayXXd A(S, K);
    Eigen::ArrayXd inv(S), p(S);
    if (q_ < K) A.col(K - 1).setConstant(theta_[K - 1] * sigmoid(kC));
    for (int i = 0; i < r; ++i) {
      for (int k = 0; k < q_; ++k) {
        const double s = std::sqrt(std::max(v(i, k), 0.0));
        A.col(k) = theta_[k] / (1.0 + (-(m(i, k) + s * Z.col(k).array())).exp());
      }
      inv = A.rowwise().sum().inverse();
      for (int k = 0; k < K; ++k) {
        p = A.col(k) * inv;
        const double mu = p.mean();
        out.mean(i, k) = mu;
        out.sd(i, k) = S > 1 ? std::sqrt((p - mu).square().sum() / (S - 1)) : 0.0;
      }
    }
  }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    const Eigen::MatrixXd P = response_mean(f);
    const int K = n_response();
    Eigen::MatrixXd y(f.rows(), K);
    std::vector<double> p(K), cnt(K);
    for (int i = 0; i < f.rows(); ++i) {
      for (int k = 0; k < K; ++k) p[k] = P(i, k);
      draw_multinomial(size[i], p.data(), K, rng, cnt.data());
      for (int k = 0; k < K; ++k) y(i, k) = cnt[k];
    }
    return y;
  }

 private:
  static constexpr double kC = 0.0;  // the bijective version's fixed latent

  // The contrast moves' reference. Q: an orthonormal q x q matrix whose column 0 is
  // 1 / sqrt(q) (the common direction) and whose columns c >= 1 (the contrasts) are
  // orthogonal to it; with G = f Q, G_0 = sqrt(q) g and the contrasts h_c = G_c (c >= 1)
  // carry the centred latents. mean: the approximation's mean of G (n x q; column 0
  // unused). LS[c]: the lower Cholesky factor of contrast c's reference covariance
  // (see gibbs_reference()).
  struct ContrastReference : MoveReference {
    Eigen::MatrixXd Q, mean;
    std::vector<Eigen::MatrixXd> LS;  // LS[c], c >= 1: the lower factor of c^2 S_c (and
                                      // c = 0 for the gradient move)
    Eigen::MatrixXd LF;  // or (joint reference) the lower factor of all contrasts' c^2 S
    // ref_cond: W[(a - 1)(q - 1) + (b - 1)], the points' curvatures between contrasts a and
    // b (rotated, positive semi-definite blocks); empty otherwise
    std::vector<Eigen::VectorXd> W;
    // the per-direction references as the gradient move's metric, when LS[0] is made
    RotatedGaussian gaussian() const override {
      RotatedGaussian g;
      if (LS.empty() || LS[0].size() == 0) return g;
      g.Q = &Q;
      g.mean = &mean;
      g.L = &LS;
      return g;
    }
  };

  // The joint reference of all contrasts (ref_full): with h the contrasts stacked
  // (index (c - 1) n + i, c = 1..q-1), the prior given the common part has covariance
  // Kb = I (x) K, and the reference covariance is c^2 S, S = (Kb^-1 + W)^-1, W block
  // diagonal over the points with the d x d blocks W_i = Q_c' H_i Q_c' (c, c' >= 1) made
  // positive semi-definite (negative eigenvalues set to 0). With R = W^1/2 (the blocks'
  // symmetric square roots), S = Kb - A'A, A = L_B^-1 R Kb, L_B the lower factor of
  // B = I + R Kb R; block (c, c') of R Kb is diag(r_cc') K (r_cc': the points' (c, c')
  // entries of R_i). Unlike the per-contrast references it keeps the posterior
  // correlations between contrasts at each point (and so the shift of one contrast's
  // conditional mean with the others). R.LF: the lower factor of c^2 S.
  void joint_reference(const std::vector<Eigen::MatrixXd>& H, const Eigen::MatrixXd& K0,
                       ContrastReference& r) const {
    Eigen::MatrixXd S = joint_cov(H, K0, r.Q.rightCols(q_ - 1));
    S *= ref_scale_ * ref_scale_;
    double jit = 1e-10 * std::max(S.diagonal().mean(), 1e-300);
    if (!chol_jitter(S, &jit, r.LF))
      throw std::invalid_argument("the reference's covariance could not be factored");
  }

  // The positive semi-definite part of E' H_i E (negative eigenvalues set to 0) and its
  // symmetric square root.
  static void psd_block(const Eigen::MatrixXd& Wi, Eigen::MatrixXd& Wp, Eigen::MatrixXd& Ri) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Wi);
    const Eigen::VectorXd lam = es.eigenvalues().cwiseMax(0.0);
    Wp = es.eigenvectors() * lam.asDiagonal() * es.eigenvectors().transpose();
    Ri = es.eigenvectors() * lam.cwiseSqrt().asDiagonal() * es.eigenvectors().transpose();
  }

  // S = (Kb^-1 + W)^-1 of joint_reference() (unscaled), E the contrast directions.
  Eigen::MatrixXd joint_cov(const std::vector<Eigen::MatrixXd>& H, const Eigen::MatrixXd& K0,
                            const Eigen::MatrixXd& E) const {
    const int n = n_obs(), d = q_ - 1, D = n * d;
    // Rr(c, c') holds r_cc' over the points
    std::vector<Eigen::VectorXd> Rr(d * d, Eigen::VectorXd::Zero(n));
    Eigen::MatrixXd Wp, Ri;
    for (int i = 0; i < n; ++i) {
      psd_block(E.transpose() * H[i] * E, Wp, Ri);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) Rr[a * d + b][i] = Ri(a, b);
    }
    Eigen::MatrixXd RK(D, D);  // R Kb
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) RK.block(a * n, b * n, n, n) = Rr[a * d + b].asDiagonal() * K0;
    Eigen::MatrixXd B(D, D);  // I + R Kb R: block (a, b) = sum_c diag(r_ac) K diag(r_cb)
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) {
        auto blk = B.block(a * n, b * n, n, n);
        blk.setZero();
        for (int c = 0; c < d; ++c) blk += RK.block(a * n, c * n, n, n) * Rr[c * d + b].asDiagonal();
      }
    B = 0.5 * (B + B.transpose()).eval();
    B.diagonal().array() += 1.0;
    Eigen::LLT<Eigen::MatrixXd> llt(B);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("the reference's covariance could not be factored");
    llt.matrixL().solveInPlace(RK);  // A
    Eigen::MatrixXd S = Eigen::MatrixXd::Zero(D, D);
    for (int a = 0; a < d; ++a) S.block(a * n, a * n, n, n) = K0;
    S.selfadjointView<Eigen::Lower>().rankUpdate(RK.transpose(), -1.0);
    S.triangularView<Eigen::StrictlyUpper>() = S.transpose();
    return S;
  }

  // The gradient of log p(y_i | f_i) at f_i = fi:
  //   y_k (1 - s_k) - N theta_k s_k (1 - s_k) / Z.
  Eigen::VectorXd row_grad(const Eigen::VectorXd& fi, int i) const {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(q_);
    if (!(N_[i] > 0)) return g;
    double z = fixed_;
    for (int k = 0; k < q_; ++k) z += theta_[k] * sigmoid(fi[k]);
    for (int k = 0; k < q_; ++k) {
      const double sk = sigmoid(fi[k]), sm = sigmoid(-fi[k]);
      g[k] = Y_(i, k) * sm - N_[i] * theta_[k] * sk * sm / z;
    }
    return g;
  }

  // The reference's mean (ref_newton iterations): the mode of the
  // contrasts' conditional posterior given the common part G_0 of the approximation's
  // mean shifted by ref_shift (f = m + s 1), prior N(0, K) per contrast (the
  // likelihood's prior mean), found by Newton steps from the approximation's contrasts,
  //   h' = S (W h + grad log p(y | f(h))),  S = (Kb^-1 + W)^-1 (joint_cov()),
  // W the points' curvature blocks made positive semi-definite, each step halved until
  // the log posterior rises. H: the curvatures at the shifted mean on entry, at the
  // mode on return; R.mean: its contrasts set to the mode.
  void newton_mean(const Eigen::MatrixXd& K0, std::vector<Eigen::MatrixXd>& H,
                   ContrastReference& R) const {
    const int n = n_obs(), d = q_ - 1, D = n * d;
    const Eigen::MatrixXd E = R.Q.rightCols(d);
    Eigen::LLT<Eigen::MatrixXd> lk(K0);
    if (lk.info() != Eigen::Success) return;
    Eigen::MatrixXd G = R.mean;
    G.col(0).array() += ref_shift_ * std::sqrt(static_cast<double>(q_));
    auto psi = [&](const Eigen::MatrixXd& Gc) {
      const Eigen::MatrixXd Rc = lk.matrixL().solve(Gc.rightCols(d));
      return loglik_core(Gc * R.Q.transpose()) - 0.5 * Rc.squaredNorm();
    };
    double cur = psi(G);
    Eigen::MatrixXd Wp, Ri;
    for (int it = 0; it < ref_newton_; ++it) {
      const Eigen::MatrixXd F = G * R.Q.transpose();
      Eigen::VectorXd b(D);
      for (int i = 0; i < n; ++i) {
        H[i] = row_neg_hessian(F.row(i).transpose(), i);
        psd_block(E.transpose() * H[i] * E, Wp, Ri);
        const Eigen::VectorXd hi = G.row(i).tail(d).transpose();
        const Eigen::VectorXd bi = Wp * hi + E.transpose() * row_grad(F.row(i).transpose(), i);
        for (int a = 0; a < d; ++a) b[a * n + i] = bi[a];
      }
      const Eigen::VectorXd hn = joint_cov(H, K0, E) * b;
      Eigen::MatrixXd step(n, d);
      for (int a = 0; a < d; ++a) step.col(a) = hn.segment(a * n, n) - G.col(a + 1);
      bool moved = false;
      double t = 1.0;
      for (int h = 0; h < 20; ++h, t *= 0.5) {
        Eigen::MatrixXd Gc = G;
        Gc.rightCols(d) += t * step;
        const double val = psi(Gc);
        if (std::isfinite(val) && val > cur) {
          moved = val - cur > 1e-6 * std::max(1.0, std::fabs(cur));
          G = Gc;
          cur = val;
          break;
        }
      }
      if (!moved) break;
    }
    const Eigen::MatrixXd F = G * R.Q.transpose();
    for (int i = 0; i < n; ++i) H[i] = row_neg_hessian(F.row(i).transpose(), i);
    R.mean.rightCols(d) = G.rightCols(d);
  }

  // The negative Hessian of log p(y_i | f_i) at f_i = fi (q x q):
  //   H = diag(y_k s_k (1 - s_k) + N d_k (1 - 2 s_k) / Z) - N d d' / Z^2,
  // s_k = sigma(fi_k), d_k = theta_k s_k (1 - s_k) (= dZ / df_k), Z = fixed + sum_k
  // theta_k s_k. Near 0 where the likelihood is saturated (class probabilities near 0
  // or 1 whatever small changes of f_i), so the reference follows the prior there.
  Eigen::MatrixXd row_neg_hessian(const Eigen::VectorXd& fi, int i) const {
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(q_, q_);
    if (!(N_[i] > 0)) return H;
    double z = fixed_;
    for (int k = 0; k < q_; ++k) z += theta_[k] * sigmoid(fi[k]);
    Eigen::VectorXd d(q_);
    for (int k = 0; k < q_; ++k) {
      const double sk = sigmoid(fi[k]), v = sk * sigmoid(-fi[k]);
      d[k] = theta_[k] * v;
      H(k, k) = Y_(i, k) * v + N_[i] * d[k] * (1.0 - 2.0 * sk) / z;
    }
    H.noalias() -= (N_[i] / (z * z)) * d * d.transpose();
    return H;
  }

  static Eigen::MatrixXd helmert(int q) {
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(q, q);
    Q.col(0).setConstant(1.0 / std::sqrt(static_cast<double>(q)));
    for (int c = 1; c < q; ++c) {
      const double d = std::sqrt(static_cast<double>(c) * (c + 1));
      for (int j = 0; j < c; ++j) Q(j, c) = 1.0 / d;
      Q(c, c) = -c / d;
    }
    return Q;
  }

  // sum_i [sum_k y_ik log sigma(f_ik) - N_i log Z_i]: log p(y | f) up to a constant.
  double loglik_core(const Eigen::MatrixXd& f) const {
    double l = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      if (!(N_[i] > 0)) continue;
      double z = fixed_;
      for (int k = 0; k < q_; ++k) {
        z += theta_[k] * sigmoid(f(i, k));
        if (Y_(i, k) > 0) l += Y_(i, k) * log_sigmoid(f(i, k));
      }
      l -= N_[i] * std::log(z);
    }
    return l;
  }

  // One elliptical slice update of each latent column f_j given the others, the ellipse
  // through f_j and a draw from N(mu0_j, K_j).
  void column_moves(Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, const KernelSet& LK,
                    Rng& rng) const {
    const int n = n_obs();
    Eigen::VectorXd zo(n), z(n), nu(n), cand(n), x(n), m(n);
    for (int j = 0; j < q_; ++j) {
      // zo_i: the other columns' part of Z_i. Up to terms free of f_j the
      // log-likelihood is sum_i y_ij log sigma(f_ij) - N_i log(zo_i + theta_j sigma(f_ij)).
      for (int i = 0; i < n; ++i) {
        double t = fixed_;
        for (int k = 0; k < q_; ++k)
          if (k != j) t += theta_[k] * sigmoid(f(i, k));
        zo[i] = t;
      }
      const double th = theta_[j];
      auto ll = [&](const Eigen::VectorXd& v) {
        double l = 0.0;
        for (int i = 0; i < n; ++i) {
          if (!(N_[i] > 0)) continue;
          if (Y_(i, j) > 0) l += Y_(i, j) * log_sigmoid(v[i]);
          l -= N_[i] * std::log(zo[i] + th * sigmoid(v[i]));
        }
        return l;
      };
      for (int i = 0; i < n; ++i) z[i] = rng.norm();
      nu.noalias() = LK[j].triangularView<Eigen::Lower>() * z;
      x = f.col(j);
      m = mu0.col(j);
      slice_ellipse(x, m, nu, ll, rng, cand);
      f.col(j) = x;
    }
  }

  // One elliptical slice update of the common part g = (1/q) sum_j f_j given the
  // centred parts e = f - g 1' (shared kernel with lower factor L): prior N(gbar, K / q).
  void common_move(Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L,
                   Rng& rng) const {
    const int n = n_obs();
    const Eigen::VectorXd m = mu0.rowwise().mean();
    Eigen::VectorXd x = f.rowwise().mean(), z(n), cand(n);
    const Eigen::MatrixXd e = f.colwise() - x;
    auto ll = [&](const Eigen::VectorXd& g) {
      double l = 0.0;
      for (int i = 0; i < n; ++i) {
        if (!(N_[i] > 0)) continue;
        double zi = fixed_;
        for (int k = 0; k < q_; ++k) {
          const double fk = g[i] + e(i, k);
          zi += theta_[k] * sigmoid(fk);
          if (Y_(i, k) > 0) l += Y_(i, k) * log_sigmoid(fk);
        }
        l -= N_[i] * std::log(zi);
      }
      return l;
    };
    for (int i = 0; i < n; ++i) z[i] = rng.norm();
    Eigen::VectorXd nu = L.triangularView<Eigen::Lower>() * z;
    nu /= std::sqrt(static_cast<double>(q_));
    slice_ellipse(x, m, nu, ll, rng, cand);
    f = e.colwise() + x;
  }

  // One pass of generalised elliptical slice updates of the contrasts (Nishihara,
  // Murray and Adams, 2014). With one shared kernel K the coordinates G = f Q have
  // independent N(mu0 Q_c, K) priors, so the contrasts h = (h_1, ..., h_{q-1}) given the
  // common part G_0 have the target
  //   pi(h) propto prod_c N(h_c; mu0 Q_c, K) p(y | f(G)).
  // With the fixed reference r(h) = prod_c N(h_c; mu_c, c^2 S_c) (gibbs_reference()) and
  // h_c = mu_c + L_c v_c, the target of v is N(v; 0, I) times the ratio
  // pi(h(v)) / r(h(v)), up to a constant; an elliptical slice update of v with
  // N(0, I) as the ellipse and the ratio as its likelihood leaves pi exactly
  // invariant whatever the reference. The updates take one contrast at a time, or all
  // on one ellipse (ref_joint). The current kernel enters through its factor L, so the
  // move stays exact when the kernel is sampled.
  //
  // With ref_df = nu > 0 the reference of a block of D = n |block| whitened values v is
  // the multivariate t, t_nu(v) propto (1 + |v|^2 / nu)^(-(nu + D) / 2), written as the
  // scale mixture N(v; 0, s I) with s ~ InvGamma(nu / 2, nu / 2) (Nishihara, Murray and
  // Adams, 2014): on the pairs (v, s) the target
  //   p(v, s) propto [pi(v) / t_nu(v)] N(v; 0, s I) InvGamma(s; nu / 2, nu / 2)
  // has marginal pi(v). Each update draws s from its conditional,
  // InvGamma((nu + D) / 2, (nu + |v|^2) / 2), then updates v by elliptical slice
  // sampling with N(0, s I) as the ellipse and pi(v) / t_nu(v) as its likelihood
  // (log t_nu(v) = -(nu + D) / 2 log(1 + |v|^2 / nu) + const). Both steps leave p(v, s),
  // and so pi, invariant; the ratio pi / t_nu stays bounded where a posterior tail is
  // heavier than the Gaussian reference's, and the ellipse's scale follows the current
  // distance from the reference's mean.
  //
  // With ref_cond the reference of contrast c (one at a time) is the conditional, given
  // the other contrasts h_b, of the Gaussian with precision I (x) K^-1 + W (W: the
  // points' curvature blocks between contrasts, R.W; its diagonal blocks as in the
  // per-contrast covariances S_c): mean
  //   mu_c - S_c sum_{b != c} diag(W_cb) (h_b - mu_b),
  // covariance c^2 S_c. The reference of an update may depend on everything the update
  // conditions on, so the move stays exact; it follows the shift of h_c's conditional
  // mean with the other contrasts, which a fixed mean misses. Along the ellipse
  // h(a) = mu + cos(a) (h - mu) + sin(a) L_c nu, and L^-1 (h(a) - mu0 Q) and v(a) are the
  // same combinations of vectors computed once per update: each angle costs O(nq).
  void contrast_moves(Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0, const Eigen::MatrixXd& L,
                      const ContrastReference& R, Rng& rng) const {
    const int n = n_obs();
    const auto LKt = L.triangularView<Eigen::Lower>();
    Eigen::MatrixXd G = f * R.Q;
    const Eigen::MatrixXd muG = mu0 * R.Q;
    // per contrast c: V_c = L_c^-1 (h_c - mean_c), Rm_c = L^-1 (mean_c - muG_c) and
    // Rh_c = L^-1 (h_c - muG_c) (column 0 unused)
    Eigen::MatrixXd V = Eigen::MatrixXd::Zero(n, q_), Rm = V, Rh = V;
    Eigen::MatrixXd Mc = R.mean;  // the reference means (ref_cond: given the other contrasts)
    const bool full = R.LF.size() > 0;  // joint reference: V and Bm through LF, stacked
    // conditional reference means (ref_cond), one contrast at a time: V and Rm per update
    const bool cond = !R.W.empty() && !ref_joint_ && !full;
    const int D1 = n * (q_ - 1);
    Eigen::VectorXd st(full ? D1 : 0);
    if (full) {
      for (int c = 1; c < q_; ++c) st.segment((c - 1) * n, n) = G.col(c) - R.mean.col(c);
      R.LF.triangularView<Eigen::Lower>().solveInPlace(st);
      for (int c = 1; c < q_; ++c) V.col(c) = st.segment((c - 1) * n, n);
    }
    for (int c = 1; c < q_; ++c) {
      if (!cond) {
        if (!full) V.col(c) = R.LS[c].triangularView<Eigen::Lower>().solve(G.col(c) - R.mean.col(c));
        Rm.col(c) = LKt.solve(R.mean.col(c) - muG.col(c));
      }
      Rh.col(c) = LKt.solve(G.col(c) - muG.col(c));
    }
    std::vector<std::vector<int>> blocks;
    if (ref_joint_ || full) {
      blocks.emplace_back();
      for (int c = 1; c < q_; ++c) blocks.back().push_back(c);
    } else {
      for (int c = 1; c < q_; ++c) blocks.push_back({c});
    }
    Eigen::MatrixXd A(n, q_), Bm(n, q_), Nu(n, q_), Ra(n, q_), Rb(n, q_), Fb(n, q_), F(n, q_);
    {
      for (const std::vector<int>& blk : blocks) {
        // Gram terms of the prior's and the reference's quadratic forms along the ellipse
        double g00 = 0, gaa = 0, gbb = 0, g0a = 0, g0b = 0, gab = 0, vv = 0, nn = 0, vn = 0;
        if (cond) {
          // conditional reference mean of contrast c given the others (ref_cond)
          const int c = blk[0], d = q_ - 1;
          Eigen::VectorXd t = Eigen::VectorXd::Zero(n);
          for (int b = 1; b < q_; ++b)
            if (b != c)
              t.array() += R.W[(c - 1) * d + (b - 1)].array() * (G.col(b) - R.mean.col(b)).array();
          const auto LSt = R.LS[c].triangularView<Eigen::Lower>();
          t = LSt.transpose() * t;
          Mc.col(c) = R.mean.col(c) - LSt * t / (ref_scale_ * ref_scale_);
          V.col(c) = LSt.solve(G.col(c) - Mc.col(c));
          Rm.col(c) = LKt.solve(Mc.col(c) - muG.col(c));
        }
        // t reference: the ellipse's scale s given v (see above); Gaussian: s = 1
        double ss = 1.0;
        const double D = static_cast<double>(n) * blk.size();
        if (ref_df_ > 0) {
          for (int c : blk) vv += V.col(c).squaredNorm();
          ss = 0.5 * (ref_df_ + vv) / rng.gamma(0.5 * (ref_df_ + D));
          vv = 0;
        }
        const double sq = std::sqrt(ss);
        Fb = f;
        for (int c : blk)
          for (int i = 0; i < n; ++i) Nu(i, c) = sq * rng.norm();
        if (full) {
          for (int c = 1; c < q_; ++c) st.segment((c - 1) * n, n) = Nu.col(c);
          st = R.LF.triangularView<Eigen::Lower>() * st;
          for (int c = 1; c < q_; ++c) Bm.col(c) = st.segment((c - 1) * n, n);
        }
        for (int c : blk) {
          A.col(c) = G.col(c) - Mc.col(c);
          if (!full) Bm.col(c).noalias() = R.LS[c].triangularView<Eigen::Lower>() * Nu.col(c);
          Rb.col(c) = LKt.solve(Bm.col(c));
          Ra.col(c) = Rh.col(c) - Rm.col(c);
          g00 += Rm.col(c).squaredNorm();
          gaa += Ra.col(c).squaredNorm();
          gbb += Rb.col(c).squaredNorm();
          g0a += Rm.col(c).dot(Ra.col(c));
          g0b += Rm.col(c).dot(Rb.col(c));
          gab += Ra.col(c).dot(Rb.col(c));
          vv += V.col(c).squaredNorm();
          nn += Nu.col(c).squaredNorm();
          vn += V.col(c).dot(Nu.col(c));
          Fb.noalias() -= G.col(c) * R.Q.col(c).transpose();
        }
        // log prior - log reference + log-likelihood at angle (cos, sin)
        auto ell = [&](double cs, double sn) {
          const double pr = g00 + cs * cs * gaa + sn * sn * gbb + 2.0 * cs * g0a + 2.0 * sn * g0b +
                            2.0 * cs * sn * gab;
          const double rf = cs * cs * vv + sn * sn * nn + 2.0 * cs * sn * vn;  // |v(a)|^2
          F = Fb;
          for (int c : blk)
            F.noalias() += (Mc.col(c) + cs * A.col(c) + sn * Bm.col(c)) * R.Q.col(c).transpose();
          const double mlr = ref_df_ > 0 ? 0.5 * (ref_df_ + D) * std::log1p(rf / ref_df_) : 0.5 * rf;
          return mlr - 0.5 * pr + loglik_core(F);
        };
        const double ang = slice_angle(ell, rng);
        if (ang == 0.0) continue;
        const double cs = std::cos(ang), sn = std::sin(ang);
        f = Fb;
        for (int c : blk) {
          G.col(c) = Mc.col(c) + cs * A.col(c) + sn * Bm.col(c);
          V.col(c) = cs * V.col(c) + sn * Nu.col(c);
          Rh.col(c) = Rm.col(c) + cs * Ra.col(c) + sn * Rb.col(c);
          f.noalias() += G.col(c) * R.Q.col(c).transpose();
        }
      }
    }
  }

  // The angle of one elliptical slice update whose log-likelihood along the ellipse is
  // ll(cos a, sin a) (a = 0: the current state): drawn uniformly on a bracket that
  // shrinks towards 0 until ll exceeds the slice level ll(1, 0) + log(u); 0 when the
  // bracket closes on the current state.
  template <class LL>
  static double slice_angle(const LL& ll, Rng& rng) {
    constexpr double kTwoPi = 6.283185307179586;
    const double level = ll(1.0, 0.0) - rng.exp1();
    double ang = kTwoPi * rng.unif();
    double lo = ang - kTwoPi, hi = ang;
    for (;;) {
      if (ll(std::cos(ang), std::sin(ang)) > level) return ang;
      if (ang < 0) lo = ang; else hi = ang;
      if (!(hi - lo > 1e-12)) return 0.0;
      ang = lo + (hi - lo) * rng.unif();
    }
  }

  // The weights and everything derived from them: T = the fixed class's part of Z plus
  // the latent classes' weights, and the per-row constants of the local ELBO.
  void set_theta(const std::vector<double>& theta) {
    const int K = static_cast<int>(Y_.cols());
    if (static_cast<int>(theta.size()) != K)
      throw std::invalid_argument("theta must have one weight per class (ncol(Y))");
    for (double t : theta)
      if (!(t > 0) || !std::isfinite(t)) throw std::invalid_argument("theta must be positive and finite");
    theta_ = theta;
    const double sC = sigmoid(kC);
    fixed_ = bij_ ? theta_[K - 1] * sC : 0.0;  // the non-latent part of Z
    T_ = fixed_;
    for (int j = 0; j < q_; ++j) T_ += theta_[j];
    const int n = static_cast<int>(Y_.rows());
    const_.assign(n, 0.0);
    for (int i = 0; i < n; ++i) {
      double s = 0.0;
      for (int k = 0; k < K; ++k)
        if (Y_(i, k) > 0) s += Y_(i, k) * std::log(theta_[k]);
      if (bij_ && Y_(i, K - 1) > 0) s += Y_(i, K - 1) * log_sigmoid(kC);
      const_[i] = s - N_[i] * std::log(T_);
    }
  }

  // One elliptical slice update of x, whose conditional is N(m, C) times exp(ll(x)),
  // along the ellipse m + (x - m) cos(a) + nu sin(a) with nu ~ N(0, C): the angle is
  // drawn uniformly on a bracket that shrinks towards 0 (the current x) until the
  // log-likelihood exceeds the slice level ll(x) + log(u). cand: workspace.
  template <class LL>
  static void slice_ellipse(Eigen::VectorXd& x, const Eigen::VectorXd& m, const Eigen::VectorXd& nu,
                            const LL& ll, Rng& rng, Eigen::VectorXd& cand) {
    constexpr double kTwoPi = 6.283185307179586;
    const Eigen::VectorXd d = x - m;
    const double level = ll(x) - rng.exp1();
    double ang = kTwoPi * rng.unif();
    double lo = ang - kTwoPi, hi = ang;
    for (;;) {
      cand = m + std::cos(ang) * d + std::sin(ang) * nu;
      if (ll(cand) > level) {
        x = cand;
        return;
      }
      if (ang < 0) lo = ang; else hi = ang;
      if (!(hi - lo > 1e-12)) return;  // the bracket has closed on the current state
      ang = lo + (hi - lo) * rng.unif();
    }
  }

  // 1 - sigma~ = (-expm1(-(m + c)/2) + e^(-c)) / (1 + e^(-c)), c^2 = m^2 + v, with
  // m + c >= 0: formed without cancellation.
  static double one_minus_sigma_tilde(double mm, double v) {
    const double c = std::sqrt(mm * mm + v);
    const double ec = std::exp(-c);
    return (-std::expm1(-0.5 * std::max(mm + c, 0.0)) + ec) / (1.0 + ec);
  }

  // For row i: st[j] = sigma~_ij and the return value T * p0q
  // = fixed + sum_j theta_j (1 - sigma~_ij), each term formed without cancellation.
  double row_q(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, int i, double* st) const {
    double z = fixed_;
    for (int j = 0; j < q_; ++j) {
      const double mm = m(i, j);
      const double c = std::sqrt(mm * mm + v(i, j));
      st[j] = std::exp(-0.5 * mm - pg::LOG2 - pg::log_cosh(0.5 * c));
      z += theta_[j] * one_minus_sigma_tilde(mm, v(i, j));
    }
    return z;
  }

  CountRows Y_;  // n x K counts (one class per row: stored compactly)
  bool bij_;
  int slice_steps_;  // rounds of elliptical slice updates per Gibbs sweep (gibbs_move)
  int ref_steps_;     // rounds per Gibbs sweep with a reference (gibbs_move)
  double ref_scale_;  // c: the contrast moves' reference covariances are c^2 S_c
  bool ref_joint_;    // the contrast moves update all contrasts on one ellipse
  double ref_df_;     // nu of the contrast moves' t reference (0: Gaussian reference)
  int ref_avg_;       // draws averaging the reference's curvatures (0: at the mean)
  bool ref_full_;     // one joint reference of all contrasts (joint_reference())
  double ref_shift_;  // common shift of the latents where the curvatures are taken
  int ref_newton_;    // Newton steps towards the joint reference's mean (newton_mean())
  bool ref_cond_;     // per-contrast reference means conditional on the other contrasts
  int hmc_steps_;     // leapfrog steps per trajectory of the gradient move (0: none)
  int hmc_moves_;     // its trajectories per sweep
  int hmc_rank_;      // kernel eigenvectors per column of its metric adaptation (0: none)
  std::vector<double> theta_;
  int q_;
  double T_, fixed_;
  std::vector<double> N_, const_;
};

}  // namespace

std::unique_ptr<Likelihood> make_logistic_softmax(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(
      new LogisticSoftmax(CountRows(spec.mat("Y")), spec.flag("bijective"), spec.vec("theta"),
                          spec.has("slice_steps") ? static_cast<int>(spec.scalar("slice_steps")) : 0,
                          spec.has("ref_steps") ? static_cast<int>(spec.scalar("ref_steps")) : 0,
                          spec.has("ref_scale") ? spec.scalar("ref_scale") : 1.0,
                          spec.has("ref_joint") && spec.flag("ref_joint"),
                          spec.has("ref_df") ? spec.scalar("ref_df") : 0.0,
                          spec.has("ref_avg") ? static_cast<int>(spec.scalar("ref_avg")) : 0,
                          spec.has("ref_full") && spec.flag("ref_full"),
                          spec.has("ref_shift") ? spec.scalar("ref_shift") : 0.0,
                          spec.has("ref_newton") ? static_cast<int>(spec.scalar("ref_newton")) : 0,
                          spec.has("ref_cond") && spec.flag("ref_cond"),
                          spec.has("hmc_steps") ? static_cast<int>(spec.scalar("hmc_steps")) : 0,
                          spec.has("hmc_moves") ? static_cast<int>(spec.scalar("hmc_moves")) : 1,
                          spec.has("hmc_rank") ? static_cast<int>(spec.scalar("hmc_rank")) : 0));
}

}  // namespace augp
