// Persistent models for the kernel hyperparameter search (no R API here). A model
// is built once per fit from the inputs, the likelihood and the prior mean and then
// answers evaluations of the profiled ELBO
//   L*(theta) = max_q ELBO(q, theta)
// and its gradient, keeping across evaluations the data level (dense model) and the
// best variational state so far, which warm-starts the next evaluation. Neither the
// data nor any n x n matrix leaves the model between evaluations.
#ifndef AUGP_MODEL_H
#define AUGP_MODEL_H

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <vector>

#include "engine.h"
#include "kernel.h"
#include "likelihood.h"
#include "sparse.h"

namespace augp {

// One evaluation of the profiled ELBO: ok is false when CAVI failed or the value or
// the gradient is not finite (value and grad are then meaningless).
struct ProfileResult {
  double value = 0.0;
  std::vector<double> grad;
  bool ok = false;
};

// The exact (dense) model: q latent GPs f_j ~ N(mu0_j, K_j + jitter I) with one kernel
// shared by all columns (specs of size 1) or one kernel per column (size q). The
// search parameters theta are the kernels' log parameters concatenated in column order.
//
// Data level: the rows of X, mu0 and the likelihood the evaluations use (all rows
// after construction). Sites: the q(aux) summaries (kappa, E omega) that start the
// next evaluation's CAVI (none: CAVI starts from cavi_init); they are those of the
// best evaluation at the current level, or the warm start of set_level().
class DenseModel {
 public:
  DenseModel(const Eigen::MatrixXd& X, std::unique_ptr<Likelihood> lik, const Eigen::MatrixXd& mu0,
             double jitter, const std::vector<KernelSpec>& specs, int maxit, double tol,
             int threads);

  int n() const { return static_cast<int>(X_.rows()); }
  int q() const { return lik_->n_latent(); }
  int n_params() const;

  // Moves to the level `rows` (0-based rows of the full data) and forgets the best
  // evaluation. With warm, the sites of the new level are the expected q(aux) under
  // q(f) of the current level's best evaluation predicted at the new level's inputs
  // (VI predictive mean mu0 + K_*' alpha and variance k_** - k_*' W^1/2 B^-1 W^1/2 k_*,
  // B = I + W^1/2 K W^1/2, floored at 1e-12); without warm, or when the current level
  // has no successful evaluation or the prediction fails, there are no sites. Returns
  // whether the new level has sites.
  bool set_level(const std::vector<int>& rows, bool warm);

  // The profiled ELBO at theta: K from the kernels at the current level, CAVI with
  // SQUAREM (cavi_squarem) from the sites to the model's tol or maxit sweeps, the last
  // recorded ELBO, and the gradient of the collapsed bound at the converged q(aux)
  // (envelope theorem). A successful evaluation better than the level's best becomes
  // the best and its q(aux) the sites. tick runs before every CAVI cycle.
  ProfileResult evaluate(const std::vector<double>& theta, const std::function<void()>& tick);

  bool has_sites() const { return has_sites_; }
  // The sites (kappa, E omega) at the current level, level size x q.
  const Eigen::MatrixXd& kappa() const { return best_.kappa; }
  const Eigen::MatrixXd& omega() const { return best_.omega; }
  double best_value() const { return best_value_; }

 private:
  std::vector<KernelSpec> with_theta(const std::vector<double>& theta) const;

  Eigen::MatrixXd X_, mu0_;
  std::unique_ptr<Likelihood> lik_;
  std::vector<KernelSpec> specs_;
  double jitter_;
  int maxit_, threads_;
  double tol_;
  // The current level.
  std::vector<int> rows_;
  Eigen::MatrixXd Xs_, mu0s_;
  std::unique_ptr<Likelihood> liks_;  // null: the full likelihood
  const Likelihood& level_lik() const { return liks_ ? *liks_ : *lik_; }
  // The level's best evaluation: its kernels and CAVI state (has_fit_), and the sites.
  CaviState best_;
  std::vector<KernelSpec> best_specs_;
  double best_value_;
  bool has_sites_ = false, has_fit_ = false;
};

// The sparse data (X, mu0 (n x q, or 1 x q for the same means at every row) and the
// likelihood split into blocks of block_size rows, in
// the row order `order`, a permutation of 0..n-1, if given: its contents move into
// `data`, leaving it empty). copy = false: X and mu0 are viewed, not copied, and must
// outlive `data`.
void make_sparse_data(const Eigen::Ref<const Eigen::MatrixXd>& X,
                      const Eigen::Ref<const Eigen::MatrixXd>& mu0, const Likelihood& lik,
                      int block_size, SparseData& data, bool copy = true,
                      std::vector<int>* order = nullptr, const DesignStd* std = nullptr);

// The profiled sparse ELBO: qs (whitened under `from`) re-expressed under `to` (q(u)
// unchanged), CAVI with SQUAREM to tol or maxit sweeps, then one pass at the final
// q(u) for its ELBO (the last recorded one) and, if asked, its gradients in the log
// kernel parameters (grad) and Z (gz) with q(u) held fixed. qs ends whitened under `to`.
struct SparseProfile {
  double elbo = 0.0;
  std::vector<double> grad;
  Eigen::MatrixXd gz;
  std::vector<double> trace;
  bool converged = false;
};
void sparse_profile(const SparseGeom& from, const SparseGeom& to, SparseQ& qs, const SparseData& data,
                    int maxit, double tol, bool grad, bool zgrad, const ParallelFor& pf,
                    const std::function<void()>& tick, SparseProfile& out);

// The sparse model: the data built once, the jitter fixed by the first cavi() call and
// the best q(u) so far with the geometry (kernel, Z) it is whitened under.
class SparseModel {
 public:
  SparseModel(const Eigen::MatrixXd& X, const Eigen::MatrixXd& mu0, const Likelihood& lik,
              int block_size, const KernelSpec& spec, int threads);

  // CAVI at the geometry (theta, Z, jitter; the jitter escalates if K_mm needs it) from
  // `start` if given, else from the prior (from_best false) or from the best q(u)
  // (from_best true); a starting q(u) must be whitened under this geometry. Up to maxit
  // recorded sweeps. The result becomes the best q(u) and its geometry the best
  // geometry; the best value is reset to -Inf. Returns the recorded ELBO trace.
  std::vector<double> cavi(const std::vector<double>& theta, const Eigen::MatrixXd& Z, double jitter,
                           bool from_best, int maxit, double tol, bool accelerate, bool& converged,
                           const std::function<void()>& tick, const SparseQ* start = nullptr);

  // The profiled ELBO at (theta, Z) (the jitter of the best geometry, an error if K_mm
  // needs more) from the best q(u); a successful evaluation better than the best so far
  // becomes the best. grad: gradient in theta; zgrad: in Z.
  SparseProfile evaluate(const std::vector<double>& theta, const Eigen::MatrixXd& Z, int maxit,
                         double tol, bool grad, bool zgrad, bool& ok,
                         const std::function<void()>& tick);

  const SparseQ& best_q() const { return best_q_; }
  const SparseGeom& best_geom() const { return best_g_; }
  double best_value() const { return best_value_; }
  int q() const { return data_.q; }

 private:
  SparseGeom geom(const std::vector<double>& theta, const Eigen::MatrixXd& Z, double jitter,
                  bool strict) const;

  SparseData data_;
  KernelSpec spec_;
  ParallelFor pf_;
  SparseGeom best_g_;
  SparseQ best_q_;
  double best_value_;
  bool has_best_ = false;
};

}  // namespace augp

#endif
