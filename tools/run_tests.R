# Runs the package's testthat suite against the current source tree and prints
# "N passed, N failed, N skipped" as the last line; exits non-zero on any failure.
# Usage (from the repository root): Rscript tools/run_tests.R
args <- commandArgs(trailingOnly = TRUE)
filter <- if (length(args)) args[1] else NULL
root <- normalizePath(".")
if (!file.exists(file.path(root, "DESCRIPTION"))) stop("run this from the repository root")
lib <- file.path(tempdir(), "augp-lib")
dir.create(lib, showWarnings = FALSE)
status <- system2(file.path(R.home("bin"), "R"),
                  c("CMD", "INSTALL", "--no-docs", "--no-multiarch", "-l", shQuote(lib), shQuote(root)),
                  stdout = file.path(tempdir(), "install.log"), stderr = file.path(tempdir(), "install.log"))
if (status != 0) {
  cat(readLines(file.path(tempdir(), "install.log")), sep = "\n")
  cat("0 passed, 1 failed\n")
  quit(status = 1)
}
.libPaths(c(lib, .libPaths()))
options(augmentedGP.threads = 2L)
Sys.setenv(OMP_THREAD_LIMIT = "2", RCPP_PARALLEL_NUM_THREADS = "2")
library(testthat)
library(augmentedGP)
res <- testthat::test_dir(file.path(root, "tests", "testthat"), package = "augmentedGP",
                          load_package = "installed", filter = filter,
                          reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                          stop_on_failure = FALSE, stop_on_warning = FALSE)
# count every expectation by its class, exactly as testthat's reporters do
kinds <- unlist(lapply(res, function(test) {
  vapply(test$results, function(r) {
    if (inherits(r, "expectation_success")) "pass"
    else if (inherits(r, "expectation_skip")) "skip"
    else if (inherits(r, "expectation_warning")) "warn"
    else if (inherits(r, "expectation_failure") || inherits(r, "expectation_error")) "fail"
    else "other"
  }, character(1))
}))
passed <- sum(kinds == "pass")
failed <- sum(kinds == "fail")
skipped <- sum(kinds == "skip")
cat(sprintf("%d passed, %d failed, %d skipped\n", as.integer(passed), as.integer(failed),
            as.integer(skipped)))
quit(status = if (failed > 0 || passed == 0) 1 else 0)
