// Blocked, recursive inverses built from a lower Cholesky factor (no R API here).
//
// For B = L L' (L lower triangular):
//   lower_tri_invert(L)   overwrites L by L^-1 (n^3 / 3 flops, matrix-matrix kernels),
//   lower_tri_crossprod(T) overwrites a lower triangular T by the full symmetric T' T
//                          (n^3 / 3 flops), so B^-1 = L^-T L^-1 costs 2 n^3 / 3 flops
//                          after the factorisation, instead of n^3 for triangular solves
//                          against the identity plus 2 n^3 for a general product.
// The recursions split [A 0; C D]:
//   [A 0; C D]^-1 = [A^-1 0; -D^-1 C A^-1 D^-1],
//   [A 0; C D]' [A 0; C D] = [A'A + C'C, C'D; D'C, D'D].
// Only the lower triangle is referenced on input; the strictly upper triangle of the
// input is ignored (and overwritten by the symmetric result in lower_tri_crossprod).
#ifndef AUGP_TRI_INVERSE_H
#define AUGP_TRI_INVERSE_H

#include <Eigen/Dense>

#include <vector>

#include "parallel.h"

namespace augp {

namespace tri_detail {

constexpr int BASE = 64;
constexpr int INV_BASE = 32;

inline void invert_rec(Eigen::Ref<Eigen::MatrixXd> L) {
  const int n = static_cast<int>(L.rows());
  if (n <= INV_BASE) {
    // Columns from the last: with the trailing block D already inverted, column j of
    // the inverse below the diagonal is -D^-1 L(j+1:n, j) / L(j, j), a triangular
    // matrix-vector product on contiguous columns.
    Eigen::VectorXd x(n);
    for (int j = n - 1; j >= 0; --j) {
      L(j, j) = 1.0 / L(j, j);
      const int r = n - j - 1;
      if (r == 0) continue;
      x.head(r) = L.col(j).tail(r);
      L.col(j).tail(r).noalias() = L.bottomRightCorner(r, r).triangularView<Eigen::Lower>() * x.head(r);
      L.col(j).tail(r) *= -L(j, j);
    }
    return;
  }
  const int h = n / 2, m = n - h;
  invert_rec(L.topLeftCorner(h, h));
  invert_rec(L.bottomRightCorner(m, m));
  // C <- -D^-1 C A^-1 with D^-1 and A^-1 already in place.
  Eigen::MatrixXd T = L.bottomLeftCorner(m, h) *
                      L.topLeftCorner(h, h).triangularView<Eigen::Lower>();
  L.bottomLeftCorner(m, h).noalias() =
      -(L.bottomRightCorner(m, m).triangularView<Eigen::Lower>() * T);
}

inline void crossprod_rec(Eigen::Ref<Eigen::MatrixXd> T) {
  const int n = static_cast<int>(T.rows());
  if (n <= BASE) {
    // Lower triangle of T'T, row by row so T's entries are still unmodified when read:
    // (T'T)(i, j) = sum_{k >= i} T(k, i) T(k, j) for j <= i, which reads rows k >= i only.
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) {
        double s = 0.0;
        for (int k = i; k < n; ++k) s += T(k, i) * T(k, j);
        T(i, j) = s;
      }
    }
    return;
  }
  const int h = n / 2, m = n - h;
  crossprod_rec(T.topLeftCorner(h, h));
  T.topLeftCorner(h, h).selfadjointView<Eigen::Lower>().rankUpdate(
      T.bottomLeftCorner(m, h).transpose());
  Eigen::MatrixXd C = T.bottomLeftCorner(m, h);
  T.bottomLeftCorner(m, h).noalias() =
      T.bottomRightCorner(m, m).triangularView<Eigen::Lower>().transpose() * C;
  crossprod_rec(T.bottomRightCorner(m, m));
}

}  // namespace tri_detail

inline void lower_tri_invert(Eigen::MatrixXd& L) { tri_detail::invert_rec(L); }

inline void lower_tri_crossprod(Eigen::MatrixXd& T) {
  tri_detail::crossprod_rec(T);
  T.triangularView<Eigen::StrictlyUpper>() = T.transpose();
}

// Threaded versions (threads >= 2 and n >= PAR_MIN; otherwise the serial ones), with the
// same results up to rounding. The top split of each recursion gives two independent
// halves (one per task) and matrix products whose column blocks (PAR_BLOCK columns) are
// independent tasks: three synchronisations for the inverse of the factor, one for the
// product. parallel_items() runs the tasks, so no task calls the R API.
namespace tri_detail {

constexpr int PAR_MIN = 512;
constexpr int PAR_BLOCK = 128;

// Column ranges [c_k, c_(k+1)) of width at most `width` covering [0, n).
inline std::vector<int> col_cuts(int n, int width) {
  std::vector<int> c;
  for (int j = 0; j < n; j += width) c.push_back(j);
  c.push_back(n);
  return c;
}

}  // namespace tri_detail

inline void lower_tri_invert(Eigen::MatrixXd& L, int threads) {
  const int n = static_cast<int>(L.rows());
  if (threads < 2 || n < tri_detail::PAR_MIN) return lower_tri_invert(L);
  const int h = n / 2, m = n - h;
  parallel_items(2, threads, [&](int k) {
    if (k == 0) tri_detail::invert_rec(L.topLeftCorner(h, h));
    else tri_detail::invert_rec(L.bottomRightCorner(m, m));
  });
  // C <- -D^-1 C A^-1, by column blocks J = [j0, j1): A^-1 is lower triangular, so
  // (C A^-1)[:, J] = C[:, J] A^-1[J, J] + C[:, j1:] A^-1[j1:, J].
  Eigen::MatrixXd T(m, h);
  const std::vector<int> cut = tri_detail::col_cuts(h, tri_detail::PAR_BLOCK);
  parallel_items(static_cast<int>(cut.size()) - 1, threads, [&](int b) {
    const int j0 = cut[b], w = cut[b + 1] - j0, rest = h - j0 - w;
    T.middleCols(j0, w).noalias() =
        L.block(h, j0, m, w) * L.block(j0, j0, w, w).triangularView<Eigen::Lower>();
    if (rest > 0) T.middleCols(j0, w).noalias() += L.block(h, j0 + w, m, rest) * L.block(j0 + w, j0, rest, w);
  });
  parallel_items(static_cast<int>(cut.size()) - 1, threads, [&](int b) {
    const int j0 = cut[b], w = cut[b + 1] - j0;
    L.block(h, j0, m, w).noalias() =
        -(L.bottomRightCorner(m, m).triangularView<Eigen::Lower>() * T.middleCols(j0, w));
  });
}

inline void lower_tri_crossprod(Eigen::MatrixXd& T, int threads) {
  const int n = static_cast<int>(T.rows());
  if (threads < 2 || n < tri_detail::PAR_MIN) return lower_tri_crossprod(T);
  const int h = n / 2, m = n - h;
  // [A 0; C D]' [A 0; C D] = [A'A + C'C, C'D; D'C, D'D]: task 0 makes the top-left block
  // (reads C), task 1 D'C into a copy, then D'D (reads and overwrites D only).
  Eigen::MatrixXd DC;
  parallel_items(2, threads, [&](int k) {
    if (k == 0) {
      tri_detail::crossprod_rec(T.topLeftCorner(h, h));
      T.topLeftCorner(h, h).selfadjointView<Eigen::Lower>().rankUpdate(
          T.bottomLeftCorner(m, h).transpose());
    } else {
      DC.noalias() = T.bottomRightCorner(m, m).triangularView<Eigen::Lower>().transpose() *
                     T.bottomLeftCorner(m, h);
      tri_detail::crossprod_rec(T.bottomRightCorner(m, m));
    }
  });
  T.bottomLeftCorner(m, h) = DC;
  T.triangularView<Eigen::StrictlyUpper>() = T.transpose();
}

}  // namespace augp

#endif
