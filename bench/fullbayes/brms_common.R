# Shared by the augp-vs-brms benchmarks (bench/fullbayes/*_brms.R, bench/counts/bench_brms.R,
# bench/ordinal/bench_brms.R): sourced after the script sets `args` (an optional library path).
if (length(args)) .libPaths(c(args[1], .libPaths()))
# (a script that sets augp_only = TRUE runs augp alone and needs neither brms nor rstan)
suppressPackageStartupMessages({
  library(augmentedGP)
  if (!isTRUE(get0("augp_only"))) {
    library(brms)
    # Debian's BH package relies on the system boost headers
    if (!nzchar(rstan::rstan_options("boost_lib"))) rstan::rstan_options(boost_lib = "/usr/include")
  }
})
chains <- 4
cores <- 2

# The directory of the running script (where results are saved).
script_dir <- function() {
  dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
}

# brms recomputes the GP covariance for predictions; short lengthscale draws need a nugget.
epred_nug <- function(b, ...) {
  for (nug in c(1e-8, 1e-6, 1e-4)) {
    ep <- tryCatch(posterior_epred(b, nug = nug, ...), error = function(e) NULL)
    if (!is.null(ep)) return(ep)
  }
  stop("brms predictions failed with every nugget tried")
}

# Bulk ESS of every column of a draws x quantities matrix (or draws x ... array) whose
# draws are `nchains` chains one after another.
ess_pred <- function(ep, nchains) {
  S <- dim(ep)[1]
  M <- matrix(ep, S)
  apply(M, 2, function(v) posterior::ess_bulk(matrix(v, S / nchains, nchains)))
}
