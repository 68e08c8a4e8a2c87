# The engine with several latent columns (q > 1). Stick-breaking with K
# categories is exactly K - 1 independent binomial-logistic models (stick k has
# x_k successes out of N_k = N - sum_{j<k} x_j trials), so a q-column fit must
# reproduce K - 1 separate one-column fits: this checks the column plumbing,
# per-column prior means, the parallel column updates and the summed bound.

multi_toy <- function(n = 40, K = 3, seed = 1) {
  set.seed(seed)
  X <- matrix(sort(stats::runif(n, -2, 2)), n)
  eta <- cbind(1.5 * X[, 1], -X[, 1]^2 + 1, matrix(0, n, K - 2))
  P <- exp(eta) / rowSums(exp(eta))
  Y <- t(vapply(seq_len(n), function(i) stats::rmultinom(1, 4, P[i, ])[, 1], numeric(K)))
  Y[3, ] <- 0  # a row without trials
  list(X = X, Y = Y)
}

test_that("a q-column variational fit equals q separate one-column fits", {
  skip_if_not(exists("stick_breaking", envir = eng_ns))
  d <- multi_toy()
  k <- kernel_se(variance = 1.5, lengthscale = 0.8)
  mu <- c(-0.4, 0.3)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  ctl <- eng_fixed(maxit = 500, tol = 1e-12)
  fit <- eng_ns$augp_engine(d$X, kernel = k, method = "vi", control = ctl, mean0 = mu,
                            lik = lik)
  expect_equal(dim(fit$mean), c(40L, 2L))
  sticks <- stick_counts(d$Y)
  elbo_sum <- 0
  for (j in 1:2) {
    one <- eng_ns$augp_engine(d$X, sticks[[j]]$y, sticks[[j]]$trials, k, "vi", control = ctl,
                              mean0 = mu[j])
    expect_equal(fit$mean[, j], one$mean, tolerance = 1e-6)
    expect_equal(fit$var[, j], one$var, tolerance = 1e-6)
    elbo_sum <- elbo_sum + one$elbo[length(one$elbo)]
  }
  expect_equal(fit$elbo[length(fit$elbo)], elbo_sum, tolerance = 1e-7)
  expect_true(all(diff(fit$elbo) >= -1e-9 * abs(fit$elbo[-1])))
  # predictions, column by column
  Xn <- matrix(c(-1.5, 0, 1.7), 3)
  pr <- eng_ns$augp_engine_predict(fit, Xn)
  for (j in 1:2) {
    one <- eng_ns$augp_engine(d$X, sticks[[j]]$y, sticks[[j]]$trials, k, "vi", control = ctl,
                              mean0 = mu[j])
    p1 <- eng_ns$augp_engine_predict(one, Xn)
    expect_equal(pr$mean[, j], p1$mean, tolerance = 1e-6)
    expect_equal(pr$var[, j], p1$var, tolerance = 1e-6)
  }
})

test_that("the hyperparameter bound and its gradient add up over columns", {
  skip_if_not(exists("stick_breaking", envir = eng_ns))
  d <- multi_toy(seed = 2)
  k <- kernel_se(variance = 1.2, lengthscale = 0.7)
  set.seed(3)
  kappa <- matrix(stats::rnorm(80), 40)
  omega <- matrix(stats::runif(80, 0.05, 0.5), 40)
  mu <- matrix(rep(c(0.2, -0.5), each = 40), 40)
  both <- eng_ns$augp_engine_elbo_grad(k, d$X, kappa, omega, mu)
  a <- eng_ns$augp_engine_elbo_grad(k, d$X, kappa[, 1], omega[, 1], 0.2)
  b <- eng_ns$augp_engine_elbo_grad(k, d$X, kappa[, 2], omega[, 2], -0.5)
  expect_equal(as.numeric(both), as.numeric(a) + as.numeric(b), tolerance = 1e-10)
  expect_equal(attr(both, "gradient"), attr(a, "gradient") + attr(b, "gradient"),
               tolerance = 1e-10)
})

test_that("multi-column Gibbs: same seed, any thread count, any chain split", {
  skip_if_not(exists("stick_breaking", envir = eng_ns))
  d <- multi_toy(n = 25, K = 4, seed = 4)
  k <- kernel_se(variance = 1, lengthscale = 1)
  lik <- list(type = "stick_breaking", q = 3L, Y = d$Y)
  run <- function(threads, seed = 11) {
    eng_ns$augp_engine(d$X, kernel = k, method = "gibbs", seed = seed, mean0 = 0, lik = lik,
                       control = eng_fixed(iter = 40, warmup = 10, chains = 2,
                                           threads = threads))
  }
  f1 <- run(1)
  f2 <- run(2)
  expect_identical(f1$draws, f2$draws)
  expect_equal(dim(f1$draws), c(30L, 2L, 75L))
  expect_false(identical(f1$draws, run(1, seed = 12)$draws))
  # chains run one at a time with the same seeds and stream ids give the same draws
  K <- kernel_matrix(k, d$X)
  seeds <- eng_ns$new_seed(11)
  ctl <- eng_ns$as_augp_control(eng_fixed(iter = 40, warmup = 10, chains = 2, threads = 1))
  m0 <- matrix(0, 25, 3)
  sd0 <- matrix(sqrt(diag(K)), 25, 3)
  jit <- ctl$jitter
  c2 <- eng_ns$engine_gibbs_chains(k, d$X, lik, m0, m0, sd0, ctl, seeds, 1L, 2L, jit)
  expect_identical(c2$draws[, 1, ], f1$draws[, 2, ])
  # predictive draws have the S x nnew x q shape
  pr <- eng_ns$augp_engine_predict(f1, matrix(c(-1, 1), 2), draws = TRUE)
  expect_equal(dim(pr$draws), c(60L, 2L, 3L))
  expect_equal(dim(pr$mean), c(2L, 3L))
})

test_that("prior means of the wrong shape are refused", {
  d <- multi_toy(n = 10, seed = 5)
  k <- kernel_se()
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  expect_error(eng_ns$augp_engine(d$X, kernel = k, mean0 = c(1, 2, 3), lik = lik,
                                  control = eng_fixed()), "`mean0`")
  expect_error(eng_ns$augp_engine(d$X, kernel = k, lik = list(type = "stick_breaking"),
                                  control = eng_fixed()), "`lik`")
})
