// Polya-Gamma density, distribution function and the samplers' envelopes.
//
// Saddle-point rejection sampler for large b (exact; its cost does not grow with b)
// ---------------------------------------------------------------------------------
// With a_k = pi^2 (k - 1/2)^2, cosh(sqrt(v)) = prod_k (1 + v / a_k), so
//   L(v) = log cosh(sqrt(v)) = sum_k log(1 + v / a_k)   (log cos(sqrt(-v)) for -pi^2/4 < v < 0),
//   L1 = L' = sum_k 1 / (a_k + v) > 0,  L2 = L'' < 0,  L3 = L''' > 0,  and
//   4 v L2 + 2 L1 + 4 v L1^2 = 1  (from tanh' = 1 - tanh^2); its derivatives give L3 and L4.
// Near v = 0 the Taylor series L = sum_m (-1)^(m-1) S_m v^m / m, S_m = sum_k a_k^(-m), is used.
// The cumulant generating function of omega ~ PG(b, z) is
//   K(theta) = log E exp(theta omega) = b [L(v0) - L(v0 - theta / 2)],  v0 = z^2 / 4,
// so the saddle point theta^ of x (K'(theta^) = x) is theta^ = 2 (v0 - v) where v solves
//   x = (b / 2) L1(v)                                                         (1)
// (v depends on x / b only; v = v0 at the mean). With K2 = K''(theta^) = -(b / 4) L2(v),
//   log f_SP(x) = K(theta^) - theta^ x - log(2 pi K2) / 2
//               = b [L(v0) - L(v) - (v0 - v) L1(v)] - log(2 pi K2) / 2,
// and the second-order saddle-point density is f_SP2 = f_SP (1 + delta),
//   delta = lambda4 / 8 - 5 lambda3^2 / 24,  lambda3^2 = L3^2 / (b (-L2)^3),  lambda4 = -L4 / (b L2^2).
// The law tilted to have mean x is a sum of b unit pieces whose cumulants depend on v only, so
// the relative error rho = f / f_SP2 - 1 is a function of (b, v) alone, not of z: checking it
// over v at one z covers every (z, x). Measured against dpg() for v in (-pi^2/4, 1e4] it is
// |rho| <= 0.0152 / b^2 for b >= 4 (0.0145 / b^2 for large b); the sampler uses the band
// |log f - log f_SP2| <= -log(1 - eps), eps = 0.04 / b^2 plus rounding terms, and
// test-pg-saddle.R re-checks it. b delta(v) lies in [-1/12, 0] (its limits are those of the
// gamma law as x -> infinity and of the inverse Gaussian law as x -> 0).
//   Concavity: d^2/dx^2 log f_SP = -(1 + lambda4 / 2 - lambda3^2) / K2 with
// b (lambda4 / 2 - lambda3^2) >= -1 (the gamma limit), so log f_SP is concave in x for b > 1;
// its slope is d/dx log f_SP = 2 v - z^2 / 2 - L3 / (b L2^2).
//   Envelope: the tangents of log f_SP at three points (v0 and v0 -+ 1.3 / sqrt(-b L2(v0)), i.e.
// the mean and about 1.3 sd either side) form a piecewise exponential hull H >= f_SP; since
// f <= f_SP2 / (1 - eps) <= f_SP / (1 - eps) (delta <= 0), H / (1 - eps) dominates f. The
// acceptance rate is 0.77 at b = 4 and 0.88 for large b.
//   Step: draw x from the hull and u uniform; solve (1) for v by Newton on 1 / L1(v)^2 (increasing
// and nearly linear) inside a shrinking bracket; accept if u H <= f_SP2 (1 - eps), reject if
// u H > f_SP2 / (1 - eps), and otherwise (probability about 2 eps per proposal) decide with the
// exact density log_density(). Given the band the output is exactly PG(b, z); an exact density
// outside the band or above the hull is counted in saddle_violations() (the tests require 0).
// Per draw: a setup of four evaluations of L and its derivatives (skipped when b and z repeat),
// then per proposal a few Newton steps and one evaluation; nothing grows with b.
#include "polyagamma.h"

#include <algorithm>
#include <complex>
#include <mutex>

namespace augp {
namespace pg {

namespace {
// Constants of the saddle-point sampler (see the derivation at the top of this file).
constexpr double SADDLE_EPS_C = 0.04;     // |f / f_SP2 - 1| <= SADDLE_EPS_C / b^2 (b >= 4)
constexpr double SADDLE_DELTA_MAX = 1e-12;  // sup over v of b * delta(v) (0, up to rounding)
constexpr double SADDLE_AUTO_B = 13.0;     // automatic switch to the saddle-point sampler
constexpr double SADDLE_SPREAD = 1.3;     // tangent points at about +-1.3 sd
constexpr double NEG_INF = -std::numeric_limits<double>::infinity();
constexpr long double LD_EPS = std::numeric_limits<long double>::epsilon();
}  // namespace

double log_ncdf(double x) {
  if (x > 0.0) return std::log1p(-0.5 * std::erfc(x / std::sqrt(2.0)));
  // erfc keeps full relative accuracy in the tail until it underflows near x = -37.
  if (x > -30.0) return std::log(0.5 * std::erfc(-x / std::sqrt(2.0)));
  // Mills ratio R(u) = Phi(-u) / phi(u) by its continued fraction (backward evaluation).
  const double u = -x;
  double r = u;
  for (int k = 24; k >= 1; --k) r = u + k / r;
  return -0.5 * u * u - 0.5 * LOG2PI - std::log(r);
}

double mean(double b, double c) {
  const double z = std::fabs(c);
  if (z < 1e-3) {
    const double z2 = z * z;
    return 0.25 * b * (1.0 - z2 / 12.0 + z2 * z2 / 120.0);
  }
  return b * std::tanh(0.5 * z) / (2.0 * z);
}

double var(double b, double c) {
  const double z = std::fabs(c);
  if (z < 0.05) {
    const double z2 = z * z;
    return b / 24.0 * (1.0 - z2 / 5.0 + 17.0 * z2 * z2 / 560.0 - 31.0 * z2 * z2 * z2 / 7560.0);
  }
  const double y = 0.5 * z;
  const double sech = 1.0 / std::cosh(y);
  return b * (std::tanh(y) - y * sech * sech) / (2.0 * z * z * z);
}

std::atomic<long>& envelope_violations() {
  static std::atomic<long> count(0);
  return count;
}

// ---------------------------------------------------------------------------
// Left (small-x) series of f0: log|sum| and an estimate of its relative rounding error.
namespace {

struct SeriesValue {
  double log_value;  // log of the (positive) sum
  double rel_err;    // estimated relative error (inf if the sum is not positive)
};

// Sum of (-1)^n exp(lt_n) given a generator of log-terms; stops when terms are negligible.
template <class LogTerm>
SeriesValue alternating_sum(LogTerm log_term, long max_terms) {
  std::vector<long double> lt;
  lt.reserve(64);
  long double lmax = -std::numeric_limits<long double>::infinity();
  long double prev = -std::numeric_limits<long double>::infinity();
  for (long n = 0; n < max_terms; ++n) {
    const long double l = log_term(n);
    lt.push_back(l);
    if (l > lmax) lmax = l;
    if (n > 2 && l < prev && l < lmax - 60.0L) break;
    prev = l;
  }
  long double S = 0.0L, A = 0.0L;
  for (std::size_t n = lt.size(); n-- > 0;) {  // smallest terms first
    const long double v = std::exp(lt[n] - lmax);
    S += (n % 2 == 0) ? v : -v;
    A += v;
  }
  SeriesValue out;
  if (!(S > 0.0L) || lmax == -std::numeric_limits<long double>::infinity()) {
    out.log_value = NEG_INF;
    out.rel_err = std::numeric_limits<double>::infinity();
    return out;
  }
  out.log_value = static_cast<double>(std::log(S) + lmax);
  out.rel_err = static_cast<double>(8.0L * LD_EPS * A * std::sqrt((long double)lt.size() + 1.0L) / S);
  return out;
}

SeriesValue log_f0_left(double x, double b) {
  // log a_0 and then the exact ratio a_{n+1} / a_n (no lgamma per term).
  long double l = (b - 1.0) * LOG2 + std::log(b) - 0.5 * (LOG2PI + 3.0 * std::log(x)) -
                  b * b / (8.0 * x);
  const long double lb = b, lx = x;
  return alternating_sum(
      [&](long n) {
        if (n > 0) {
          const long double k = n - 1;  // step from term k to k + 1
          l += std::log((k + lb) / (k + 1.0L)) + std::log((2.0L * k + 2.0L + lb) / (2.0L * k + lb)) -
               (2.0L * k + 1.0L + lb) / (2.0L * lx);
        }
        return l;
      },
      200000);
}

}  // namespace

namespace {
// Sums s_j = sum_{k >= 2} (k (k - 1))^(-j), j = 1..J.
const std::vector<double>& stick_sums() {
  static const std::vector<double> s = [] {
    const int J = 90;
    // powers by repeated multiplication (smallest terms first), stopping once they vanish
    std::vector<long double> acc(J + 1, 0.0L);
    for (int k = 4000; k >= 2; --k) {
      const long double p = 1.0L / ((long double)k * (k - 1.0L));
      long double q = 1.0L;
      for (int j = 2; j <= J; ++j) {
        q *= (j == 2) ? p * p : p;
        if (q < 1e-4000L) break;
        acc[j] += q;
      }
    }
    std::vector<double> v(J + 1, 0.0);
    v[1] = 1.0;  // telescoping sum
    for (int j = 2; j <= J; ++j) v[j] = static_cast<double>(acc[j]);
    return v;
  }();
  return s;
}

}  // namespace

// Large-x expansion: f0(x) = (2 pi)^b / Gamma(b) exp(-pi^2 x / 2) E[(x - R)^(b-1)], where R is a
// sum of Gamma(b, 2 pi^2 k (k - 1)) variables (k >= 2); E[(x - R)^(b-1)] is expanded in the
// moments of R (asymptotic series, truncated at its smallest term).
bool log_f0_right(double x, double b, double* out) {
  const std::vector<double>& s = stick_sums();
  const int J = static_cast<int>(s.size()) - 1;
  const double q = 1.0 / (2.0 * PI2 * x);
  // scaled cumulants kx[i] = kappa_i / x^i and scaled moments mx[j] = m_j / x^j
  std::vector<double> kx(J + 1), mx(J + 1);
  double fact = 1.0;  // (i - 1)!
  double qi = 1.0;
  for (int i = 1; i <= J; ++i) {
    if (i > 1) fact *= (i - 1);
    qi *= q;
    kx[i] = b * fact * s[i] * qi;
  }
  mx[0] = 1.0;
  double sum = 1.0, coef = 1.0, last = 1.0;
  bool converged = false;
  for (int j = 1; j <= J; ++j) {
    double m = 0.0, binom = 1.0;  // binom = C(j-1, i-1)
    for (int i = 1; i <= j; ++i) {
      m += binom * kx[i] * mx[j - i];
      binom = binom * (j - i) / i;
    }
    mx[j] = m;
    coef *= (j - b) / j;  // (1-b)_j / j!
    const double term = coef * m;
    if (term == 0.0) {  // integer b: the expansion is a finite sum
      converged = true;
      break;
    }
    if (std::fabs(term) > std::fabs(last) && j > 3) break;  // asymptotic series diverging
    sum += term;
    last = term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) {
      converged = true;
      break;
    }
  }
  if (!converged || !(sum > 0.0)) return false;
  *out = b * std::log(2.0 * PI) - std::lgamma(b) - 0.5 * PI2 * x + (b - 1.0) * std::log(x) +
         std::log(sum);
  return true;
}

// ---------------------------------------------------------------------------
// Fourier inversion (used where neither series is accurate, i.e. large b near the bulk).
namespace {

// The exponentially tilted family: f_s(x) proportional to exp(-s x / 2) f0(x), s > -pi^2
// (s = c^2 gives PG(b, c); s < 0 tilts towards the right tail). Its normaliser is C(s)^b with
// C(s) = cosh(sqrt(s) / 2) for s >= 0 and cos(sqrt(-s) / 2) for s < 0.
double tilt_log_C(double s) {
  if (s >= 0.0) return log_cosh(0.5 * std::sqrt(s));
  return std::log(std::cos(0.5 * std::sqrt(-s)));
}

double tilt_mean(double b, double s) {
  if (std::fabs(s) < 1e-6) return 0.25 * b * (1.0 - s / 12.0 + s * s / 120.0);
  if (s > 0.0) {
    const double c = std::sqrt(s);
    return b * std::tanh(0.5 * c) / (2.0 * c);
  }
  const double r = std::sqrt(-s);
  return b * std::tan(0.5 * r) / (2.0 * r);
}

double tilt_var(double b, double s) {
  if (s >= 0.0) return var(b, std::sqrt(s));
  const double r = std::sqrt(-s);
  if (r < 0.05) return b / 24.0 * (1.0 - s / 5.0 + 17.0 * s * s / 560.0);
  const double sec = 1.0 / std::cos(0.5 * r);
  return b * (0.5 * r * sec * sec - std::tan(0.5 * r)) / (2.0 * r * r * r);
}

// The tilt s whose mean is x (the saddlepoint), by bisection.
double tilt_for_mean(double b, double x) {
  if (x >= 0.25 * b) {
    double lo = 0.0, hi = PI;  // r = sqrt(-s); the mean increases with r
    for (int it = 0; it < 200; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (tilt_mean(b, -mid * mid) < x) lo = mid; else hi = mid;
    }
    return -lo * lo;
  }
  double lo = 0.0, hi = std::max(1.0, std::pow(b / x, 2));
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (tilt_mean(b, mid) > x) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

// log of the characteristic function E[exp(i t omega)] of the tilted law.
std::complex<double> log_cf(double t, double b, double s) {
  const std::complex<double> w = std::sqrt(std::complex<double>(0.25 * s, -0.5 * t));
  const std::complex<double> lc = w + std::log(1.0 + std::exp(-2.0 * w)) - LOG2;
  return b * (tilt_log_C(s) - lc);
}

struct FourierGrid {
  double h;
  long kmax;
};

FourierGrid fourier_grid(double x, double b, double s) {
  const double m = tilt_mean(b, s), sd = std::sqrt(tilt_var(b, s));
  const double kappa = 0.5 * (PI2 + s);
  const double period = x + m + 60.0 * sd + 120.0 / kappa;
  FourierGrid g;
  g.h = 2.0 * PI / period;
  g.kmax = 4000000;
  return g;
}

// log density at x by the trapezoid rule on the Fourier integral of the law tilted so that
// its mean is x: there the density is of order 1 / sd and the absolute accuracy of the
// rule becomes a relative one. *rel_err estimates the relative rounding error.
double fourier_log_density(double x, double b, double c, double* rel_err) {
  const double s = tilt_for_mean(b, x);
  const FourierGrid g = fourier_grid(x, b, s);
  double acc = 0.5, mag = 0.5;
  int small = 0;
  for (long k = 1; k < g.kmax; ++k) {
    const double t = k * g.h;
    const std::complex<double> l = log_cf(t, b, s);
    if (l.real() < -45.0) {
      if (++small > 8) break;
      continue;
    }
    small = 0;
    const double a = std::exp(l.real());
    acc += a * std::cos(l.imag() - t * x);
    mag += a;
  }
  const double fs = g.h / PI * acc;
  *rel_err = (fs > 0.0) ? 1e-15 * (g.h / PI) * mag / fs : std::numeric_limits<double>::infinity();
  if (!(fs > 0.0)) return NEG_INF;
  return b * log_cosh(0.5 * c) - b * tilt_log_C(s) - 0.5 * (c * c - s) * x + std::log(fs);
}

double fourier_cdf(double x, double b, double c, double* abs_err) {
  const FourierGrid g = fourier_grid(x, b, c * c);
  double acc = g.h * x / (2.0 * PI);
  long k = 1;
  int small = 0;
  for (; k < g.kmax; ++k) {
    const double s = k * g.h;
    const std::complex<double> l = log_cf(s, b, c * c);
    if (l.real() - std::log((double)k) < -42.0) {
      if (++small > 8) break;
      continue;
    }
    small = 0;
    const std::complex<double> phi = std::exp(l);
    const std::complex<double> e = std::exp(std::complex<double>(0.0, -s * x));
    acc += (phi * (1.0 - e)).imag() / (PI * k);
  }
  *abs_err = 1e-15 * std::sqrt((double)k) + 1e-17;
  return acc;
}

// Gauss-Laguerre nodes and weights (alpha = 0), by Newton's method on the recurrence.
struct Laguerre {
  std::vector<double> x, w;
};

const Laguerre& laguerre_rule() {
  static const Laguerre rule = [] {
    const int n = 40;
    Laguerre r;
    r.x.resize(n);
    r.w.resize(n);
    double z = 0.0;
    for (int i = 0; i < n; ++i) {
      if (i == 0) z = 3.0 / (1.0 + 2.4 * n);
      else if (i == 1) z += 15.0 / (1.0 + 2.5 * n);
      else z += (1.0 + 2.55 * (i - 1)) / (1.9 * (i - 1)) * (z - r.x[i - 2]);
      double p1 = 0, p2 = 0, pp = 0;
      for (int it = 0; it < 100; ++it) {
        p1 = 1.0;
        p2 = 0.0;
        for (int j = 0; j < n; ++j) {
          const double p3 = p2;
          p2 = p1;
          p1 = ((2 * j + 1 - z) * p2 - j * p3) / (j + 1);
        }
        pp = n * (p1 - p2) / z;
        const double z1 = z;
        z = z1 - p1 / pp;
        if (std::fabs(z - z1) <= 1e-15 * std::fabs(z)) break;
      }
      r.x[i] = z;
      r.w[i] = -1.0 / (pp * n * p2);
    }
    return r;
  }();
  return rule;
}

}  // namespace

// ---------------------------------------------------------------------------
double log_density(double x, double b, double c, bool* ok) {
  *ok = true;
  if (!(x > 0.0)) return NEG_INF;
  if (std::isinf(x)) return NEG_INF;
  const double tilt = b * log_cosh(0.5 * c) - 0.5 * c * c * x;
  const SeriesValue left = log_f0_left(x, b);
  if (left.rel_err < 1e-11) return tilt + left.log_value;
  double lr;
  if (x >= 2.0 && log_f0_right(x, b, &lr)) return tilt + lr;
  // Saddlepoint-centred Fourier inversion.
  double rel;
  const double lf = fourier_log_density(x, b, c, &rel);
  if (rel < 1e-9) return lf;
  if (left.rel_err < rel) {
    *ok = left.rel_err < 1e-8;
    return tilt + left.log_value;
  }
  *ok = rel < 1e-8;
  return lf;
}

namespace {

// Lower-tail cdf by integrating the left series term by term (closed form per term).
SeriesValue log_cdf_left(double x, double b, double z) {
  const double sx = std::sqrt(x);
  const long double lc = b * log_cosh(0.5 * z) + (b - 1.0) * LOG2 + LOG2;
  const long double lgb = std::lgamma((long double)b);
  return alternating_sum(
      [&](long n) {
        const double m = 2.0 * n + b;
        const double beta = m / (2.0 * sx);
        const double l1 = -0.5 * m * z + log_ncdf(z * sx - beta);
        const double l2 = 0.5 * m * z + log_ncdf(-(z * sx + beta));
        return lc + std::lgamma((long double)n + b) - lgb - std::lgamma((long double)n + 1.0L) +
               (long double)log_add(l1, l2);
      },
      200000);
}

// Upper tail by Gauss-Laguerre on the large-x density expansion (x >= 2).
bool log_upper_right(double x, double b, double c, double* out) {
  const double kappa = 0.5 * (PI2 + c * c);
  const Laguerre& L = laguerre_rule();
  double acc = 0.0;
  for (std::size_t i = 0; i < L.x.size(); ++i) {
    const double s = x + L.x[i] / kappa;
    double lf;
    if (!log_f0_right(s, b, &lf)) return false;
    // f(s) exp(kappa s) = cosh^b(c/2) f0(s) exp(pi^2 s / 2)
    acc += L.w[i] * std::exp(lf + 0.5 * PI2 * s);
  }
  *out = b * log_cosh(0.5 * c) - kappa * x - std::log(kappa) + std::log(acc);
  return true;
}

}  // namespace

// A far tail by Gauss-Laguerre on the density: with lambda the local exponential rate of f at
// q (from the saddlepoint tilt), tail = (1 / lambda) sum_i w_i f(q +- u_i / lambda) exp(u_i).
bool log_tail_laguerre(double q, double b, double c, bool upper, double* out) {
  const double s = tilt_for_mean(b, q);
  const double lambda = 0.5 * std::fabs(c * c - s) + 1.0 / std::sqrt(tilt_var(b, s));
  const Laguerre& L = laguerre_rule();
  bool ok = true;
  const double l0 = log_density(q, b, c, &ok);
  if (!ok || !std::isfinite(l0)) return false;
  double acc = 0.0;
  for (std::size_t i = 0; i < L.x.size(); ++i) {
    const double y = upper ? q + L.x[i] / lambda : q - L.x[i] / lambda;
    if (y <= 0.0) continue;
    bool oki = true;
    const double l = log_density(y, b, c, &oki);
    if (!oki) return false;
    acc += L.w[i] * std::exp(l - l0 + L.x[i]);
  }
  *out = l0 - std::log(lambda) + std::log(acc);
  return true;
}

double cdf(double q, double b, double c, bool lower, bool log_p, bool* ok) {
  *ok = true;
  const double z = std::fabs(c);
  double lo = NEG_INF, up = NEG_INF;  // log P(<= q), log P(> q)
  if (!(q > 0.0)) {
    lo = NEG_INF;
    up = 0.0;
  } else if (std::isinf(q)) {
    lo = 0.0;
    up = NEG_INF;
  } else {
    const SeriesValue left = log_cdf_left(q, b, z);
    double lu;
    const bool have_right = q >= 2.0 && log_upper_right(q, b, z, &lu);
    if (have_right && lu < std::log(0.5)) {
      up = lu;
      lo = std::log1p(-std::exp(lu));
    } else if (left.rel_err < 1e-11 && left.log_value <= 0.0) {
      lo = left.log_value;
      up = lo < std::log(0.5) ? std::log1p(-std::exp(lo)) : std::log(-std::expm1(lo));
    } else {
      double err;
      double F = fourier_cdf(q, b, z, &err);
      F = std::min(1.0, std::max(0.0, F));
      lo = std::log(F);
      up = std::log1p(-F);
      if (err > 1e-8 * std::min(F, 1.0 - F)) {
        double lt;
        const bool upper = F > 0.5;
        if (log_tail_laguerre(q, b, z, upper, &lt) && lt < std::log(0.5)) {
          if (upper) {
            up = lt;
            lo = std::log1p(-std::exp(lt));
          } else {
            lo = lt;
            up = std::log1p(-std::exp(lt));
          }
        } else {
          *ok = false;
        }
      }
    }
  }
  const double r = lower ? lo : up;
  return log_p ? r : std::exp(r);
}

// ---------------------------------------------------------------------------
// Envelope table for fractional b.
namespace {

constexpr int FRAC_NODES = 256;

// For a grid node b_j = j / FRAC_NODES: the running maximum from the right of
// h(x) = f0(x) exp(pi^2 x / 2) on an x-grid over [0.01, 2] (h decreases beyond 2 for
// b < 1, where the large-x expansion has positive terms), and the grid index of the
// switch point t that minimises the envelope mass at c = 0.
struct FracNode {
  std::vector<double> suffix;
  int best = 0;
};

const std::vector<double>& frac_xgrid() {
  static const std::vector<double> xs = [] {
    std::vector<double> v;
    for (int i = 0; i <= 600; ++i) v.push_back(0.01 + (2.0 - 0.01) * i / 600.0);
    return v;
  }();
  return xs;
}

void compute_node(int j, FracNode* node) {
  const std::vector<double>& xs = frac_xgrid();
  const double b = static_cast<double>(j) / FRAC_NODES;
  node->suffix.assign(xs.size(), 0.0);
  double run = 0.0;
  for (std::size_t i = xs.size(); i-- > 0;) {
    const SeriesValue v = log_f0_left(xs[i], b);
    run = std::max(run, std::exp(v.log_value + 0.5 * PI2 * xs[i]));
    node->suffix[i] = run;
  }
  // t must stay below x*(b), where the terms of the series stop decreasing from n = 0.
  const double xstar = (1.0 + b) / (2.0 * std::log(2.0 + b));
  double bestmass = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < xs.size() && xs[i] < 0.95 * xstar; ++i) {
    const double t = xs[i];
    const double wl = std::pow(2.0, b) * 2.0 * std::exp(log_ncdf(-b / (2.0 * std::sqrt(t))));
    const double wr = node->suffix[i] * 2.0 / PI2 * std::exp(-0.5 * PI2 * t);
    if (wl + wr < bestmass) {
      bestmass = wl + wr;
      node->best = static_cast<int>(i);
    }
  }
}

// Nodes are computed on first use, once, whichever thread asks first.
const FracNode& frac_node(int j) {
  static FracNode nodes[FRAC_NODES + 1];
  static std::once_flag flags[FRAC_NODES + 1];
  std::call_once(flags[j], [j] { compute_node(j, &nodes[j]); });
  return nodes[j];
}

}  // namespace

// Envelope constants on the interval [j/N, (j+1)/N] containing b: the smaller of the two
// nodes' switch points, and 3% above the larger of their grid maxima of h beyond it.
FracConst frac_const(double b) {
  int j = static_cast<int>(std::floor(b * FRAC_NODES));
  j = std::min(std::max(j, 0), FRAC_NODES - 1);
  const FracNode& hi = frac_node(j + 1);
  int i = hi.best;
  double M = 0.0;
  if (j > 0) {
    const FracNode& lo = frac_node(j);
    i = std::min(i, lo.best);
    M = lo.suffix[i];
  }
  M = std::max(M, hi.suffix[i]);
  FracConst fc;
  fc.t = frac_xgrid()[i];
  fc.logM = std::log(M * 1.03);
  return fc;
}

SeriesSetup make_setup(double b, double z) {
  SeriesSetup s;
  s.b = b;
  s.z = z;
  s.unit = (b == 1.0);
  if (s.unit) {
    s.t = 0.16;
    s.logM = std::log(2.0 * PI);
  } else {
    const FracConst fc = frac_const(b);
    s.t = fc.t;
    s.logM = fc.logM;
  }
  s.lambda = 0.25 * b * b;
  s.mu = z > 0.0 ? b / (2.0 * z) : std::numeric_limits<double>::infinity();
  s.kappa = 0.5 * (PI2 + z * z);
  const double st = std::sqrt(s.t);
  const double beta = b / (2.0 * st);
  if (z < 600.0) {
    // plain arithmetic is safe here (no overflow or underflow of both masses)
    const double e = std::exp(0.5 * b * z);
    const double wl = (s.unit ? 1.0 : std::pow(2.0, b - 1.0)) *
                      (std::erfc((beta - z * st) * 0.70710678118654752440) / e +
                       e * std::erfc((z * st + beta) * 0.70710678118654752440));
    const double wr = std::exp(s.logM - s.kappa * s.t) / s.kappa;
    if (wl > 0.0 && std::isfinite(wl) && std::isfinite(wr)) {
      s.pleft = wl / (wl + wr);
      return s;
    }
  }
  const double log_pig = log_add(log_ncdf(z * st - beta), b * z + log_ncdf(-(z * st + beta)));
  const double log_wl = b * LOG2 - 0.5 * b * z + log_pig;
  const double log_wr = s.logM - std::log(s.kappa) - s.kappa * s.t;
  s.pleft = 1.0 / (1.0 + std::exp(log_wr - log_wl));
  return s;
}

// ---------------------------------------------------------------------------
// Saddle-point rejection sampler (large b).
namespace {

// S_m = sum_k a_k^(-m), a_k = pi^2 (k - 1/2)^2: the Taylor coefficients of L at 0,
// L(v) = sum_m (-1)^(m-1) S_m v^m / m.
constexpr int TAYLOR_TERMS = 24;

const std::vector<double>& taylor_s() {
  static const std::vector<double> s = [] {
    std::vector<double> out(TAYLOR_TERMS + 1, 0.0);
    for (int m = 1; m <= TAYLOR_TERMS; ++m) {
      long double acc = 0.0L;
      if (m == 1) {
        acc = PI2 / 8.0L;  // sum over odd k of k^-2
      } else {
        for (int j = 3000; j >= 0; --j) acc += std::pow(2.0L * j + 1.0L, -2.0L * m);
      }
      out[m] = static_cast<double>(std::pow(2.0L / (long double)PI, 2.0L * m) * acc);
    }
    return out;
  }();
  return s;
}

constexpr double TAYLOR_RADIUS = 0.25;  // |v| below this: Taylor series (ratio <= 0.11 per term)

}  // namespace

LDerivs l_derivs(double v) {
  LDerivs d;
  if (std::fabs(v) < TAYLOR_RADIUS) {
    const std::vector<double>& S = taylor_s();
    // Horner in v for L, L', L'', L''', L''''.
    double L = 0, g = 0, g1 = 0, g2 = 0, g3 = 0;
    for (int m = TAYLOR_TERMS; m >= 1; --m) {
      const double c = (m % 2 == 1) ? S[m] : -S[m];
      L = L * v + c / m;
      g = g * v + c;
      if (m >= 2) g1 = g1 * v + c * (m - 1);
      if (m >= 3) g2 = g2 * v + c * (m - 1) * (m - 2);
      if (m >= 4) g3 = g3 * v + c * (m - 1) * (m - 2) * (m - 3);
    }
    d.L = L * v;
    d.g = g;
    d.g1 = g1;
    d.g2 = g2;
    d.g3 = g3;
    return d;
  }
  if (v > 0.0) {
    const double s = std::sqrt(v);
    if (s > 19.0) {
      // tanh(s) = 1 and sech^2(s) = 0 to double precision: L' = v^(-1/2) / 2 and its derivatives.
      d.L = s - LOG2;
      d.g = 0.5 / s;
      d.g1 = -0.25 / (s * v);
      d.g2 = 0.375 / (s * v * v);
      d.g3 = -0.9375 / (s * v * v * v);
      return d;
    }
    const double e = std::exp(-2.0 * s);
    const double T = (1.0 - e) / (1.0 + e);
    const double Q = 4.0 * e / ((1.0 + e) * (1.0 + e));  // sech^2(s)
    d.L = s + std::log1p(e) - LOG2;
    d.g = T / (2.0 * s);
    d.g1 = (Q - T / s) / (4.0 * v);
  } else {
    const double r = std::sqrt(-v);
    const double T = std::tan(r);
    d.L = std::log(std::cos(r));
    d.g = T / (2.0 * r);
    d.g1 = (1.0 + T * T - T / r) / (4.0 * v);
  }
  // L' solves 4 v g' + 2 g + 4 v g^2 = 1; differentiating twice gives g'' and g'''.
  const double g = d.g, g1 = d.g1;
  d.g2 = (-6.0 * g1 - 4.0 * g * g - 8.0 * v * g * g1) / (4.0 * v);
  d.g3 = (-10.0 * d.g2 - 16.0 * g * g1 - 8.0 * v * g1 * g1 - 8.0 * v * g * d.g2) / (4.0 * v);
  return d;
}

SaddleEval saddle_eval(double v, double b, double z, double lch) {
  const LDerivs d = l_derivs(v);
  SaddleEval e;
  e.v = v;
  e.x = 0.5 * b * d.g;
  const double mg1 = -d.g1;  // > 0
  // log f_SP = b [L(v0) - L(v) - (v0 - v) L'(v)] - log(2 pi K'') / 2 with v0 = z^2 / 4 and
  // L(v0) = lch; for large v and v0 the difference L(v0) - L(v) is formed without cancellation.
  const double v0 = 0.25 * z * z;
  double ldiff;
  if (v > TAYLOR_RADIUS && v0 > TAYLOR_RADIUS) {
    const double s = std::sqrt(v), s0 = 0.5 * z;
    ldiff = (v0 - v) / (s0 + s) + std::log1p(std::exp(-2.0 * s0)) - std::log1p(std::exp(-2.0 * s));
  } else {
    ldiff = lch - d.L;
  }
  e.logf = b * (ldiff - (v0 - v) * d.g) - 0.5 * (LOG2PI + std::log(0.25 * b * mg1));
  e.slope = 2.0 * v - 0.5 * z * z - d.g2 / (b * mg1 * mg1);
  const double lam3sq = d.g2 * d.g2 / (b * mg1 * mg1 * mg1);
  const double lam4 = -d.g3 / (b * mg1 * mg1);
  e.delta = lam4 / 8.0 - 5.0 * lam3sq / 24.0;
  return e;
}

namespace {
// L'(v) and L''(v) only (for the Newton iteration); closed forms except very near v = 0.
inline void l_g_g1(double v, double* g, double* g1) {
  if (std::fabs(v) < 1e-3) {
    const std::vector<double>& S = taylor_s();
    *g = S[1] - v * (S[2] - v * (S[3] - v * S[4]));
    *g1 = -S[2] + v * (2.0 * S[3] - v * 3.0 * S[4]);
    return;
  }
  double T, Q, w;
  if (v > 0.0) {
    w = std::sqrt(v);
    const double e = std::exp(-2.0 * w);
    T = (1.0 - e) / (1.0 + e);
    Q = 4.0 * e / ((1.0 + e) * (1.0 + e));
  } else {
    w = std::sqrt(-v);
    T = std::tan(w);
    Q = 1.0 + T * T;
  }
  *g = T / (2.0 * w);
  *g1 = (Q - T / w) / (4.0 * v);
}
}  // namespace

double saddle_v(double x, double b, double v) {
  // F(v) = 1 / L'(v)^2 increases from 0 (at v = -pi^2/4) to infinity (about 4 v, nearly
  // linear): Newton on F(v) = Ft, kept inside a bracket that shrinks with every step.
  const double r = 2.0 * x / b;
  const double Ft = 1.0 / (r * r);
  double lo = -0.25 * PI2, hi = std::numeric_limits<double>::infinity();
  if (!(v > lo)) v = lo + 0.5;
  for (int it = 0; it < 200; ++it) {
    double g, g1;
    l_g_g1(v, &g, &g1);
    const double F = 1.0 / (g * g);
    const double diff = F - Ft;
    if (diff > 0.0) hi = v; else lo = v;
    if (diff == 0.0) return v;
    const double Fp = -2.0 * g1 / (g * g * g);
    double vn = v - diff / Fp;
    if (!(vn > lo && vn < hi)) vn = std::isinf(hi) ? v + 2.0 * (std::fabs(v) + 1.0) : 0.5 * (lo + hi);
    if (std::fabs(vn - v) <= 1e-15 * (1.0 + std::fabs(v))) return vn;
    v = vn;
  }
  return v;
}

std::atomic<long>& saddle_violations() {
  static std::atomic<long> count(0);
  return count;
}

double saddle_eps(double b, double z) {
  // the verified bound, widened by the rounding error of log f and of the exact density
  // (the exact log density carries terms of size b z / 2, rounded to about 1e-16 relative)
  return std::min(0.5, SADDLE_EPS_C / (b * b) + 1e-9 + 1e-15 * b * (1.0 + z));
}
double saddle_delta_max() { return SADDLE_DELTA_MAX; }
double saddle_auto_b() { return SADDLE_AUTO_B; }

namespace {
// log of the integral of exp(m u) over [0, w) (w may be infinite when m < 0).
double log_piece_mass(double m, double w) {
  if (std::isinf(w)) return -std::log(-m);
  const double a = m * w;
  if (std::fabs(a) < 1e-10) return std::log(w);
  if (a > 30.0) return a + std::log1p(-std::exp(-a)) - std::log(m);
  return std::log(std::expm1(a) / m);
}
}  // namespace

SaddleSetup make_saddle_setup(double b, double z) {
  SaddleSetup s;
  s.b = b;
  s.z = z;
  s.lch = log_cosh(0.5 * z);
  s.eps = saddle_eps(b, z);
  s.log_inflate = -std::log1p(-s.eps) + std::log1p(std::max(0.0, saddle_delta_max()) / b);
  const double v0 = 0.25 * z * z;
  const LDerivs d0 = l_derivs(v0);
  const double dv = SADDLE_SPREAD / std::sqrt(-b * d0.g1);  // about SADDLE_SPREAD sd in x
  const double vpole = -0.25 * PI2;
  double vs[SADDLE_PTS] = {v0 + dv, v0, v0 - dv};
  if (vs[2] <= vpole + 0.5 * (v0 - vpole)) vs[2] = vpole + 0.5 * (v0 - vpole);
  SaddleEval e[SADDLE_PTS];
  for (int j = 0; j < SADDLE_PTS; ++j) e[j] = saddle_eval(vs[j], b, z, s.lch);
  // the last tangent must fall (it carries the right tail)
  for (int it = 0; it < 60 && !(e[SADDLE_PTS - 1].slope < 0.0); ++it) {
    vs[SADDLE_PTS - 1] = vpole + 0.5 * (vs[SADDLE_PTS - 1] - vpole);
    e[SADDLE_PTS - 1] = saddle_eval(vs[SADDLE_PTS - 1], b, z, s.lch);
  }
  const double href = e[1].logf;
  for (int j = 0; j < SADDLE_PTS; ++j) {
    s.xj[j] = e[j].x;
    s.vj[j] = vs[j];
    s.hj[j] = e[j].logf - href;  // relative to the centre: the hull is defined up to a constant
    s.mj[j] = e[j].slope;
  }
  // intersections of consecutive tangents
  s.lo[0] = 0.0;
  for (int j = 0; j + 1 < SADDLE_PTS; ++j) {
    const double xi = (s.hj[j + 1] - s.hj[j] + s.mj[j] * s.xj[j] - s.mj[j + 1] * s.xj[j + 1]) /
                      (s.mj[j] - s.mj[j + 1]);
    s.hi[j] = xi;
    s.lo[j + 1] = xi;
  }
  s.hi[SADDLE_PTS - 1] = std::numeric_limits<double>::infinity();
  double lm[SADDLE_PTS], lmax = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < SADDLE_PTS; ++j) {
    lm[j] = s.hj[j] + s.mj[j] * (s.lo[j] - s.xj[j]) + log_piece_mass(s.mj[j], s.hi[j] - s.lo[j]);
    lmax = std::max(lmax, lm[j]);
  }
  double tot = 0.0;
  for (int j = 0; j < SADDLE_PTS; ++j) tot += std::exp(lm[j] - lmax);
  double acc = 0.0;
  for (int j = 0; j < SADDLE_PTS; ++j) {
    acc += std::exp(lm[j] - lmax) / tot;
    s.cum[j] = acc;
  }
  s.cum[SADDLE_PTS - 1] = 1.0;
  // hj are relative to href: restore the absolute level for comparisons with log f
  for (int j = 0; j < SADDLE_PTS; ++j) s.hj[j] += href;
  return s;
}

}  // namespace pg
}  // namespace augp
