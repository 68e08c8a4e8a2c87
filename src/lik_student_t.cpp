// Student-t likelihood (robust GP regression) as a scale mixture of normals:
//   y | f, w ~ N(f, s2 / w),  w ~ Gamma(nu / 2, rate nu / 2),
// which integrates to the Student-t density with nu degrees of freedom, location f
// and scale sigma = sqrt(s2). Row i has frequency weight t_i (the `trials` field):
// t_i copies of y_i, each with its own w.
//
// Contract form: given w, log N(y | f, s2 / w) = const + w y f / s2 - w f^2 / (2 s2):
//   kappa = W y / s2,  omega = W / s2,  W = the sum of the copies' w.
// Gibbs: w | f, y ~ Gamma(a, b), a = (nu + 1) / 2, b = (nu + (y - f)^2 / s2) / 2, so
// W ~ Gamma(t a, b) (a sum of t independent Gamma(a, b)).
// CAVI: q(w) = Gamma(a, b) with b = (nu + r / s2) / 2, r = (y - m)^2 + v, E[w] = a / b.
// Local ELBO per copy, E[log w] = digamma(a) - log b:
//   E[log N(y | f, s2 / w)] = E[log w] / 2 - log(2 pi s2) / 2 - E[w] r / (2 s2)
//   E[log p(w)]             = a0 log b0 - lgamma(a0) + (a0 - 1) E[log w] - b0 E[w]
//   -E[log q(w)]            = -a log b + lgamma(a) - (a - 1) E[log w] + b E[w]
// with a0 = b0 = nu / 2. The E[log w] terms cancel (1/2 + a0 - 1 - a + 1 = 0) and so do
// the E[w] terms (b = b0 + r / (2 s2)), leaving
//   -log(2 pi s2) / 2 + a0 log b0 - lgamma(a0) - a log b + lgamma(a),
// which at v = 0 is the Student-t log density.
// Learned parameters: s2 (when `learn_sigma`) by the EM fixed point s2 = sum t E[w] r / sum t (coordinate
// ascent in (q(w), s2): never lowers the ELBO); nu (when `learn_nu`) by a grid and
// golden-section search of the local ELBO over log nu in [log 0.2, log 1000], kept only
// when it raises the ELBO. The two steps alternate until the gain is negligible.
// Response mean E[y | f] = f (for nu > 1); predictive intervals by Monte Carlo (the
// contract's default).
// Spec fields: y, trials (weights), sigma, nu, learn_sigma (default true), learn_nu
// (default false).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"

namespace augp {

namespace {

const double LOG_2PI = 1.8378770664093454836;

class StudentT : public Likelihood {
 public:
  StudentT(const std::vector<double>& y, const std::vector<double>& t, double sigma, double nu,
           bool learn_sigma, bool learn_nu)
      : y_(y), t_(t), s2_(sigma * sigma), nu_(nu), learn_sigma_(learn_sigma), learn_nu_(learn_nu) {
    check_regression_data(y, t);
    if (!(sigma > 0) || !std::isfinite(sigma)) throw std::invalid_argument("sigma must be positive and finite");
    if (!(nu > 0) || !std::isfinite(nu)) throw std::invalid_argument("nu must be positive and finite");
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new StudentT(take_rows(y_, rows), take_rows(t_, rows),
                                                    std::sqrt(s2_), nu_, learn_sigma_, learn_nu_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    const double a = 0.5 * (nu_ + 1.0);
    for (int i = 0; i < n; ++i) {
      const double d = y_[i] - f(i, 0);
      const double b = 0.5 * (nu_ + d * d / s2_);
      const double W = t_[i] > 0 ? rng.gamma(t_[i] * a) / b : 0.0;
      omega(i, 0) = W / s2_;
      kappa(i, 0) = omega(i, 0) * y_[i];
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      omega(i, 0) = t_[i] * expected_w(i, m(i, 0), v(i, 0), s2_, nu_) / s2_;
      kappa(i, 0) = omega(i, 0) * y_[i];
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, s2_, nu_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    const double c = std::lgamma(0.5 * (nu_ + 1)) - std::lgamma(0.5 * nu_) - 0.5 * std::log(nu_ * M_PI * s2_);
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - f(i, 0);
      out[i] = t_[i] * (c - 0.5 * (nu_ + 1) * std::log1p(d * d / (nu_ * s2_)));
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override { return f.leftCols(1); }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    const double sigma = std::sqrt(s2_);
    for (int i = 0; i < f.rows(); ++i) {
      double s = 0.0;
      const int copies = static_cast<int>(std::round(size[i]));
      for (int k = 0; k < copies; ++k) {
        const double w = rng.gamma(0.5 * nu_) / (0.5 * nu_);
        s += f(i, 0) + sigma / std::sqrt(w) * rng.norm();
      }
      y(i, 0) = s;
    }
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"sigma", Eigen::MatrixXd::Constant(1, 1, std::sqrt(s2_))},
            {"nu", Eigen::MatrixXd::Constant(1, 1, nu_)}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"sigma", "nu"});
    const double sigma = positive_param(p, "sigma", std::sqrt(s2_));
    nu_ = positive_param(p, "nu", nu_);
    s2_ = sigma * sigma;
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    const double start = local(m, v, s2_, nu_);
    double cur = start;
    for (int round = 0; round < 50; ++round) {
      const double before = cur;
      // s2: EM fixed point (each step raises the ELBO).
      for (int it = 0; learn_sigma_ && it < 200; ++it) {
        double num = 0.0, den = 0.0;
        for (int i = 0; i < n_obs(); ++i) {
          const double d = y_[i] - m(i, 0);
          num += t_[i] * expected_w(i, m(i, 0), v(i, 0), s2_, nu_) * (d * d + v(i, 0));
          den += t_[i];
        }
        if (!(den > 0) || !(num > 0)) break;
        const double s2 = num / den, val = local(m, v, s2, nu_);
        if (!(val > cur)) break;
        const bool small = std::fabs(s2 - s2_) <= 1e-12 * s2_;
        s2_ = s2;
        cur = val;
        if (small) break;
      }
      if (learn_nu_) {
        const double lo = std::log(0.2), hi = std::log(1000.0);
        auto obj = [&](double ln) { return local(m, v, s2_, std::exp(ln)); };
        // nu on the log scale: a 40-cell grid over [0.2, 1000], then 60 golden-section steps.
        const Argmax1D best = maximise_grid_golden(obj, lo, hi, 40, 60, -1.0);
        const double ln = best.x, val = best.value;
        if (val > cur) {
          nu_ = std::exp(ln);
          cur = val;
        }
      }
      if (!(cur - before > 1e-10 * (1.0 + std::fabs(cur)))) break;
    }
    return cur - start;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    normal_response_summary(m, v, 0.0, level, out);
  }

 private:
  // E[w] under q(w) = Gamma((nu + 1) / 2, (nu + r / s2) / 2), r = (y - m)^2 + v.
  double expected_w(int i, double m, double v, double s2, double nu) const {
    const double d = y_[i] - m;
    return (nu + 1.0) / (nu + (d * d + v) / s2);
  }

  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double s2, double nu) const {
    // a0 log b0 - a log b = -a log1p(r / (nu s2)) - log(nu / 2) / 2 (b0 = a0 = nu / 2)
    const double a0 = 0.5 * nu, a = 0.5 * (nu + 1.0);
    const double c = -0.5 * (LOG_2PI + std::log(s2)) - 0.5 * std::log(a0) - std::lgamma(a0) + std::lgamma(a);
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - m(i, 0);
      s += t_[i] * (c - a * std::log1p((d * d + v(i, 0)) / (nu * s2)));
    }
    return s;
  }

  std::vector<double> y_, t_;
  double s2_, nu_;
  bool learn_sigma_, learn_nu_;
};

}  // namespace

std::unique_ptr<Likelihood> make_student_t(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new StudentT(spec.vec("y"), spec.vec("trials"), spec.scalar("sigma"),
                                                  spec.scalar("nu"),
                                                  !spec.has("learn_sigma") || spec.flag("learn_sigma"),
                                                  spec.has("learn_nu") && spec.flag("learn_nu")));
}

}  // namespace augp
