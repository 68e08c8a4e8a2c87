# The joint gradient move of the whitened latent values and the likelihood's positive
# parameters (src/latent_hmc.h), run alone at a fixed kernel, against an independent
# importance-sampling reference of the un-augmented posterior, and within full-Bayes Gibbs.
lh_ns <- asNamespace("augmentedGP")

# 12 counts, some near the maximal rate; f ~ N(0, K) with K = 4 SE(0.3) + 1e-6 I fixed;
# y ~ Poisson(lambda plogis(f)), lambda ~ gamma(30, rate 2).
lh_x <- seq(0, 1, length.out = 12)
lh_y <- c(1, 0, 3, 6, 11, 14, 12, 9, 4, 2, 1, 0)
lh_ga <- 30
lh_gb <- 2
lh_K <- 4 * exp(-0.5 * outer(lh_x, lh_x, "-")^2 / 0.3^2) + diag(1e-6, 12)
lh_lik <- list(type = "poisson_logistic", q = 1L, y = lh_y, trials = rep(1, 12), lambda = 8)
lh_prior <- list(name = "lambda", index = 1L, family = lh_ns$PRIOR_CODES[["gamma"]], a = lh_ga,
                 b = lh_gb)

# Reference, in R from the model alone: lambda integrated out in closed form,
#   p(f | y) propto N(f; 0, K) prod plogis(f_i)^y_i (b + S)^-(a + A),  S = sum plogis(f_i),
# A = sum y, and E[log lambda | f, y] = digamma(a + A) - log(b + S); importance sampling of
# p(f | y) from a multivariate t (5 df) at its mode and curvature.
lh_reference <- function(N = 4e5, seed = 3) {
  A <- lh_ga + sum(lh_y)
  Ki <- solve(lh_K)
  lp <- function(f) {
    f <- matrix(f, ncol = 12)
    -0.5 * rowSums((f %*% Ki) * f) + as.numeric(stats::plogis(f, log.p = TRUE) %*% lh_y) -
      A * log(lh_gb + rowSums(stats::plogis(f)))
  }
  opt <- stats::optim(rep(0, 12), function(f) -lp(f), method = "BFGS", control = list(maxit = 1000))
  H <- stats::optimHess(opt$par, function(f) -lp(f))
  Rc <- chol(solve(H))
  withr::local_seed(seed)
  df <- 5
  Z <- matrix(stats::rnorm(N * 12), N) %*% Rc
  w2 <- stats::rchisq(N, df) / df
  Fs <- sweep(Z / sqrt(w2), 2, opt$par, "+")
  # log density of the t proposal (up to a constant)
  Q <- rowSums((sweep(Fs, 2, opt$par) %*% H) * sweep(Fs, 2, opt$par))
  lq <- -(df + 12) / 2 * log1p(Q / df)
  lw <- lp(Fs) - lq
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  el <- digamma(A) - log(lh_gb + rowSums(stats::plogis(Fs)))
  vl <- trigamma(A)
  m <- function(x) sum(w * x)
  list(mean = c(log_lambda = m(el), f1 = m(Fs[, 1]), f6 = m(Fs[, 6]), f12 = m(Fs[, 12])),
       sd = c(log_lambda = sqrt(vl + m(el^2) - m(el)^2), f6 = sqrt(m(Fs[, 6]^2) - m(Fs[, 6])^2)),
       ess = 1 / sum(w^2))
}

# MCSE of a chain's mean by batch means (50 batches)
lh_mcse <- function(x) {
  b <- matrix(x[seq_len(50 * (length(x) %/% 50))], ncol = 50)
  stats::sd(colMeans(b)) / sqrt(50)
}

test_that("the joint gradient move alone leaves the posterior of (lambda, f) invariant", {
  ref <- lh_reference()
  expect_gt(ref$ess, 5e4)
  L <- t(chol(lh_K))
  d <- lh_ns$.latent_hmc_chain_cpp(lh_lik, L, matrix(0, 12, 1), lh_prior, matrix(0, 12, 1),
                                   S = 20000L, warmup = 1000L, steps = 8L, seed = c(11, 2))
  expect_gt(attr(d, "accept"), 0.5)
  draws <- list(log_lambda = log(d[, 1]), f1 = d[, 2], f6 = d[, 7], f12 = d[, 13])
  for (nm in names(ref$mean)) {
    x <- draws[[nm]]
    z <- (mean(x) - ref$mean[[nm]]) / sqrt(lh_mcse(x)^2 + 1e-6)
    expect_lt(abs(z), 4, label = nm)
  }
  for (nm in names(ref$sd)) expect_equal(stats::sd(draws[[nm]]), ref$sd[[nm]], tolerance = 0.04, label = nm)
  # the same seed gives the same draws
  d2 <- lh_ns$.latent_hmc_chain_cpp(lh_lik, L, matrix(0, 12, 1), lh_prior, matrix(0, 12, 1),
                                    S = 200L, warmup = 100L, steps = 8L, seed = c(11, 2))
  d3 <- lh_ns$.latent_hmc_chain_cpp(lh_lik, L, matrix(0, 12, 1), lh_prior, matrix(0, 12, 1),
                                    S = 200L, warmup = 100L, steps = 8L, seed = c(11, 2))
  expect_identical(d2, d3)
})

test_that("the joint gradient move is off for a likelihood without the gradients", {
  lap <- list(type = "laplace", q = 1L, y = lh_y, trials = rep(1, 12), scale = 2)
  pr <- list(name = "scale", index = 1L, family = lh_ns$PRIOR_CODES[["gamma"]], a = 2, b = 1)
  expect_error(lh_ns$.latent_hmc_chain_cpp(lap, t(chol(lh_K)), matrix(0, 12, 1), pr,
                                           matrix(0, 12, 1), S = 10L, warmup = 10L, steps = 4L,
                                           seed = c(1, 1)), "not available")
})

test_that("the core's digamma matches R's", {
  x <- c(1e-3, 0.3, 1, 2.5, 9.99, 10, 47, 1e4)
  r <- c(0.05, 0.5, 2, 30, 1e3, 1e5, 3, 7)
  y <- c(0, 1, 5, 64, 65, 300, 2.5, 1e4)
  d <- lh_ns$.digamma_cpp(x, y, r)
  expect_equal(d$digamma, digamma(x), tolerance = 1e-13)
  # the difference: exact sums for whole y up to 64, checked against R's lgamma slope too
  expect_equal(d$diff, digamma(y + r) - digamma(r), tolerance = 1e-10)
  expect_equal(d$diff[6], sum(1 / (1e5 + 0:299)), tolerance = 1e-12)
})

test_that("negative-binomial log-likelihood gradients in f and log r match finite differences", {
  nb <- list(type = "negative_binomial", q = 1L, y = c(0, 1, 3, 12, 40, 250, 2), trials =
               c(1, 2, 1, 1, 0.5, 1, 0), r = 3.7)
  f <- matrix(c(-1, 0.2, 1.5, 2.4, 3.3, 5.6, 0.4))
  g <- lh_ns$.lik_loglik_gradient_cpp(nb, f, "r", 1L)
  expect_true(g$ok)
  ll <- function(f, r) {
    sum(lh_ns$.lik_loglik_obs_cpp(utils::modifyList(nb, list(r = r)), array(f, c(1, length(f), 1))))
  }
  expect_equal(g$ll, ll(f, 3.7), tolerance = 1e-12)
  h <- 1e-6
  fd_f <- vapply(seq_along(f), function(i) {
    e <- replace(numeric(7), i, h)
    (ll(f + e, 3.7) - ll(f - e, 3.7)) / (2 * h)
  }, 0)
  expect_equal(as.numeric(g$grad_f), fd_f, tolerance = 1e-7)
  fd_t <- (ll(f, 3.7 * exp(h)) - ll(f, 3.7 * exp(-h))) / (2 * h)
  expect_equal(as.numeric(g$grad_t), fd_t, tolerance = 1e-7)
  # a large dispersion (near Poisson) and a small one (a wider step: at r = 2e4 the values
  # of log Gamma are about 2e5, so rounding would swamp a step of 1e-6)
  for (r in c(2e4, 0.02)) {
    g <- lh_ns$.lik_loglik_gradient_cpp(utils::modifyList(nb, list(r = r)), f, "r", 1L)
    fd_t <- (ll(f, r * exp(1e-3)) - ll(f, r * exp(-1e-3))) / 2e-3
    expect_equal(as.numeric(g$grad_t), fd_t, tolerance = 1e-5)
  }
  # elements it does not have
  expect_false(lh_ns$.lik_loglik_gradient_cpp(nb, f, "lambda", 1L)$ok)
})

test_that("the joint gradient move alone leaves the posterior of (r, f) of a negative binomial invariant", {
  # the same counts and kernel; y ~ NB(mean e^f, r), r ~ gamma(4, rate 1)
  nb <- list(type = "negative_binomial", q = 1L, y = lh_y, trials = rep(1, 12), r = 3)
  pr <- list(name = "r", index = 1L, family = lh_ns$PRIOR_CODES[["gamma"]], a = 4, b = 1)
  # reference: importance sampling of p(f, log r | y) from a multivariate t at its mode
  Ki <- solve(lh_K)
  lp <- function(u) {
    u <- matrix(u, ncol = 13)
    f <- u[, 1:12, drop = FALSE]
    r <- exp(u[, 13])
    # (dispersions beyond e^+-18 have no posterior mass to speak of: -Inf there)
    ok <- abs(u[, 13]) < 18
    llik <- vapply(seq_len(nrow(u)), function(s) {
      if (!ok[s]) return(-Inf)
      sum(stats::dnbinom(lh_y, size = r[s], mu = exp(f[s, ]), log = TRUE))
    }, 0)
    -0.5 * rowSums((f %*% Ki) * f) + llik + ifelse(ok, stats::dgamma(r, 4, 1, log = TRUE), 0) +
      u[, 13]
  }
  opt <- stats::optim(c(rep(1, 12), log(3)), function(u) -lp(u), method = "BFGS",
                      control = list(maxit = 2000))
  H <- stats::optimHess(opt$par, function(u) -lp(u))
  Rc <- chol(solve(H))
  withr::local_seed(5)
  N <- 1e5
  df <- 5
  Z <- matrix(stats::rnorm(N * 13), N) %*% Rc
  w2 <- stats::rchisq(N, df) / df
  U <- sweep(Z / sqrt(w2), 2, opt$par, "+")
  D <- sweep(U, 2, opt$par)
  lq <- -(df + 13) / 2 * log1p(rowSums((D %*% H) * D) / df)
  lw <- lp(U) - lq
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  expect_gt(1 / sum(w^2), 1e4)
  m <- function(x) sum(w * x)
  ref <- c(log_r = m(U[, 13]), f1 = m(U[, 1]), f6 = m(U[, 6]), f12 = m(U[, 12]))
  ref_sd <- c(log_r = sqrt(m(U[, 13]^2) - m(U[, 13])^2), f6 = sqrt(m(U[, 6]^2) - m(U[, 6])^2))

  L <- t(chol(lh_K))
  d <- lh_ns$.latent_hmc_chain_cpp(nb, L, matrix(0, 12, 1), pr, matrix(0, 12, 1),
                                   S = 20000L, warmup = 1000L, steps = 8L, seed = c(7, 3))
  expect_gt(attr(d, "accept"), 0.5)
  draws <- list(log_r = log(d[, 1]), f1 = d[, 2], f6 = d[, 7], f12 = d[, 13])
  for (nm in names(ref)) {
    x <- draws[[nm]]
    z <- (mean(x) - ref[[nm]]) / sqrt(lh_mcse(x)^2 + 1e-6)
    expect_lt(abs(z), 4, label = nm)
  }
  for (nm in names(ref_sd)) {
    expect_equal(stats::sd(draws[[nm]]), ref_sd[[nm]], tolerance = 0.05, label = nm)
  }
})
