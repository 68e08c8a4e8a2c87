# SVI vs full-batch sparse fit on the same data (issue 7, hyperparameter drift).
# twonorm (mlbench), d = 20, n = 2e4 training points, 2e4 held-out points,
# SE kernel, m = 100 inducing points. n = 2e4 is at the full-batch threshold, so
# the full-batch fit is the default path and SVI is forced with batch_size = 1000.
# Prints the kernel after the 2000-point subsample fit (= the SVI fit with lr = 0)
# and after SVI with the default Adam steps, with held-out error / log loss.
# The warm start of q(u), the warm-up epoch, the decaying Adam rate and the box are
# fixed (SVI_* constants in R/sparse.R); results_svi.md has rows with each of them
# switched off.
#
# Usage (package root, augmentedGP installed in the first library path):
#   Rscript bench/sparse/svi_vs_fullbatch.R [n] [threads] [lib]
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[1]) else 20000L
threads <- if (length(args) >= 2) as.integer(args[2]) else 2L
if (length(args) >= 3) .libPaths(c(args[3], .libPaths()))
suppressPackageStartupMessages(library(augmentedGP))
ns <- asNamespace("augmentedGP")

source(file.path("bench", "sparse", "helpers.R"))

tr <- simulate("twonorm", n, 11)
te <- simulate("twonorm", 20000, 7)
run <- function(label, ctl) {
  t0 <- proc.time()[["elapsed"]]
  fit <- ns$augp_sparse_engine(tr$X, tr$y, rep(1, n), kernel_se(), inducing = 100,
                               control = c(list(threads = threads), ctl), seed = 1)
  el <- proc.time()[["elapsed"]] - t0
  pr <- ns$augp_engine_predict.augp_sparse_engine(fit, te$X)
  mt <- metrics(prob_of(pr$mean, pr$var), te$y)
  th <- exp(ns$kernel_get_params(fit$kernel))
  ef <- if (!is.null(fit$elbo_full)) fit$elbo_full else NA
  data.frame(fit = label, path = if (fit$sparse$full_batch) "full batch" else "SVI",
             variance = signif(th[1], 4), lengthscale = signif(th[2], 4),
             elbo = round(ef, 1), error = round(mt[["error"]], 4),
             logloss = round(mt[["logloss"]], 4), seconds = round(el, 1))
}
res <- rbind(
  run("full batch (default)", list()),
  run("SVI, lr = 0 (subsample kernel)", list(batch_size = 1000, lr = 0)),
  run("SVI, default", list(batch_size = 1000))
)
cat(sprintf("twonorm n = %d, held-out 20000, m = 100, batch 1000, threads %d, %s\n\n",
            n, threads, format(Sys.time(), "%Y-%m-%d %H:%M")))
cat("| fit | path | variance | lengthscale | full-data ELBO | error | log loss | s |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(res))) cat("|", paste(res[i, ], collapse = " | "), "|\n")
base <- res$logloss[1]
cat(sprintf("\nSVI default / full batch log loss: %.3f\n", res$logloss[nrow(res)] / base))
