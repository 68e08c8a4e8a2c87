#' augmentedGP: Gaussian process models with augmented non-Gaussian likelihoods
#'
#' Exact Polya-Gamma sampling, density and distribution functions
#' ([rpg()], [dpg()], [ppg()]), kernels ([kernel_se()] and friends) and the
#' machinery for conditionally conjugate Gaussian-process models.
#'
#' Options: `augmentedGP.threads` sets the default number of threads used by
#' the parallel code (default: 2, never more than the machine has).
#'
#' @keywords internal
#' @useDynLib augmentedGP, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @importFrom RcppParallel RcppParallelLibs
"_PACKAGE"
