# Benchmark: GP multinomial regression with the stick-breaking likelihood.
#
# For K in {3, 10, 30} categories and n in {200, 1000, 3000} training rows
# (1-D input, smooth true probability curves, 10 trials per training row) it
# records the fit time and the held-out predictive log-likelihood per test trial
# (1000 single-trial test points) of the variational fit (and of a Gibbs fit on
# the smaller problems), next to a static baseline (pooled training
# proportions, no covariate) and the true curves (oracle). A second part times
# the two kernels of a sweep separately: the Cholesky factorisations (one
# n x n per stick) and the Polya-Gamma draws (n x (K - 1) per sweep).
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/stickbreaking/bench_sb.R [threads] [max_n] [max_K] [what] [only_n] [fits]
# fits: "all" (default) or "default": which augmentedGP fits to run besides the peer.
# "default" runs only the front end at its defaults, augp(Y ~ x, likelihood =
# stick_breaking()), which chooses the exact or a sparse GP by cost (inducing =
# "auto"); "all" also runs the exact engine's VI (and Gibbs on the small problems).
# Writes bench/stickbreaking/results.csv (results_default.csv with fits = "default")
# and results_parts.csv and prints
# markdown tables (pasted into bench/stickbreaking/results.md).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
max_n <- if (length(args) >= 2) as.numeric(args[2]) else 3000
max_K <- if (length(args) >= 3) as.numeric(args[3]) else 30
what <- if (length(args) >= 4) args[4] else "all" # "all", "fits" or "parts"
library(augmentedGP)
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "stickbreaking")

# smooth true curves: stick logits are random combinations of a few bumps,
# pushed towards the stick-breaking prior mean so that every category matters
true_psi <- function(x, K, seed) {
  set.seed(seed)
  q <- K - 1
  centres <- seq(0, 1, length.out = 5)
  B <- sapply(centres, function(c) exp(-(x - c)^2 / (2 * 0.15^2)))
  W <- matrix(stats::rnorm(5 * q, sd = 1.2), 5)
  mu <- digamma(1) - digamma(K - seq_len(q))
  sweep(B %*% W, 2, mu, "+")
}

# posterior predictive category probabilities at new inputs: the average of pi_SB
# over draws of the latent sticks (Gibbs: posterior draws mapped to xt by the
# conditional mean; VI: 200 draws from the Gaussian marginals)
predictive_prob <- function(fit, xt) {
  if (fit$method == "gibbs") {
    pr <- augmentedGP:::augp_engine_predict(fit, matrix(xt), draws = TRUE)
    d <- dim(pr$draws)
    acc <- 0
    for (s in seq_len(d[1])) acc <- acc + augmentedGP:::pi_SB(matrix(pr$draws[s, , ], d[2], d[3]))
    return(acc / d[1])
  }
  pr <- augmentedGP:::augp_engine_predict(fit, matrix(xt))
  m <- as.matrix(pr$mean)
  v <- as.matrix(pr$var)
  set.seed(99)
  acc <- 0
  for (s in 1:200) acc <- acc + augmentedGP:::pi_SB(m + sqrt(v) * matrix(stats::rnorm(length(m)), nrow(m)))
  acc / 200
}

simulate_counts <- function(P, trials) {
  t(apply(P, 1, function(p) stats::rmultinom(1, trials, p)))
}

grid <- expand.grid(n = c(200, 1000, 3000), K = c(3, 10, 30))
grid <- grid[grid$n <= max_n & grid$K <= max_K, ]
only_n <- if (length(args) >= 5) as.numeric(args[5]) else NA  # run one n only
fits <- if (length(args) >= 6) args[6] else "all"
csv_name <- if (fits == "default") "results_default.csv" else "results.csv"
if (!is.na(only_n)) grid <- grid[grid$n == only_n, ]
grid <- grid[order(grid$n^2 * grid$K), ] # cheapest first
if (what == "parts") grid <- grid[0, ]
res <- list()
for (r in seq_len(nrow(grid))) {
  n <- grid$n[r]
  K <- grid$K[r]
  seed <- 1000 + 10 * n + K
  set.seed(seed)
  x <- sort(stats::runif(n))
  xt <- stats::runif(1000)
  P <- augmentedGP:::pi_SB(true_psi(x, K, seed))
  Pt <- augmentedGP:::pi_SB(true_psi(xt, K, seed))
  set.seed(seed + 1)
  Y <- simulate_counts(P, 10)
  yt <- apply(Pt, 1, function(p) sample.int(K, 1, prob = p))
  score <- function(Phat) mean(log(Phat[cbind(seq_along(yt), yt)]))
  static <- colSums(Y) / sum(Y)
  base <- list(n = n, K = K, oracle = score(Pt),
               static = score(matrix(pmax(static, 1e-12), 1000, K, byrow = TRUE)))
  # peer: multinomial logistic regression on a natural-spline basis (nnet::multinom)
  t_mn <- system.time({
    B <- splines::ns(x, df = 6)
    dtr <- data.frame(unclass(B)[, 1:6])
    names(dtr) <- paste0("b", 1:6)
    dte <- data.frame(predict(B, xt)[, 1:6])
    names(dte) <- names(dtr)
    mn <- nnet::multinom(Y ~ ., data = dtr, trace = FALSE, MaxNWts = 10000, maxit = 500)
    Pmn <- predict(mn, newdata = dte, type = "probs")
  })[["elapsed"]]
  Pmn <- matrix(Pmn, ncol = K)
  res[[length(res) + 1]] <- c(base, method = "nnet::multinom, ns(x, 6)", time = t_mn,
                              heldout = score(pmax(Pmn, 1e-12)), sweeps = NA)
  cat(sprintf("n = %d K = %d multinom: %.1f s, held-out %.4f\n", n, K, t_mn, score(Pmn)))
  # the front end at its defaults (inducing = "auto")
  dtr <- data.frame(x = x)
  dtr$Y <- Y
  t_def <- system.time(
    fitd <- augp(Y ~ x, data = dtr, likelihood = stick_breaking(), seed = 1,
                 control = augp_control(threads = threads))
  )[["elapsed"]]
  Pd <- as.matrix(predict(fitd, data.frame(x = xt), type = "response"))
  choice <- if (fitd$inference$engine == "sparse") sprintf("augp default (sparse, m = %d)",
                                                           as.integer(fitd$inference$m)) else "augp default (exact)"
  res[[length(res) + 1]] <- c(base, method = choice, time = t_def, heldout = score(pmax(Pd, 1e-12)),
                              sweeps = length(fitd$engine$elbo))
  cat(sprintf("n = %d K = %d %s: %.1f s, held-out %.4f (load %s)\n", n, K, choice, t_def, score(Pd),
              strsplit(readLines("/proc/loadavg"), " ")[[1]][1]))
  if (fits == "default") {
    utils::write.csv(do.call(rbind, lapply(res, as.data.frame)), file.path(out_dir, csv_name),
                     row.names = FALSE)
    next
  }
  mu0 <- augmentedGP:::sb_prior_mean(K)
  lik <- list(type = "stick_breaking", q = K - 1L, Y = Y)
  t_vi <- system.time(
    fit <- augmentedGP:::augp_engine(matrix(x), kernel = kernel_se(), method = "vi", lik = lik,
                                     mean0 = mu0, control = list(threads = threads, hyper_maxit = 15))
  )[["elapsed"]]
  Phat <- predictive_prob(fit, xt)
  res[[length(res) + 1]] <- c(base, method = "vi", time = t_vi, heldout = score(Phat),
                              sweeps = length(fit$elbo))
  cat(sprintf("n = %d K = %d VI: %.1f s (%d sweeps), held-out %.4f (static %.4f, oracle %.4f)\n",
              n, K, t_vi, length(fit$elbo), score(Phat), base$static, base$oracle))
  if (n <= 200 || (n <= 1000 && K <= 3)) {
    t_g <- system.time(
      fitg <- augmentedGP:::augp_engine(matrix(x), kernel = fit$kernel, method = "gibbs", lik = lik,
                                        mean0 = mu0, seed = 1,
                                        control = list(learn_hyper = FALSE, iter = 600, warmup = 100,
                                                       chains = 1, threads = threads))
    )[["elapsed"]]
    Pg <- predictive_prob(fitg, xt)
    res[[length(res) + 1]] <- c(base, method = "gibbs (600 it)", time = t_g, heldout = score(Pg),
                                sweeps = 600)
    cat(sprintf("n = %d K = %d Gibbs: %.1f s, held-out %.4f\n", n, K, t_g, score(Pg)))
  }
  # keep what is done so far (the large cases take long)
  utils::write.csv(do.call(rbind, lapply(res, as.data.frame)), file.path(out_dir, csv_name),
                   row.names = FALSE)
}
tab <- do.call(rbind, lapply(res, as.data.frame))
if (length(res)) utils::write.csv(tab, file.path(out_dir, csv_name), row.names = FALSE)

# ---- where the time goes: one Cholesky per stick vs the PG draws of a sweep ----
parts <- list()
for (n in c(200, 1000, 3000)[c(200, 1000, 3000) <= max_n & what != "fits"]) {
  x <- matrix(sort(stats::runif(n)))
  Kmat <- kernel_matrix(kernel_se(lengthscale = 0.2), x)
  t_chol <- system.time(for (rep in 1:3) augmentedGP:::.gp_chol_jitter_cpp(Kmat, 1e-6))[["elapsed"]] / 3
  for (K in c(3, 10, 30)[c(3, 10, 30) <= max_K]) {
    psi <- true_psi(x[, 1], K, 7)
    Y <- simulate_counts(augmentedGP:::pi_SB(psi), 10)
    lik <- list(type = "stick_breaking", q = K - 1L, Y = Y)
    t_pg <- system.time(for (rep in 1:3) augmentedGP:::.gp_lik_sample_cpp(lik, psi, c(1, rep)))[["elapsed"]] / 3
    parts[[length(parts) + 1]] <- data.frame(n = n, K = K, chol_per_sweep = t_chol * (K - 1),
                                             pg_per_sweep = t_pg)
  }
}
parts <- do.call(rbind, parts)
if (length(parts)) utils::write.csv(parts, file.path(out_dir, "results_parts.csv"), row.names = FALSE)

cat("\n| n | K | method | fit time (s) | held-out log-lik / trial | static | oracle | gain over static |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (i in seq_len(NROW(tab))) {
  with(tab[i, ], cat(sprintf("| %d | %d | %s | %.1f | %.4f | %.4f | %.4f | %+.4f |\n", n, K, method,
                             time, heldout, static, oracle, heldout - static)))
}
cat("\n| n | K | Cholesky per sweep (s) | PG draws per sweep (s) | PG share |\n|---|---|---|---|---|\n")
for (i in seq_len(NROW(parts))) {
  with(parts[i, ], cat(sprintf("| %d | %d | %.4f | %.4f | %.0f%% |\n", n, K, chol_per_sweep,
                               pg_per_sweep, 100 * pg_per_sweep / (chol_per_sweep + pg_per_sweep))))
}
