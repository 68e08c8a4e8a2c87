# Benchmark: sparse variational GP classification (augmentedGP, inducing points,
# m = 100) on simulated twonorm / ringnorm data at growing n, against a well-tuned
# exact GP (augmentedGP VI with hyperparameter learning) on a 2000-point subsample,
# when it is installed in bench/.lib gplite (FITC with EP), and what users pick
# instead of a GP: a random forest (ranger, probability forest at its defaults,
# 500 trees) and logistic regression (stats::glm, binomial, linear in the inputs).
#
# Usage (from the package root, augmentedGP installed in R_LIBS):
#   Rscript bench/sparse/bench_sparse.R [max_n] [threads] [ranger_max_n]   # driver: all runs
#   Rscript bench/sparse/bench_sparse.R run <data> <n> <method> <threads>   # one run
# The driver starts one R process per run under /usr/bin/time -v (peak memory =
# maximum resident set size, data generation included) and writes
# bench/sparse/results.csv; it prints a markdown table with the ratios sparse / ranger
# and sparse / best peer (ranger, glm, gplite at the same n: lowest error, lowest log
# loss, fastest). n runs over 1e4, 1e5, 1e6 up to max_n (default 1e6); ranger only up
# to ranger_max_n (default 1e5: a default forest on 1e6 rows takes far longer than the
# GP and many GB). Held-out metrics on 20000 fresh points: error rate and mean log loss.
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
  } else if (method == "ranger") {
    rf <- ranger::ranger(y ~ ., data = data.frame(tr$X, y = factor(tr$y)), probability = TRUE,
                         num.threads = threads, seed = 1)
    el <- proc.time()[["elapsed"]] - t0
    p <- stats::predict(rf, data = data.frame(te$X), num.threads = threads)$predictions[, "1"]
  } else if (method == "glm") {
    fit <- stats::glm(y ~ ., family = stats::binomial(), data = data.frame(tr$X, y = tr$y))
    el <- proc.time()[["elapsed"]] - t0
    p <- as.numeric(stats::predict(fit, newdata = data.frame(te$X), type = "response"))
  } else {
    stop("unknown method ", method)
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
ranger_max_n <- if (length(args) >= 3) as.numeric(args[3]) else 1e5
script <- "bench/sparse/bench_sparse.R"
configs <- expand.grid(n = c(1e4, 1e5, 1e6),
                       method = c("sparse", "exact2000", "gplite", "ranger", "glm"),
                       data = c("twonorm", "ringnorm"), stringsAsFactors = FALSE)
configs <- configs[configs$n <= max_n, ]
configs <- configs[!(configs$method == "ranger" & configs$n > ranger_max_n), ]
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

# markdown: every run, then the ratios sparse / ranger and sparse / best peer at each n
cat("\n| data | n | method | fit s | held-out error | log loss | peak MB |\n|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(tab))) with(tab[i, ], cat(sprintf("| %s | %s | %s | %.1f | %.4f | %.4f | %.0f |\n",
  data, format(n, scientific = TRUE), method, fit_s, error, logloss, peak_mb)))
peers <- c("ranger", "glm", "gplite")
cat("\n| data | n | vs | error | log loss | fit time | peak memory |\n|---|---|---|---|---|---|---|\n")
for (d in unique(tab$data)) for (n in sort(unique(tab$n[tab$data == d]))) {
  a <- tab[tab$data == d & tab$n == n & tab$method == "sparse", ]
  b <- tab[tab$data == d & tab$n == n & tab$method %in% peers, ]
  if (nrow(a) != 1 || nrow(b) == 0) next
  ratio <- function(r, col) a[[col]] / r[[col]]
  if ("ranger" %in% b$method) {
    r <- b[b$method == "ranger", ]
    cat(sprintf("| %s | %s | ranger | %.2f | %.2f | %.2f | %.2f |\n", d, format(n, scientific = TRUE),
                ratio(r, "error"), ratio(r, "logloss"), ratio(r, "fit_s"), ratio(r, "peak_mb")))
  }
  be <- b[which.min(b$error), ]; bl <- b[which.min(b$logloss), ]
  bt <- b[which.min(b$fit_s), ]; bm <- b[which.min(b$peak_mb), ]
  cat(sprintf("| %s | %s | best peer (%s / %s / %s / %s) | %.2f | %.2f | %.2f | %.2f |\n", d,
              format(n, scientific = TRUE), be$method, bl$method, bt$method, bm$method,
              ratio(be, "error"), ratio(bl, "logloss"), ratio(bt, "fit_s"), ratio(bm, "peak_mb")))
}
cat(sprintf("\nR %s, threads = %d, max_n = %g, ranger_max_n = %g, %s\n", getRversion(), threads, max_n,
            ranger_max_n, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")))
