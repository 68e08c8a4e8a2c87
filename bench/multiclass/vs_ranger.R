# The issue 19 accuracy targets on the bench/multiclass sets: augp at its defaults
# against a random forest (ranger, 500 trees) and multinomial regression (nnet::multinom)
# in the same run, on the splits bench_multiclass.R uses (iris and fgl: seeds 1-20,
# Vehicle: 1-5, letters: seed 1 with 2000 training rows) and the Vowel split of
# accuracy.R. augp runs as `augp(y ~ ., data)` with every setting at its default
# (inducing = "auto": exact GPs here except letters). One thread throughout.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/vs_ranger.R [splits]
# splits: cap on the number of splits per set (default: all). Prints, per set, the mean
# test error and log loss (probabilities clipped at 1e-9) of each method and augp's
# ratios to ranger's (targets: error at most 1.25x, log loss at most 1.10x).
args <- commandArgs(trailingOnly = TRUE)
max_splits <- if (length(args) >= 1) as.integer(args[1]) else 1000L
for (p in c("MASS", "mlbench", "nnet", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("benchmark needs package ", p)
}
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)

source(file.path("bench", "multiclass", "common.R"))
sets <- multiclass_sets(2000)
data("Vowel", package = "mlbench", envir = environment())
vowel_split <- function() {
  V <- Vowel
  V$V1 <- NULL
  set.seed(1)
  tr <- sort(sample(nrow(V), 528))
  x <- as.data.frame(lapply(V[-ncol(V)], as.double))
  list(xtr = x[tr, ], ytr = V$Class[tr], xte = x[-tr, ], yte = V$Class[-tr])
}

rows <- list()
run_split <- function(nm, split, s) {
  dtr <- data.frame(s$xtr, y = s$ytr)
  dte <- data.frame(s$xte)
  t <- system.time(fit <- suppressMessages(augp(y ~ ., data = dtr, seed = 1)))
  a <- scores(predict(fit, dte), s$yte)
  rf <- ranger::ranger(y ~ ., data = dtr, probability = TRUE, num.threads = 1, seed = 1)
  r <- scores(predict(rf, dte, num.threads = 1)$predictions, s$yte)
  mn <- nnet::multinom(y ~ ., data = dtr, trace = FALSE, maxit = 1000, MaxNWts = 1e5)
  P <- stats::predict(mn, newdata = dte, type = "probs")
  if (!is.matrix(P)) P <- cbind(1 - P, P)
  colnames(P) <- levels(s$ytr)
  mm <- scores(P, s$yte)
  rows[[length(rows) + 1]] <<- data.frame(set = nm, split = split, augp_error = a[["error"]],
                                          augp_logloss = a[["logloss"]], augp_time = t[["elapsed"]],
                                          rf_error = r[["error"]], rf_logloss = r[["logloss"]],
                                          mn_error = mm[["error"]], mn_logloss = mm[["logloss"]])
  cat(sprintf("%s split %d: augp %.4f / %.4f (%.1f s), ranger %.4f / %.4f, multinom %.4f / %.4f\n",
              nm, split, a[["error"]], a[["logloss"]], t[["elapsed"]], r[["error"]],
              r[["logloss"]], mm[["error"]], mm[["logloss"]]))
}
for (nm in names(sets)) for (split in seq_len(min(sets[[nm]]$splits, max_splits))) {
  run_split(nm, split, with(sets[[nm]], split_sets(d, n_train, n_test, split)))
}
run_split("Vowel", 1L, vowel_split())
res <- do.call(rbind, rows)

cat("\n| set | splits | augp error | augp log loss | ranger error | ranger log loss |",
    "multinom error | multinom log loss | error ratio | log loss ratio | augp time (median s) |\n")
cat("|---|---|---|---|---|---|---|---|---|---|---|\n")
for (nm in unique(res$set)) {
  r <- res[res$set == nm, ]
  cat(sprintf("| %s | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f | %.2f | %.2f |\n", nm,
              nrow(r), mean(r$augp_error), mean(r$augp_logloss), mean(r$rf_error),
              mean(r$rf_logloss), mean(r$mn_error), mean(r$mn_logloss),
              mean(r$augp_error) / max(mean(r$rf_error), 1e-9),
              mean(r$augp_logloss) / mean(r$rf_logloss), stats::median(r$augp_time)))
}
cat(sprintf("\nR %s, date %s\n", getRversion(), format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")))
