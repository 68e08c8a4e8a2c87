# The laplace() likelihood: its inverse-Gaussian Gibbs step against the exact law and
# an exact reference posterior, CAVI's ELBO, the learned scale, input checks and the
# front end. (The shared contract checks are in test-likelihood-conformance.R.)
lp_ns <- asNamespace("augmentedGP")

lp_spec <- function(y, scale, trials = rep(1, length(y)), ...) {
  list(type = "laplace", q = 1L, y = y, trials = trials, scale = scale, ...)
}

lp_data <- function(n = 30, seed = 5, outliers = integer(0)) {
  set.seed(seed)
  x <- sort(stats::runif(n, 0, 3))
  y <- sin(2 * x) + stats::rnorm(n, sd = 0.2)
  y[outliers] <- y[outliers] + 5
  list(X = matrix(x), x = x, y = y)
}

# CDF of the inverse Gaussian law with mean mu and shape s.
lp_pinvgauss <- function(q, mu, s) {
  r <- sqrt(s / q)
  stats::pnorm(r * (q / mu - 1)) + exp(2 * s / mu + stats::pnorm(-r * (q / mu + 1), log.p = TRUE))
}

test_that("the Gibbs draw of the precision is inverse Gaussian IG(t / (b |d|), t^2 / b^2)", {
  y <- c(0.7, -1.5, 2)
  f <- c(0.2, -1.45, 2)  # |d| = 0.5, 0.05 and 0 (the Levy limit)
  b <- 0.4
  tr <- c(1, 2.5, 1)
  lik <- lp_spec(y, b, tr)
  S <- 3000
  om <- vapply(seq_len(S), function(s) as.numeric(lp_ns$.gp_lik_sample_cpp(lik, matrix(f), c(3, s))$omega),
               numeric(3))
  d <- abs(y - f)
  for (i in 1:2) {
    ks <- suppressWarnings(stats::ks.test(om[i, ], lp_pinvgauss, mu = tr[i] / (b * d[i]), s = tr[i]^2 / b^2))
    expect_gt(ks$p.value, 1e-3)
  }
  # d = 0: s / Z^2, so Z^2 = s / omega is chi-squared with one degree of freedom
  ks0 <- stats::ks.test(1 / (b^2 * om[3, ]), "pchisq", df = 1)
  expect_gt(ks0$p.value, 1e-3)
  # kappa = omega * y; a zero weight draws nothing
  d1 <- lp_ns$.gp_lik_sample_cpp(lik, matrix(f), c(1, 1))
  expect_equal(as.numeric(d1$kappa), as.numeric(d1$omega) * y)
  z <- lp_ns$.gp_lik_sample_cpp(lp_spec(y, b, c(0, 1, 1)), matrix(f), c(1, 2))
  expect_equal(z$omega[1], 0)
})

test_that("Gibbs for the Laplace likelihood agrees with the exact posterior (quadrature, n = 2)", {
  X <- matrix(c(0, 0.7))
  y <- c(0.9, -0.4)
  b <- 0.5
  k <- kernel_se(1, 0.8)
  g <- gibbs_two_points(X, k, lp_spec(y, b), seed = 4, warmup = 200)
  # the exact posterior with the likelihood prod Laplace(y_i | f_i, b) (up to a constant)
  ex <- grid_posterior_two_points(g$K, function(G) -abs(y[1] - G[, 1]) / b - abs(y[2] - G[, 2]) / b,
                                  c(-4, 4))
  # effective sample size: a few thousand correlated draws, so a generous band
  expect_draws_match_posterior(g$F, ex, band = 8)
  expect_equal(stats::cor(g$F)[1, 2], stats::cov.wt(ex$G, ex$w)$cov[1, 2] / sqrt(prod(ex$va)),
               tolerance = 0.1)
})

test_that("the CAVI ELBO never decreases and bounds the exact log marginal likelihood", {
  d <- lp_data(30, 5, outliers = c(4, 20))
  fit <- lp_ns$augp_engine(d$X, kernel = kernel_se(1, 0.7), method = "vi", lik = lp_spec(d$y, 0.3),
                           control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                          tol = 1e-12, maxit = 300))
  expect_gt(length(fit$elbo), 3)
  expect_true(all(diff(fit$elbo) >= -1e-8 * abs(fit$elbo[-1])))
  # with the scale learned through the front end
  ff <- augp_fit(d$x, d$y, likelihood = laplace(), control = augp_control(threads = 1))
  e <- ff$engine$elbo
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  expect_gt(ff$noise_scale, 0.05)
  expect_lt(ff$noise_scale, 0.6)
  # n = 1: log p(y) by numerical integration is above the converged ELBO, and close
  k1 <- kernel_se(1.5, 1)
  one <- lp_ns$augp_engine(matrix(0), kernel = k1, method = "vi", lik = lp_spec(1.3, 0.4),
                           control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                          tol = 1e-14, maxit = 500))
  kv <- kernel_matrix(k1, matrix(0))[1, 1] + one$jitter
  lml <- log(stats::integrate(function(f) stats::dnorm(f, 0, sqrt(kv)) * exp(-abs(1.3 - f) / 0.4) / 0.8,
                              -Inf, Inf, rel.tol = 1e-10)$value)
  e1 <- one$elbo[length(one$elbo)]
  expect_lte(e1, lml + 1e-8)
  expect_gt(e1, lml - 0.3)
})

test_that("the learned scale is the closed form given q(f), and the exact expected log-likelihood", {
  d <- lp_data(20)
  m <- matrix(d$y * 0.8)
  v <- matrix(0.05, 20)
  tr <- rep(c(1, 2), 10)
  step <- lp_ns$.lik_learn_params_cpp(lp_spec(d$y, 2, tr), m, v)
  expect_equal(step$params$scale, sum(tr * sqrt((d$y - m)^2 + 0.05)) / sum(tr))
  expect_gt(step$gain, 0)
  fixed <- lp_ns$.lik_learn_params_cpp(lp_spec(d$y, 2, tr, learn_scale = FALSE), m, v)
  expect_equal(fixed$gain, 0)
  expect_equal(fixed$params$scale, 2)
  # E|y - f| under N(m, v) in closed form vs numerical integration
  el <- lp_ns$.lik_expected_loglik_cpp(lp_spec(d$y, 0.3, tr), m, v, matrix(0, 1, 1))
  ref <- vapply(seq_len(20), function(i) {
    ea <- stats::integrate(function(f) abs(d$y[i] - f) * stats::dnorm(f, m[i], sqrt(0.05)),
                           -Inf, Inf, rel.tol = 1e-10)$value
    tr[i] * (-log(0.6) - ea / 0.3)
  }, 0)
  expect_equal(as.numeric(el), ref, tolerance = 1e-5)
})

test_that("gross outliers move the Laplace fit less than the Gaussian one", {
  d <- lp_data(40, 7, outliers = c(8, 21, 33))
  ctl <- augp_control(threads = 1)
  ga <- augp_fit(d$x, d$y, likelihood = gaussian_noise(sigma = 0.3), control = ctl)
  la <- augp_fit(d$x, d$y, likelihood = laplace(), control = ctl)
  truth <- sin(2 * d$x)
  expect_lt(sqrt(mean((fitted(la) - truth)^2)), sqrt(mean((fitted(ga) - truth)^2)))
})

test_that("bad Laplace input is rejected, naming the argument", {
  d <- lp_data(10)
  expect_error(laplace(scale = 0), "`scale`")
  expect_error(laplace(scale = -1), "`scale`")
  expect_error(laplace(scale = Inf), "`scale`")
  expect_error(laplace(scale = c(1, 2)), "`scale`")
  expect_error(laplace(scale = "a"), "`scale`")
  expect_error(augp_fit(d$x, replace(d$y, 3, Inf), likelihood = laplace()), "`y`")
  expect_error(augp_fit(d$x, replace(d$y, 3, NaN), likelihood = laplace()), "`y`")
  expect_error(augp_fit(d$x, replace(d$y, 3, NA), likelihood = laplace()), "`y`")
  expect_error(augp_fit(d$x, rep(1.5, 10), likelihood = laplace()), "`y`.*constant")
  expect_error(lp_ns$.lik_response_mean_cpp(lp_spec(1, -2), matrix(0)), "scale")
  expect_error(lp_ns$.lik_response_mean_cpp(lp_spec(NaN, 1), matrix(0)), "finite y")
})

test_that("laplace() fits through augp(): print, sigma, residuals, deviance, predict, Gibbs, sparse", {
  d <- lp_data(30)
  df <- data.frame(x = d$x, y = d$y)
  ctl <- augp_control(threads = 1)
  fit <- augp(y ~ x, df, likelihood = laplace(), control = ctl)
  expect_s3_class(fit$likelihood, "augp_laplace")
  expect_output(print(fit), "scale")
  expect_output(print(fit$likelihood), "laplace")
  expect_output(print(summary(fit)), "Laplace")
  expect_equal(sigma(fit), sqrt(2) * fit$noise_scale)
  expect_equal(fit$likelihood$scale, fit$noise_scale)
  expect_equal(fit$engine$lik$scale, fit$noise_scale)
  mu <- unname(fitted(fit))
  expect_equal(unname(residuals(fit, type = "pearson")), (d$y - mu) / sigma(fit))
  expect_equal(deviance(fit), sum(2 * abs(d$y - mu) / fit$noise_scale))
  nd <- data.frame(x = c(0.5, 1.5, 2.5))
  pr <- predict(fit, nd, interval = "prediction", level = 0.9)
  cr <- predict(fit, nd, interval = "credible", level = 0.9)
  expect_true(all(pr$lwr < cr$lwr & pr$upr > cr$upr))
  # the prediction interval of a Laplace noise of scale b around a nearly known f
  half <- (pr$upr - pr$lwr) / 2
  expect_true(all(half > fit$noise_scale * log(1 / 0.1) * 0.85))
  gb <- augp(y ~ x, df, likelihood = laplace(), method = "gibbs",
             control = augp_control(threads = 1, iter = 1000, warmup = 200))
  expect_equal(gb$noise_scale, fit$noise_scale, tolerance = 0.05)
  expect_equal(unname(fitted(gb)), mu, tolerance = 0.1)
  sp <- augp(y ~ x, df, likelihood = laplace(scale = 0.15), inducing = 10, control = ctl)
  expect_lt(sqrt(mean((fitted(sp) - sin(2 * d$x))^2)), 0.2)
  sims <- simulate(fit, nsim = 300, seed = 2)
  expect_equal(mean(apply(sims, 1, stats::sd)), sqrt(mean(fit$engine$var) + sigma(fit)^2),
               tolerance = 0.12)
})
