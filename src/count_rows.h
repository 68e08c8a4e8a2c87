// Per-observation category counts (n x K) for the categorical likelihoods. A row that
// counts one category (a class label, possibly weighted) is stored as its category and
// count: 12 bytes per row instead of 8 K. Data with some row counting several
// categories are held as the dense matrix. Element access, column sums and row subsets
// give the same numbers in both forms.
#ifndef AUGP_COUNT_ROWS_H
#define AUGP_COUNT_ROWS_H

#include <RcppEigen.h>

#include <vector>

namespace augp {

class CountRows {
 public:
  CountRows() = default;

  explicit CountRows(const Eigen::MatrixXd& Y) : n_(static_cast<int>(Y.rows())), K_(static_cast<int>(Y.cols())) {
    bool single = true;
    for (int i = 0; i < n_ && single; ++i) {
      int nz = 0;
      for (int k = 0; k < K_; ++k) nz += Y(i, k) != 0.0;
      single = nz <= 1;
    }
    if (!single) {
      dense_ = Y;
      return;
    }
    cls_.assign(n_, 0);
    w_.assign(n_, 0.0);
    for (int i = 0; i < n_; ++i)
      for (int k = 0; k < K_; ++k)
        if (Y(i, k) != 0.0) {
          cls_[i] = k;
          w_[i] = Y(i, k);
        }
  }

  int rows() const { return n_; }
  int cols() const { return K_; }
  bool compact() const { return dense_.size() == 0 && n_ > 0; }

  double operator()(int i, int k) const {
    if (!compact()) return dense_(i, k);
    return cls_[i] == k ? w_[i] : 0.0;
  }

  Eigen::VectorXd col_sums() const {
    if (!compact()) return dense_.colwise().sum().transpose();
    Eigen::VectorXd s = Eigen::VectorXd::Zero(K_);
    for (int i = 0; i < n_; ++i) s[cls_[i]] += w_[i];
    return s;
  }

  // The rows `rows` (0-based), in that order.
  CountRows subset(const std::vector<int>& rows) const {
    CountRows out;
    out.n_ = static_cast<int>(rows.size());
    out.K_ = K_;
    if (compact()) {
      out.cls_.resize(rows.size());
      out.w_.resize(rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) {
        out.cls_[r] = cls_[rows[r]];
        out.w_[r] = w_[rows[r]];
      }
      return out;
    }
    out.dense_.resize(rows.size(), K_);
    for (std::size_t r = 0; r < rows.size(); ++r) out.dense_.row(r) = dense_.row(rows[r]);
    return out;
  }

 private:
  int n_ = 0, K_ = 0;
  std::vector<int> cls_;      // compact form: the row's category (0-based)
  std::vector<double> w_;     // compact form: its count (0: an empty row)
  Eigen::MatrixXd dense_;     // dense form (empty in the compact form)
};

}  // namespace augp

#endif
