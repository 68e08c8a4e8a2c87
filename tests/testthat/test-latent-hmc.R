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
  nb <- list(type = "negative_binomial", q = 1L, y = lh_y, trials = rep(1, 12), r = 2)
  pr <- list(name = "r", index = 1L, family = lh_ns$PRIOR_CODES[["gamma"]], a = 2, b = 1)
  expect_error(lh_ns$.latent_hmc_chain_cpp(nb, t(chol(lh_K)), matrix(0, 12, 1), pr,
                                           matrix(0, 12, 1), S = 10L, warmup = 10L, steps = 4L,
                                           seed = c(1, 1)), "not available")
})
