// Small conversions shared by the R adapter files (rcpp_exports_*.cpp).
#ifndef AUGP_ADAPTER_H
#define AUGP_ADAPTER_H

#include <RcppEigen.h>

#include <vector>

#include "kernel.h"

namespace augp {

// A kernel specification from the list made by kernel_flatten() in R.
inline KernelSpec kernel_spec_from_list(const Rcpp::List& k) {
  KernelSpec s;
  s.code = Rcpp::as<std::vector<int>>(k["code"]);
  s.nls = Rcpp::as<std::vector<int>>(k["nls"]);
  s.theta = Rcpp::as<std::vector<double>>(k["theta"]);
  return s;
}

}  // namespace augp

#endif
