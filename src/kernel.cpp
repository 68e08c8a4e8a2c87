// Kernel matrices and their derivatives with respect to log parameters.
#include "kernel.h"

#include <cmath>
#include <string>

namespace augp {

namespace {

constexpr double PI = 3.141592653589793238462643383279502884;
const double SQRT3 = std::sqrt(3.0);
const double SQRT5 = std::sqrt(5.0);

// Unit-variance stationary profiles: kappa(r) and g(r) = -kappa'(r) / r.
// g multiplies delta_d^2 / l_d^2 <= r^2 in the lengthscale gradient, so the
// value used at r = 0 only needs to make that product vanish or be finite.
inline double st_kappa(int code, double r) {
  switch (code) {
    case K_SE: return std::exp(-0.5 * r * r);
    case K_MATERN12: return std::exp(-r);
    case K_MATERN32: return (1.0 + SQRT3 * r) * std::exp(-SQRT3 * r);
    case K_MATERN52: return (1.0 + SQRT5 * r + 5.0 * r * r / 3.0) * std::exp(-SQRT5 * r);
    default: return 0.0;
  }
}

inline double st_g(int code, double r) {
  switch (code) {
    case K_SE: return std::exp(-0.5 * r * r);
    case K_MATERN12: return r > 0 ? std::exp(-r) / r : 0.0;
    case K_MATERN32: return 3.0 * std::exp(-SQRT3 * r);
    case K_MATERN52: return (5.0 / 3.0) * (1.0 + SQRT5 * r) * std::exp(-SQRT5 * r);
    default: return 0.0;
  }
}

inline bool is_stationary(int code) { return code >= K_SE && code <= K_MATERN52; }

struct Value {
  Eigen::MatrixXd K;
  std::vector<Eigen::MatrixXd> G;
};

// Per-dimension inverse lengthscales (a single lengthscale is shared by all d).
Eigen::VectorXd inv_lengthscales(const double* logl, int nls, int d) {
  if (nls != 1 && nls != d) {
    throw std::invalid_argument("the kernel has " + std::to_string(nls) +
                                " lengthscales but the inputs have " +
                                std::to_string(d) + " columns");
  }
  Eigen::VectorXd il(d);
  for (int k = 0; k < d; ++k) il[k] = std::exp(-logl[nls == 1 ? 0 : k]);
  return il;
}

// The one distance routine: scaled squared distance between row i of x and row j of y.
inline double scaled_sq_dist(const Eigen::MatrixXd& x, int i, const Eigen::MatrixXd& y, int j,
                             const Eigen::VectorXd& il) {
  double s = 0.0;
  for (int k = 0; k < x.cols(); ++k) {
    const double t = (x(i, k) - y(j, k)) * il[k];
    s += t * t;
  }
  return s;
}

void leaf_stationary(int code, const double* th, int nls, const Eigen::MatrixXd& x,
                     const Eigen::MatrixXd& y, bool want_grad, Value& out) {
  const int n = x.rows(), m = y.rows(), d = x.cols();
  const double v = std::exp(th[0]);
  const Eigen::VectorXd il = inv_lengthscales(th + 1, nls, d);
  out.K.resize(n, m);
  Eigen::MatrixXd gmat;
  if (want_grad) gmat.resize(n, m);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < n; ++i) {
      const double r = std::sqrt(scaled_sq_dist(x, i, y, j, il));
      out.K(i, j) = v * st_kappa(code, r);
      if (want_grad) gmat(i, j) = v * st_g(code, r);
    }
  }
  if (!want_grad) return;
  out.G.push_back(out.K);  // d/d log variance
  if (nls == 1) {
    Eigen::MatrixXd g(n, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) g(i, j) = gmat(i, j) * scaled_sq_dist(x, i, y, j, il);
    out.G.push_back(g);
  } else {
    for (int k = 0; k < d; ++k) {
      Eigen::MatrixXd g(n, m);
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < n; ++i) {
          const double t = (x(i, k) - y(j, k)) * il[k];
          g(i, j) = gmat(i, j) * t * t;
        }
      out.G.push_back(g);
    }
  }
}

void leaf_linear(const double* th, int nls, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y,
                 bool want_grad, Value& out) {
  const int d = x.cols();
  const double v = std::exp(th[0]);
  const Eigen::VectorXd il = inv_lengthscales(th + 1, nls, d);
  const Eigen::VectorXd w = il.array().square();
  out.K = v * (x * w.asDiagonal() * y.transpose());
  if (!want_grad) return;
  out.G.push_back(out.K);
  if (nls == 1) {
    out.G.push_back(-2.0 * out.K);
  } else {
    for (int k = 0; k < d; ++k)
      out.G.push_back(-2.0 * v * w[k] * (x.col(k) * y.col(k).transpose()));
  }
}

void leaf_periodic(const double* th, int nls, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y,
                   bool want_grad, Value& out) {
  const int n = x.rows(), m = y.rows(), d = x.cols();
  const double v = std::exp(th[0]);
  const Eigen::VectorXd il = inv_lengthscales(th + 1, nls, d);
  const double p = std::exp(th[1 + nls]);
  out.K.resize(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) {
      double s = 0.0;
      for (int k = 0; k < d; ++k) {
        const double sn = std::sin(PI * (x(i, k) - y(j, k)) / p) * il[k];
        s += sn * sn;
      }
      out.K(i, j) = v * std::exp(-2.0 * s);
    }
  if (!want_grad) return;
  out.G.push_back(out.K);
  const int nl = (nls == 1) ? 1 : d;
  std::vector<Eigen::MatrixXd> gl(nl, Eigen::MatrixXd::Zero(n, m));
  Eigen::MatrixXd gp = Eigen::MatrixXd::Zero(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) {
      const double kij = out.K(i, j);
      for (int k = 0; k < d; ++k) {
        const double delta = x(i, k) - y(j, k);
        const double sn = std::sin(PI * delta / p);
        const double il2 = il[k] * il[k];
        gl[nls == 1 ? 0 : k](i, j) += kij * 4.0 * sn * sn * il2;
        gp(i, j) += kij * 2.0 * PI * delta * std::sin(2.0 * PI * delta / p) * il2 / p;
      }
    }
  for (int k = 0; k < nl; ++k) out.G.push_back(gl[k]);
  out.G.push_back(gp);
}

Value run(const KernelSpec& spec, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y,
          bool want_grad) {
  if (x.cols() != y.cols()) throw std::invalid_argument("x and y have different numbers of columns");
  if (spec.code.size() != spec.nls.size()) throw std::invalid_argument("malformed kernel spec");
  std::vector<Value> stack;
  std::size_t pos = 0;
  for (std::size_t node = 0; node < spec.code.size(); ++node) {
    const int code = spec.code[node];
    if (code == K_SUM || code == K_PROD) {
      if (stack.size() < 2) throw std::invalid_argument("malformed kernel spec");
      Value b = std::move(stack.back());
      stack.pop_back();
      Value a = std::move(stack.back());
      stack.pop_back();
      Value c;
      if (code == K_SUM) {
        c.K = a.K + b.K;
        if (want_grad) {
          for (auto& g : a.G) c.G.push_back(std::move(g));
          for (auto& g : b.G) c.G.push_back(std::move(g));
        }
      } else {
        c.K = a.K.cwiseProduct(b.K);
        if (want_grad) {
          for (auto& g : a.G) c.G.push_back(g.cwiseProduct(b.K));
          for (auto& g : b.G) c.G.push_back(g.cwiseProduct(a.K));
        }
      }
      stack.push_back(std::move(c));
      continue;
    }
    const int nls = spec.nls[node];
    const int np = 1 + nls + (code == K_PERIODIC ? 1 : 0);
    if (nls < 1 || pos + np > spec.theta.size()) throw std::invalid_argument("malformed kernel spec");
    const double* th = spec.theta.data() + pos;
    pos += np;
    Value v;
    if (is_stationary(code)) {
      leaf_stationary(code, th, nls, x, y, want_grad, v);
    } else if (code == K_LINEAR) {
      leaf_linear(th, nls, x, y, want_grad, v);
    } else if (code == K_PERIODIC) {
      leaf_periodic(th, nls, x, y, want_grad, v);
    } else {
      throw std::invalid_argument("unknown kernel code " + std::to_string(code));
    }
    stack.push_back(std::move(v));
  }
  if (stack.size() != 1 || pos != spec.theta.size())
    throw std::invalid_argument("malformed kernel spec");
  return std::move(stack.back());
}

}  // namespace

Eigen::MatrixXd kernel_eval(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& y, std::vector<Eigen::MatrixXd>* grads) {
  Value v = run(spec, x, y, grads != nullptr);
  if (grads) *grads = std::move(v.G);
  return std::move(v.K);
}

Eigen::VectorXd kernel_diag(const KernelSpec& spec, const Eigen::MatrixXd& x) {
  Eigen::VectorXd out(x.rows());
  for (int i = 0; i < x.rows(); ++i) {
    const Eigen::MatrixXd xi = x.row(i);
    out[i] = run(spec, xi, xi, false).K(0, 0);
  }
  return out;
}

}  // namespace augp
