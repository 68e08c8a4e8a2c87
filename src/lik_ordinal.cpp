// Ordinal likelihood with the continuation-ratio (sequential, stopping-ratio) logit
// link, Polya-Gamma augmented. An ordered response y in 1..K, one latent f, cut points
// c_1..c_{K-1} (their order is not needed by the likelihood):
//   P(y = k | f) = prod_{j<k} sigma(f - c_j) sigma(c_k - f)   (k < K),
//   P(y = K | f) = prod_{j<K} sigma(f - c_j),
// i.e. P(y = k | y >= k, f) = sigma(c_k - f): "stop at k" against "go on past k". The
// probabilities telescope to 1 (the mass left after k sticks is prod_{j<=k} sigma(f - c_j)).
// Row i has frequency weight t_i (the `trials` field): t_i copies of y_i.
//
// Sticks: observation y = k has s(k) = min(k, K - 1) factors, stick j being a Bernoulli
// in x_j = c_j - f with outcome a_j = 1 at j = k ("stop") and a_j = 0 for j < k ("go
// on"): sigma(x)^a sigma(-x)^(1-a). With the Polya-Gamma identity
//   sigma(x)^a sigma(-x)^(1-a) = 2^-1 e^(kappa_j x) E_{PG(1, 0)}[exp(-omega x^2 / 2)],
//   kappa_j = a_j - 1/2,
// and t copies per row (the sum of t independent PG(1, x) is PG(t, x)):
//   p(y_i, omega_i | f) = prod_j 2^(-t) exp(t kappa_j x_j - omega_ij x_j^2 / 2) PG(omega_ij | t, 0).
// Contract form: x_j = c_j - f, so t kappa_j x_j - omega_j x_j^2 / 2 =
//   const + (omega_j c_j - t kappa_j) f - omega_j f^2 / 2, summed over the sticks:
//   kappa_i = sum_j (omega_ij c_j - t_i kappa_ij),  omega_i = sum_j omega_ij.
// Gibbs: omega_ij | f ~ PG(t_i, c_j - f_i) for each stick j < s(y_i), independently.
// CAVI: q(omega_ij) = PG(t_i, r_ij), r_ij^2 = E[x_j^2] = (c_j - m_i)^2 + v_i, and the
// contract's kappa_i, omega_i with E[omega_ij] = t tanh(r / 2) / (2 r) in place of omega_ij.
// Local ELBO per stick (as for the binomial: the quadratic terms cancel against
// E_q[log q] of the tilted PG): t (-log 2 + kappa_j (c_j - m) - log cosh(r_ij / 2)),
// which at v = 0 is t log[sigma(x)^a sigma(-x)^(1-a)], and below E_q[log p(y | f)] by
// Jensen (the PG bound).
// Learned cut points (when `learn_cutpoints`): the local ELBO is a sum over sticks, and
// stick j involves c_j alone, so each cut point is its own 1-D problem. With q(omega) at
// its optimum the objective in c_j is concave (log cosh(sqrt(x^2 + v) / 2) is convex
// in x), and holding E[omega_ij] fixed the expected log joint is quadratic in c_j with
// maximiser
//   c_j = (sum_i E[omega_ij] m_i + sum_i t_i kappa_ij) / sum_i E[omega_ij]
// (the sums over the observations that reach stick j, y_i >= j). Alternating this with
// the update of q(omega) is EM (a minorise-maximise step of the concave objective): each
// step never lowers the local ELBO. learn_params() iterates it per cut point to
// convergence.
// Expected log-likelihood and the response summary (mean, sd) under f ~ N(m, v) by
// 40-point Gauss-Hermite quadrature (one latent); the interval of each category
// probability from its values at 1000 equally spaced normal quantiles of f (type-7).
// simulate(): stick by stick, Binomial(remaining, sigma(c_k - f)) stop at category k.
// Spec fields: y (category 1..K), trials (weights), cutpoints (K - 1), learn_cutpoints
// (default false).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

class Ordinal : public Likelihood {
 public:
  Ordinal(const std::vector<double>& y, const std::vector<double>& t, const std::vector<double>& c,
          bool learn)
      : y_(y), t_(t), c_(c), learn_(learn) {
    if (c_.empty()) throw std::invalid_argument("ordinal: need at least one cut point (K >= 2 categories)");
    for (double cj : c_)
      if (!std::isfinite(cj)) throw std::invalid_argument("ordinal: cut points must be finite");
    if (y_.size() != t_.size()) throw std::invalid_argument("ordinal: y and trials differ in length");
    const int K = n_response();
    for (std::size_t i = 0; i < y_.size(); ++i) {
      if (!(y_[i] >= 1 && y_[i] <= K) || y_[i] != std::round(y_[i]))
        throw std::invalid_argument("ordinal: y must be whole numbers in 1..K");
      if (!(t_[i] >= 0) || !std::isfinite(t_[i])) throw std::invalid_argument("ordinal: need finite trials >= 0");
    }
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return static_cast<int>(c_.size()) + 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new Ordinal(take_rows(y_, rows), take_rows(t_, rows), c_, learn_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      double ka = 0.0, om = 0.0;
      const double t = t_[i];
      if (t > 0) {
        for (int j = 0; j < sticks(i); ++j) {
          const double w = pg::draw_exact(t, c_[j] - f(i, 0), rng);
          om += w;
          ka += w * c_[j] - t * stick_kappa(i, j);
        }
      }
      kappa(i, 0) = ka;
      omega(i, 0) = om;
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      double ka = 0.0, om = 0.0;
      const double t = t_[i];
      if (t > 0) {
        for (int j = 0; j < sticks(i); ++j) {
          const double w = expected_omega(i, c_[j], m(i, 0), v(i, 0));
          om += w;
          ka += w * c_[j] - t * stick_kappa(i, j);
        }
      }
      kappa(i, 0) = ka;
      omega(i, 0) = om;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    double s = 0.0;
    for (int j = 0; j < n_response() - 1; ++j) s += stick_local(j, c_[j], m, v);
    return s;
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    for (int i = 0; i < n_obs(); ++i) out[i] = loglik_one(i, f(i, 0));
    return out;
  }

  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    const GaussHermite& gh = gauss_hermite(40);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i)
      out[i] = normal_expectation(gh, m(i, 0), v(i, 0), [&](double f) { return loglik_one(i, f); });
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    const int K = n_response();
    Eigen::MatrixXd P(f.rows(), K);
    std::vector<double> p(K);
    for (int i = 0; i < f.rows(); ++i) {
      probs(f(i, 0), p.data());
      for (int k = 0; k < K; ++k) P(i, k) = p[k];
    }
    return P;
  }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    const int K = n_response();
    Eigen::MatrixXd y(f.rows(), K);
    for (int i = 0; i < f.rows(); ++i) {
      double left = size[i];
      for (int k = 0; k < K - 1; ++k) {
        y(i, k) = draw_binomial(left, sigmoid(c_[k] - f(i, 0)), rng);
        left -= y(i, k);
      }
      y(i, K - 1) = left;
    }
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"cutpoints", Eigen::Map<const Eigen::MatrixXd>(c_.data(), static_cast<int>(c_.size()), 1)}};
  }

  // The cut points need not be ordered (the likelihood is defined for any values).
  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"cutpoints"});
    auto it = p.find("cutpoints");
    if (it == p.end()) return;
    if (it->second.size() != static_cast<Eigen::Index>(c_.size()))
      throw std::invalid_argument("parameter 'cutpoints' needs K - 1 values");
    for (Eigen::Index j = 0; j < it->second.size(); ++j)
      if (!std::isfinite(it->second(j))) throw std::invalid_argument("cut points must be finite");
    c_.assign(it->second.data(), it->second.data() + it->second.size());
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    if (!learn_) return 0.0;
    double gain = 0.0;
    for (int j = 0; j < n_response() - 1; ++j) {
      double c = c_[j], cur = stick_local(j, c, m, v);
      const double start = cur;
      for (int it = 0; it < 2000; ++it) {
        double num = 0.0, den = 0.0;
        for (int i = 0; i < n_obs(); ++i) {
          if (t_[i] <= 0 || sticks(i) <= j) continue;
          const double w = expected_omega(i, c, m(i, 0), v(i, 0));
          num += w * m(i, 0) + t_[i] * stick_kappa(i, j);
          den += w;
        }
        if (!(den > 0)) break;
        const double cn = num / den;
        if (!std::isfinite(cn)) break;
        const double val = stick_local(j, cn, m, v);
        if (!(val > cur)) break;
        const bool small = std::fabs(cn - c) <= 1e-10 * (1.0 + std::fabs(c));
        c = cn;
        cur = val;
        if (small) break;
      }
      if (cur > start) {
        c_[j] = c;
        gain += cur - start;
      }
    }
    return gain;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    const int r = static_cast<int>(m.rows()), K = n_response();
    const GaussHermite& gh = gauss_hermite(40);
    out.mean.resize(r, K);
    out.sd.resize(r, K);
    out.lwr.resize(level > 0 ? r : 0, level > 0 ? K : 0);
    out.upr.resize(level > 0 ? r : 0, level > 0 ? K : 0);
    std::vector<double> p(K), e1(K), e2(K);
    const int T = 1000;
    std::vector<double> zq;
    std::vector<std::vector<double>> vals;
    if (level > 0) {
      zq.resize(T);
      for (int t = 0; t < T; ++t) zq[t] = normal_quantile((t + 0.5) / T);
      vals.assign(K, std::vector<double>(T));
    }
    for (int i = 0; i < r; ++i) {
      const double s = std::sqrt(std::max(v(i, 0), 0.0));
      std::fill(e1.begin(), e1.end(), 0.0);
      std::fill(e2.begin(), e2.end(), 0.0);
      for (int g = 0; g < gh.x.size(); ++g) {
        probs(m(i, 0) + s * gh.x[g], p.data());
        for (int k = 0; k < K; ++k) {
          e1[k] += gh.w[g] * p[k];
          e2[k] += gh.w[g] * p[k] * p[k];
        }
      }
      for (int k = 0; k < K; ++k) {
        out.mean(i, k) = e1[k];
        out.sd(i, k) = std::sqrt(std::max(e2[k] - e1[k] * e1[k], 0.0));
      }
      if (level > 0) {
        for (int t = 0; t < T; ++t) {
          probs(m(i, 0) + s * zq[t], p.data());
          for (int k = 0; k < K; ++k) vals[k][t] = p[k];
        }
        for (int k = 0; k < K; ++k) {
          out.lwr(i, k) = std::min(quantile7(vals[k], 0.5 * (1.0 - level)), out.mean(i, k));
          out.upr(i, k) = std::max(quantile7(vals[k], 1.0 - 0.5 * (1.0 - level)), out.mean(i, k));
        }
      }
    }
  }

 private:
  // The number of sticks of observation i: min(y_i, K - 1).
  int sticks(int i) const { return std::min(static_cast<int>(y_[i]), n_response() - 1); }

  // kappa of stick j (0-based) of observation i: 1/2 where y_i stops (j = y_i - 1), -1/2 before.
  double stick_kappa(int i, int j) const { return j == static_cast<int>(y_[i]) - 1 ? 0.5 : -0.5; }

  // E[omega_ij] under q(omega_ij) = PG(t_i, r), r^2 = (c - m)^2 + v.
  double expected_omega(int i, double c, double m, double v) const {
    const double d = c - m;
    return pg::mean(t_[i], std::sqrt(d * d + std::max(v, 0.0)));
  }

  // The local ELBO of stick j (0-based) at cut point c.
  double stick_local(int j, double c, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const {
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double t = t_[i];
      if (t <= 0 || sticks(i) <= j) continue;
      const double d = c - m(i, 0);
      const double r = std::sqrt(d * d + std::max(v(i, 0), 0.0));
      s += t * (-pg::LOG2 + stick_kappa(i, j) * d - pg::log_cosh(0.5 * r));
    }
    return s;
  }

  // log p(y_i | f) with its weight.
  double loglik_one(int i, double f) const {
    if (t_[i] <= 0) return 0.0;
    double s = 0.0;
    const int ns = sticks(i), stop = static_cast<int>(y_[i]) - 1;
    for (int j = 0; j < ns; ++j) s += j == stop ? log_sigmoid(c_[j] - f) : log_sigmoid(f - c_[j]);
    return t_[i] * s;
  }

  // The K category probabilities at f into p: the mass left after each stick.
  void probs(double f, double* p) const {
    const int K = n_response();
    double rest = 1.0;
    for (int k = 0; k < K - 1; ++k) {
      p[k] = rest * sigmoid(c_[k] - f);
      rest *= sigmoid(f - c_[k]);
    }
    p[K - 1] = rest;
  }

  std::vector<double> y_, t_, c_;
  bool learn_;
};

}  // namespace

std::unique_ptr<Likelihood> make_ordinal(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new Ordinal(spec.vec("y"), spec.vec("trials"), spec.vec("cutpoints"),
                                                 spec.has("learn_cutpoints") && spec.flag("learn_cutpoints")));
}

}  // namespace augp
