# The Gibbs sampler: agreement with an independent sampler, calibration,
# reproducibility, thread invariance and agreement with VI predictions.

# Elliptical slice sampling (Murray, Adams & MacKay 2010) for a zero-mean GP prior.
ess_reference <- function(K, y, trials, iter, seed) {
  set.seed(seed)
  n <- nrow(K)
  L <- t(chol(K))
  ll <- function(f) binom_loglik(y, trials, f)
  f <- rep(0, n)
  lf <- ll(f)
  out <- matrix(NA_real_, iter, n)
  for (s in seq_len(iter)) {
    nu <- drop(L %*% rnorm(n))
    h <- lf + log(runif(1))
    th <- runif(1, 0, 2 * pi)
    lo <- th - 2 * pi
    hi <- th
    repeat {
      prop <- f * cos(th) + nu * sin(th)
      lp <- ll(prop)
      if (lp > h) break
      if (th < 0) lo <- th else hi <- th
      th <- runif(1, lo, hi)
    }
    f <- prop
    lf <- lp
    out[s, ] <- f
  }
  out
}

# Monte Carlo standard error of column means by batch means (chains as a list).
bm_se <- function(chains, nb = 40) {
  bms <- do.call(rbind, lapply(chains, function(x) {
    b <- rep(seq_len(nb), each = floor(nrow(x) / nb))
    x <- x[seq_along(b), , drop = FALSE]
    apply(x, 2, function(col) tapply(col, b, mean))
  }))
  apply(bms, 2, stats::sd) / sqrt(nrow(bms))
}

test_that("Gibbs posterior mean and variance agree with elliptical slice sampling", {
  X <- matrix(c(0, 0.5, 1.2, 2))
  y <- c(1, 1, 0, 2)
  trials <- c(1, 1, 1, 3)
  k <- kernel_se(2, 0.8)
  K <- kernel_matrix(k, X) + diag(1e-8, 4)
  ref <- ess_reference(K, y, trials, 30000, seed = 42)[-(1:1000), ]
  fit <- eng_ns$augp_engine(X, y, trials, k, "gibbs",
                            eng_fixed(iter = 6300, warmup = 300, chains = 2), seed = 7)
  g1 <- fit$draws[, 1, ]
  g2 <- fit$draws[, 2, ]
  for (moment in 1:2) {
    mg <- colMeans(rbind(g1, g2)^moment)
    me <- colMeans(ref^moment)
    se <- sqrt(bm_se(list(g1^moment, g2^moment))^2 + bm_se(list(ref^moment))^2)
    expect_true(all(abs(mg - me) < 4.5 * se), info = paste("moment", moment))
  }
  expect_equal(fit$mean, colMeans(rbind(g1, g2)))
  expect_equal(fit$var, apply(rbind(g1, g2), 2, var))
})

test_that("simulation-based calibration: ranks of the true f are uniform", {
  X <- matrix(c(0, 1, 2.5))
  k <- kernel_se(1.5, 1)
  K <- kernel_matrix(k, X) + diag(1e-8, 3)
  L <- t(chol(K))
  set.seed(2024)
  reps <- 300
  ranks <- matrix(NA_integer_, reps, 3)
  for (r in seq_len(reps)) {
    f <- drop(L %*% rnorm(3))
    y <- stats::rbinom(3, 1, stats::plogis(f))
    fit <- eng_ns$augp_engine(X, y, rep(1, 3), k, "gibbs",
                              eng_fixed(iter = 125, warmup = 30, thin = 5, chains = 1),
                              seed = r)
    ranks[r, ] <- colSums(fit$draws[, 1, ] < rep(f, each = 19))
  }
  for (j in 1:3) {
    counts <- tabulate(ranks[, j] + 1, nbins = 20)
    p <- stats::chisq.test(counts, p = rep(1 / 20, 20))$p.value
    expect_gt(p, 0.001)
  }
})

test_that("the same seed gives identical draws; other seeds differ", {
  X <- matrix(seq(0, 1, length.out = 8))
  y <- c(0, 0, 1, 0, 1, 1, 1, 0)
  a <- eng_ns$augp_engine(X, y, rep(1, 8), kernel_se(), "gibbs",
                          eng_fixed(iter = 70, warmup = 20), seed = 99)
  b <- eng_ns$augp_engine(X, y, rep(1, 8), kernel_se(), "gibbs",
                          eng_fixed(iter = 70, warmup = 20), seed = 99)
  d <- eng_ns$augp_engine(X, y, rep(1, 8), kernel_se(), "gibbs",
                          eng_fixed(iter = 70, warmup = 20), seed = 100)
  expect_identical(a$draws, b$draws)
  expect_false(identical(a$draws, d$draws))
  expect_equal(dim(a$draws), c(50L, 2L, 8L))
  set.seed(5)
  e1 <- eng_ns$augp_engine(X, y, rep(1, 8), kernel_se(), "gibbs", eng_fixed(iter = 15, warmup = 5))
  set.seed(5)
  e2 <- eng_ns$augp_engine(X, y, rep(1, 8), kernel_se(), "gibbs", eng_fixed(iter = 15, warmup = 5))
  expect_identical(e1$draws, e2$draws)
})

test_that("one thread and two threads give identical draws", {
  set.seed(3)
  X <- matrix(rnorm(30 * 2), 30)
  y <- stats::rbinom(30, 2, 0.4)
  ctl <- function(th) eng_fixed(iter = 50, warmup = 10, chains = 3, threads = th)
  a <- eng_ns$augp_engine(X, y, rep(2, 30), kernel_matern(1.5), "gibbs", ctl(1), seed = 11)
  b <- eng_ns$augp_engine(X, y, rep(2, 30), kernel_matern(1.5), "gibbs", ctl(2), seed = 11)
  expect_identical(a$draws, b$draws)
})

test_that("Gibbs with hyperparameter learning runs VI first and keeps its ELBO trace", {
  set.seed(8)
  X <- matrix(runif(25, -2, 2))
  y <- stats::rbinom(25, 1, stats::plogis(2 * sin(2 * X[, 1])))
  fit <- eng_ns$augp_engine(X, y, rep(1, 25), kernel_se(), "gibbs",
                            list(iter = 40, warmup = 10, threads = 1), seed = 1)
  expect_gt(length(fit$elbo), 1)
  expect_true(all(diff(fit$elbo) >= -1e-10 * abs(fit$elbo[-1])))
  expect_false(identical(fit$kernel, kernel_se()))
  expect_s3_class(fit, "augp_engine")
})

test_that("VI predictive probabilities agree with a long Gibbs run (tolerance 0.05)", {
  set.seed(21)
  X <- matrix(sort(runif(20, -2, 2)))
  y <- stats::rbinom(20, 1, stats::plogis(2 * sin(2 * X[, 1])))
  k <- kernel_se(2, 0.7)
  Xnew <- matrix(c(-1.9, -0.7, 0, 0.9, 1.8, 3))
  vi <- eng_ns$augp_engine(X, y, rep(1, 20), k, "vi", eng_fixed())
  pv <- eng_ns$augp_engine_predict(vi, Xnew)
  gh <- gauss_hermite(40)
  p_vi <- sapply(seq_len(nrow(Xnew)), function(i) {
    sum(gh$w * stats::plogis(pv$mean[i] + sqrt(2 * pv$var[i]) * gh$x)) / sqrt(pi)
  })
  gb <- eng_ns$augp_engine(X, y, rep(1, 20), k, "gibbs",
                           eng_fixed(iter = 3300, warmup = 300, chains = 2,
                                     jitter = 1e-8), seed = 3)
  pg <- eng_ns$augp_engine_predict(gb, Xnew, draws = TRUE)
  expect_equal(dim(pg$draws), c(6000L, 6L))
  p_gibbs <- colMeans(stats::plogis(pg$draws))
  expect_lt(max(abs(p_vi - p_gibbs)), 0.05)
  # the mixture mean and variance of the latent predictive match the draws
  expect_equal(pg$mean, colMeans(pg$draws), tolerance = 0.05)
  # at the training inputs the Gibbs predictive mean is the posterior mean of f
  pt <- eng_ns$augp_engine_predict(gb, X)
  expect_equal(pt$mean, gb$mean, tolerance = 1e-5)
})
