// The interface every augmented likelihood implements (no R API here).
//
// Conditioned on its auxiliary variables, every likelihood is, in each latent
// value f_ij, proportional to exp(kappa_ij f_ij - omega_ij f_ij^2 / 2). The
// latent values form an n x q matrix (q = 1 for Bernoulli/binomial, one column
// per class or stick otherwise); column j has its own Gaussian step. A likelihood
// owns its data (y, trials, ...) and its parameters (class weights, ...), and works
// on whole matrices: one virtual call per sweep. Implementations must be
// thread-safe for concurrent const calls.
//
// Besides the inference steps, a likelihood answers everything the front end needs
// about the response: the response mean at latent values (the inverse link), its
// summary under Gaussian marginals of f or over latent draws, simulation, and
// per-observation log-likelihoods. The response has n_response() columns: the
// probability of a success per trial (1 column), the K category probabilities, or
// the mean of a continuous response (1 column).
#ifndef AUGP_LIKELIHOOD_H
#define AUGP_LIKELIHOOD_H

#include <Eigen/Dense>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rng.h"

namespace augp {

class KernelSet;  // engine.h: one kernel matrix (or Cholesky factor) per latent column

// A Gaussian approximation of the posterior in rotated coordinates, as the gradient move
// (gradient_move.h) takes it for its metric: with G = f Q (Q orthonormal, q x q), the
// columns G_c ~ N(mean_c, L_c L_c') independently (mean: n x q; L: q lower triangular
// n x n factors). Views into a MoveReference, which owns the matrices; Q == nullptr: none.
struct RotatedGaussian {
  const Eigen::MatrixXd* Q = nullptr;
  const Eigen::MatrixXd* mean = nullptr;
  const std::vector<Eigen::MatrixXd>* L = nullptr;
};

// What a likelihood's Gibbs move keeps from a fixed approximation of the posterior
// (Likelihood::gibbs_reference()); each likelihood derives its own. Read-only once
// made, so the chains of a run share it.
class MoveReference {
 public:
  virtual ~MoveReference() {}
  // The approximation as the gradient move's metric (default: none).
  virtual RotatedGaussian gaussian() const { return RotatedGaussian(); }
};

// Mean, standard deviation and central interval (lwr, upr; empty when not asked
// for) of the response mean, one row per point, n_response() columns.
struct ResponseSummary {
  Eigen::MatrixXd mean, sd, lwr, upr;
};

class Likelihood {
 public:
  virtual ~Likelihood() {}
  virtual int n_obs() const = 0;
  virtual int n_latent() const = 0;
  virtual int n_response() const = 0;

  // The same likelihood (same parameters) on the observations `rows` (0-based, any
  // order, possibly empty: an empty subset keeps only the parameters, which is all
  // the response methods below use).
  virtual std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const = 0;

  // Gibbs: draw the auxiliary variables given f; return kappa and omega (n x q).
  virtual void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                          Eigen::MatrixXd& omega) const = 0;

  // Gibbs: a Markov move on the latent values f (n x q), run at the start of every
  // sweep. It must leave the posterior p(f | y), proportional to
  // prod_j N(f_j; mu0_j, K_j) p(y | f), exactly invariant (the augmented step draws
  // its auxiliary variables afresh from f, so the chain stays exact). LK: the lower
  // Cholesky factors of the current kernel matrices K_j (they change from sweep to
  // sweep when the kernel hyperparameters are sampled). ref: what gibbs_reference()
  // prepared for the run, or nullptr. Returns true when the move replaces the sweep's
  // augmented step (sample_aux and the Gaussian step are then skipped).
  // Default: no move, false.
  virtual bool gibbs_move(Eigen::MatrixXd& /*f*/, const Eigen::MatrixXd& /*mu0*/,
                          const KernelSet& /*LK*/, const MoveReference* /*ref*/,
                          Rng& /*rng*/) const {
    return false;
  }
  // Whether gibbs_move() does anything (false: the sampler need not have the factors LK
  // ready for it, which after a move of a sampled kernel variance costs a factorisation).
  virtual bool has_gibbs_move() const { return false; }

  // Gibbs: leapfrog steps per trajectory of the gradient move (gradient_move.h: HMC on
  // p(f | y), run at the start of every sweep with a fixed kernel shared by the latent
  // columns, when gibbs_reference() gives a reference whose gaussian() is set) and its
  // trajectories per sweep. The move takes the gradient of log p(y | f) from
  // expected_loglik_derivs() at zero variances. Default: 0 steps, no such move.
  virtual int gradient_leapfrog() const { return 0; }
  virtual int gradient_trajectories() const { return 1; }
  // The rank per latent column of the gradient move's low-rank metric adaptation in
  // warm-up (GradientMove::set_adaptation(); 0: the reference's metric throughout).
  virtual int gradient_metric_rank() const { return 0; }

  // Full-Bayes Gibbs: a one-parameter group of maps of the latent values and one positive
  // parameter element x that leaves the likelihood exactly unchanged. Returns false (the
  // default) when the likelihood has none; otherwise names the element (*name, *index,
  // 0-based column-major) and promises, for every real d in the range below,
  //   p(y | phi_d(f), x e^d) = p(y | f, x),  phi_d(f)_ij = G^-1(G(f_ij) - d),
  // for an increasing G of one latent value that the likelihood fixes (so phi_0 is the
  // identity and phi_d2(phi_d1(f)) = phi_(d1 + d2)). In the coordinates (log x, G(f)) the
  // map is the translation along (1, -1, ..., -1), which is what makes the move built on it
  // (param_flow_move in param_sampler.h) exact.
  virtual bool param_flow(std::string* /*name*/, int* /*index*/) const { return false; }

  // The open interval (*lo, *hi) of the d for which phi_d(f) is defined (lo < 0 < hi,
  // infinite ends allowed). Default (no flow): the empty interval (0, 0).
  virtual void param_flow_range(const Eigen::MatrixXd& /*f*/, double* lo, double* hi) const {
    *lo = 0.0;
    *hi = 0.0;
  }

  // phi_d(f) into out (resized to f's shape), d inside the range; returns the log Jacobian
  // of the map at f, sum_ij log phi_d'(f_ij). Default (no flow): the identity, 0.
  virtual double param_flow_map(const Eigen::MatrixXd& f, double /*d*/, Eigen::MatrixXd& out) const {
    out = f;
    return 0.0;
  }

  // Full-Bayes Gibbs: log p(y | f) into *ll, its gradient in f into grad_f (n x q) and its
  // derivatives in t_k = log x_k into grad_t (length names.size()), x_k the positive
  // parameter element index[k] (0-based, column-major) of names[k]. Returns false (the
  // default) when the likelihood does not provide them (or not for these elements): the
  // joint gradient move of f and the parameters (latent_hmc.h) is then off.
  virtual bool loglik_gradient(const Eigen::MatrixXd& /*f*/, const std::vector<std::string>& /*names*/,
                               const std::vector<int>& /*index*/, double* /*ll*/,
                               Eigen::MatrixXd& /*grad_f*/, Eigen::VectorXd& /*grad_t*/) const {
    return false;
  }

  // Gibbs: prepares, once for a whole run (all chains), what gibbs_move() takes from a
  // Gaussian approximation of the posterior, q(f) = prod_j N(f_j; m_j, S_j) with
  // S_j = (K_j^-1 + diag(w_j))^-1 (the variational fit's means m and site precisions
  // w, both n x q, at the kernel matrices K). The move may use it as the fixed
  // reference distribution of its proposals: it stays the same for the whole run
  // (also when the kernel is sampled), which keeps the move exact whatever its
  // quality. Default: nullptr (the move takes no reference).
  virtual std::shared_ptr<const MoveReference> gibbs_reference(const Eigen::MatrixXd& /*m*/,
                                                               const Eigen::MatrixXd& /*w*/,
                                                               const KernelSet& /*K*/) const {
    return nullptr;
  }

  // Gibbs and CAVI: whether the latent columns are updated one after another, each from
  // auxiliaries refreshed at the current values of the others, instead of all from one
  // set of auxiliaries. A likelihood whose column j's auxiliaries depend on other columns
  // that the same sweep updates (two coupled latent functions) needs it: updating the
  // columns in parallel would then be neither a valid Gibbs sweep nor a coordinate
  // ascent. When true, a Gibbs sweep runs, for j = 0, ..., q - 1, sample_aux_column(j, f)
  // and then column j's Gaussian step (f holding the columns already updated), and a
  // CAVI sweep refreshes column j's sites with expect_aux_column(j, m, v) before the
  // update of q(f_j) for j >= 1 (column 0 takes the sites left by the previous sweep).
  // With sampled kernel hyperparameters every block must then serve one column.
  // Default false: the parallel sweep.
  virtual bool sequential_columns() const { return false; }

  // Column j of kappa and omega (n x q, already of that size; the other columns are left
  // as they are) given f: drawn (Gibbs) or expected given q(f) (CAVI). Defaults: column j
  // of sample_aux() / expect_aux().
  virtual void sample_aux_column(int j, const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                                 Eigen::MatrixXd& omega) const;
  virtual void expect_aux_column(int j, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                 Eigen::MatrixXd& kappa, Eigen::MatrixXd& omega) const;

  // CAVI: optimal q(aux) given q(f) with means m and marginal variances v (n x q);
  // return kappa and E[omega] (n x q).
  virtual void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                          Eigen::MatrixXd& kappa, Eigen::MatrixXd& omega) const = 0;

  // E_q[log p(y, aux | f)] - E_q[log q(aux)] summed over observations, with q(aux)
  // the optimum given (m, v). The ELBO is this minus the KL terms of q(f).
  virtual double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const = 0;

  // log p(y_i | f_i) for every observation (length n); loglik() is their sum.
  virtual Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const = 0;
  double loglik(const Eigen::MatrixXd& f) const { return loglik_obs(f).sum(); }

  // E[log p(y_i | f_i)] when the f_ij ~ N(m_ij, v_ij) independently (m, v: n x q at the
  // likelihood's own observations), for every observation (length n): the un-augmented
  // expected log-likelihood of the "direct" ELBO E_q[log p(y | f)] - KL(q(f) || p(f)).
  // The default averages loglik_obs over f_t = m + sqrt(v) Z_t for the S rows of Z (S x q
  // standard normals, the same for every point). A likelihood may override it with an
  // exact or quadrature computation (and then ignore Z).
  virtual Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                          const Eigen::MatrixXd& Z) const;

  // The moments a natural-gradient step on the direct ELBO needs (engine.h, cvi_refine):
  // with f_ij ~ N(m_ij, v_ij) independently (m, v: n x q at the likelihood's own
  // observations), grad(i, j) = E[d log p(y_i | f_i) / d f_ij], neg_hess(i, j) =
  // E[-d2 log p(y_i | f_i) / d f_ij^2] and ell = expected_loglik(m, v, Z) (length n). The
  // expectations may average over f_t = m + sqrt(v) Z_t (Z: S x q standard normals, as
  // for expected_loglik), and then grad is exactly the derivative of that average in m.
  // Returns false, the outputs unspecified, when the likelihood does not provide them
  // (the default).
  virtual bool expected_loglik_derivs(const Eigen::MatrixXd& /*m*/, const Eigen::MatrixXd& /*v*/,
                                      const Eigen::MatrixXd& /*Z*/, Eigen::MatrixXd& /*grad*/,
                                      Eigen::MatrixXd& /*neg_hess*/, Eigen::VectorXd& /*ell*/) const {
    return false;
  }

  // The response mean per trial at latent values f (r x q, any points): r x n_response().
  virtual Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const = 0;

  // One response per row of f (r x q) with size[i] trials: r x n_response(), the
  // total of size[i] independent responses (successes, counts per category, or the sum
  // of size[i] continuous responses); its mean is size[i] response_mean(f).
  virtual Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                                   Rng& rng) const = 0;

  // Parameters of the likelihood that the ELBO can learn (class weights, dispersion,
  // noise scale, ...), by the names of their spec fields; none by default.
  virtual std::map<std::string, Eigen::MatrixXd> params() const { return {}; }

  // Sets the learned parameters to the maximiser of elbo_local(m, v) with q(f) fixed
  // (q(aux) at its optimum for every value), starting from the current ones; never
  // lowers elbo_local. Returns the gain in elbo_local (0 without parameters).
  virtual double learn_params(const Eigen::MatrixXd&, const Eigen::MatrixXd&) { return 0.0; }

  // Sets the parameters named in p, each with the shape params() gives it (names not in
  // p keep their values). Throws std::invalid_argument for a name the likelihood does
  // not have, a wrong shape or a value outside the parameter's domain. Full-Bayes Gibbs
  // uses it to move the parameters (param_sampler.h) and predictions to apply each
  // posterior draw's values. Default: a likelihood without parameters (p must be empty).
  virtual void set_params(const std::map<std::string, Eigen::MatrixXd>& p);

  // Summary of response_mean(f) when the f_ij ~ N(m_ij, v_ij) independently (r x q).
  // The default averages over f_t = m + sqrt(v) Z_t for the S rows of Z (S x q
  // standard normals, the same for every point), with sample quantiles (R's type 7)
  // for the interval of probability `level` (level <= 0: no interval). A likelihood
  // may override it with an exact computation (and then ignore Z).
  virtual void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                const Eigen::MatrixXd& Z, double level,
                                ResponseSummary& out) const;

  // Central interval of probability `level` of the predictive distribution of one new
  // response (one trial) per point when f ~ N(m, v) independently (r x q): lwr and
  // upr, r x n_response(). The default takes type-7 quantiles of 2000 responses
  // simulated (simulate(), size 1) at f_t = m + sqrt(v) Z_t with standard normals Z_t
  // from rng. A likelihood may override it with an exact computation.
  virtual void predictive_interval(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double level,
                                   Rng& rng, Eigen::MatrixXd& lwr, Eigen::MatrixXd& upr) const;
};

// Per-draw values of a likelihood's sampled parameters: at draw s, element index[k]
// (0-based, column-major) of the parameter names[k] takes the value values(s, k).
struct ParamDraws {
  std::vector<std::string> names;
  std::vector<int> index;
  Eigen::MatrixXd values;  // S x names.size()
  bool empty() const { return names.empty(); }
  // Sets draw s's values on lik (throws std::invalid_argument for an unknown name or
  // index, or s out of range).
  void apply(Likelihood& lik, int s) const;
};

// Sizes out for r points and R response columns: mean and sd r x R, and lwr and upr
// r x R when level > 0 (else 0 x 0).
void size_summary(ResponseSummary& out, int r, int R, double level);

// The summary of a response whose mean is the latent value itself (one column) under
// f ~ N(m, v), widened by the variance `extra`: mean m, sd sqrt(v + extra) and the
// normal interval m -/+ z sqrt(v + extra) (level <= 0: none).
void normal_response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double extra,
                             double level, ResponseSummary& out);

// The summary of a response whose mean is scale * sigmoid(f) (one column) under
// f ~ N(m, v): mean and sd by 40-point Gauss-Hermite quadrature, and the interval
// scale * sigmoid(m -/+ z sqrt(v)) (sigmoid is increasing; level <= 0: none).
void sigmoid_response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double scale,
                              double level, ResponseSummary& out);

// Summary of the response mean over latent draws: draws[s] is the r x q matrix of
// draw s. Mean, sd (divisor S - 1) and type-7 quantiles over the draws.
// With pd non-empty, draw s uses the likelihood parameters of row s of pd (one row per
// draw).
void response_summary_draws(const Likelihood& lik, const std::vector<Eigen::MatrixXd>& draws,
                            double level, ResponseSummary& out, const ParamDraws& pd = ParamDraws());

// The sample quantile of R's type 7 of x (sorted in place), probability p.
double quantile7(std::vector<double>& x, double p);

// A likelihood's specification: its type and named numeric fields (vectors are
// n x 1 matrices, flags 0/1). The registry turns it into a Likelihood.
struct LikSpec {
  std::string type;
  std::map<std::string, Eigen::MatrixXd> fields;
  bool has(const std::string& name) const { return fields.count(name) > 0; }
  // The field `name`; throws std::invalid_argument if it is missing.
  const Eigen::MatrixXd& mat(const std::string& name) const;
  std::vector<double> vec(const std::string& name) const;
  double scalar(const std::string& name) const;
  bool flag(const std::string& name) const;
};

using LikFactory = std::unique_ptr<Likelihood> (*)(const LikSpec&);

// The one likelihood registry: the factory registered for spec.type (see the table
// in likelihood.cpp: one line per likelihood, each factory defined in its lik_*.cpp
// file). Throws std::invalid_argument for unknown types.
std::unique_ptr<Likelihood> make_likelihood(const LikSpec& spec);

// Adds a factory under `type` (used by the test-only likelihoods); returns true.
bool register_likelihood(const std::string& type, LikFactory factory);

// Binomial(n, p) for a whole number n >= 0: exact, O(log n) Beta splits for large n.
double draw_binomial(double n, double p, Rng& rng);

// The data of a regression likelihood: y and trials of one length, every y finite and
// every trial count >= 0; throws std::invalid_argument otherwise.
void check_regression_data(const std::vector<double>& y, const std::vector<double>& t);

// For expected_loglik() of a likelihood with q latent columns: throws
// std::invalid_argument unless m and v are both n x q.
void check_moment_shapes(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, int n, int q);

// loglik_gradient of a likelihood with one positive scalar parameter: are all the asked
// elements element 0 of `name`?
inline bool only_scalar_param(const std::vector<std::string>& names, const std::vector<int>& index,
                              const std::string& name) {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] != name || index[k] != 0) return false;
  return true;
}

// For set_params(): throws std::invalid_argument unless every name in p is in `names`.
void check_param_names(const std::map<std::string, Eigen::MatrixXd>& p,
                       const std::vector<std::string>& names);

// For set_params(): p[name] when p has it (it must be one positive finite value, else
// std::invalid_argument), `current` otherwise.
double positive_param(const std::map<std::string, Eigen::MatrixXd>& p, const std::string& name,
                      double current);

// The entries `rows` (0-based, bounds-checked) of a per-observation vector: the data
// of a likelihood's subset().
std::vector<double> take_rows(const std::vector<double>& x, const std::vector<int>& rows);

// Multinomial(size, p) into out (K counts), p summing to 1 (up to rounding).
void draw_multinomial(double size, const double* p, int K, Rng& rng, double* out);

}  // namespace augp

#endif
