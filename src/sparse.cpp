// Sparse variational GP driver (see sparse.h for the model and notation).
#include "sparse.h"
#include "refine_step.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tri_inverse.h"

namespace augp {

bool SparseGeom::setup() {
  Eigen::MatrixXd K = kernel_eval(spec, Z, Z, nullptr);
  const int m = K.rows();
  double jit = jitter;
  for (int attempt = 0; attempt <= 10; ++attempt) {
    Eigen::MatrixXd A = K;
    A.diagonal().array() += jit;
    Eigen::LLT<Eigen::MatrixXd> llt(A);
    if (llt.info() == Eigen::Success && llt.matrixL().toDenseMatrix().diagonal().minCoeff() > 0) {
      Lm = llt.matrixL();
      jitter = jit;
      return m > 0;
    }
    jit = jit > 0 ? jit * 10.0 : 1e-10;
  }
  return false;
}

void SparseQ::init_prior(int m, int q) {
  Lam.assign(q, Eigen::MatrixXd::Identity(m, m));
  h.assign(q, Eigen::VectorXd::Zero(m));
  refresh();
}

bool SparseQ::refresh(const ParallelFor* pf) {
  const int q = static_cast<int>(Lam.size());
  Sv.resize(q);
  Li.resize(q);
  mv.resize(q);
  logdet_lam.resize(q);
  std::vector<char> ok(q, 1);
  // Per column: Lam = Lc Lc', mv = Lam^-1 h, Sv = Lam^-1 = Lc^-T Lc^-1 from the blocked
  // triangular inverse (m^3 flops with the factorisation, against 7 m^3 / 3 for solves
  // against the identity). Columns are independent (any thread count, same result).
  auto one = [&](int j) {
    Eigen::MatrixXd L = 0.5 * (Lam[j] + Lam[j].transpose());
    {
      Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(L);
      if (llt.info() != Eigen::Success) {
        ok[j] = 0;
        return;
      }
    }
    L.triangularView<Eigen::StrictlyUpper>().setZero();
    logdet_lam[j] = 2.0 * L.diagonal().array().log().sum();
    if (!std::isfinite(logdet_lam[j])) {
      ok[j] = 0;
      return;
    }
    mv[j] = L.triangularView<Eigen::Lower>().solve(h[j]);
    L.triangularView<Eigen::Lower>().transpose().solveInPlace(mv[j]);
    lower_tri_invert(L);
    Li[j] = L;
    lower_tri_crossprod(L);
    Sv[j] = std::move(L);
  };
  if (pf && q > 1) {
    (*pf)(q, one);
  } else {
    for (int j = 0; j < q; ++j) one(j);
  }
  for (int j = 0; j < q; ++j)
    if (!ok[j]) return false;
  return true;
}

double SparseQ::kl() const {
  double s = 0.0;
  for (std::size_t j = 0; j < Lam.size(); ++j)
    s += 0.5 * (Sv[j].trace() + mv[j].squaredNorm() - Sv[j].rows() + logdet_lam[j]);
  return s;
}

bool sparse_rewhiten(const SparseGeom& from, const SparseGeom& to, SparseQ& qs) {
  // v_to = M v_from, M = Lm_to^-1 Lm_from; natural parameters transform with Minv = M^-1.
  const Eigen::MatrixXd Minv = from.Lm.triangularView<Eigen::Lower>().solve(to.Lm);
  for (std::size_t j = 0; j < qs.Lam.size(); ++j) {
    qs.Lam[j] = Minv.transpose() * qs.Lam[j] * Minv;
    qs.h[j] = Minv.transpose() * qs.h[j];
  }
  return qs.refresh();
}

void SparseData::gather(const SparseBlock& blk, Eigen::MatrixXd& Xb, Eigen::MatrixXd& mu0b) const {
  const int nb = blk.end - blk.begin;
  const Eigen::Map<const Eigen::MatrixXd> X(x, n, d_raw), M(m0, m0_rows, q);
  // the row of mu0 that holds data row r
  auto mrow = [&](int r) { return m0_rows == 1 ? 0 : r; };
  if (!std.cols.empty()) {
    // the same arithmetic as the standardised copy R would make: (x - centre) / scale
    Xb.resize(nb, d);
    mu0b.resize(nb, q);
    for (int i = 0; i < nb; ++i) {
      const int r = order.empty() ? blk.begin + i : order[blk.begin + i];
      for (int j = 0; j < d; ++j) Xb(i, j) = (X(r, std.cols[j]) - std.centre[j]) / std.scale[j];
      mu0b.row(i) = M.row(mrow(r));
    }
    return;
  }
  if (order.empty()) {
    Xb = X.middleRows(blk.begin, nb);
    if (m0_rows == 1) {
      mu0b = M.replicate(nb, 1);
    } else {
      mu0b = M.middleRows(blk.begin, nb);
    }
    return;
  }
  Xb.resize(nb, d);
  mu0b.resize(nb, q);
  for (int i = 0; i < nb; ++i) {
    const int r = order[blk.begin + i];
    Xb.row(i) = X.row(r);
    mu0b.row(i) = M.row(mrow(r));
  }
}

namespace {

void add_pass(SparsePass& a, const SparsePass& b) {
  a.elbo_local += b.elbo_local;
  a.count += b.count;
  for (std::size_t j = 0; j < a.PtWP.size(); ++j) {
    a.PtWP[j] += b.PtWP[j];
    a.Ptr[j] += b.Ptr[j];
  }
  for (std::size_t k = 0; k < a.gtheta.size(); ++k) a.gtheta[k] += b.gtheta[k];
  if (a.C.size()) a.C += b.C;
  if (a.Zbar.size()) a.Zbar += b.Zbar;
}

// Zeroed accumulators for these sizes and parts; p's existing memory is reused where
// the sizes match.
void reset_pass(SparsePass& p, int m, int q, int d, int np, bool nat, bool grad, bool zgrad) {
  p.elbo_local = 0.0;
  p.count = 0;
  if (nat) {
    p.PtWP.resize(q);
    p.Ptr.resize(q);
    for (int j = 0; j < q; ++j) {
      p.PtWP[j].setZero(m, m);
      p.Ptr[j].setZero(m);
    }
  } else {
    p.PtWP.clear();
    p.Ptr.clear();
  }
  if (grad || zgrad) {
    p.C.setZero(m, m);
  } else {
    p.C.resize(0, 0);
  }
  if (grad) {
    p.gtheta.assign(np, 0.0);
  } else {
    p.gtheta.clear();
  }
  if (zgrad) {
    p.Zbar.setZero(m, d);
  } else {
    p.Zbar.resize(0, 0);
  }
}

// The block's rows: Phi = K_nm Lm^-T (nb x m) and the marginals of f (M, V: nb x q);
// with grad, also the kernel's log-parameter derivatives dK, dkd. diag(Phi S Phi') per
// column: with PS (the gradients need Phi S_j itself, a product of 2 nb m^2 flops) from
// PS; otherwise as the squared column norms of Li_j Phi' (a triangular product with the
// stored inverse factor, nb m^2 flops, faster than the equivalent triangular solve).
void block_moments(const SparseGeom& g, const SparseQ& qs, const Eigen::MatrixXd& Xb,
                   const Eigen::MatrixXd& mu0, bool grad, std::vector<Eigen::MatrixXd>* dK,
                   std::vector<Eigen::VectorXd>* dkd, Eigen::MatrixXd& Phi, Eigen::MatrixXd& M,
                   Eigen::MatrixXd& V, std::vector<Eigen::MatrixXd>* PS) {
  const int nb = Xb.rows(), q = static_cast<int>(qs.mv.size());
  const Eigen::MatrixXd Knm = kernel_eval(g.spec, Xb, g.Z, grad ? dK : nullptr);
  const Eigen::VectorXd kd = kernel_diag(g.spec, Xb, grad ? dkd : nullptr);
  Phi = g.Lm.triangularView<Eigen::Lower>().solve(Knm.transpose()).transpose();  // nb x m
  const Eigen::VectorXd ktil = (kd - Phi.rowwise().squaredNorm()).cwiseMax(0.0);
  M.resize(nb, q);
  V.resize(nb, q);
  if (PS) PS->resize(q);
  for (int j = 0; j < q; ++j) {
    M.col(j) = mu0.col(j) + Phi * qs.mv[j];
    if (PS) {
      (*PS)[j] = Phi * qs.Sv[j];
      V.col(j) = ktil + (*PS)[j].cwiseProduct(Phi).rowwise().sum();
    } else {
      const Eigen::MatrixXd X = qs.Li[j].triangularView<Eigen::Lower>() * Phi.transpose();
      V.col(j) = ktil + X.colwise().squaredNorm().transpose();
    }
  }
}

void block_pass(const SparseGeom& g, const SparseQ& qs, const SparseData& data, const SparseBlock& blk,
                bool nat, bool grad, bool zgrad, SparsePass& acc, const Eigen::MatrixXd* direct) {
  const int nb = blk.end - blk.begin, q = data.q, m = g.Z.rows(), d = g.Z.cols();
  Eigen::MatrixXd Xb, mu0;
  data.gather(blk, Xb, mu0);
  std::vector<Eigen::MatrixXd> dK;
  std::vector<Eigen::VectorXd> dkd;
  Eigen::MatrixXd Phi, M, V;
  const bool want_ps = grad || zgrad;
  std::vector<Eigen::MatrixXd> PS;
  block_moments(g, qs, Xb, mu0, grad, &dK, &dkd, Phi, M, V, want_ps ? &PS : nullptr);
  acc.count += nb;
  Eigen::MatrixXd kappa, omega, hess;
  if (direct) {
    // Direct-ELBO sites: omega = max(E[-d2 log p / df2], 1e-6), kappa = E[d log p / df] +
    // omega m, expectations over f = m + sqrt(v) Z_t for the rows of *direct.
    Eigen::MatrixXd G, H;
    Eigen::VectorXd ell;
    if (!blk.lik->expected_loglik_derivs(M, V, *direct, G, H, ell))
      throw std::invalid_argument("the likelihood provides no expected derivatives of log p(y | f)");
    acc.elbo_local += ell.sum();
    omega = H.cwiseMax(1e-6);
    kappa = G + omega.cwiseProduct(M);
    // The gradient in v below takes the unclamped expected curvature.
    if (grad || zgrad) hess = std::move(H);
  } else {
    acc.elbo_local += blk.lik->elbo_local(M, V);
    if (!nat && !grad && !zgrad) return;
    blk.lik->expect_aux(M, V, kappa, omega);
  }
  if (nat) {
    for (int j = 0; j < q; ++j) {
      // lower triangle of Phi' W Phi as a symmetric rank-nb update (half a general product)
      const Eigen::MatrixXd SPhi = Phi.array().colwise() * omega.col(j).array().max(0.0).sqrt();
      acc.PtWP[j].selfadjointView<Eigen::Lower>().rankUpdate(SPhi.transpose());
      const Eigen::VectorXd r = kappa.col(j) - omega.col(j).cwiseProduct(mu0.col(j));
      acc.Ptr[j].noalias() += Phi.transpose() * r;
    }
  }
  if (!grad && !zgrad) return;
  // dE[log p]/dm = kappa - omega m and dE[log p]/dv = -omega / 2: for the augmented
  // bound at its optimal q(aux), and for the direct ELBO with omega = E[-d2 log p / df2]
  // (unclamped) and kappa - omega m = E[d log p / df].
  const Eigen::MatrixXd& curv = direct ? hess : omega;
  // Per column T_j = diag(gv_j) (2 Phi S_j - Phi) + gm_j mv_j'; the K_mm accumulator is
  // Phi' sum_j T_j (one product for all columns, Phi being shared) and dELBO/dPhi is
  // G = sum_j [2 diag(gv_j) (Phi S_j - Phi) + gm_j mv_j'] = sum_j T_j - diag(sum_j gv_j) Phi.
  Eigen::MatrixXd Tsum = Eigen::MatrixXd::Zero(nb, m);
  Eigen::VectorXd gv_sum = Eigen::VectorXd::Zero(nb);
  for (int j = 0; j < q; ++j) {
    const Eigen::VectorXd gm = kappa.col(j) - omega.col(j).cwiseProduct(M.col(j));
    const Eigen::VectorXd gv = -0.5 * curv.col(j);
    gv_sum += gv;
    Tsum += ((2.0 * PS[j] - Phi).array().colwise() * gv.array()).matrix();
    Tsum.noalias() += gm * qs.mv[j].transpose();
  }
  acc.C.noalias() += Phi.transpose() * Tsum;
  const Eigen::MatrixXd G = Tsum - (Phi.array().colwise() * gv_sum.array()).matrix();
  // dELBO / dK_nm = G Lm^-1.
  const Eigen::MatrixXd Kbar =
      g.Lm.transpose().triangularView<Eigen::Upper>().solve(G.transpose()).transpose();
  if (grad) {
    for (std::size_t k = 0; k < dK.size(); ++k)
      acc.gtheta[k] += Kbar.cwiseProduct(dK[k]).sum() + dkd[k].dot(gv_sum);
  }
  if (zgrad) {
    std::vector<Eigen::MatrixXd> D;
    kernel_input_grad(g.spec, Xb, g.Z, &D);
    for (int k = 0; k < d; ++k) acc.Zbar.col(k) += Kbar.cwiseProduct(D[k]).colwise().sum().transpose();
  }
}

}  // namespace

SparsePass sparse_pass(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                       const std::vector<int>& blocks, bool want_nat, bool want_grad, bool want_zgrad,
                       const ParallelFor& pf, SparseWork* work, const Eigen::MatrixXd* direct) {
  const int m = g.Z.rows(), d = g.Z.cols(), np = g.spec.n_params(), q = data.q;
  const int nb = static_cast<int>(blocks.size());
  const int groups = std::max(1, std::min(nb, 64));
  SparseWork local;
  std::vector<SparsePass>& part = (work ? work : &local)->part;
  if (static_cast<int>(part.size()) < groups) part.resize(groups);
  std::vector<std::string> err(groups);
  auto body = [&](int gi) {
    try {
      SparsePass& acc = part[gi];
      reset_pass(acc, m, q, d, np, want_nat, want_grad, want_zgrad);
      const int b0 = static_cast<int>(static_cast<long long>(nb) * gi / groups);
      const int b1 = static_cast<int>(static_cast<long long>(nb) * (gi + 1) / groups);
      for (int b = b0; b < b1; ++b)
        block_pass(g, qs, data, data.blocks[blocks[b]], want_nat, want_grad, want_zgrad, acc, direct);
    } catch (std::exception& e) {
      err[gi] = e.what();
    } catch (...) {
      err[gi] = "unknown error in a sparse block";
    }
  };
  pf(groups, body);
  for (int gi = 0; gi < groups; ++gi)
    if (!err[gi].empty()) throw std::runtime_error(err[gi]);
  SparsePass out = work ? part[0] : std::move(part[0]);
  for (int gi = 1; gi < groups; ++gi) add_pass(out, part[gi]);
  return out;
}

bool sparse_global_step(const SparsePass& p, double scale, double rho, SparseQ& qs,
                        const ParallelFor* pf) {
  for (std::size_t j = 0; j < qs.Lam.size(); ++j) {
    const int m = qs.Lam[j].rows();
    Eigen::MatrixXd target = p.PtWP[j].selfadjointView<Eigen::Lower>();
    target *= scale;
    target.diagonal().array() += 1.0;
    qs.Lam[j] = (1.0 - rho) * qs.Lam[j] + rho * target;
    qs.h[j] = (1.0 - rho) * qs.h[j] + rho * scale * p.Ptr[j];
    (void)m;
  }
  return qs.refresh(pf);
}

namespace {

struct NatParams {
  std::vector<Eigen::MatrixXd> Lam;
  std::vector<Eigen::VectorXd> h;
};

NatParams nat_of(const SparseQ& qs) { return NatParams{qs.Lam, qs.h}; }

}  // namespace

bool sparse_cavi(const SparseGeom& g, SparseQ& qs, const SparseData& data, int maxit, double tol,
                 bool accelerate, const ParallelFor& pf, std::vector<double>& trace,
                 const std::function<void()>& tick) {
  std::vector<int> ids(data.blocks.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  const std::size_t start = trace.size();
  auto count = [&]() { return static_cast<int>(trace.size() - start); };
  auto conv = [&](double prev, double e) { return std::abs(e - prev) <= tol * std::max(1.0, std::abs(e)); };
  SparseWork work;
  auto pass = [&](const SparseQ& q, SparsePass& p) {
    p = sparse_pass(g, q, data, ids, true, false, false, pf, &work);
    return sparse_finish_grad(g, q, p, 1.0, false, false, nullptr, nullptr);
  };
  if (maxit < 1) return false;
  SparsePass P;
  if (!accelerate) {
    // Record, test, update: qs ends one update past the last recorded ELBO unless
    // converged (then it is the last recorded one's).
    for (int it = 0; it < maxit; ++it) {
      if (it > 0 && tick) tick();
      const double e = pass(qs, P);
      trace.push_back(e);
      if (count() >= 2 && conv(trace[trace.size() - 2], e)) return true;
      if (!sparse_global_step(P, 1.0, 1.0, qs, &pf)) throw std::runtime_error("q(u) update failed");
    }
    return false;
  }
  double e = pass(qs, P);
  trace.push_back(e);
  while (count() < maxit) {
    if (tick) tick();
    const NatParams q0 = nat_of(qs);
    if (!sparse_global_step(P, 1.0, 1.0, qs, &pf)) throw std::runtime_error("q(u) update failed");
    const double e1 = pass(qs, P);
    trace.push_back(e1);
    if (conv(e, e1)) return true;
    e = e1;
    if (count() >= maxit) break;
    const NatParams q1 = nat_of(qs);
    if (!sparse_global_step(P, 1.0, 1.0, qs, &pf)) throw std::runtime_error("q(u) update failed");
    // qs = q2 (its ELBO not yet known). Extrapolate.
    const std::size_t q = qs.Lam.size();
    double rr = 0.0, vv = 0.0;
    for (std::size_t j = 0; j < q; ++j) {
      rr += (q1.Lam[j] - q0.Lam[j]).squaredNorm() + (q1.h[j] - q0.h[j]).squaredNorm();
      vv += (qs.Lam[j] - 2.0 * q1.Lam[j] + q0.Lam[j]).squaredNorm() +
            (qs.h[j] - 2.0 * q1.h[j] + q0.h[j]).squaredNorm();
    }
    bool accepted = false;
    if (vv > 0 && std::isfinite(vv) && std::isfinite(rr)) {
      const double a = std::min(-1.0, -std::sqrt(rr / vv));
      SparseQ q3;
      q3.Lam.resize(q);
      q3.h.resize(q);
      for (std::size_t j = 0; j < q; ++j) {
        // q0 - 2 a (q1 - q0) + a^2 (q2 - 2 q1 + q0)
        q3.Lam[j] = (1.0 + 2.0 * a + a * a) * q0.Lam[j] - (2.0 * a + 2.0 * a * a) * q1.Lam[j] +
                    a * a * qs.Lam[j];
        q3.h[j] = (1.0 + 2.0 * a + a * a) * q0.h[j] - (2.0 * a + 2.0 * a * a) * q1.h[j] +
                  a * a * qs.h[j];
      }
      if (q3.refresh(&pf)) {
        SparsePass P3;
        const double e3 = pass(q3, P3);
        if (std::isfinite(e3) && e3 >= e1) {
          qs = std::move(q3);
          P = std::move(P3);
          trace.push_back(e3);
          accepted = true;
          if (conv(e, e3)) return true;
          e = e3;
        }
      }
    }
    if (!accepted) {
      // Go on from q2 (the second closed-form step).
      const double e2 = pass(qs, P);
      trace.push_back(e2);
      if (conv(e, e2)) return true;
      e = e2;
    }
  }
  return false;
}

int sparse_cvi_refine(const SparseGeom& g, SparseQ& qs, const SparseData& data, const Eigen::MatrixXd& Zd,
                      int rounds, double step, double tol, const ParallelFor& pf,
                      std::vector<double>& direct, const std::function<void()>& tick) {
  if (Zd.cols() != data.q) throw std::invalid_argument("sparse_cvi_refine: the draws must have q columns");
  if (!(step > 0 && step <= 1)) throw std::invalid_argument("sparse_cvi_refine: step must be in (0, 1]");
  std::vector<int> ids(data.blocks.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  SparseWork work;
  // The direct ELBO at q and, in p, the site sums of its natural-gradient target.
  auto pass = [&](const SparseQ& q, SparsePass& p) {
    p = sparse_pass(g, q, data, ids, true, false, false, pf, &work, &Zd);
    return p.elbo_local - q.kl();
  };
  SparsePass P, Pt;
  double cur = pass(qs, P);
  if (!std::isfinite(cur)) throw std::runtime_error("sparse_cvi_refine: the starting q(u) failed");
  direct.push_back(cur);
  int accepted = 0;
  double rate = step;
  for (int t = 0; t < rounds; ++t) {
    if (tick) tick();
    bool gained = false;
    double r = rate, val = cur;
    SparseQ trial;
    int halve = 0;
    for (; halve <= 4 && !gained; ++halve, r *= 0.5) {
      // (1 - r) (Lam, h) + r (I + Phi' P Phi, Phi' (kappa - P mu0)): the damped site step
      trial = qs;
      if (!sparse_global_step(P, 1.0, r, trial, &pf)) continue;
      val = pass(trial, Pt);
      if (!std::isfinite(val) || !(val >= cur)) continue;
      gained = true;
    }
    if (!gained) break;
    rate = next_rate(rate, halve - 1);
    qs = std::move(trial);
    std::swap(P, Pt);
    ++accepted;
    const double prev = cur;
    cur = val;
    direct.push_back(cur);
    if (cur - prev <= tol * std::fabs(prev)) break;
  }
  return accepted;
}

double sparse_finish_grad(const SparseGeom& g, const SparseQ& qs, const SparsePass& p, double scale,
                          bool want_grad, bool want_zgrad, std::vector<double>* gtheta,
                          Eigen::MatrixXd* gz) {
  const double elbo = scale * p.elbo_local - qs.kl();
  if (!want_grad && !want_zgrad) return elbo;
  const int m = g.Z.rows();
  Eigen::MatrixXd inner = -scale * p.C;
  for (std::size_t j = 0; j < qs.Sv.size(); ++j) {
    Eigen::MatrixXd t = qs.Sv[j] + qs.mv[j] * qs.mv[j].transpose();
    t.diagonal().array() -= 1.0;
    inner += 0.5 * t;
  }
  // Kmm_bar = Lm^-T inner Lm^-1.
  const auto U = g.Lm.transpose().triangularView<Eigen::Upper>();
  Eigen::MatrixXd T = U.solve(inner);                                  // Lm^-T inner
  const Eigen::MatrixXd Kmm_bar = U.solve(T.transpose()).transpose();  // (Lm^-T (Lm^-T inner)')'
  if (want_grad && gtheta) {
    std::vector<Eigen::MatrixXd> dK;
    kernel_eval(g.spec, g.Z, g.Z, &dK);
    gtheta->assign(dK.size(), 0.0);
    for (std::size_t k = 0; k < dK.size(); ++k)
      (*gtheta)[k] = scale * p.gtheta[k] + Kmm_bar.cwiseProduct(dK[k]).sum();
  }
  if (want_zgrad && gz) {
    std::vector<Eigen::MatrixXd> D;
    kernel_input_grad(g.spec, g.Z, g.Z, &D);
    const Eigen::MatrixXd Ks = Kmm_bar + Kmm_bar.transpose();
    gz->resize(m, g.Z.cols());
    for (int k = 0; k < g.Z.cols(); ++k)
      gz->col(k) = scale * p.Zbar.col(k) + Ks.cwiseProduct(D[k]).colwise().sum().transpose();
  }
  return elbo;
}

void sparse_predict(const SparseGeom& g, const SparseQ& qs, const Eigen::MatrixXd& Xnew,
                    const Eigen::MatrixXd& mu0new, Eigen::MatrixXd& mean, Eigen::MatrixXd& var,
                    const ParallelFor* pf) {
  const int n = Xnew.rows(), q = static_cast<int>(qs.Lam.size());
  mean.resize(n, q);
  var.resize(n, q);
  // Rows are independent: chunks of SPARSE_PREDICT_CHUNK rows, each writing only its
  // own rows (the same numbers for any thread count). Per chunk, Phi = Knm Lm^-T and
  // diag(Phi S_j Phi') = the squared column norms of Li_j Phi' (S_j = Li_j' Li_j).
  const int chunk = SPARSE_PREDICT_CHUNK;
  const int nchunks = (n + chunk - 1) / chunk;
  auto one = [&](int c) {
    const int r0 = c * chunk, nr = std::min(n, r0 + chunk) - r0;
    const Eigen::MatrixXd Xc = Xnew.middleRows(r0, nr);
    const Eigen::MatrixXd Knm = kernel_eval(g.spec, Xc, g.Z, nullptr);
    const Eigen::VectorXd kd = kernel_diag(g.spec, Xc, nullptr);
    const Eigen::MatrixXd PhiT = g.Lm.triangularView<Eigen::Lower>().solve(Knm.transpose());  // m x nr
    const Eigen::VectorXd ktil = (kd - PhiT.colwise().squaredNorm().transpose()).cwiseMax(0.0);
    for (int j = 0; j < q; ++j) {
      mean.col(j).segment(r0, nr) = PhiT.transpose() * qs.mv[j];
      if (mu0new.rows() == 1) {
        mean.col(j).segment(r0, nr).array() += mu0new(0, j);
      } else {
        mean.col(j).segment(r0, nr) += mu0new.col(j).segment(r0, nr);
      }
      const Eigen::MatrixXd LP = qs.Li[j].triangularView<Eigen::Lower>() * PhiT;
      var.col(j).segment(r0, nr) = ktil + LP.colwise().squaredNorm().transpose();
    }
  };
  if (pf && nchunks > 1) {
    (*pf)(nchunks, one);
  } else {
    for (int c = 0; c < nchunks; ++c) one(c);
  }
}

}  // namespace augp

namespace augp {

double sparse_marginals(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                        const ParallelFor& pf, Eigen::MatrixXd& mean, Eigen::MatrixXd& var) {
  const int nb = static_cast<int>(data.blocks.size());
  mean.resize(data.n, data.q);
  var.resize(data.n, data.q);
  std::vector<double> local(nb, 0.0);
  std::vector<std::string> err(nb);
  auto one = [&](int b) {
    try {
      const SparseBlock& blk = data.blocks[b];
      Eigen::MatrixXd Xb, mu0, Phi, M, V;
      data.gather(blk, Xb, mu0);
      block_moments(g, qs, Xb, mu0, false, nullptr, nullptr, Phi, M, V, nullptr);
      local[b] = blk.lik->elbo_local(M, V);
      for (int i = 0; i < blk.end - blk.begin; ++i) {
        const int r = data.order.empty() ? blk.begin + i : data.order[blk.begin + i];
        mean.row(r) = M.row(i);
        var.row(r) = V.row(i);
      }
    } catch (std::exception& e) {
      err[b] = e.what();
    } catch (...) {
      err[b] = "unknown error in a sparse block";
    }
  };
  pf(nb, one);
  for (int b = 0; b < nb; ++b)
    if (!err[b].empty()) throw std::runtime_error(err[b]);
  double s = 0.0;
  for (int b = 0; b < nb; ++b) s += local[b];
  return s - qs.kl();
}

double sparse_batch_estimate(const SparseGeom& g, const SparseQ& qs, const SparseData& data,
                             const std::vector<int>& ids, bool want_grad, bool want_zgrad,
                             const ParallelFor& pf, SparsePass& p, double& scale,
                             std::vector<double>* gtheta, Eigen::MatrixXd* gz,
                             const Eigen::MatrixXd* direct) {
  if (ids.empty()) throw std::invalid_argument("empty minibatch");
  p = sparse_pass(g, qs, data, ids, true, want_grad, want_zgrad, pf, nullptr, direct);
  if (p.count < 1) throw std::invalid_argument("empty minibatch");
  scale = static_cast<double>(data.n) / p.count;
  return sparse_finish_grad(g, qs, p, scale, want_grad, want_zgrad, gtheta, gz);
}

void sparse_svi(SparseGeom& g, SparseQ& qs, const SparseData& data, const SviOptions& opt,
                const ParallelFor& pf, std::vector<double>& trace,
                const std::function<void(int)>& tick) {
  const int nblocks = static_cast<int>(data.blocks.size());
  const int np = g.spec.n_params(), m = g.Z.rows(), d = g.Z.cols();
  const bool learn = opt.learn_hyper || opt.learn_inducing;
  const int npar = (opt.learn_hyper ? np : 0) + (opt.learn_inducing ? m * d : 0);
  Eigen::VectorXd am = Eigen::VectorXd::Zero(npar), av = Eigen::VectorXd::Zero(npar);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const std::vector<double> theta0 = g.spec.theta;
  int adam_t = 0;
  for (std::size_t t = 1; t <= opt.starts.size(); ++t) {
    const int s0 = opt.starts[t - 1];
    std::vector<int> ids;
    for (int b = s0; b < std::min(nblocks, s0 + opt.blocks_per_batch); ++b) ids.push_back(b);
    const bool step_hyper = learn && static_cast<int>(t) > opt.hyper_start;
    SparsePass p;
    double scale = 1.0;
    std::vector<double> gth;
    Eigen::MatrixXd gz;
    trace.push_back(sparse_batch_estimate(g, qs, data, ids, step_hyper && opt.learn_hyper,
                                          step_hyper && opt.learn_inducing, pf, p, scale, &gth, &gz,
                                          opt.direct));
    const double rho = std::pow(static_cast<double>(t) + opt.tau, -opt.kappa);
    SparseQ backup = qs;
    if (!sparse_global_step(p, scale, std::min(1.0, rho), qs, &pf)) {
      qs = backup;
      throw std::runtime_error("q(u) lost positive definiteness in a stochastic step");
    }
    if (step_hyper) {
      ++adam_t;
      Eigen::VectorXd grad(npar);
      int k = 0;
      if (opt.learn_hyper)
        for (int i = 0; i < np; ++i) grad[k++] = gth[i];
      if (opt.learn_inducing)
        for (int c = 0; c < d; ++c)
          for (int r = 0; r < m; ++r) grad[k++] = gz(r, c);
      am = b1 * am + (1 - b1) * grad;
      av = b2 * av + (1 - b2) * grad.cwiseAbs2();
      const double c1 = 1 - std::pow(b1, static_cast<double>(adam_t));
      const double c2 = 1 - std::pow(b2, static_cast<double>(adam_t));
      const double lr_t =
          opt.lr_decay ? opt.lr * std::pow((adam_t + opt.tau) / (1.0 + opt.tau), -opt.kappa) : opt.lr;
      const Eigen::VectorXd step = lr_t * (am / c1).array() / ((av / c2).array().sqrt() + eps);
      SparseGeom ng = g;
      k = 0;
      if (opt.learn_hyper)
        for (int i = 0; i < np; ++i) {
          double th = ng.spec.theta[i] + step[k++];
          if (opt.box > 0) th = std::min(theta0[i] + opt.box, std::max(theta0[i] - opt.box, th));
          ng.spec.theta[i] = th;
        }
      if (opt.learn_inducing)
        for (int c = 0; c < d; ++c)
          for (int r = 0; r < m; ++r) ng.Z(r, c) += step[k++];
      SparseQ nq = qs;
      if (ng.setup() && std::abs(ng.jitter - g.jitter) <= 0 && sparse_rewhiten(g, ng, nq)) {
        g = std::move(ng);
        qs = std::move(nq);
      }
    }
    tick(static_cast<int>(t));
  }
}

}  // namespace augp
