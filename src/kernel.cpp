// Kernel matrices, diagonals and their derivatives in the log parameters and the inputs.
//
// Layout: stationary profiles, the leaf families (stationary, linear, periodic, constant), the
// registry of leaf kernels keyed by KernelCode, the postfix walker, and the public
// functions built from them.
#include "kernel.h"

#include <cmath>
#include <string>
#include <utility>

namespace augp {

namespace {

constexpr double PI = 3.141592653589793238462643383279502884;
const double SQRT3 = std::sqrt(3.0);
const double SQRT5 = std::sqrt(5.0);

// ---- stationary profiles ---------------------------------------------------
//
// A stationary leaf is v kappa(r) with r^2 = sum_d t_d^2, t_d = (x_d - y_d) / l_d. Its
// profile maps r^2 to kappa(r) (kappa(0) = 1) and g(r) = -kappa'(r) / r, from which
//   d kappa / d log l_d = g(r) t_d^2,   d kappa / d y_d = g(r) (x_d - y_d) / l_d^2.
// Profiles take r^2, so those that need no r (SE) take no square root. g multiplies
// t_d^2 <= r^2 or x_d - y_d, both zero at r = 0, so g(0) only has to be finite.

struct Profile {
  double kappa, g;
};

inline Profile prof_se(double r2) {
  const double k = std::exp(-0.5 * r2);
  return {k, k};
}

inline Profile prof_matern12(double r2) {
  const double r = std::sqrt(r2);
  const double e = std::exp(-r);
  return {e, r > 0 ? e / r : 0.0};
}

inline Profile prof_matern32(double r2) {
  const double r = std::sqrt(r2);
  const double e = std::exp(-SQRT3 * r);
  return {(1.0 + SQRT3 * r) * e, 3.0 * e};
}

inline Profile prof_matern52(double r2) {
  const double r = std::sqrt(r2);
  const double e = std::exp(-SQRT5 * r);
  return {(1.0 + SQRT5 * r + 5.0 * r * r / 3.0) * e, (5.0 / 3.0) * (1.0 + SQRT5 * r) * e};
}

// ---- shared pieces -----------------------------------------------------------

// One leaf of the program: its code, number of lengthscales, the offset of its first
// parameter in theta, a pointer to its parameters (log variance, log lengthscale(s),
// then the family's extra parameters) and its active inputs (ndims 0-based columns at
// dims; ndims = 0: every column).
struct Leaf {
  int code, nls, pos;
  const double* th;
  int ndims;
  const int* dims;
};

// The inputs a leaf sees: x itself, or its active columns copied into buf.
const Eigen::MatrixXd& leaf_inputs(const Leaf& L, const Eigen::MatrixXd& x, Eigen::MatrixXd& buf) {
  if (L.ndims == 0) return x;
  buf.resize(x.rows(), L.ndims);
  for (int c = 0; c < L.ndims; ++c) {
    if (L.dims[c] < 0 || L.dims[c] >= x.cols())
      throw std::invalid_argument("the kernel uses input column " + std::to_string(L.dims[c] + 1) +
                                  " but the inputs have " + std::to_string(x.cols()) + " columns");
    buf.col(c) = x.col(L.dims[c]);
  }
  return buf;
}

// A value (matrix or vector) and a list of derivatives of it.
template <class T>
struct Val {
  T K;
  std::vector<T> G;
};

using MatVal = Val<Eigen::MatrixXd>;
using VecVal = Val<Eigen::VectorXd>;

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

// ---- leaf families -----------------------------------------------------------
//
// Every family provides, for one leaf:
//   scaled                   whether it has lengthscales (one, or one per input);
//   extra                    number of parameters after the lengthscales;
//   eval(L, x, y, sym, g, v) K(x, y) and (g) its log-parameter derivatives; sym: y is x;
//   input(L, x, z, g, v)     K(x, z) and (g) dK / dz_c for every input column c;
//   diag(L, x, g, v)         k(x_i, x_i) and (g) its log-parameter derivatives;
//   contract(L, x, M, out)   out_j = sum(M o dK / d theta_j) for its parameters.

// Linear and periodic leaves contract their explicit derivative matrices.
template <class F>
void contract_explicit(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& M,
                       double* out) {
  MatVal v;
  F::eval(L, x, x, true, true, v);
  for (std::size_t j = 0; j < v.G.size(); ++j) out[j] = M.cwiseProduct(v.G[j]).sum();
}

template <Profile (*P)(double)>
struct Stationary {
  static constexpr bool scaled = true;
  static constexpr int extra = 0;

  static void eval(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, bool sym,
                   bool want_grad, MatVal& out) {
    const int n = x.rows(), m = y.rows(), d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    out.K.resize(n, m);
    Eigen::MatrixXd gmat;
    if (want_grad) gmat.resize(n, m);
    // sym (y is x): the lower triangle, mirrored (half the kernel evaluations).
    for (int j = 0; j < m; ++j) {
      for (int i = sym ? j : 0; i < n; ++i) {
        const Profile p = P(scaled_sq_dist(x, i, y, j, il));
        out.K(i, j) = v * p.kappa;
        if (want_grad) gmat(i, j) = v * p.g;
        if (sym && i != j) {
          out.K(j, i) = out.K(i, j);
          if (want_grad) gmat(j, i) = gmat(i, j);
        }
      }
    }
    if (!want_grad) return;
    out.G.push_back(out.K);  // d/d log variance
    if (L.nls == 1) {
      Eigen::MatrixXd g(n, m);
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < n; ++i) g(i, j) = gmat(i, j) * scaled_sq_dist(x, i, y, j, il);
      out.G.push_back(std::move(g));
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

  static void input(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& z,
                    bool want_grad, MatVal& out) {
    const int n = x.rows(), m = z.rows(), d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    const Eigen::VectorXd w = il.array().square();
    out.K.resize(n, m);
    if (want_grad) out.G.assign(d, Eigen::MatrixXd(n, m));
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) {
        const Profile p = P(scaled_sq_dist(x, i, z, j, il));
        out.K(i, j) = v * p.kappa;
        if (want_grad) {
          const double g = v * p.g;
          for (int k = 0; k < d; ++k) out.G[k](i, j) = g * (x(i, k) - z(j, k)) * w[k];
        }
      }
  }

  static void diag(const Leaf& L, const Eigen::MatrixXd& x, bool want_grad, VecVal& out) {
    const int n = x.rows();
    inv_lengthscales(L.th + 1, L.nls, x.cols());  // validates the layout
    out.K = Eigen::VectorXd::Constant(n, std::exp(L.th[0]) * P(0.0).kappa);
    if (!want_grad) return;
    out.G.push_back(out.K);
    for (int k = 0; k < L.nls; ++k) out.G.push_back(Eigen::VectorXd::Zero(n));
  }

  // One pass over the pairs i < k (the derivative matrices are symmetric, so only
  // S = M + M' matters off the diagonal).
  static void contract(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& M,
                       double* out) {
    const int n = x.rows(), d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    const bool ard = L.nls != 1;
    double g_var = v * P(0.0).kappa * M.diagonal().sum();
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
        const Profile p = P(r2);
        const double sik = M(i, k) + M(k, i);
        g_var += sik * v * p.kappa;
        const double h = sik * v * p.g;
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
};

// v sum_d x_d y_d / l_d^2.
struct Linear {
  static constexpr bool scaled = true;
  static constexpr int extra = 0;

  static void eval(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, bool,
                   bool want_grad, MatVal& out) {
    const int d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    const Eigen::VectorXd w = il.array().square();
    out.K = v * (x * w.asDiagonal() * y.transpose());
    if (!want_grad) return;
    out.G.push_back(out.K);
    if (L.nls == 1) {
      out.G.push_back(-2.0 * out.K);
    } else {
      for (int k = 0; k < d; ++k)
        out.G.push_back(-2.0 * v * w[k] * (x.col(k) * y.col(k).transpose()));
    }
  }

  static void input(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& z,
                    bool want_grad, MatVal& out) {
    const int m = z.rows(), d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    const Eigen::VectorXd w = il.array().square();
    out.K = v * (x * w.asDiagonal() * z.transpose());
    if (!want_grad) return;
    for (int k = 0; k < d; ++k) out.G.push_back((v * w[k] * x.col(k)).replicate(1, m));
  }

  static void diag(const Leaf& L, const Eigen::MatrixXd& x, bool want_grad, VecVal& out) {
    const int d = x.cols();
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, L.nls, d);
    const Eigen::VectorXd w = il.array().square();
    out.K = v * (x.array().square().matrix() * w);
    if (!want_grad) return;
    out.G.push_back(out.K);
    if (L.nls == 1) {
      out.G.push_back(-2.0 * out.K);
    } else {
      for (int k = 0; k < d; ++k)
        out.G.push_back(-2.0 * v * w[k] * x.col(k).array().square().matrix());
    }
  }

  static void contract(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& M,
                       double* out) {
    contract_explicit<Linear>(L, x, M, out);
  }
};

// v exp(-2 sum_d sin^2(pi (x_d - y_d) / p) / l_d^2); the log period follows the lengthscales.
struct Periodic {
  static constexpr bool scaled = true;
  static constexpr int extra = 1;

  static void eval(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, bool,
                   bool want_grad, MatVal& out) {
    const int n = x.rows(), m = y.rows(), d = x.cols(), nls = L.nls;
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, nls, d);
    const double p = std::exp(L.th[1 + nls]);
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
    for (int k = 0; k < nl; ++k) out.G.push_back(std::move(gl[k]));
    out.G.push_back(std::move(gp));
  }

  static void input(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& z,
                    bool want_grad, MatVal& out) {
    const int n = x.rows(), m = z.rows(), d = x.cols(), nls = L.nls;
    const double v = std::exp(L.th[0]);
    const Eigen::VectorXd il = inv_lengthscales(L.th + 1, nls, d);
    const Eigen::VectorXd w = il.array().square();
    const double p = std::exp(L.th[1 + nls]);
    out.K.resize(n, m);
    if (want_grad) out.G.assign(d, Eigen::MatrixXd(n, m));
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < d; ++k) {
          const double sn = std::sin(PI * (x(i, k) - z(j, k)) / p) * il[k];
          s += sn * sn;
        }
        const double kij = v * std::exp(-2.0 * s);
        out.K(i, j) = kij;
        if (want_grad)
          for (int k = 0; k < d; ++k)
            out.G[k](i, j) = kij * 2.0 * PI * w[k] * std::sin(2.0 * PI * (x(i, k) - z(j, k)) / p) / p;
      }
  }

  static void diag(const Leaf& L, const Eigen::MatrixXd& x, bool want_grad, VecVal& out) {
    const int n = x.rows();
    inv_lengthscales(L.th + 1, L.nls, x.cols());  // validates the layout
    out.K = Eigen::VectorXd::Constant(n, std::exp(L.th[0]));
    if (!want_grad) return;
    out.G.push_back(out.K);
    for (int k = 0; k < L.nls + extra; ++k) out.G.push_back(Eigen::VectorXd::Zero(n));
  }

  static void contract(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& M,
                       double* out) {
    contract_explicit<Periodic>(L, x, M, out);
  }
};

// v for every pair of inputs: the covariance of a constant function whose value is
// N(0, v). Its only parameter is the log variance; it has no lengthscale and does not
// depend on the inputs (their derivatives are zero).
struct Constant {
  static constexpr bool scaled = false;
  static constexpr int extra = 0;

  static void eval(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, bool,
                   bool want_grad, MatVal& out) {
    out.K = Eigen::MatrixXd::Constant(x.rows(), y.rows(), std::exp(L.th[0]));
    if (want_grad) out.G.push_back(out.K);
  }

  static void input(const Leaf& L, const Eigen::MatrixXd& x, const Eigen::MatrixXd& z,
                    bool want_grad, MatVal& out) {
    out.K = Eigen::MatrixXd::Constant(x.rows(), z.rows(), std::exp(L.th[0]));
    if (want_grad) out.G.assign(x.cols(), Eigen::MatrixXd::Zero(x.rows(), z.rows()));
  }

  static void diag(const Leaf& L, const Eigen::MatrixXd& x, bool want_grad, VecVal& out) {
    out.K = Eigen::VectorXd::Constant(x.rows(), std::exp(L.th[0]));
    if (want_grad) out.G.push_back(out.K);
  }

  // sum(M o dK / d log v) = v sum(M)
  static void contract(const Leaf& L, const Eigen::MatrixXd&, const Eigen::MatrixXd& M,
                       double* out) {
    out[0] = std::exp(L.th[0]) * M.sum();
  }
};

// ---- registry ------------------------------------------------------------------

template <int Code, class Family>
struct Entry {
  static constexpr int code = Code;
  using type = Family;
};

template <class... E>
struct Registry {};

// The leaf kernels, keyed by code. A stationary kernel is its profile plus one line here.
using Leaves = Registry<Entry<K_SE, Stationary<prof_se>>,
                        Entry<K_MATERN12, Stationary<prof_matern12>>,
                        Entry<K_MATERN32, Stationary<prof_matern32>>,
                        Entry<K_MATERN52, Stationary<prof_matern52>>,
                        Entry<K_LINEAR, Linear>,
                        Entry<K_PERIODIC, Periodic>,
                        Entry<K_CONSTANT, Constant>>;

// Calls f(Family()) for the family registered under code; false if there is none.
template <class F>
bool dispatch(int, F&, Registry<>) {
  return false;
}

template <class F, class E, class... Rest>
bool dispatch(int code, F& f, Registry<E, Rest...>) {
  if (code == E::code) {
    f(typename E::type());
    return true;
  }
  return dispatch(code, f, Registry<Rest...>());
}

template <class F>
void with_leaf(int code, F&& f) {
  if (!dispatch(code, f, Leaves()))
    throw std::invalid_argument("unknown kernel code " + std::to_string(code));
}

// ---- the postfix walker --------------------------------------------------------

// Validates the program and calls leaf(const Leaf&) for every leaf and
// combine(is_sum) for every operator, in program order.
template <class LeafFn, class CombineFn>
void walk(const KernelSpec& spec, LeafFn&& leaf, CombineFn&& combine) {
  if (spec.code.size() != spec.nls.size()) throw std::invalid_argument("malformed kernel spec");
  const bool sub = !spec.ndims.empty();
  if (sub && spec.ndims.size() != spec.code.size())
    throw std::invalid_argument("malformed kernel spec");
  std::size_t pos = 0, dpos = 0;
  int depth = 0;
  for (std::size_t node = 0; node < spec.code.size(); ++node) {
    const int code = spec.code[node];
    const int nd = sub ? spec.ndims[node] : 0;
    if (nd < 0 || dpos + nd > spec.dims.size()) throw std::invalid_argument("malformed kernel spec");
    if (code == K_SUM || code == K_PROD) {
      if (depth < 2 || nd != 0) throw std::invalid_argument("malformed kernel spec");
      combine(code == K_SUM);
      --depth;
      continue;
    }
    const int nls = spec.nls[node];
    int extra = 0;
    bool scaled = true;
    with_leaf(code, [&](auto fam) {
      extra = decltype(fam)::extra;
      scaled = decltype(fam)::scaled;
    });
    const std::size_t np = 1 + nls + extra;
    if ((scaled ? nls < 1 : nls != 0) || pos + np > spec.theta.size())
      throw std::invalid_argument("malformed kernel spec");
    if (scaled && nd > 0 && nls != 1 && nls != nd) {
      throw std::invalid_argument("a kernel has " + std::to_string(nls) +
                                  " lengthscales but uses " + std::to_string(nd) + " inputs");
    }
    leaf(Leaf{code, nls, static_cast<int>(pos), spec.theta.data() + pos, nd,
              spec.dims.data() + dpos});
    pos += np;
    dpos += nd;
    ++depth;
  }
  if (depth != 1 || pos != spec.theta.size() || dpos != spec.dims.size())
    throw std::invalid_argument("malformed kernel spec");
}

// Evaluates the program on a stack of values: leaf(const Leaf&, Val<T>&) fills a leaf's
// value, combine(a, b, is_sum) joins the two top ones.
template <class T, class LeafFn, class CombineFn>
Val<T> fold(const KernelSpec& spec, LeafFn&& leaf, CombineFn&& combine) {
  std::vector<Val<T>> st;
  walk(
      spec,
      [&](const Leaf& L) {
        st.emplace_back();
        leaf(L, st.back());
      },
      [&](bool is_sum) {
        Val<T> b = std::move(st.back());
        st.pop_back();
        Val<T> a = std::move(st.back());
        st.pop_back();
        st.push_back(combine(std::move(a), std::move(b), is_sum));
      });
  return std::move(st.back());
}

// Log-parameter derivatives: every parameter belongs to one leaf, so a sum
// concatenates its children's derivatives and a product multiplies each by the other
// child's value.
template <class T>
Val<T> combine_params(Val<T>&& a, Val<T>&& b, bool is_sum) {
  Val<T> c;
  if (is_sum) {
    c.K = a.K + b.K;
    for (auto& g : a.G) c.G.push_back(std::move(g));
    for (auto& g : b.G) c.G.push_back(std::move(g));
  } else {
    c.K = a.K.cwiseProduct(b.K);
    for (auto& g : a.G) c.G.push_back(g.cwiseProduct(b.K));
    for (auto& g : b.G) c.G.push_back(g.cwiseProduct(a.K));
  }
  return c;
}

// Input derivatives: shared by all leaves; a sum adds them, a product follows the
// product rule.
MatVal combine_inputs(MatVal&& a, MatVal&& b, bool is_sum) {
  MatVal c;
  if (is_sum) {
    c.K = a.K + b.K;
    for (std::size_t k = 0; k < a.G.size(); ++k) c.G.push_back(a.G[k] + b.G[k]);
  } else {
    c.K = a.K.cwiseProduct(b.K);
    for (std::size_t k = 0; k < a.G.size(); ++k)
      c.G.push_back(a.G[k].cwiseProduct(b.K) + a.K.cwiseProduct(b.G[k]));
  }
  return c;
}

// ---- gradient contraction ------------------------------------------------------

// The program as a tree: operators point to their children, leaves carry their Leaf.
struct Node {
  int code, left, right;
  Leaf leaf;
};

std::vector<Node> build_tree(const KernelSpec& spec, int* root) {
  std::vector<Node> nodes;
  std::vector<int> stack;
  walk(
      spec,
      [&](const Leaf& L) {
        nodes.push_back(Node{L.code, -1, -1, L});
        stack.push_back(static_cast<int>(nodes.size()) - 1);
      },
      [&](bool is_sum) {
        const int right = stack.back();
        stack.pop_back();
        const int left = stack.back();
        stack.pop_back();
        nodes.push_back(
            Node{is_sum ? K_SUM : K_PROD, left, right, Leaf{0, 0, 0, nullptr, 0, nullptr}});
        stack.push_back(static_cast<int>(nodes.size()) - 1);
      });
  *root = stack.back();
  return nodes;
}

Eigen::MatrixXd tree_value(const std::vector<Node>& nodes, int k, const Eigen::MatrixXd& x) {
  const Node& nd = nodes[k];
  if (nd.code == K_SUM) return tree_value(nodes, nd.left, x) + tree_value(nodes, nd.right, x);
  if (nd.code == K_PROD)
    return tree_value(nodes, nd.left, x).cwiseProduct(tree_value(nodes, nd.right, x));
  MatVal v;
  Eigen::MatrixXd buf;
  const Eigen::MatrixXd& xs = leaf_inputs(nd.leaf, x, buf);
  with_leaf(nd.code, [&](auto fam) { decltype(fam)::eval(nd.leaf, xs, xs, true, false, v); });
  return std::move(v.K);
}

void contract_rec(const std::vector<Node>& nodes, int k, const Eigen::MatrixXd& x,
                  const Eigen::MatrixXd& M, std::vector<double>& g) {
  const Node& nd = nodes[k];
  if (nd.code == K_SUM) {
    contract_rec(nodes, nd.left, x, M, g);
    contract_rec(nodes, nd.right, x, M, g);
    return;
  }
  if (nd.code == K_PROD) {
    const Eigen::MatrixXd Ka = tree_value(nodes, nd.left, x);
    const Eigen::MatrixXd Kb = tree_value(nodes, nd.right, x);
    contract_rec(nodes, nd.left, x, M.cwiseProduct(Kb), g);
    contract_rec(nodes, nd.right, x, M.cwiseProduct(Ka), g);
    return;
  }
  Eigen::MatrixXd buf;
  const Eigen::MatrixXd& xs = leaf_inputs(nd.leaf, x, buf);
  with_leaf(nd.code,
            [&](auto fam) { decltype(fam)::contract(nd.leaf, xs, M, g.data() + nd.leaf.pos); });
}

}  // namespace

Eigen::MatrixXd kernel_eval(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& y, std::vector<Eigen::MatrixXd>* grads) {
  if (x.cols() != y.cols()) throw std::invalid_argument("x and y have different numbers of columns");
  const bool sym = &x == &y || (x.rows() == y.rows() && x == y);
  const bool want = grads != nullptr;
  MatVal v = fold<Eigen::MatrixXd>(
      spec,
      [&](const Leaf& L, MatVal& out) {
        Eigen::MatrixXd bx, by;
        const Eigen::MatrixXd& xs = leaf_inputs(L, x, bx);
        const Eigen::MatrixXd& ys = sym ? xs : leaf_inputs(L, y, by);
        with_leaf(L.code, [&](auto fam) { decltype(fam)::eval(L, xs, ys, sym, want, out); });
      },
      combine_params<Eigen::MatrixXd>);
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
  contract_rec(nodes, root, x, M, g);
  return g;
}

Eigen::VectorXd kernel_diag(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            std::vector<Eigen::VectorXd>* grads) {
  const bool want = grads != nullptr;
  VecVal v = fold<Eigen::VectorXd>(
      spec,
      [&](const Leaf& L, VecVal& out) {
        Eigen::MatrixXd buf;
        const Eigen::MatrixXd& xs = leaf_inputs(L, x, buf);
        with_leaf(L.code, [&](auto fam) { decltype(fam)::diag(L, xs, want, out); });
      },
      combine_params<Eigen::VectorXd>);
  if (grads) *grads = std::move(v.G);
  return std::move(v.K);
}

Eigen::MatrixXd kernel_input_grad(const KernelSpec& spec, const Eigen::MatrixXd& x,
                                  const Eigen::MatrixXd& z, std::vector<Eigen::MatrixXd>* dz) {
  if (x.cols() != z.cols()) throw std::invalid_argument("x and z have different numbers of columns");
  const bool want = dz != nullptr;
  MatVal v = fold<Eigen::MatrixXd>(
      spec,
      [&](const Leaf& L, MatVal& out) {
        Eigen::MatrixXd bx, bz;
        const Eigen::MatrixXd& xs = leaf_inputs(L, x, bx);
        const Eigen::MatrixXd& zs = leaf_inputs(L, z, bz);
        with_leaf(L.code, [&](auto fam) { decltype(fam)::input(L, xs, zs, want, out); });
        if (want && L.ndims > 0) {
          // derivatives in the active inputs only: zero in the other columns
          std::vector<Eigen::MatrixXd> G(x.cols(), Eigen::MatrixXd::Zero(x.rows(), z.rows()));
          for (int c = 0; c < L.ndims; ++c) G[L.dims[c]] = std::move(out.G[c]);
          out.G = std::move(G);
        }
      },
      combine_inputs);
  if (dz) *dz = std::move(v.G);
  return std::move(v.K);
}

}  // namespace augp
