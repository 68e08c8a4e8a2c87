// Internal R entry points that expose the pieces of the saddle-point Polya-Gamma sampler to
// the tests (the envelope and band checks) and to the benchmark.
#include <Rcpp.h>

#include "polyagamma.h"

using namespace Rcpp;

// The saddle-point approximation at saddles v: one row per v with x(v), log f_SP, its slope,
// the second-order correction delta and the derivatives of L.
// [[Rcpp::export(name = ".pg_saddle_eval_cpp")]]
NumericMatrix pg_saddle_eval_cpp(NumericVector v, double b, double c) {
  const double z = std::fabs(c);
  const double lch = augp::pg::log_cosh(0.5 * z);
  NumericMatrix out(v.size(), 9);
  for (R_xlen_t i = 0; i < v.size(); ++i) {
    const augp::pg::SaddleEval e = augp::pg::saddle_eval(v[i], b, z, lch);
    const augp::pg::LDerivs d = augp::pg::l_derivs(v[i]);
    out(i, 0) = e.x;
    out(i, 1) = e.logf;
    out(i, 2) = e.slope;
    out(i, 3) = e.delta;
    out(i, 4) = d.L;
    out(i, 5) = d.g;
    out(i, 6) = d.g1;
    out(i, 7) = d.g2;
    out(i, 8) = d.g3;
  }
  colnames(out) = CharacterVector::create("x", "logf", "slope", "delta", "L", "g", "g1", "g2", "g3");
  return out;
}

// The saddle v(x) solving x(v) = x, started at v_start.
// [[Rcpp::export(name = ".pg_saddle_v_cpp")]]
NumericVector pg_saddle_v_cpp(NumericVector x, double b, double v_start) {
  NumericVector out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) out[i] = augp::pg::saddle_v(x[i], b, v_start);
  return out;
}

// The tangent-hull envelope built for PG(b, c), and the sampler's constants.
// [[Rcpp::export(name = ".pg_saddle_setup_cpp")]]
List pg_saddle_setup_cpp(double b, double c) {
  const augp::pg::SaddleSetup s = augp::pg::make_saddle_setup(b, std::fabs(c));
  const int k = augp::pg::SADDLE_PTS;
  return List::create(_["x"] = NumericVector(s.xj, s.xj + k), _["v"] = NumericVector(s.vj, s.vj + k),
                      _["h"] = NumericVector(s.hj, s.hj + k), _["m"] = NumericVector(s.mj, s.mj + k),
                      _["lo"] = NumericVector(s.lo, s.lo + k), _["hi"] = NumericVector(s.hi, s.hi + k),
                      _["cum"] = NumericVector(s.cum, s.cum + k), _["log_inflate"] = s.log_inflate,
                      _["eps"] = s.eps, _["delta_max"] = augp::pg::saddle_delta_max(),
                      _["auto_b"] = augp::pg::saddle_auto_b(), _["min_b"] = augp::pg::SADDLE_MIN_B);
}
