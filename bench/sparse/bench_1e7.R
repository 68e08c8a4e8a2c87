# Benchmark: ten million rows. A simulated 28-input binary problem (HIGGS-sized: 1e7
# rows x 28 features, 2.24 GB as a double matrix) fitted by the default sparse GP of
# augp_fit() (inducing = "auto": m = 100, minibatch SVI), with the fit time, the peak
# memory of the process against the size of the data, and the held-out error against a
# full-batch fit on a 1e5-row subsample (the same inducing-point count) and a random
# forest (ranger, default 500 trees) on 2e5 rows (its default trees on more rows take
# longer than the GP on all 1e7 and many GB), and linear logistic regression
# (stats::glm.fit, IRLS, on the design with an intercept column; no model frame) on all
# rows.
#
# Data: x ~ N(0, I_28); P(y = 1 | x) = plogis(f(x)) with a smooth nonlinear f of four
# fixed linear combinations of all 28 inputs; 20000 test rows from the same law; the
# Bayes error for reference.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/sparse/bench_1e7.R [n] [threads]           # driver: all runs
#   Rscript bench/sparse/bench_1e7.R run <n> <method> <threads>
# Each run is its own R process under /usr/bin/time -v (peak memory = maximum resident
# set size); results go to bench/sparse/results_1e7.csv.
args <- commandArgs(trailingOnly = TRUE)
lib_bench <- file.path("bench", ".lib")
if (dir.exists(lib_bench)) .libPaths(c(lib_bench, .libPaths()))

# four fixed unit directions in the 28 inputs (every input matters a little, as in HIGGS)
source(file.path("bench", "run_timed.R"))
dirs <- random_directions(28, 4, seed = 2024)
latent <- function(X) {
  P <- X %*% dirs
  1.5 * sin(1.5 * P[, 1]) + 0.8 * P[, 2] * P[, 3] + 0.5 * P[, 4] + 0.3
}
sim <- function(n, seed) {
  set.seed(seed)
  X <- stats::rnorm(n * 28)
  dim(X) <- c(n, 28)  # (matrix() would hold a second copy for a moment)
  f <- latent(X)
  list(X = X, y = as.integer(stats::runif(n) < stats::plogis(f)), p = stats::plogis(f))
}

one_run <- function(n, method, threads) {
  te <- sim(20000, 7)
  if (method == "ranger") n <- min(n, 2e5)
  if (method == "sub1e5") n <- 1e5
  tr <- sim(n, 100 + n %% 997)
  data_mb <- 8 * length(tr$X) / 2^20
  fit_peak_start()
  t0 <- proc.time()[["elapsed"]]
  if (method == "ranger") {
    df <- data.frame(tr$X, y = factor(tr$y))
    rf <- ranger::ranger(y ~ ., df, probability = TRUE, num.threads = threads, seed = 1)
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- predict(rf, data.frame(te$X), num.threads = threads)$predictions[, "1"]
    extra <- sprintf("n=%d", n)
  } else if (method == "glm") {
    X1 <- cbind(1, tr$X)  # the design with an intercept column replaces the design
    tr$X <- NULL
    gl <- stats::glm.fit(X1, tr$y, family = stats::binomial())
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- stats::plogis(drop(cbind(1, te$X) %*% gl$coefficients))
    extra <- sprintf("n=%d iter=%d converged=%s", n, gl$iter, gl$converged)
  } else {
    suppressPackageStartupMessages(library(augmentedGP))
    ctl <- augp_control(threads = threads,
                        batch_size = if (method == "sub1e5") 1e5 else NULL)
    fit <- augp_fit(tr$X, tr$y, likelihood = bernoulli_logit(),
                    inducing = if (method == "sub1e5") 100 else "auto", seed = 1, control = ctl)
    el <- proc.time()[["elapsed"]] - t0
    fit_mb <- fit_peak_mb()
    p <- predict(fit, newdata = te$X, type = "response")
    extra <- sprintf("n=%d m=%d", n, nrow(fit$engine$Z))
  }
  p <- pmin(pmax(as.numeric(p), 1e-12), 1 - 1e-12)
  c(fit_s = el, error = mean((p > 0.5) != (te$y == 1)),
    logloss = -mean(te$y * log(p) + (1 - te$y) * log(1 - p)),
    bayes_error = mean((te$p > 0.5) != (te$y == 1)), data_mb = data_mb, fit_peak_mb = fit_mb,
    extra = extra)
}

tab <- bench_main(args, "bench/sparse/bench_1e7.R", one_run, 1e7, c("sparse", "sub1e5", "ranger", "glm"),
                  c("fit_s", "error", "logloss", "bayes_error", "data_mb", "fit_peak_mb", "note"))
utils::write.csv(tab, "bench/sparse/results_1e7.csv", row.names = FALSE)
print(tab)
