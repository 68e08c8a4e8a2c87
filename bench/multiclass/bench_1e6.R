# Benchmark: a 7-class problem with 1e6 rows, fitted by the default sparse GP of
# augp_fit() (logistic-softmax, inducing = "auto": minibatch SVI), against a full-batch
# sparse fit on a 1e5-row subsample (same m), a random forest (ranger, 500 trees,
# probability forest) on 1e5 rows and multinomial logistic regression (nnet::multinom,
# linear in the inputs, up to 200 BFGS iterations) on all rows; fit time, peak memory (the whole process's, and the fit's
# resident-set peak from just before it, with the training data held), held-out error and log loss.
#
# Data: 10 standard normal inputs; class probabilities softmax(F(x)) with 7 smooth
# latent functions of three fixed directions in the inputs; 20000 test rows; the Bayes
# error for reference.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/bench_1e6.R [n] [threads]           # driver: all runs
#   Rscript bench/multiclass/bench_1e6.R run <n> <method> <threads>
args <- commandArgs(trailingOnly = TRUE)
lib_bench <- file.path("bench", ".lib")
if (dir.exists(lib_bench)) .libPaths(c(lib_bench, .libPaths()))

K <- 7
source(file.path("bench", "run_timed.R"))
dirs <- random_directions(10, 3, seed = 77)
probs <- function(X) {
  P <- X %*% dirs
  ang <- 2 * pi * (seq_len(K) - 1) / K
  F <- sapply(ang, function(a) 2 * cos(1.2 * P[, 1] - a) + 1.2 * sin(P[, 2] + a) * P[, 3] / 2)
  E <- exp(F - apply(F, 1, max))
  E / rowSums(E)
}
sim <- function(n, seed, keep_p = TRUE) {
  set.seed(seed)
  X <- stats::rnorm(n * 10)
  dim(X) <- c(n, 10)  # (matrix() would hold a second copy for a moment)
  Pr <- probs(X)
  u <- stats::runif(n)
  # the class is the first k with u <= P_1 + ... + P_k
  y <- rep(K, n)
  cum <- numeric(n)
  for (k in seq_len(K - 1)) {
    cum <- cum + Pr[, k]
    y[u <= cum & y == K] <- k
  }
  list(X = X, y = factor(y, levels = seq_len(K)), p = if (keep_p) Pr)
}

one_run <- function(n, method, threads) {
  te <- sim(20000, 7)
  if (method %in% c("ranger", "sub1e5")) n <- min(n, 1e5)
  tr <- sim(n, 100 + n %% 997, keep_p = FALSE)
  data_mb <- 8 * length(tr$X) / 2^20
  fit_peak_start()
  t0 <- proc.time()[["elapsed"]]
  if (method == "ranger") {
    rf <- ranger::ranger(y ~ ., data.frame(tr$X, y = tr$y), probability = TRUE,
                         num.threads = threads, seed = 1)
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- predict(rf, data.frame(te$X), num.threads = threads)$predictions
    extra <- sprintf("n=%d", n)
  } else if (method == "multinom") {
    mn <- nnet::multinom(y ~ ., data.frame(tr$X, y = tr$y), MaxNWts = 10000, maxit = 200,
                         trace = FALSE)
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- predict(mn, data.frame(te$X), type = "probs")
    extra <- sprintf("n=%d converged=%s", n, mn$convergence == 0)
  } else {
    suppressPackageStartupMessages(library(augmentedGP))
    ctl <- augp_control(threads = threads, batch_size = if (method == "sub1e5") n else NULL)
    fit <- augp_fit(tr$X, tr$y, inducing = if (method == "sub1e5") 100 else "auto", seed = 1,
                    control = ctl)
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- predict(fit, newdata = te$X, type = "response")
    extra <- sprintf("n=%d m=%d", n, nrow(fit$engine$Z))
  }
  p <- pmax(as.matrix(p)[, levels(te$y)], 1e-12)
  yi <- as.integer(te$y)
  pick <- cbind(seq_along(yi), yi)
  c(fit_s = el, error = mean(max.col(p, ties.method = "first") != yi),
    logloss = -mean(log(p[pick] / rowSums(p))),
    bayes_error = mean(max.col(te$p, ties.method = "first") != yi), data_mb = data_mb,
    fit_peak_mb = fit_mb, extra = extra)
}

tab <- bench_main(args, "bench/multiclass/bench_1e6.R", one_run, 1e6, c("sparse", "sub1e5", "ranger", "multinom"),
                  c("fit_s", "error", "logloss", "bayes_error", "data_mb", "fit_peak_mb", "note"))
utils::write.csv(tab, "bench/multiclass/results_1e6.csv", row.names = FALSE)
print(tab)
