# Benchmark: sparse variational GP multi-class classification (augmentedGP,
# inducing points, m = 100; logistic-softmax and stick-breaking likelihoods)
# against multinomial logistic regression (nnet::multinom) and a random forest (ranger,
# probability forest at its defaults: 500 trees, seed 1, the script's threads) on
# simulated data.
#
# Data: d = 10 inputs ~ N(0, I); K = 4 classes (change with the 4th argument) drawn
# from softmax(f_1(x), ..., f_K(x)) where each f_k is a smooth GP-like function, a
# random-Fourier-feature draw from an SE-kernel GP (lengthscale 2.5, variance 4,
# 200 features), so the Bayes classifier is non-linear. Held-out set: 20000 fresh
# points. n <= 20000 uses full-batch CAVI with L-BFGS hyperparameters; larger n SVI
# (batch 1000, 3 epochs, hyperparameters and q(u) warm-started from a 2000-point
# subsample fit).
#
# Usage (package root, augmentedGP installed in the first library path):
#   Rscript bench/sparse/bench_sparse_multiclass.R [n ...] [--threads T] [--K K]
#   e.g. Rscript bench/sparse/bench_sparse_multiclass.R 10000            (n = 1e4 only)
#        Rscript bench/sparse/bench_sparse_multiclass.R 10000 100000     (both sizes)
# Prints a markdown table: fit time (s), held-out error, held-out log loss.
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) default else as.numeric(args[i + 1])
}
threads <- opt("--threads", 2)
K <- opt("--K", 4)
drop <- c(which(args %in% c("--threads", "--K")), which(args %in% c("--threads", "--K")) + 1)
ns_arg <- if (length(drop)) args[-drop] else args
sizes <- if (length(ns_arg)) as.numeric(ns_arg) else c(1e4, 1e5)
suppressPackageStartupMessages(library(augmentedGP))

d <- 10
ell <- 2.5
nfeat <- 200
set.seed(2026)
W <- matrix(stats::rnorm(nfeat * d, sd = 1 / ell), nfeat)      # shared frequencies
B <- stats::runif(nfeat, 0, 2 * pi)
A <- matrix(stats::rnorm(nfeat * K), nfeat) * sqrt(4 * 2 / nfeat)  # f_k ~ GP(0, 4 SE)

simulate <- function(n, seed) {
  set.seed(seed)
  X <- matrix(stats::rnorm(n * d), n, dimnames = list(NULL, paste0("x", seq_len(d))))
  F <- cos(X %*% t(W) + matrix(B, n, nfeat, byrow = TRUE)) %*% A
  P <- exp(F - apply(F, 1, max))
  P <- P / rowSums(P)
  cls <- apply(P, 1, function(p) sample.int(K, 1, prob = p))
  df <- data.frame(X)
  df$y <- factor(paste0("c", cls), levels = paste0("c", seq_len(K)))
  list(df = df, P = P)
}

metrics <- function(P, y) {
  P <- pmax(P, 1e-12)
  yi <- as.integer(y)
  c(error = mean(max.col(P, ties.method = "first") != yi),
    logloss = -mean(log(P[cbind(seq_along(yi), yi)])))
}

te <- simulate(20000, 7)
bayes <- metrics(te$P, te$df$y)
rows <- list()
add <- function(n, method, sec, m) {
  rows[[length(rows) + 1]] <<- data.frame(n = format(n, scientific = TRUE), method = method,
                                          seconds = round(sec, 1), error = round(m[["error"]], 4),
                                          logloss = round(m[["logloss"]], 4))
}
for (n in sizes) {
  tr <- simulate(n, 100 + n %% 997)
  ctl <- augp_control(threads = threads, pred_draws = 500, batch_size = if (n > 20000) 1000 else NULL)
  for (lk in c("logistic_softmax", "stick_breaking")) {
    like <- if (lk == "logistic_softmax") logistic_softmax() else stick_breaking()
    t0 <- proc.time()[["elapsed"]]
    fit <- augp(y ~ ., tr$df, likelihood = like, inducing = 100, control = ctl, seed = 1)
    sec <- proc.time()[["elapsed"]] - t0
    P <- predict(fit, newdata = te$df, type = "response")
    add(n, sprintf("augp sparse %s (m = 100%s)", lk, if (n > 20000) ", SVI" else ""), sec,
        metrics(P[, levels(te$df$y)], te$df$y))
  }
  t0 <- proc.time()[["elapsed"]]
  mn <- nnet::multinom(y ~ ., tr$df, trace = FALSE, maxit = 500)
  sec <- proc.time()[["elapsed"]] - t0
  add(n, "nnet::multinom (linear)", sec, metrics(predict(mn, te$df, type = "probs"), te$df$y))
  t0 <- proc.time()[["elapsed"]]
  rf <- ranger::ranger(y ~ ., tr$df, probability = TRUE, num.threads = threads, seed = 1)
  sec <- proc.time()[["elapsed"]] - t0
  P <- predict(rf, te$df, num.threads = threads)$predictions
  add(n, "ranger (500 trees, probability forest)", sec, metrics(P[, levels(te$df$y)], te$df$y))
}
res <- do.call(rbind, rows)
cat(sprintf("K = %d classes, d = %d, held-out 20000, threads %d, %s\n", K, d, threads,
            format(Sys.time(), "%Y-%m-%d %H:%M")))
cat(sprintf("Bayes (true probabilities): error %.4f, log loss %.4f\n\n", bayes[["error"]],
            bayes[["logloss"]]))
cat("| n | method | fit s | held-out error | log loss |\n|---|---|---|---|---|\n")
for (i in seq_len(nrow(res))) cat("|", paste(res[i, ], collapse = " | "), "|\n")
