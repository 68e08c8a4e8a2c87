// The Polya-Gamma distribution PG(b, c): sampler, density and distribution
// function. No R API in this file: it is used from worker threads.
//
// Notation (all in the PG scale, omega = sum_k g_k / (2 pi^2 ((k - 1/2)^2 + c^2 / (4 pi^2)))):
//   f0(x | b)    density of PG(b, 0),
//   f(x | b, c) = cosh^b(c / 2) exp(-c^2 x / 2) f0(x | b).
//
// The density of PG(b, 0) is the alternating series sum_n (-1)^n a_n(x) with
//   a_n(x) = 2^(b-1) Gamma(n+b) / (Gamma(b) n!) (2n+b) / sqrt(2 pi x^3) exp(-(2n+b)^2 / (8x)).
//
// Sampler ("exact"):
//   * b = 1: Devroye's alternating-series rejection method, written in the PG scale
//     (left envelope: the n = 0 term, an inverse-Gaussian kernel; right envelope: the
//     leading term of the large-x series 2 pi sum_n (-1)^n (2n+1) exp(-pi^2 (2n+1)^2 x / 2)).
//   * integer b: sum of b independent PG(1, c) draws (additivity).
//   * 0 < b < 1: an alternating-series rejection sampler of our own: the left envelope is
//     again the n = 0 term (valid below t(b), where the terms decrease from n = 0), the
//     right envelope is M(b) exp(-pi^2 x / 2) with M(b) >= sup_{x >= t} f0(x) exp(pi^2 x / 2)
//     computed once per b-grid node from the density (see frac_table()); the accept/reject
//     decision uses partial sums that bracket f0, so the output is exactly PG(b, c).
//   * other b: floor(b) PG(1, c) draws plus one draw of the fractional part.
//   * b >= saddle_auto_b(), integer or not: instead, an exact rejection sampler whose envelope is
//     the tangent hull of the saddle-point approximation; accept/reject is decided by the
//     second-order saddle-point density within its verified error band, and by the exact
//     density inside the band (derivation at the top of polyagamma.cpp). Its cost does not
//     grow with b.
#ifndef AUGP_POLYAGAMMA_H
#define AUGP_POLYAGAMMA_H

#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "rng.h"

namespace augp {
namespace pg {

constexpr double PI = 3.141592653589793238462643383279502884;
constexpr double PI2 = PI * PI;
constexpr double LOG2 = 0.693147180559945309417232121458176568;
constexpr double LOG2PI = 1.837877066409345483560659472811235279;

// ---------- small numerical helpers ----------

// log(cosh(x)) without overflow.
inline double log_cosh(double x) {
  const double a = std::fabs(x);
  return a + std::log1p(std::exp(-2.0 * a)) - LOG2;
}

// log of the standard normal cdf, accurate in the far left tail.
double log_ncdf(double x);

// log(exp(a) + exp(b)).
inline double log_add(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// Exact moments.
double mean(double b, double c);
double var(double b, double c);

// log density of PG(b, c) at x (x > 0); *ok = false if no method reached 1e-8 relative.
double log_density(double x, double b, double c, bool* ok);

// ---------- sampler ----------

// Left-envelope threshold and right-envelope constant for a fractional b.
struct FracConst {
  double t;     // switch point between the two envelope pieces
  double logM;  // log M(b): right envelope is M exp(-pi^2 x / 2) on (t, inf)
};

// Lookup of (t, log M) for b in (0, 1), built once (thread-safe static init).
FracConst frac_const(double b);

// Number of times an envelope bound was found violated (should stay 0; checked by tests).
std::atomic<long>& envelope_violations();

// Everything that depends on (b, z) only, so repeated draws with the same
// parameters (the integer part of b) pay for it once.
struct SeriesSetup {
  double b, z, t, logM, lambda, mu, kappa, pleft;
  bool unit;  // b == 1: use the exact large-x series on the right
};

SeriesSetup make_setup(double b, double z);

// Truncated inverse Gaussian IG(mu, lambda) on (0, t]; mu = inf means the Levy law.
template <class RNG>
double rtrunc_ig(double mu, double lambda, double z, double t, RNG& rng) {
  if (!(mu < t)) {
    // Levy(lambda) = lambda / Z^2 restricted to x <= t, then tilt by exp(-z^2 x / 2).
    const double a = std::sqrt(lambda / t);
    for (;;) {
      double zz;
      if (a < 1.0) {
        do {
          zz = rng.norm();
        } while (std::fabs(zz) < a);
      } else {
        for (;;) {
          const double xx = std::sqrt(a * a - 2.0 * std::log(rng.unif()));
          if (rng.unif() * xx <= a) {
            zz = xx;
            break;
          }
        }
      }
      const double x = lambda / (zz * zz);
      if (z == 0.0 || rng.unif() <= std::exp(-0.5 * z * z * x)) return x;
    }
  }
  for (;;) {
    const double y = rng.norm();
    const double phi = mu * y * y / (2.0 * lambda);
    double x = mu / (1.0 + phi + std::sqrt(phi * phi + 2.0 * phi));
    if (rng.unif() > mu / (mu + x)) x = mu * mu / x;
    if (x <= t) return x;
  }
}

// log a_n(x) / a_0(x) ratio step: a_{n+1} / a_n.
inline long double left_ratio(long double n, long double b, long double x) {
  return (n + b) / (n + 1.0L) * (2.0L * n + 2.0L + b) / (2.0L * n + b) *
         std::exp(-(2.0L * n + 1.0L + b) / (2.0L * x));
}

// log a_0(x | b).
inline double log_a0(double x, double b) {
  return (b - 1.0) * LOG2 + std::log(b) - 0.5 * (LOG2PI + 3.0 * std::log(x)) -
         b * b / (8.0 * x);
}

// log f0 by the large-x expansion (b < 1 or x large); returns false if it did not converge.
bool log_f0_right(double x, double b, double* out);

// One draw of PG(b, z) for b in (0, 1] using a prepared setup.
// Is u <= f / envelope? The ratio is 1 - a_1 + a_2 - ... with a_n = term(n) decreasing from
// the first term on, so the partial sums alternate around it: odd ones are lower bounds
// (accept when u is below), even ones upper bounds (reject when u is above).
template <class T, class Term>
bool alternating_accept(T u, Term term) {
  T S = 1;
  for (long n = 1; n < 100000; ++n) {
    const T a = term(n);
    if (n % 2 == 1) {
      S -= a;
      if (u <= S) return true;
    } else {
      S += a;
      if (u > S) return false;
    }
  }
  return false;  // unreachable for valid input; guards against NaN loops
}

template <class RNG>
double draw_series(const SeriesSetup& s, RNG& rng) {
  for (;;) {
    const bool left = rng.unif() < s.pleft;
    const double x = left ? rtrunc_ig(s.mu, s.lambda, s.z, s.t, rng)
                          : s.t + rng.exp1() / s.kappa;
    const double u = rng.unif();
    if (left && s.unit) {
      // b = 1: a_n / a_0 = (2n + 1) exp(-((2n + 1)^2 - 1) / (8x)), decreasing below t.
      if (alternating_accept(u, [x](long n) {
            const double m = 2.0 * n + 1.0;
            return m * std::exp(-(m * m - 1.0) / (8.0 * x));
          }))
        return x;
      continue;
    }
    if (left) {
      // Terms decrease from n = 0 below t: a_n / a_0 by the exact ratio recurrence.
      long double a = 1.0L;
      if (alternating_accept((long double)u, [&a, &s, x](long n) {
            a *= left_ratio((long double)(n - 1), s.b, x);
            return a;
          }))
        return x;
      continue;
    }
    if (s.unit) {
      // Large-x series for b = 1, divided by its first term 2 pi exp(-pi^2 x / 2).
      if (alternating_accept(u, [x](long n) {
            const double m = 2.0 * n + 1.0;
            return m * std::exp(-0.5 * PI2 * x * (m * m - 1.0));
          }))
        return x;
      continue;
    }
    // Fractional b, x > t. Target / envelope = f0(x) / (M exp(-pi^2 x / 2)).
    if (x >= 2.0) {
      double lf;
      if (log_f0_right(x, s.b, &lf)) {
        const double r = std::exp(lf + 0.5 * PI2 * x - s.logM);
        if (r > 1.0) envelope_violations().fetch_add(1, std::memory_order_relaxed);
        if (u <= r) return x;
        continue;
      }
    }
    // Left series with the first terms summed until they decrease (n >= N0), then bounds.
    const long double lb = s.b, lx = x;
    const long double scale = std::exp((long double)log_a0(x, s.b) + 0.5L * PI2 * lx - s.logM);
    const long N0 = std::max(1L, (long)std::ceil(std::sqrt(s.b * x)));
    long double a = scale, S = scale;
    int verdict = 0;  // 1 accept, -1 reject
    for (long n = 0; n < 100000 && verdict == 0; ++n) {
      a *= left_ratio((long double)n, lb, lx);
      const long m = n + 1;  // S is now the partial sum through term m
      S += (m % 2 == 1) ? -a : a;
      if (m < N0 - 1) continue;
      // From m >= N0 - 1 on, the tail alternates with shrinking terms:
      // odd m gives a lower bound of f0 / envelope, even m an upper bound.
      if (m % 2 == 1) {
        if (S > 1.0L) envelope_violations().fetch_add(1, std::memory_order_relaxed);
        if (u <= S) verdict = 1;
      } else if (u > S) {
        verdict = -1;
      }
    }
    if (verdict == 1) return x;
  }
}

// ---------- saddle-point rejection sampler for large b (derivation in polyagamma.cpp) ----------

// L(v) = log cosh(sqrt(v)) (log cos(sqrt(-v)) for -pi^2/4 < v < 0) and its first four derivatives.
struct LDerivs {
  double L, g, g1, g2, g3;  // L and its derivatives of order 1 to 4
};
LDerivs l_derivs(double v);

// Smallest b the saddle-point sampler accepts, and the b from which the automatic choice uses it.
constexpr double SADDLE_MIN_B = 4.0;
double saddle_auto_b();

// The saddle-point approximation at the saddle v: the point x(v), log f_SP(x) (first order),
// its slope in x, and the second-order correction delta (f_SP2 = f_SP (1 + delta)).
struct SaddleEval {
  double v, x, logf, slope, delta;
};
SaddleEval saddle_eval(double v, double b, double z, double logcosh_half_z);

// Solve x(v) = x for v (safeguarded Newton, started at v_start).
double saddle_v(double x, double b, double v_start);

// Half-width of the band |f / f_SP2 - 1| <= eps used for PG(b, z), and the sup over v of b * delta.
double saddle_eps(double b, double z);
double saddle_delta_max();

constexpr int SADDLE_PTS = 3;
struct SaddleSetup {
  double b = 0, z = -1, lch = 0;  // lch = log cosh(z / 2)
  double xj[SADDLE_PTS], vj[SADDLE_PTS], hj[SADDLE_PTS], mj[SADDLE_PTS];
  double lo[SADDLE_PTS], hi[SADDLE_PTS];  // piece j covers [lo_j, hi_j)
  double cum[SADDLE_PTS];                 // cumulative piece probabilities
  double log_inflate = 0, eps = 0;        // hat = exp(log_inflate + tangent hull); band half-width
};
SaddleSetup make_saddle_setup(double b, double z);

// Number of times the exact density left the verified band or exceeded the hat (should stay 0).
std::atomic<long>& saddle_violations();

// Draw from piece j of the tangent hull: the density exp(m x) truncated to [lo, hi).
template <class RNG>
double hull_piece_draw(double m, double lo, double hi, RNG& rng) {
  const double u = rng.unif();
  if (std::isinf(hi)) return lo - std::log(u) / (-m);  // m < 0 on the last piece
  const double w = hi - lo;
  if (std::fabs(m * w) < 1e-12) return lo + u * w;
  // inverse cdf measured from the end where the density is largest (no overflow for any m w)
  const double y = m < 0.0 ? lo + std::log1p(u * std::expm1(m * w)) / m
                           : hi + std::log1p(u * std::expm1(-m * w)) / m;
  return std::min(std::max(y, lo), hi);
}

template <class RNG>
double draw_saddle(const SaddleSetup& s, RNG& rng) {
  // |log(f / f_SP2)| <= band on the whole half-line (see saddle_eps()).
  const double band = -std::log1p(-s.eps);
  for (;;) {
    const double u0 = rng.unif();
    int j = 0;
    while (j < SADDLE_PTS - 1 && u0 > s.cum[j]) ++j;
    const double x = hull_piece_draw(s.mj[j], s.lo[j], s.hi[j], rng);
    if (!(x > 0.0) || !std::isfinite(x)) continue;
    const double loghat = s.log_inflate + s.hj[j] + s.mj[j] * (x - s.xj[j]);
    const double lu = std::log(rng.unif()) + loghat;
    // start Newton from the saddle interpolated linearly in 1 / x^2 between tangent points
    const int k = j == 0 ? 0 : j - 1;
    const double ik = 1.0 / (s.xj[k] * s.xj[k]), ik1 = 1.0 / (s.xj[k + 1] * s.xj[k + 1]);
    const double v_start = s.vj[k] + (s.vj[k + 1] - s.vj[k]) * (1.0 / (x * x) - ik) / (ik1 - ik);
    const double v = saddle_v(x, s.b, v_start);
    const SaddleEval e = saddle_eval(v, s.b, s.z, s.lch);
    const double lsp = e.logf + std::log1p(e.delta);
    const double bw = band + 1e-14 * std::fabs(lsp);  // plus the rounding of log f itself
    if (lu <= lsp - bw) return x;   // below the lower bound of f: accept
    if (lu > lsp + bw) continue;    // above the upper bound of f: reject
    bool ok = true;                   // inside the band: decide with the exact density
    const double lf = log_density(x, s.b, s.z, &ok);
    if (!(std::fabs(lf - lsp) <= bw) || lf > loghat + 1e-14 * std::fabs(lf))
      saddle_violations().fetch_add(1, std::memory_order_relaxed);
    if (lu <= lf) return x;
  }
}

// ---------- b beyond the reach of density evaluations: the Cornish-Fisher expansion ----------
//
// The cumulant generating function of PG(b, c) is K(s) = b [L(v0) - L(v0 - s / 2)] with
// v0 = c^2 / 4 (the Laplace transform cosh(c/2)^b / cosh(sqrt(c^2/4 + t/2))^b), so the
// cumulants are k_j = b (-1)^(j+1) L^(j)(v0) / 2^j. The draw is the Cornish-Fisher quantile
// of a standard normal u to order 1 / b:
//   x = k1 + sqrt(k2) [u + g1 (u^2 - 1) / 6 + g2 (u^3 - 3 u) / 24 - g1^2 (2 u^3 - 5 u) / 36]
// with g1 = k3 / k2^(3/2) = O(b^-1/2) and g2 = k4 / k2^2 = O(1 / b). The next terms are
// O(b^-3/2) standard deviations (about 3e-14 at b = 1e9, smaller for larger |c|), while the
// spacing of doubles near x is about 2e-16 sqrt(b) standard deviations (6e-12 at b = 1e9): from
// PG_EXPANSION_B on, the draw is the exact quantile rounded to double precision. (There, the
// log density has terms of size b whose rounding, 1e-16 b, defeats any rejection test.)
constexpr double PG_EXPANSION_B = 1e9;

// The same holds for any b once |c| is large: for z >> 1 the series terms of PG(b, z) up to
// k of about z / (2 pi) carry nearly equal weights, so PG(b, z) is a sum of about b z / 2
// unit-shape gamma variables (b times 1.5 at z = 0), its standardised cumulants fall with
// b z like those of a gamma of that shape, and the expansion's error falls below the spacing
// of doubles once b max(1, z / 3) >= PG_EXPANSION_B. There the saddle-point sampler's
// rejection test is defeated by rounding (its tangents have slopes of order z^2), so the
// expansion is used from that point on (pg_use_expansion()).
inline bool pg_use_expansion(double b, double z) {
  return b * std::max(1.0, z / 3.0) >= PG_EXPANSION_B;
}

template <class RNG>
double draw_expansion(double b, double z, RNG& rng) {
  // Beyond z = 1e100 (where z^2 / 4 nears overflow) the mean is b / (2 z) to double precision
  // (tanh(z / 2) = 1) and the standard deviation below 1e-50 of it: the draw is the mean.
  if (z > 1e100) return 0.5 * b / z;
  const LDerivs d = l_derivs(0.25 * z * z);
  const double k1 = 0.5 * b * d.g, k2 = -0.25 * b * d.g1;
  const double k3 = 0.125 * b * d.g2, k4 = -0.0625 * b * d.g3;
  const double sd = std::sqrt(k2), g1 = k3 / (k2 * sd), g2 = k4 / (k2 * k2);
  const double u = rng.norm(), u2 = u * u;
  const double w = u + g1 * (u2 - 1.0) / 6.0 + g2 * u * (u2 - 3.0) / 24.0 -
                   g1 * g1 * u * (2.0 * u2 - 5.0) / 36.0;
  return k1 + sd * w;
}

// The general exact sampler. engine 0 chooses automatically (the expansion above where
// pg_use_expansion(), the saddle-point rejection sampler from b = saddle_auto_b() on, else
// the sum below); engine 1 always draws floor(b) PG(1, z) plus one PG(b - floor(b), z);
// engine 2 uses the saddle-point sampler whenever b >= SADDLE_MIN_B; engine 3 always uses the
// expansion (for tests of its formula at small b, where it is only an approximation). A sampler
// object keeps the last setups, so runs of equal parameters pay for them once.
class ExactSampler {
 public:
  explicit ExactSampler(int engine = 0) : engine_(engine) {}

  template <class RNG>
  double operator()(double b, double c, RNG& rng) {
    const double z = std::fabs(c);
    if (engine_ == 3 || (engine_ == 0 && b >= saddle_auto_b() && pg_use_expansion(b, z)))
      return draw_expansion(b, z, rng);
    const bool saddle =
        engine_ == 2 ? b >= SADDLE_MIN_B : (engine_ == 0 && b >= saddle_auto_b());
    if (saddle) {
      if (!(saddle_.b == b && saddle_.z == z)) saddle_ = make_saddle_setup(b, z);
      return draw_saddle(saddle_, rng);
    }
    const double nint = std::floor(b);
    const double frac = b - nint;
    double sum = 0.0;
    if (nint > 0) {
      if (!(have_unit_ && unit_.z == z)) {
        unit_ = make_setup(1.0, z);
        have_unit_ = true;
      }
      for (double i = 0; i < nint; i += 1.0) sum += draw_series(unit_, rng);
    }
    if (frac > 0) {
      if (!(have_frac_ && frac_.z == z && frac_.b == frac)) {
        frac_ = make_setup(frac, z);
        have_frac_ = true;
      }
      sum += draw_series(frac_, rng);
    }
    return sum;
  }

 private:
  int engine_;
  SeriesSetup unit_, frac_;
  SaddleSetup saddle_;
  bool have_unit_ = false, have_frac_ = false;
};

template <class RNG>
double draw_exact(double b, double c, RNG& rng) {
  ExactSampler sampler;
  return sampler(b, c, rng);
}

// Moment-matched normal approximation (opt-in, method = "normal"); redrawn if negative.
template <class RNG>
double draw_normal(double b, double c, RNG& rng) {
  const double m = mean(b, c), sd = std::sqrt(var(b, c));
  for (;;) {
    const double x = m + sd * rng.norm();
    if (x > 0) return x;
  }
}

// ---------- density and distribution function ----------


// P(omega <= q) (lower = true) or P(omega > q), optionally on the log scale.
double cdf(double q, double b, double c, bool lower, bool log_p, bool* ok);

}  // namespace pg
}  // namespace augp

#endif
