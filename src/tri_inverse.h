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

namespace augp {

namespace tri_detail {

constexpr int BASE = 64;

inline void invert_rec(Eigen::Ref<Eigen::MatrixXd> L) {
  const int n = static_cast<int>(L.rows());
  if (n <= BASE) {
    for (int j = 0; j < n; ++j) {
      L(j, j) = 1.0 / L(j, j);
      for (int i = j + 1; i < n; ++i) {
        double s = 0.0;
        for (int k = j; k < i; ++k) s += L(i, k) * L(k, j);
        L(i, j) = -s / L(i, i);
      }
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

}  // namespace augp

#endif
