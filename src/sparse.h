// Sparse variational GP with inducing points for every augmented likelihood
// (no R API here; likelihoods are known only through likelihood.h).
//
// Inducing locations Z (m x d), K_mm + jitter I = Lm Lm'. Each latent column j
// has q(u_j) stored whitened, v_j = Lm^-1 u_j ~ N(mv_j, Sv_j), through its
// natural parameters Lam_j = Sv_j^-1 (>= I) and h_j = Lam_j mv_j. With
// Phi = K_nm Lm^-T the marginals of f at the data are
//   m_ij = mu0_ij + Phi_i' mv_j,   v_ij = k_ii - |Phi_i|^2 + Phi_i' Sv_j Phi_i.
// Given the local q(aux) (kappa, E omega) the optimal q(u_j) is closed form:
//   Lam_j = I + Phi' diag(omega_j) Phi,  h_j = Phi' (kappa_j - omega_j mu0_j);
// minibatches scale the data sums by n / |batch| and take a natural-gradient
// step of size rho on (Lam, h).
// ELBO = sum_i elbo_local_i - sum_j KL(N(mv_j, Sv_j) || N(0, I)).
// Gradients in the kernel's log parameters and in Z hold q(u) fixed in the
// original (non-whitened) coordinates u = Lm v; by the envelope theorem
// d elbo_local / dm = kappa - omega m and d elbo_local / dv = -omega / 2.
// Data are processed in blocks (each with its own Likelihood object); blocks are
// split into a fixed number of groups whose sums are added in a fixed order, so
// results never depend on the number of threads.
#ifndef AUGP_SPARSE_H
#define AUGP_SPARSE_H

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <vector>

#include "kernel.h"
#include "likelihood.h"

namespace augp {

// Runs body(0), ..., body(count - 1), possibly concurrently.
using ParallelFor = std::function<void(int count, const std::function<void(int)>& body)>;

struct SparseBlock {
  int begin, end;  // positions [begin, end) of SparseData::order (the block's rows)
  std::unique_ptr<Likelihood> lik;
};

// The data of a sparse fit. X (n x d) and the prior means mu0 (n x q, or 1 x q: the
// same means at every row, m0_rows == 1), column-major, are either viewed in the caller's memory (which must outlive the data: the R
// matrices of one call) or held in own_X / own_mu0. The blocks cover the rows in the
// order `order` (a permutation of 0..n-1; empty: 0..n-1), so that minibatches of
// shuffled rows need no shuffled copy of X.
// Standardisation applied to the rows of a raw design as they are read: input j is
// column cols[j] (0-based) of the raw design, (x - centre[j]) / scale[j].
struct DesignStd {
  std::vector<int> cols;
  std::vector<double> centre, scale;
};

struct SparseData {
  const double* x = nullptr;
  const double* m0 = nullptr;
  Eigen::MatrixXd own_X, own_mu0;
  std::vector<int> order;
  std::vector<SparseBlock> blocks;
  int n = 0, d = 0, q = 1;
  int m0_rows = 0;  // rows of mu0: n, or 1 (one row for all)
  int d_raw = 0;   // columns of the design x points to
  DesignStd std;   // empty cols: x is the design itself (d_raw == d)
  // The block's rows of X (standardised, if std is set) and mu0 (nb x d and nb x q).
  void gather(const SparseBlock& blk, Eigen::MatrixXd& Xb, Eigen::MatrixXd& mu0b) const;
};

// Kernel, inducing locations and the factor of K_mm + jitter I.
struct SparseGeom {
  KernelSpec spec;
  Eigen::MatrixXd Z;
  double jitter = 1e-6;
  Eigen::MatrixXd Lm;  // lower
  // Factor K_mm (jitter escalates tenfold up to 10 times); false if impossible.
  bool setup();
};

// Whitened q(u) for all q columns, natural and moment forms.
struct SparseQ {
  std::vector<Eigen::MatrixXd> Lam, Sv;
  std::vector<Eigen::MatrixXd> Li;  // Lc^-1 for Lam = Lc Lc' (lower; Sv = Li' Li)
  std::vector<Eigen::VectorXd> h, mv;
  std::vector<double> logdet_lam;
  void init_prior(int m, int q);
  // Li, Sv, mv, logdet from (Lam, h); false if Lam is not positive definite. Columns
  // run through pf when given.
  bool refresh(const ParallelFor* pf = nullptr);
  double kl() const;
};

// Re-express q (whitened under `from`) under the geometry `to`, keeping q(u) fixed.
bool sparse_rewhiten(const SparseGeom& from, const SparseGeom& to, SparseQ& qs);

struct SparsePass {
  double elbo_local = 0.0;
  int count = 0;                        // observations visited
  std::vector<Eigen::MatrixXd> PtWP;    // per column: Phi' diag(omega) Phi (lower triangle only)
  std::vector<Eigen::VectorXd> Ptr;     // per column: Phi' (kappa - omega mu0)
  std::vector<double> gtheta;           // data part of the theta gradient (K_nm and diag terms)
  Eigen::MatrixXd C;                    // m x m accumulator for the K_mm gradient
  Eigen::MatrixXd Zbar;                 // m x d data part of the Z gradient (K_nm terms)
};

// Per-group accumulators kept between passes, so repeated passes reuse their memory.
struct SparseWork {
  std::vector<SparsePass> part;
};

// One pass over the listed blocks at the current geometry and q. The blocks are split
// into a fixed number of groups (independent of the thread count) whose sums are added
// in a fixed order; work (optional) holds the groups' accumulators between calls.
// With direct (S x q standard normals Z), the pass is on the direct ELBO: elbo_local is
// sum_i E_q[log p(y_i | f_i)] over f_i = m_i + sqrt(v_i) Z_t (the likelihood's
// expected_loglik_derivs) and the natural-parameter sums use the sites omega_ij =
// max(E[-d2 log p / df_ij^2], 1e-6), kappa_ij = E[d log p / df_ij] + omega_ij m_ij in place
// of the augmented expectations; the gradients are then those of the direct ELBO.
SparsePass sparse_pass(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                       const std::vector<int>& blocks, bool want_nat, bool want_grad,
                       bool want_zgrad, const ParallelFor& pf, SparseWork* work = nullptr,
                       const Eigen::MatrixXd* direct = nullptr);

// One pass over all the data at q(u): the ELBO (local terms summed block by block in a
// fixed order, minus the KL term) and the marginals of f at every row (n x q, in the
// rows' original order). Blocks run in parallel; each writes only its own rows.
double sparse_marginals(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                        const ParallelFor& pf, Eigen::MatrixXd& mean, Eigen::MatrixXd& var);

// Closed-form / natural-gradient global step: (Lam, h) <- (1 - rho) (Lam, h) + rho * target,
// target from the pass scaled by `scale` (n / batch size).
bool sparse_global_step(const SparsePass& p, double scale, double rho, SparseQ& qs,
                        const ParallelFor* pf = nullptr);

// ELBO (data part scaled by `scale`) and, if wanted, the gradient in the log parameters
// (gtheta) and Z (gz, m x d), completing the K_mm terms of the pass.
double sparse_finish_grad(const SparseGeom& g, const SparseQ& qs, const SparsePass& p, double scale,
                          bool want_grad, bool want_zgrad, std::vector<double>* gtheta,
                          Eigen::MatrixXd* gz);

// Stochastic variational inference: iteration t (1-based) visits the batch made of
// blocks [starts[t-1], starts[t-1] + blocks_per_batch), updates q(u) by a natural-
// gradient step rho_t = (t + tau)^-kappa and, if asked, takes an Adam step (learning
// rate lr) on the log kernel parameters and/or Z. Appends the minibatch ELBO estimate
// of each iteration to trace; tick(t) is called between iterations (main thread).
//
// Hyperparameter steps: none in the first `hyper_start`
// iterations (q(u) settles at the starting kernel first); Adam step s = 1, 2, ...
// then uses the learning rate lr * ((s + tau) / (1 + tau))^-kappa (the Robbins-Monro
// schedule of the natural-gradient steps, unless lr_decay is false), and each log
// kernel parameter is kept within +-box of its starting value (box <= 0: no box).
struct SviOptions {
  std::vector<int> starts;
  int blocks_per_batch = 1;
  double tau = 1.0, kappa = 0.6, lr = 0.01;
  bool learn_hyper = false, learn_inducing = false;
  int hyper_start = 0;
  bool lr_decay = true;
  double box = 0.0;
  // Direct-ELBO sites (the rows are S x q standard normals; see sparse_cvi_refine): each
  // step moves q(u) towards the minibatch estimate of the refinement's natural-gradient
  // target instead of the augmented one, and the kernel and Z steps follow the gradient
  // of the direct ELBO.
  const Eigen::MatrixXd* direct = nullptr;
};

// Minibatch estimate over the listed blocks: pass p (natural-gradient statistics and,
// if asked, gradient parts), scale = n / batch size, the scaled ELBO estimate
// (returned) and gradients. Its average over a partition of the data into equal-size
// batches equals the full-data ELBO / gradient exactly.
double sparse_batch_estimate(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                             const std::vector<int>& ids, bool want_grad, bool want_zgrad,
                             const ParallelFor& pf, SparsePass& p, double& scale,
                             std::vector<double>* gtheta, Eigen::MatrixXd* gz,
                             const Eigen::MatrixXd* direct = nullptr);
void sparse_svi(SparseGeom& g, SparseQ& qs, const SparseData& data, const SviOptions& opt,
                const ParallelFor& pf, std::vector<double>& trace,
                const std::function<void(int)>& tick);

// Full-data CAVI at a fixed geometry: up to maxit recorded sweeps from qs; converged
// when two consecutive recorded ELBOs differ by at most tol * max(1, |ELBO|).
// Plain (accelerate = false): each sweep records the ELBO of the current q(u) (one
// pass) and then sets q(u) in closed form, so qs ends one update past the last
// recorded ELBO unless converged.
// accelerate: SQUAREM (Varadhan and Roland 2008) on the natural parameters (Lam, h):
// from q0 two closed-form steps give q1, q2; the extrapolated
// q0 - 2 a r + a^2 v (r = q1 - q0, v = q2 - 2 q1 + q0, a = min(-1, -|r| / |v|)) is kept
// only if its Lam is positive definite and its ELBO is at least q1's, else the fit goes
// on from q2. Every recorded ELBO belongs to a valid q(u), the trace never decreases
// and qs ends as the q(u) of the last recorded ELBO. Peak memory: about 10 q m^2
// doubles (4 without acceleration). tick() runs on the calling thread between sweeps.
bool sparse_cavi(const SparseGeom& g, SparseQ& qs, const SparseData& data, int maxit, double tol,
                 bool accelerate, const ParallelFor& pf, std::vector<double>& trace,
                 const std::function<void()>& tick);

// Conjugate-computation VI on the direct ELBO D(q) = sum_i E_q[log p(y_i | f_i)] -
// sum_j KL(q(u_j) || p(u_j)), the expectations over f = m + sqrt(v) Z_t for the rows of
// Zd (S x q standard normals). Each round takes the direct sites (omega, kappa) of the
// current marginals (sparse_pass with direct) and moves the natural parameters to
// (1 - r) (Lam, h) + r (I + Phi' diag(omega) Phi, Phi' (kappa - omega mu0)), which is the
// damped step omega <- (1 - r) omega + r omega_new (kappa likewise) on the sites of a q(u)
// of that form; r starts at `step` (later rounds at next_rate(), refine_step.h) and
// halves (at most 4 times) while D would fall or Lam is not positive definite. Stops after `rounds` rounds, at a round without gain, or at a
// gain of at most tol * |D|. Appends D of the starting and of every accepted q(u) to
// direct (never decreasing); qs ends as the last accepted q(u). Returns the rounds
// accepted. Block sums run in fixed groups: the result does not depend on the threads.
int sparse_cvi_refine(const SparseGeom& g, SparseQ& qs, const SparseData& data, const Eigen::MatrixXd& Zd,
                      int rounds, double step, double tol, const ParallelFor& pf,
                      std::vector<double>& direct, const std::function<void()>& tick);

// Rows per work item of sparse_predict().
constexpr int SPARSE_PREDICT_CHUNK = 1024;
// Predictive marginals of f at new inputs for each column (nnew x q); mu0new: nnew x q,
// or 1 x q (the same prior means at every new input).
// qs must be refreshed (its Li used). pf: chunks of rows in parallel (NULL: serial).
void sparse_predict(const SparseGeom& g, const SparseQ& qs, const Eigen::MatrixXd& Xnew,
                    const Eigen::MatrixXd& mu0new, Eigen::MatrixXd& mean, Eigen::MatrixXd& var,
                    const ParallelFor* pf = nullptr);

}  // namespace augp

#endif
