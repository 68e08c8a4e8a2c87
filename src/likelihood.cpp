// The likelihood registry and the parts of the likelihood interface that are the
// same for every likelihood: Monte Carlo summaries of the response mean and predictive
// intervals, the normal summary of an identity response mean, summaries
// over latent draws, and binomial / multinomial draws for simulate().
#include "likelihood.h"
#include "numerics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace augp {

// The factories, each defined in its likelihood's file.
std::unique_ptr<Likelihood> make_bernoulli(const LikSpec& spec);
std::unique_ptr<Likelihood> make_logistic_softmax(const LikSpec& spec);
std::unique_ptr<Likelihood> make_stick_breaking(const LikSpec& spec);
std::unique_ptr<Likelihood> make_gaussian(const LikSpec& spec);
std::unique_ptr<Likelihood> make_student_t(const LikSpec& spec);
std::unique_ptr<Likelihood> make_laplace(const LikSpec& spec);
std::unique_ptr<Likelihood> make_negative_binomial(const LikSpec& spec);
std::unique_ptr<Likelihood> make_poisson_logistic(const LikSpec& spec);
std::unique_ptr<Likelihood> make_ordinal(const LikSpec& spec);
std::unique_ptr<Likelihood> make_heteroscedastic(const LikSpec& spec);

namespace {

// The registry: one line per likelihood type.
std::map<std::string, LikFactory>& registry() {
  static std::map<std::string, LikFactory> r = {
      {"bernoulli", &make_bernoulli},
      {"binomial", &make_bernoulli},
      {"logistic_softmax", &make_logistic_softmax},
      {"stick_breaking", &make_stick_breaking},
      {"gaussian", &make_gaussian},
      {"student_t", &make_student_t},
      {"laplace", &make_laplace},
      {"negative_binomial", &make_negative_binomial},
      {"poisson_logistic", &make_poisson_logistic},
      {"ordinal", &make_ordinal},
      {"heteroscedastic_gaussian", &make_heteroscedastic},
  };
  return r;
}

// Mean, sd and (level > 0) interval of the values vals[t * R + k], t < S, for one
// point, written into row i of out.
void summarise_column_draws(const std::vector<double>& vals, int S, int R, int i, double level,
                            std::vector<double>& work, ResponseSummary& out) {
  for (int k = 0; k < R; ++k) {
    double a = 0.0;
    for (int t = 0; t < S; ++t) a += vals[static_cast<std::size_t>(t) * R + k];
    const double mu = a / S;
    double ss = 0.0;
    for (int t = 0; t < S; ++t) {
      const double d = vals[static_cast<std::size_t>(t) * R + k] - mu;
      ss += d * d;
    }
    out.mean(i, k) = mu;
    out.sd(i, k) = S > 1 ? std::sqrt(ss / (S - 1)) : 0.0;
    if (level > 0) {
      work.resize(S);
      for (int t = 0; t < S; ++t) work[t] = vals[static_cast<std::size_t>(t) * R + k];
      out.lwr(i, k) = quantile7(work, 0.5 * (1.0 - level));
      out.upr(i, k) = quantile7(work, 1.0 - 0.5 * (1.0 - level));
    }
  }
}

}  // namespace

void size_summary(ResponseSummary& out, int r, int R, double level) {
  out.mean.resize(r, R);
  out.sd.resize(r, R);
  if (level > 0) {
    out.lwr.resize(r, R);
    out.upr.resize(r, R);
  } else {
    out.lwr.resize(0, 0);
    out.upr.resize(0, 0);
  }
}

const Eigen::MatrixXd& LikSpec::mat(const std::string& name) const {
  auto it = fields.find(name);
  if (it == fields.end())
    throw std::invalid_argument("likelihood '" + type + "': missing field '" + name + "'");
  return it->second;
}

std::vector<double> LikSpec::vec(const std::string& name) const {
  const Eigen::MatrixXd& m = mat(name);
  return std::vector<double>(m.data(), m.data() + m.size());
}

double LikSpec::scalar(const std::string& name) const {
  const Eigen::MatrixXd& m = mat(name);
  if (m.size() != 1)
    throw std::invalid_argument("likelihood '" + type + "': field '" + name + "' must be a single value");
  return m(0, 0);
}

bool LikSpec::flag(const std::string& name) const { return scalar(name) != 0.0; }

std::unique_ptr<Likelihood> make_likelihood(const LikSpec& spec) {
  auto it = registry().find(spec.type);
  if (it == registry().end())
    throw std::invalid_argument("unknown likelihood type '" + spec.type + "'");
  return it->second(spec);
}

bool register_likelihood(const std::string& type, LikFactory factory) {
  registry()[type] = factory;
  return true;
}

double quantile7(std::vector<double>& x, double p) {
  const int n = static_cast<int>(x.size());
  if (n == 0) return NAN;
  const double h = (n - 1) * p;
  const int lo = static_cast<int>(std::floor(h));
  const int hi = std::min(n - 1, lo + 1);
  std::nth_element(x.begin(), x.begin() + lo, x.end());
  const double a = x[lo];
  if (hi == lo || h == lo) return a;
  const double b = *std::min_element(x.begin() + lo + 1, x.end());
  return b == a ? a : (1.0 - (h - lo)) * a + (h - lo) * b;
}

void Likelihood::response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd& Z, double level,
                                  ResponseSummary& out) const {
  const int r = static_cast<int>(m.rows()), q = static_cast<int>(m.cols());
  const int S = static_cast<int>(Z.rows()), R = n_response();
  if (v.rows() != r || v.cols() != q || Z.cols() != q || S < 1)
    throw std::invalid_argument("response_summary: m, v and Z do not conform");
  size_summary(out, r, R, level);
  Eigen::MatrixXd F(S, q);
  std::vector<double> vals(static_cast<std::size_t>(S) * R), work;
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < q; ++j) F.col(j) = m(i, j) + std::sqrt(std::max(v(i, j), 0.0)) * Z.col(j).array();
    const Eigen::MatrixXd P = response_mean(F);  // S x R
    for (int t = 0; t < S; ++t)
      for (int k = 0; k < R; ++k) vals[static_cast<std::size_t>(t) * R + k] = P(t, k);
    summarise_column_draws(vals, S, R, i, level, work, out);
  }
}

Eigen::VectorXd Likelihood::expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                            const Eigen::MatrixXd& Z) const {
  const int n = n_obs(), q = n_latent(), S = static_cast<int>(Z.rows());
  if (m.rows() != n || m.cols() != q || v.rows() != n || v.cols() != q)
    throw std::invalid_argument("expected_loglik: m and v must be n x q at the likelihood's observations");
  if (Z.cols() != q || S < 1) throw std::invalid_argument("expected_loglik: Z must be S x q with S >= 1");
  const Eigen::MatrixXd sd = v.cwiseMax(0.0).cwiseSqrt();
  Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd F(n, q);
  for (int t = 0; t < S; ++t) {
    for (int j = 0; j < q; ++j) F.col(j) = m.col(j) + Z(t, j) * sd.col(j);
    out += loglik_obs(F);
  }
  return out / S;
}

void Likelihood::predictive_interval(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double level,
                                     Rng& rng, Eigen::MatrixXd& lwr, Eigen::MatrixXd& upr) const {
  const int r = static_cast<int>(m.rows()), q = static_cast<int>(m.cols()), R = n_response();
  const int S = 2000;
  lwr.resize(r, R);
  upr.resize(r, R);
  Eigen::MatrixXd F(S, q);
  const Eigen::VectorXd one = Eigen::VectorXd::Ones(S);
  std::vector<double> work(S);
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < q; ++j)
      for (int t = 0; t < S; ++t) F(t, j) = m(i, j) + std::sqrt(std::max(v(i, j), 0.0)) * rng.norm();
    const Eigen::MatrixXd Y = simulate(F, one, rng);  // S x R
    for (int k = 0; k < R; ++k) {
      for (int t = 0; t < S; ++t) work[t] = Y(t, k);
      lwr(i, k) = quantile7(work, 0.5 * (1.0 - level));
      upr(i, k) = quantile7(work, 1.0 - 0.5 * (1.0 - level));
    }
  }
}

void normal_response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double extra,
                             double level, ResponseSummary& out) {
  const int r = static_cast<int>(m.rows());
  const double z = level > 0 ? normal_quantile(1.0 - 0.5 * (1.0 - level)) : 0.0;
  out.mean = m.leftCols(1);
  out.sd.resize(r, 1);
  out.lwr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
  out.upr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
  for (int i = 0; i < r; ++i) {
    const double s = std::sqrt(std::max(v(i, 0), 0.0) + extra);
    out.sd(i, 0) = s;
    if (level > 0) {
      out.lwr(i, 0) = m(i, 0) - z * s;
      out.upr(i, 0) = m(i, 0) + z * s;
    }
  }
}

void Likelihood::sample_aux_column(int j, const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                                   Eigen::MatrixXd& omega) const {
  Eigen::MatrixXd k, o;
  sample_aux(f, rng, k, o);
  kappa.col(j) = k.col(j);
  omega.col(j) = o.col(j);
}

void Likelihood::expect_aux_column(int j, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                   Eigen::MatrixXd& kappa, Eigen::MatrixXd& omega) const {
  Eigen::MatrixXd k, o;
  expect_aux(m, v, k, o);
  kappa.col(j) = k.col(j);
  omega.col(j) = o.col(j);
}

void Likelihood::set_params(const std::map<std::string, Eigen::MatrixXd>& p) {
  if (!p.empty()) throw std::invalid_argument("this likelihood has no parameter '" + p.begin()->first + "'");
}

void check_moment_shapes(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, int n, int q) {
  if (m.rows() != n || v.rows() != n || m.cols() != q || v.cols() != q)
    throw std::invalid_argument("expected_loglik: m and v must be n x " + std::to_string(q) +
                                " at the likelihood's observations");
}

void check_param_names(const std::map<std::string, Eigen::MatrixXd>& p,
                       const std::vector<std::string>& names) {
  for (const auto& kv : p)
    if (std::find(names.begin(), names.end(), kv.first) == names.end())
      throw std::invalid_argument("this likelihood has no parameter '" + kv.first + "'");
}

double positive_param(const std::map<std::string, Eigen::MatrixXd>& p, const std::string& name,
                      double current) {
  auto it = p.find(name);
  if (it == p.end()) return current;
  if (it->second.size() != 1 || !(it->second(0) > 0) || !std::isfinite(it->second(0)))
    throw std::invalid_argument("parameter '" + name + "' must be one positive finite value");
  return it->second(0);
}

void ParamDraws::apply(Likelihood& lik, int s) const {
  if (empty()) return;
  if (s < 0 || s >= values.rows()) throw std::invalid_argument("parameter draw out of range");
  std::map<std::string, Eigen::MatrixXd> p = lik.params();
  for (std::size_t k = 0; k < names.size(); ++k) {
    auto it = p.find(names[k]);
    if (it == p.end()) throw std::invalid_argument("the likelihood has no parameter '" + names[k] + "'");
    if (index[k] < 0 || index[k] >= it->second.size())
      throw std::invalid_argument("parameter '" + names[k] + "' has no element " + std::to_string(index[k] + 1));
    it->second(index[k]) = values(s, static_cast<Eigen::Index>(k));
  }
  lik.set_params(p);
}

void sigmoid_response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double scale,
                              double level, ResponseSummary& out) {
  const int r = static_cast<int>(m.rows());
  const GaussHermite& gh = gauss_hermite(40);
  out.mean.resize(r, 1);
  out.sd.resize(r, 1);
  const double z = level > 0 ? normal_quantile(1.0 - 0.5 * (1.0 - level)) : 0.0;
  out.lwr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
  out.upr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
  for (int i = 0; i < r; ++i) {
    const double s = std::sqrt(std::max(v(i, 0), 0.0));
    double e1 = 0.0, e2 = 0.0;
    for (int k = 0; k < gh.x.size(); ++k) {
      const double p = sigmoid(m(i, 0) + s * gh.x[k]);
      e1 += gh.w[k] * p;
      e2 += gh.w[k] * p * p;
    }
    out.mean(i, 0) = scale * e1;
    out.sd(i, 0) = scale * std::sqrt(std::max(e2 - e1 * e1, 0.0));
    if (level > 0) {
      out.lwr(i, 0) = scale * sigmoid(m(i, 0) - z * s);
      out.upr(i, 0) = scale * sigmoid(m(i, 0) + z * s);
    }
  }
}

void response_summary_draws(const Likelihood& lik, const std::vector<Eigen::MatrixXd>& draws,
                            double level, ResponseSummary& out, const ParamDraws& pd) {
  const int S = static_cast<int>(draws.size()), R = lik.n_response();
  if (S < 1) throw std::invalid_argument("response_summary_draws: no draws");
  if (!pd.empty() && pd.values.rows() != S)
    throw std::invalid_argument("response_summary_draws: one row of parameters per draw is needed");
  const int r = static_cast<int>(draws[0].rows());
  std::vector<Eigen::MatrixXd> P(S);
  std::unique_ptr<Likelihood> own = pd.empty() ? nullptr : lik.subset({});
  for (int s = 0; s < S; ++s) {
    if (own) pd.apply(*own, s);
    P[s] = (own ? *own : lik).response_mean(draws[s]);
  }
  size_summary(out, r, R, level);
  std::vector<double> vals(static_cast<std::size_t>(S) * R), work;
  for (int i = 0; i < r; ++i) {
    for (int t = 0; t < S; ++t)
      for (int k = 0; k < R; ++k) vals[static_cast<std::size_t>(t) * R + k] = P[t](i, k);
    summarise_column_draws(vals, S, R, i, level, work, out);
  }
}

double draw_binomial(double n, double p, Rng& rng) {
  // Knuth's splitting: the i-th smallest of n uniforms is X ~ Beta(i, n + 1 - i);
  // given X, the count below p is Binomial(i - 1, p / X) if X >= p, else
  // i + Binomial(n - i, (p - X) / (1 - X)). Small n: a sum of Bernoulli draws.
  if (!(n > 0) || !(p > 0)) return 0.0;
  if (p >= 1.0) return n;
  double count = 0.0;
  while (n > 64) {
    const double i = std::floor(0.5 * (n + 1));
    const double a = rng.gamma(i), b = rng.gamma(n + 1 - i);
    const double X = a / (a + b);
    if (X >= p) {
      n = i - 1;
      p /= X;
    } else {
      count += i;
      n -= i;
      p = (p - X) / (1.0 - X);
    }
    if (!(p > 0)) return count;
    if (p >= 1.0) return count + n;
  }
  for (int k = 0; k < static_cast<int>(n); ++k)
    if (rng.unif() < p) count += 1.0;
  return count;
}

void draw_multinomial(double size, const double* p, int K, Rng& rng, double* out) {
  // Sequential conditional binomials: category k takes Binomial(left, p_k / mass)
  // of what the earlier categories left, mass being the probability not yet used.
  double left = size, mass = 1.0;
  for (int k = 0; k < K - 1; ++k) {
    const double pk = std::max(p[k], 0.0);
    out[k] = left > 0 && mass > 0 ? draw_binomial(left, std::min(1.0, pk / mass), rng) : 0.0;
    left -= out[k];
    mass -= pk;
  }
  out[K - 1] = left;
}

std::vector<double> take_rows(const std::vector<double>& x, const std::vector<int>& rows) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (int i : rows) out.push_back(x.at(i));
  return out;
}

void check_regression_data(const std::vector<double>& y, const std::vector<double>& t) {
  if (y.size() != t.size()) throw std::invalid_argument("y and trials differ in length");
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!std::isfinite(y[i]) || !(t[i] >= 0)) throw std::invalid_argument("need finite y and trials >= 0");
}

}  // namespace augp
