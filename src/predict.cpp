// The dense predictive distribution (see predict.h for the formulas).
#include "predict.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "engine.h"
#include "gaussian_step.h"
#include "parallel.h"

namespace augp {

namespace {

// The kernel pieces of one kernel: K_* and k_** always; K (variational fits) or the
// factor L_K with A = L_K^-1 K_*, the conditional variances and, for draws, the upper
// factor R_c of the conditional covariance (Gibbs fits).
struct Pieces {
  Eigen::MatrixXd K, Ks, A, Rc;
  Eigen::VectorXd kss, condvar;
  Eigen::MatrixXd LK;
};

std::string jitter_error(double jitter) {
  std::ostringstream msg;
  msg << "The kernel matrix is not positive definite even with jitter " << jitter << ".";
  return msg.str();
}

void make_pieces(const KernelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& Xnew,
                 double jitter, bool gibbs, bool draws, Pieces& p) {
  p.Ks = kernel_eval(spec, X, Xnew, nullptr);
  p.kss = kernel_diag(spec, Xnew);
  if (!gibbs) {
    p.K = kernel_eval(spec, X, X, nullptr);
    p.K.diagonal().array() += jitter;
    return;
  }
  double jit = jitter;
  if (!chol_jitter(kernel_eval(spec, X, X, nullptr), &jit, p.LK))
    throw std::runtime_error("The kernel matrix is not positive definite.");
  p.A = p.LK.triangularView<Eigen::Lower>().solve(p.Ks);
  p.condvar = (p.kss - p.A.colwise().squaredNorm().transpose()).cwiseMax(0.0);
  if (!draws) return;
  Eigen::MatrixXd C = kernel_eval(spec, Xnew, Xnew, nullptr);
  C.noalias() -= p.A.transpose() * p.A;
  const Eigen::MatrixXd Cs = (C + C.transpose()) / 2.0;
  double jc = std::max(jitter, 1e-10 * std::max(1.0, Cs.diagonal().mean()));
  const double jc0 = jc;
  Eigen::MatrixXd Lc;
  if (!chol_jitter(Cs, &jc, Lc)) throw std::runtime_error(jitter_error(jc0));
  p.Rc = Lc.transpose();
}

}  // namespace

void predict_dense(const std::vector<KernelSpec>& specs, const Eigen::MatrixXd& X,
                   const Eigen::MatrixXd& Xnew, double jitter, const Eigen::MatrixXd& mu0new,
                   const DensePosterior& post, const double* z, int threads, DensePrediction& out) {
  const int n = X.rows(), m = Xnew.rows(), q = mu0new.cols();
  if (Xnew.cols() != X.cols()) throw std::invalid_argument("X and Xnew differ in their number of columns");
  if (mu0new.rows() != m) throw std::invalid_argument("the prior mean at the new inputs has the wrong size");
  if (specs.empty() || (specs.size() != 1 && static_cast<int>(specs.size()) != q))
    throw std::invalid_argument("need one kernel or one per latent column");
  const bool gibbs = post.gibbs, draws = gibbs && z != nullptr;
  const int S = post.n_draws;
  if (gibbs) {
    if (post.draws == nullptr || S < 1) throw std::invalid_argument("no posterior draws");
    if (post.mu0 == nullptr || post.mu0->rows() != n || post.mu0->cols() != q)
      throw std::invalid_argument("the prior mean at X has the wrong size");
  } else {
    if (post.alpha == nullptr || post.omega == nullptr || post.alpha->rows() != n ||
        post.alpha->cols() != q || post.omega->rows() != n || post.omega->cols() != q)
      throw std::invalid_argument("alpha and omega must be n x q");
  }
  const int threads_cols = threads_for_cubic(q, n, threads);
  std::vector<Pieces> pieces(specs.size());
  parallel_items(static_cast<int>(specs.size()), threads_for_cubic(static_cast<int>(specs.size()), n, threads),
                 [&](int k) { make_pieces(specs[k], X, Xnew, jitter, gibbs, draws, pieces[k]); });

  out.mean.resize(m, q);
  out.var.resize(m, q);
  if (draws) out.draws.resize(S, static_cast<Eigen::Index>(m) * q);
  else out.draws.resize(0, 0);

  if (!gibbs) {
    parallel_items(q, threads_cols, [&](int j) {
      const Pieces& p = pieces[specs.size() == 1 ? 0 : j];
      GaussianStep step;
      if (!step.factor(p.K, post.omega->col(j)))
        throw std::runtime_error("I + W^1/2 K W^1/2 is not positive definite.");
      const Eigen::MatrixXd V = step.solve_factor(step.sqrt_omega().asDiagonal() * p.Ks);
      out.mean.col(j) = mu0new.col(j) + p.Ks.transpose() * post.alpha->col(j);
      out.var.col(j) = (p.kss - V.colwise().squaredNorm().transpose()).cwiseMax(0.0);
    });
    return;
  }

  const Eigen::Map<const Eigen::MatrixXd> F(post.draws, S, static_cast<Eigen::Index>(n) * q);
  parallel_items(q, threads_cols, [&](int j) {
    const Pieces& p = pieces[specs.size() == 1 ? 0 : j];
    Eigen::MatrixXd C = F.middleCols(static_cast<Eigen::Index>(n) * j, n).transpose();  // n x S
    C.colwise() -= post.mu0->col(j);
    p.LK.triangularView<Eigen::Lower>().solveInPlace(C);
    Eigen::MatrixXd M = C.transpose() * p.A;  // S x m conditional means
    M.rowwise() += mu0new.col(j).transpose();
    const Eigen::RowVectorXd mu = M.colwise().mean();
    out.mean.col(j) = mu.transpose();
    if (S > 1) {
      out.var.col(j) = p.condvar + ((M.rowwise() - mu).colwise().squaredNorm().transpose() / S);
    } else {
      out.var.col(j) = p.condvar;
    }
    if (draws) {
      const Eigen::Map<const Eigen::MatrixXd> Z(z + static_cast<Eigen::Index>(S) * m * j, S, m);
      out.draws.middleCols(static_cast<Eigen::Index>(m) * j, m) = M + Z * p.Rc;
    }
  });
}

}  // namespace augp
