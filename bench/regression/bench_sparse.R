# Benchmark: GP regression at large n with the default sparse GP (inducing = "auto":
# a sparse variational GP, the noise scale learned by the ELBO), against what a user
# would otherwise run at this size: a random forest (ranger, default 500 trees) and a
# linear model. Held-out RMSE, RMSE against the true mean (simulated data), mean log
# predictive density per test point (LPD; ranger: normal with its out-of-bag error
# variance; lm: its prediction distribution), fit time and peak memory.
#
# Data: a smooth 4-input function plus N(0, 0.3^2) noise at n = 1e5 and 1e6 (20000 test
# points), and ggplot2::diamonds (log price ~ all nine predictors, a random 80 / 20 split
# of the 53940 rows).
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/regression/bench_sparse.R [threads]            # driver: all runs
#   Rscript bench/regression/bench_sparse.R run <data> <n> <method> <threads>
# The driver runs each fit in its own R process under /usr/bin/time -v (peak memory =
# maximum resident set size) and writes bench/regression/results_sparse.csv.
args <- commandArgs(trailingOnly = TRUE)
lib_bench <- file.path("bench", ".lib")
if (dir.exists(lib_bench)) .libPaths(c(lib_bench, .libPaths()))

sim <- function(n, seed) {
  set.seed(seed)
  X <- matrix(stats::runif(n * 4, -2, 2), n, 4, dimnames = list(NULL, paste0("x", 1:4)))
  f <- sin(2 * X[, 1]) + 0.5 * X[, 2]^2 - X[, 3] * X[, 4] / 2
  list(tr = data.frame(X, y = f + stats::rnorm(n, sd = 0.3)), f = f)
}

get_data <- function(data, n) {
  if (data == "sim") {
    tr <- sim(n, 100 + n %% 997)
    te <- sim(20000, 7)
    return(list(tr = tr$tr, te = te$tr, f_te = te$f))
  }
  d <- as.data.frame(ggplot2::diamonds)
  d$y <- log(d$price)
  d$price <- NULL
  for (v in c("cut", "color", "clarity")) d[[v]] <- factor(d[[v]], ordered = FALSE)
  set.seed(11)
  idx <- sample.int(nrow(d), round(0.8 * nrow(d)))
  list(tr = d[idx, ], te = d[-idx, ], f_te = NULL)
}

one_run <- function(data, n, method, threads) {
  dd <- get_data(data, n)
  tr <- dd$tr
  te <- dd$te
  t0 <- proc.time()[["elapsed"]]
  if (method %in% c("augp", "augp_m200")) {
    suppressPackageStartupMessages(library(augmentedGP))
    fit <- augp(y ~ ., tr, inducing = if (method == "augp") "auto" else 200, seed = 1,
                control = augp_control(threads = threads))
    el <- proc.time()[["elapsed"]] - t0
    lk <- predict(fit, te, type = "link", se.fit = TRUE)
    m <- lk$fit
    sd <- sqrt(lk$se.fit^2 + sigma(fit)^2)
    extra <- sprintf("m=%d sigma=%.4f", nrow(fit$engine$Z), sigma(fit))
  } else if (method == "ranger") {
    rf <- ranger::ranger(y ~ ., tr, num.threads = threads, seed = 1)
    el <- proc.time()[["elapsed"]] - t0
    m <- predict(rf, te, num.threads = threads)$predictions
    sd <- rep(sqrt(rf$prediction.error), nrow(te))
    extra <- sprintf("trees=%d", rf$num.trees)
  } else {
    fit <- stats::lm(y ~ ., tr)
    el <- proc.time()[["elapsed"]] - t0
    p <- stats::predict(fit, te, se.fit = TRUE)
    m <- p$fit
    sd <- sqrt(p$se.fit^2 + p$residual.scale^2)
    extra <- ""
  }
  c(fit_s = el, rmse = sqrt(mean((m - te$y)^2)),
    rmse_f = if (is.null(dd$f_te)) NA else sqrt(mean((m - dd$f_te)^2)),
    lpd = mean(stats::dnorm(te$y, m, sd, log = TRUE)), extra = extra)
}

if (length(args) >= 1 && args[1] == "run") {
  r <- one_run(args[2], as.numeric(args[3]), args[4], as.integer(args[5]))
  cat("RESULT", paste(r, collapse = " | "), "\n")
  quit(status = 0)
}

source(file.path("bench", "run_timed.R"))
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
script <- "bench/regression/bench_sparse.R"
configs <- rbind(
  data.frame(data = "diamonds", n = 43152, method = c("augp", "ranger", "lm")),
  data.frame(data = "sim", n = 1e5, method = c("augp", "ranger", "lm")),
  data.frame(data = "sim", n = 1e6, method = c("augp", "augp_m200", "ranger", "lm"))
)
tab <- run_cases(script, configs,
                 lapply(seq_len(nrow(configs)), function(i) {
                   c(configs$data[i], format(configs$n[i], scientific = FALSE), configs$method[i], threads)
                 }),
                 c("fit_s", "rmse", "rmse_f", "lpd", "note"))
utils::write.csv(tab, "bench/regression/results_sparse.csv", row.names = FALSE)
print(tab)
