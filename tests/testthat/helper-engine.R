# Shared helpers for the test-engine-* files.
eng_ns <- asNamespace("augmentedGP")

# Gauss-Hermite rule for the weight exp(-x^2) (Golub-Welsch).
gauss_hermite <- function(m) {
  i <- seq_len(m - 1)
  J <- matrix(0, m, m)
  J[cbind(i, i + 1)] <- J[cbind(i + 1, i)] <- sqrt(i / 2)
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = sqrt(pi) * e$vectors[1, ]^2)
}

# log p(y | f) for the binomial-logistic model, written independently of the package.
binom_loglik <- function(y, trials, f) {
  sum(stats::dbinom(y, trials, stats::plogis(f), log = TRUE))
}

eng_fixed <- function(...) {
  utils::modifyList(list(learn_hyper = FALSE, threads = 1, verbose = FALSE), list(...))
}

# Thread invariance of the column-parallel path (n >= 150, one chain): `fit(threads,
# method)` runs the engine; VI summaries and Gibbs draws must be identical for 1 and 2
# threads. Returns the 1-thread Gibbs draws for further checks.
expect_threads_identical <- function(fit) {
  a <- fit(1, "vi")
  b <- fit(2, "vi")
  expect_identical(a$mean, b$mean)
  expect_identical(a$var, b$var)
  expect_identical(a$elbo, b$elbo)
  g1 <- fit(1, "gibbs")$draws
  expect_identical(g1, fit(2, "gibbs")$draws)
  g1
}

# The stick-breaking sticks of a count matrix Y as binomial data: stick k has y = Y[, k]
# successes out of N - sum_{j<k} Y[, j] trials.
stick_counts <- function(Y) {
  K <- ncol(Y)
  N <- rowSums(Y)
  lapply(seq_len(K - 1), function(k) {
    before <- if (k == 1) 0 else rowSums(Y[, seq_len(k - 1), drop = FALSE])
    list(y = Y[, k], trials = N - before)
  })
}
