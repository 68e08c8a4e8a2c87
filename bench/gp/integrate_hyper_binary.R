# augp_control(integrate_hyper) on binary classification (bernoulli(), the default
# likelihood of a two-level factor; exact GP): type-II (integrate_hyper = FALSE) against
# predictions averaged over the Laplace approximation of the kernel hyperparameters
# (TRUE), on random 2:1 splits (seeds 1, 2, ...) of Pima (MASS::Pima.tr + Pima.te, 532
# rows, 7 inputs), Sonar (208, 60) and Ionosphere (351, 33) from mlbench.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/gp/integrate_hyper_binary.R [splits]
# Prints per set the mean held-out log predictive density (LPD, nats per test point, minus
# the log loss), error rate, importance ESS and median fit times; one thread.
args <- commandArgs(trailingOnly = TRUE)
n_splits <- if (length(args) >= 1) as.integer(args[1]) else 5L
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
pima <- rbind(MASS::Pima.tr, MASS::Pima.te)
data("Sonar", package = "mlbench", envir = environment())
data("Ionosphere", package = "mlbench", envir = environment())
iono <- data.frame(V1 = as.numeric(Ionosphere$V1 == "1"), Ionosphere[, 3:34])
iono[] <- lapply(iono, as.numeric)
sets <- list(Pima = data.frame(pima[1:7], y = pima$type),
             Sonar = data.frame(Sonar[, 1:60], y = Sonar$Class),
             Ionosphere = data.frame(iono, y = Ionosphere$Class))
rows <- list()
for (nm in names(sets)) for (sp in seq_len(n_splits)) {
  d <- sets[[nm]]
  set.seed(sp)
  tr <- sort(sample(nrow(d), round(2 * nrow(d) / 3)))
  dtr <- d[tr, ]
  dte <- d[-tr, ]
  one <- function(ih) {
    t <- system.time(fit <- withCallingHandlers(
      suppressMessages(augp(y ~ ., data = dtr, seed = 1,
                            control = augp_control(threads = 1, integrate_hyper = ih))),
      warning = function(w) invokeRestart("muffleWarning")))
    p <- pmin(pmax(as.numeric(predict(fit, dte, type = "response")), 1e-9), 1 - 1e-9)
    yy <- dte$y == levels(d$y)[2]
    c(lpd = mean(ifelse(yy, log(p), log1p(-p))), error = mean((p > 0.5) != yy),
      time = t[["elapsed"]], ess = if (is.null(fit$engine$mixture)) NA else fit$engine$mixture$ess)
  }
  a <- one(FALSE)
  b <- one(TRUE)
  rows[[length(rows) + 1]] <- data.frame(set = nm, split = sp, vi_lpd = a[["lpd"]],
                                         vi_error = a[["error"]], vi_time = a[["time"]],
                                         ih_lpd = b[["lpd"]], ih_error = b[["error"]],
                                         ih_time = b[["time"]], ess = b[["ess"]])
  cat(sprintf("%s split %d: type-II %.4f / %.4f (%.2f s), integrated %.4f / %.4f (%.2f s, ESS %.1f)\n",
              nm, sp, a[["lpd"]], a[["error"]], a[["time"]], b[["lpd"]], b[["error"]], b[["time"]],
              b[["ess"]]))
}
res <- do.call(rbind, rows)
cat("\n| set | splits | type-II LPD / error | integrated LPD / error | LPD integrated - type-II (se; splits better) | median time type-II / integrated (s) | median ESS |\n")
cat("|---|---|---|---|---|---|---|\n")
for (nm in unique(res$set)) {
  r <- res[res$set == nm, ]
  d <- r$ih_lpd - r$vi_lpd
  cat(sprintf("| %s | %d | %.4f / %.4f | %.4f / %.4f | %+.4f (%.4f; %d) | %.2f / %.2f | %.1f |\n", nm,
              nrow(r), mean(r$vi_lpd), mean(r$vi_error), mean(r$ih_lpd), mean(r$ih_error), mean(d),
              stats::sd(d) / sqrt(length(d)), sum(d > 0), stats::median(r$vi_time),
              stats::median(r$ih_time), stats::median(r$ess)))
}
