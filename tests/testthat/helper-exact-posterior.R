# Gibbs against the exact posterior of a GP at two inputs (the n = 2 checks of the
# single-latent likelihoods in test-counts-*.R and test-regression-laplace.R).

# One Gibbs chain (6000 iterations after `warmup`, kernel hyperparameters fixed) of the
# engine on the inputs X (2 x d) with the engine likelihood list `lik`: the draws F
# (S x 2) of the two latent values, and K, the prior covariance the engine used (the
# kernel matrix with its jitter).
gibbs_two_points <- function(X, kernel, lik, seed, warmup) {
  g <- asNamespace("augmentedGP")$augp_engine(
    X, kernel = kernel, method = "gibbs", lik = lik, seed = seed,
    control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                   iter = 6000, warmup = warmup, chains = 1))
  S <- length(g$draws) / 2
  list(F = matrix(g$draws, S, 2), K = kernel_matrix(kernel, X) + diag(g$jitter, 2))
}

# The un-augmented posterior p(f | y) propto N(f | 0, K) p(y | f) of f = (f1, f2) by
# quadrature on the square grid of step h over lim[1] <= f1, f2 <= lim[2]. `loglik(G)`:
# log p(y | f) at each row (f1, f2) of G. Returns the grid G, its normalised weights w,
# and the posterior mean mu and variances va.
grid_posterior_two_points <- function(K, loglik, lim, h = 0.02) {
  grid <- seq(lim[1], lim[2], by = h)
  G <- as.matrix(expand.grid(f1 = grid, f2 = grid))
  lp <- -0.5 * rowSums((G %*% solve(K)) * G) + loglik(G)
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  mu <- colSums(w * G)
  list(G = G, w = w, mu = mu, va = colSums(w * (G - rep(mu, each = nrow(G)))^2))
}

# Expectations: the draws F (S x 2) have the exact posterior's means, within `band`
# Monte Carlo standard errors for an effective sample size `ess`, and its variances,
# within 12%.
expect_draws_match_posterior <- function(F, ex, band, ess = nrow(F)) {
  expect_true(all(abs(colMeans(F) - ex$mu) <= band * sqrt(ex$va / ess)))
  expect_equal(apply(F, 2, stats::var), unname(ex$va), tolerance = 0.12)
}
