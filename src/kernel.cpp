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
                     const Eigen::MatrixXd& y, bool sym, bool want_grad, Value& out) {
  const int n = x.rows(), m = y.rows(), d = x.cols();
  const double v = std::exp(th[0]);
  const Eigen::VectorXd il = inv_lengthscales(th + 1, nls, d);
  out.K.resize(n, m);
  Eigen::MatrixXd gmat;
  if (want_grad) gmat.resize(n, m);
  // sym (y is x): the lower triangle, mirrored (half the kernel evaluations).
  for (int j = 0; j < m; ++j) {
    for (int i = sym ? j : 0; i < n; ++i) {
      const double r2 = scaled_sq_dist(x, i, y, j, il);
      const double kij = code == K_SE ? std::exp(-0.5 * r2) : st_kappa(code, std::sqrt(r2));
      out.K(i, j) = v * kij;
      if (want_grad) gmat(i, j) = code == K_SE ? v * kij : v * st_g(code, std::sqrt(r2));
      if (sym && i != j) {
        out.K(j, i) = out.K(i, j);
        if (want_grad) gmat(j, i) = gmat(i, j);
      }
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
  const bool sym = &x == &y || (x.rows() == y.rows() && x == y);
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
      leaf_stationary(code, th, nls, x, y, sym, want_grad, v);
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

// ---- gradient contraction -------------------------------------------------

// The postfix program as a tree: leaves carry their parameter offset.
struct Node {
  int code, nls, pos, left, right;
};

std::vector<Node> build_tree(const KernelSpec& spec, int* root) {
  if (spec.code.size() != spec.nls.size()) throw std::invalid_argument("malformed kernel spec");
  std::vector<Node> nodes;
  std::vector<int> stack;
  int pos = 0;
  for (std::size_t k = 0; k < spec.code.size(); ++k) {
    const int code = spec.code[k];
    Node nd{code, 0, -1, -1, -1};
    if (code == K_SUM || code == K_PROD) {
      if (stack.size() < 2) throw std::invalid_argument("malformed kernel spec");
      nd.right = stack.back();
      stack.pop_back();
      nd.left = stack.back();
      stack.pop_back();
    } else {
      nd.nls = spec.nls[k];
      const int np = 1 + nd.nls + (code == K_PERIODIC ? 1 : 0);
      if (nd.nls < 1 || pos + np > spec.n_params()) throw std::invalid_argument("malformed kernel spec");
      nd.pos = pos;
      pos += np;
    }
    nodes.push_back(nd);
    stack.push_back(static_cast<int>(nodes.size()) - 1);
  }
  if (stack.size() != 1 || pos != spec.n_params()) throw std::invalid_argument("malformed kernel spec");
  *root = stack.back();
  return nodes;
}

void leaf_value(const Node& nd, const KernelSpec& spec, const Eigen::MatrixXd& x, bool want_grad,
                Value& v) {
  const double* th = spec.theta.data() + nd.pos;
  if (is_stationary(nd.code)) {
    leaf_stationary(nd.code, th, nd.nls, x, x, true, want_grad, v);
  } else if (nd.code == K_LINEAR) {
    leaf_linear(th, nd.nls, x, x, want_grad, v);
  } else if (nd.code == K_PERIODIC) {
    leaf_periodic(th, nd.nls, x, x, want_grad, v);
  } else {
    throw std::invalid_argument("unknown kernel code " + std::to_string(nd.code));
  }
}

Eigen::MatrixXd tree_value(const std::vector<Node>& nodes, int k, const KernelSpec& spec,
                           const Eigen::MatrixXd& x) {
  const Node& nd = nodes[k];
  if (nd.code == K_SUM) return tree_value(nodes, nd.left, spec, x) + tree_value(nodes, nd.right, spec, x);
  if (nd.code == K_PROD)
    return tree_value(nodes, nd.left, spec, x).cwiseProduct(tree_value(nodes, nd.right, spec, x));
  Value v;
  leaf_value(nd, spec, x, false, v);
  return std::move(v.K);
}

// Stationary leaf: one pass over the pairs i < k (the derivative matrices are
// symmetric, so only S = M + M' matters off the diagonal).
void contract_stationary(const Node& nd, const KernelSpec& spec, const Eigen::MatrixXd& x,
                         const Eigen::MatrixXd& M, double* out) {
  const int n = x.rows(), d = x.cols();
  const double* th = spec.theta.data() + nd.pos;
  const double v = std::exp(th[0]);
  const Eigen::VectorXd il = inv_lengthscales(th + 1, nd.nls, d);
  const bool ard = nd.nls != 1;
  double g_var = v * M.diagonal().sum();  // kappa(0) = 1
  double g_iso = 0.0;
  Eigen::MatrixXd H;
  Eigen::VectorXd rs;
  if (ard) {
    H = Eigen::MatrixXd::Zero(n, n);
    rs = Eigen::VectorXd::Zero(n);
  }
  for (int k = 0; k < n; ++k) {
    for (int i = k + 1; i < n; ++i) {
      const double r2 = scaled_sq_dist(x, i, x, k, il);
      const double r = std::sqrt(r2);
      const double sik = M(i, k) + M(k, i);
      g_var += sik * v * st_kappa(nd.code, r);
      const double h = sik * v * st_g(nd.code, r);
      if (ard) {
        H(i, k) = 0.5 * h;
        rs[i] += 0.5 * h;
        rs[k] += 0.5 * h;
      } else {
        g_iso += h * r2;
      }
    }
  }
  out[0] = g_var;
  if (!ard) {
    out[1] = g_iso;
    return;
  }
  // sum_ik H_ik (x_i - x_k)^2 = 2 (sum_i x_i^2 rs_i - x' H x) for symmetric H, zero diagonal.
  const Eigen::MatrixXd HX = H.selfadjointView<Eigen::Lower>() * x;
  for (int c = 0; c < d; ++c) {
    const double quad = x.col(c).dot(HX.col(c));
    const double lin = x.col(c).cwiseProduct(x.col(c)).dot(rs);
    out[1 + c] = 2.0 * il[c] * il[c] * (lin - quad);
  }
}

void contract_rec(const std::vector<Node>& nodes, int k, const KernelSpec& spec,
                  const Eigen::MatrixXd& x, const Eigen::MatrixXd& M, std::vector<double>& g) {
  const Node& nd = nodes[k];
  if (nd.code == K_SUM) {
    contract_rec(nodes, nd.left, spec, x, M, g);
    contract_rec(nodes, nd.right, spec, x, M, g);
    return;
  }
  if (nd.code == K_PROD) {
    const Eigen::MatrixXd Ka = tree_value(nodes, nd.left, spec, x);
    const Eigen::MatrixXd Kb = tree_value(nodes, nd.right, spec, x);
    contract_rec(nodes, nd.left, spec, x, M.cwiseProduct(Kb), g);
    contract_rec(nodes, nd.right, spec, x, M.cwiseProduct(Ka), g);
    return;
  }
  if (is_stationary(nd.code)) {
    contract_stationary(nd, spec, x, M, g.data() + nd.pos);
    return;
  }
  Value v;  // linear, periodic: explicit derivative matrices of this leaf only
  leaf_value(nd, spec, x, true, v);
  for (std::size_t j = 0; j < v.G.size(); ++j) g[nd.pos + j] = M.cwiseProduct(v.G[j]).sum();
}

}  // namespace

Eigen::MatrixXd kernel_eval(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& y, std::vector<Eigen::MatrixXd>* grads) {
  Value v = run(spec, x, y, grads != nullptr);
  if (grads) *grads = std::move(v.G);
  return std::move(v.K);
}

std::vector<double> kernel_grad_contract(const KernelSpec& spec, const Eigen::MatrixXd& x,
                                         const Eigen::MatrixXd& M) {
  if (M.rows() != x.rows() || M.cols() != x.rows())
    throw std::invalid_argument("the contraction weight must be n x n");
  int root = -1;
  const std::vector<Node> nodes = build_tree(spec, &root);
  std::vector<double> g(spec.theta.size(), 0.0);
  contract_rec(nodes, root, spec, x, M, g);
  return g;
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
