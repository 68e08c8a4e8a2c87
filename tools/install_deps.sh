#!/usr/bin/env bash
# Installs everything augmentedGP needs to build, test and run its examples.
# Prebuilt Debian r-cran-* packages are used when we are root (fast); anything still
# missing is then installed from R's configured repositories.
set -u
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq --no-install-recommends \
    r-cran-rcpp r-cran-rcppeigen r-cran-rcppparallel r-cran-ggplot2 r-cran-knitr \
    r-cran-rmarkdown r-cran-posterior r-cran-coda r-cran-future.apply r-cran-matrix \
    r-cran-roxygen2 r-cran-testthat r-cran-mass r-cran-dbi r-cran-rsqlite r-cran-kernlab \
    r-cran-mlbench r-cran-nnet r-cran-cli r-cran-withr r-cran-generics \
    r-cran-rstantools r-cran-loo r-cran-bayesplot r-cran-snowballc r-cran-cardata r-cran-boot \
    r-cran-mgcv pandoc qpdf >/dev/null 2>&1 || \
    echo "install_deps: some Debian packages could not be installed; falling back to R" >&2
  # checkbashisms: R CMD check --as-cran checks the configure script with it
  command -v checkbashisms >/dev/null 2>&1 || \
    apt-get install -y -qq --no-install-recommends devscripts >/dev/null 2>&1 || \
    echo "install_deps: devscripts (checkbashisms) could not be installed" >&2
fi
Rscript -e '
need <- c("Rcpp", "RcppEigen", "RcppParallel", "ggplot2", "knitr", "rmarkdown",
          "posterior", "coda", "future", "future.apply", "Matrix", "testthat", "MASS",
          "DBI", "RSQLite", "kernlab", "mlbench", "nnet", "cli", "withr", "generics",
          "rstantools", "loo", "bayesplot", "SnowballC", "boot", "carData", "mgcv")
have <- vapply(need, requireNamespace, logical(1), quietly = TRUE)
if (any(!have)) {
  # uses the repositories configured for R on this machine
  install.packages(need[!have])
}
still <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
if (length(still)) stop("could not install: ", paste(still, collapse = ", "))
'
