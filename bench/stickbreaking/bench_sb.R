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
#   Rscript bench/stickbreaking/bench_sb.R [threads] [max_n] [max_K]
# Writes bench/stickbreaking/results.csv and results_parts.csv and prints
# markdown tables (pasted into bench/stickbreaking/results.md).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
max_n <- if (length(args) >= 2) as.numeric(args[2]) else 3000
max_K <- if (length(args) >= 3) as.numeric(args[3]) else 30
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

simulate_counts <- function(P, trials) {
  t(apply(P, 1, function(p) stats::rmultinom(1, trials, p)))
}

grid <- expand.grid(n = c(200, 1000, 3000), K = c(3, 10, 30))
grid <- grid[grid$n <= max_n & grid$K <= max_K, ]
res <- list()
for (r in seq_len(nrow(grid))) {
  n <- grid$n[r]
  K <- grid$K[r]
  seed <- 1000 + 10 * n + K
  x <- sort(stats::runif(n))
  xt <- stats::runif(1000)
  P <- augmentedGP::pi_SB(true_psi(x, K, seed))
  Pt <- augmentedGP::pi_SB(true_psi(xt, K, seed))
  set.seed(seed + 1)
  Y <- simulate_counts(P, 10)
  yt <- apply(Pt, 1, function(p) sample.int(K, 1, prob = p))
  score <- function(Phat) mean(log(Phat[cbind(seq_along(yt), yt)]))
  static <- colSums(Y) / sum(Y)
  base <- list(n = n, K = K, oracle = score(Pt),
               static = score(matrix(pmax(static, 1e-12), 1000, K, byrow = TRUE)))
  t_vi <- system.time(
    fit <- augp_fit(matrix(x), Y, likelihood = stick_breaking(), method = "vi",
                    control = augp_control(hyper_maxit = 15, threads = threads), seed = 1)
  )[["elapsed"]]
  Phat <- predict(fit, matrix(xt), type = "response")
  res[[length(res) + 1]] <- c(base, method = "vi", time = t_vi, heldout = score(Phat))
  cat(sprintf("n = %d K = %d VI: %.1f s, held-out %.4f (static %.4f, oracle %.4f)\n", n, K,
              t_vi, score(Phat), base$static, base$oracle))
  if (n <= 200 || (n <= 1000 && K <= 3)) {
    t_g <- system.time(
      fitg <- augp_fit(matrix(x), Y, likelihood = stick_breaking(), method = "gibbs",
                       kernel = fit$kernel,
                       control = augp_control(learn_hyper = FALSE, iter = 600, warmup = 200,
                                              chains = 1, threads = threads), seed = 1)
    )[["elapsed"]]
    Pg <- predict(fitg, matrix(xt), type = "response")
    res[[length(res) + 1]] <- c(base, method = "gibbs (600 it)", time = t_g, heldout = score(Pg))
    cat(sprintf("n = %d K = %d Gibbs: %.1f s, held-out %.4f\n", n, K, t_g, score(Pg)))
  }
}
tab <- do.call(rbind, lapply(res, as.data.frame))
utils::write.csv(tab, file.path(out_dir, "results.csv"), row.names = FALSE)

# ---- where the time goes: one Cholesky per stick vs the PG draws of a sweep ----
parts <- list()
for (n in c(200, 1000, 3000)[c(200, 1000, 3000) <= max_n]) {
  x <- matrix(sort(stats::runif(n)))
  Kmat <- kernel_matrix(kernel_se(lengthscale = 0.2), x)
  t_chol <- system.time(for (rep in 1:3) augmentedGP:::.gp_chol_jitter_cpp(Kmat, 1e-6))[["elapsed"]] / 3
  for (K in c(3, 10, 30)[c(3, 10, 30) <= max_K]) {
    psi <- true_psi(x[, 1], K, 7)
    Y <- simulate_counts(augmentedGP::pi_SB(psi), 10)
    lik <- list(type = "stick_breaking", q = K - 1L, Y = Y)
    t_pg <- system.time(for (rep in 1:3) augmentedGP:::.gp_lik_sample_cpp(lik, psi, c(1, rep)))[["elapsed"]] / 3
    parts[[length(parts) + 1]] <- data.frame(n = n, K = K, chol_per_sweep = t_chol * (K - 1),
                                             pg_per_sweep = t_pg)
  }
}
parts <- do.call(rbind, parts)
utils::write.csv(parts, file.path(out_dir, "results_parts.csv"), row.names = FALSE)

cat("\n| n | K | method | fit time (s) | held-out log-lik / trial | static | oracle | gain over static |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(tab))) {
  with(tab[i, ], cat(sprintf("| %d | %d | %s | %.1f | %.4f | %.4f | %.4f | %+.4f |\n", n, K, method,
                             time, heldout, static, oracle, heldout - static)))
}
cat("\n| n | K | Cholesky per sweep (s) | PG draws per sweep (s) | PG share |\n|---|---|---|---|---|\n")
for (i in seq_len(nrow(parts))) {
  with(parts[i, ], cat(sprintf("| %d | %d | %.4f | %.4f | %.0f%% |\n", n, K, chol_per_sweep,
                               pg_per_sweep, 100 * pg_per_sweep / (chol_per_sweep + pg_per_sweep))))
}
