# augp_control(integrate_hyper) on the multi-class sets of issue 19: logistic_softmax() at
# its defaults (exact GP here), type-II (integrate_hyper = FALSE) against predictions
# averaged over the Laplace approximation of the kernel hyperparameters (TRUE), with a
# random forest (ranger, 500 trees, 1 thread) in the same run, on the splits of
# bench_multiclass.R (iris and fgl: seeds 1-20, Vehicle: 1-5).
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/integrate_hyper.R [splits] [sets]
# splits: cap on the splits per set; sets: regular expression selecting sets (default
# "iris|fgl|Vehicle"). Prints per set the mean test error and log loss (probabilities
# clipped at 1e-9) of each method, the ratios to ranger's (issue 19 targets: error at most
# 1.25x, log loss at most 1.10x), the importance ESS of the mixtures and the median fit times.
# Environment: AUGP_BENCH_REFINE=0 fits both with refine = FALSE (no direct-ELBO refinement
# of q(f), neither of the fit nor of the mixture's points).
args <- commandArgs(trailingOnly = TRUE)
max_splits <- if (length(args) >= 1) as.integer(args[1]) else 1000L
only <- if (length(args) >= 2) args[2] else "iris|fgl|Vehicle"
for (p in c("MASS", "mlbench", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("benchmark needs package ", p)
}
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))
sets <- multiclass_sets(2000)
sets <- sets[grepl(only, names(sets))]
refine <- if (identical(Sys.getenv("AUGP_BENCH_REFINE"), "0")) FALSE else "auto"
rows <- list()
for (nm in names(sets)) for (split in seq_len(min(sets[[nm]]$splits, max_splits))) {
  s <- with(sets[[nm]], split_sets(d, n_train, n_test, split))
  dtr <- data.frame(s$xtr, y = s$ytr)
  dte <- data.frame(s$xte)
  one <- function(ih) {
    ess <- NA
    t <- system.time(fit <- withCallingHandlers(
      suppressMessages(augp(y ~ ., data = dtr, seed = 1,
                            control = augp_control(threads = 1, integrate_hyper = ih,
                                                   refine = refine))),
      warning = function(w) invokeRestart("muffleWarning")))
    if (!is.null(fit$engine$mixture)) ess <- fit$engine$mixture$ess
    c(scores(predict(fit, dte), s$yte), time = t[["elapsed"]], ess = ess)
  }
  a <- one(FALSE)
  b <- one(TRUE)
  rf <- ranger::ranger(y ~ ., data = dtr, probability = TRUE, num.threads = 1, seed = 1)
  r <- scores(predict(rf, dte, num.threads = 1)$predictions, s$yte)
  rows[[length(rows) + 1]] <- data.frame(set = nm, split = split, vi_error = a[["error"]],
                                         vi_logloss = a[["logloss"]], vi_time = a[["time"]],
                                         ih_error = b[["error"]], ih_logloss = b[["logloss"]],
                                         ih_time = b[["time"]], ih_ess = b[["ess"]],
                                         rf_error = r[["error"]], rf_logloss = r[["logloss"]])
  cat(sprintf("%s split %d: type-II %.4f / %.4f (%.2f s), integrated %.4f / %.4f (%.2f s, ESS %.1f), ranger %.4f / %.4f\n",
              nm, split, a[["error"]], a[["logloss"]], a[["time"]], b[["error"]], b[["logloss"]],
              b[["time"]], b[["ess"]], r[["error"]], r[["logloss"]]))
}
res <- do.call(rbind, rows)
cat("\n| set | splits | type-II error / log loss | integrated error / log loss | ranger | type-II ratios | integrated ratios | log loss integrated - type-II (se) | median time type-II / integrated (s) | median ESS |\n")
cat("|---|---|---|---|---|---|---|---|---|---|\n")
for (nm in unique(res$set)) {
  r <- res[res$set == nm, ]
  d <- r$ih_logloss - r$vi_logloss
  cat(sprintf("| %s | %d | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f | %.2f / %.2f | %.2f / %.2f | %+.4f (%.4f) | %.2f / %.2f | %.1f |\n",
              nm, nrow(r), mean(r$vi_error), mean(r$vi_logloss), mean(r$ih_error),
              mean(r$ih_logloss), mean(r$rf_error), mean(r$rf_logloss),
              mean(r$vi_error) / mean(r$rf_error), mean(r$vi_logloss) / mean(r$rf_logloss),
              mean(r$ih_error) / mean(r$rf_error), mean(r$ih_logloss) / mean(r$rf_logloss),
              mean(d), stats::sd(d) / sqrt(length(d)), stats::median(r$vi_time),
              stats::median(r$ih_time), stats::median(r$ih_ess)))
}
cat(sprintf("\nR %s, %s\n", getRversion(), date()))
