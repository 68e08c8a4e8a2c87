# Benchmark: sparse variational GP classification (augmentedGP, inducing points,
# m = 100) on simulated twonorm / ringnorm data at growing n, against a well-tuned
# exact GP (augmentedGP VI with hyperparameter learning) on a 2000-point subsample
# and, when it is installed in bench/.lib, gplite (FITC with EP).
#
# Usage (from the package root, augmentedGP installed in R_LIBS):
#   Rscript bench/sparse/bench_sparse.R [max_n] [threads]        # driver: all runs
#   Rscript bench/sparse/bench_sparse.R run <data> <n> <method> <threads>   # one run
# The driver starts one R process per run under /usr/bin/time -v (peak memory =
# maximum resident set size) and writes bench/sparse/results.csv and results.md.
# Held-out metrics on 20000 fresh points: error rate and mean log loss.
args <- commandArgs(trailingOnly = TRUE)
lib_bench <- file.path("bench", ".lib")
if (dir.exists(lib_bench)) .libPaths(c(lib_bench, .libPaths()))

source(file.path("bench", "sparse", "helpers.R"))
source(file.path("bench", "run_timed.R"))

one_run <- function(data, n, method, threads) {
  suppressPackageStartupMessages(library(augmentedGP))
  ns <- asNamespace("augmentedGP")
  tr <- simulate(data, n, seed = 100 + n %% 997)
  te <- simulate(data, 20000, seed = 7)
  t0 <- proc.time()[["elapsed"]]
  if (method == "sparse") {
    ctl <- list(threads = threads, svi_epochs = 2, batch_size = if (n > 20000) 1000 else NULL,
                final_elbo = FALSE)
    fit <- ns$augp_sparse_engine(tr$X, tr$y, rep(1, n), kernel_se(), inducing = 100, control = ctl,
                                 seed = 1)
    el <- proc.time()[["elapsed"]] - t0
    pr <- ns$augp_engine_predict.augp_sparse_engine(fit, te$X)
    p <- prob_of(pr$mean, pr$var)
  } else if (method == "exact2000") {
    idx <- 1:min(n, 2000)
    fit <- ns$augp_engine(tr$X[idx, ], tr$y[idx], rep(1, length(idx)), kernel_se(), "vi",
                          control = list(threads = threads, hyper_maxit = 10, maxit = 100))
    el <- proc.time()[["elapsed"]] - t0
    pr <- ns$augp_engine_predict(fit, te$X)
    p <- prob_of(pr$mean, pr$var)
  } else if (method == "gplite") {
    if (!requireNamespace("gplite", quietly = TRUE)) return(NULL)
    gp <- gplite::gp_init(cfs = gplite::cf_sexp(), lik = gplite::lik_bernoulli(),
                          method = gplite::method_fitc(num_inducing = 100), approx = gplite::approx_ep())
    gp <- gplite::gp_optim(gp, tr$X, tr$y, verbose = FALSE)
    el <- proc.time()[["elapsed"]] - t0
    p <- as.numeric(gplite::gp_pred(gp, te$X, transform = TRUE)$mean)
  }
  c(fit_s = el, metrics(p, te$y))
}

if (length(args) >= 1 && args[1] == "run") {
  r <- one_run(args[2], as.numeric(args[3]), args[4], as.integer(args[5]))
  if (!is.null(r)) cat(sprintf("RESULT %.3f %.5f %.5f\n", r[["fit_s"]], r[["error"]], r[["logloss"]]))
  quit(status = 0)
}

max_n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
threads <- if (length(args) >= 2) as.integer(args[2]) else 2L
script <- "bench/sparse/bench_sparse.R"
configs <- expand.grid(n = c(1e4, 1e5, 1e6), method = c("sparse", "exact2000", "gplite"),
                       data = c("twonorm", "ringnorm"), stringsAsFactors = FALSE)
configs <- configs[configs$n <= max_n, ]
configs <- configs[!(configs$method == "exact2000" & configs$n > 1e4), ]  # subsample: once per data set
configs <- configs[!(configs$method == "gplite" & configs$n > 1e4), ]     # FITC-EP in R: smallest n only
rows <- list()
for (i in seq_len(nrow(configs))) {
  cf <- configs[i, ]
  v <- run_timed(script, c(cf$data, format(cf$n, scientific = FALSE), cf$method, threads), sep = " ")
  if (is.null(v)) next
  rss_mb <- attr(v, "peak_mb")
  v <- as.numeric(v)
  rows[[length(rows) + 1]] <- data.frame(data = cf$data, n = cf$n, method = cf$method, fit_s = v[1],
                                         error = v[2], logloss = v[3], peak_mb = rss_mb)
  print(rows[[length(rows)]])
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, "bench/sparse/results.csv", row.names = FALSE)
print(tab)
