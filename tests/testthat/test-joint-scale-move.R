# The moves of the kernel variance and the likelihood's positive parameters that hold the
# whitened latent values fixed (whitened_scale_move, with level_param_move, in
# src/param_sampler.h): full-Bayes Gibbs with them against a quadrature of the un-augmented
# posterior, with the default jitter and with a large one (K = v C + jitter I, the jitter
# absolute), and their independence of the thread count.
js_ns <- asNamespace("augmentedGP")

# Two counts, y ~ Poisson(lambda plogis(f)), f ~ N(0, v C + jitter I) with C a fixed SE
# correlation;
# v (prior lognormal(0, 0.5) on sd = sqrt(v)) and lambda (lognormal(log 8, 0.7)) sampled.
js_X <- matrix(c(0, 0.8))
js_y <- c(5, 1)
js_C <- exp(-outer(js_X[, 1], js_X[, 1], "-")^2 / 2)
js_prior <- local({
  p <- augp_prior(lengthscale = js_ns$new_prior_dist("fixed"), sd = prior_lognormal(0, 0.5))
  attr(p, "lik_prior") <- data.frame(name = "lambda", index = 1L, label = "lambda",
                                     code = js_ns$PRIOR_CODES[["lognormal"]], a = log(8), b = 0.7,
                                     location = FALSE)
  p
})

js_fit <- function(threads, chains = 4, iter = 3000, warmup = 500, seed = 17, jitter = 1e-6) {
  lik <- list(type = "poisson_logistic", q = 1L, y = js_y, trials = c(1, 1), lambda = 8)
  js_ns$augp_engine(js_X, kernel = kernel_se(lengthscale = 1, variance = 1), method = "gibbs",
                    lik = lik, mean0 = 0, seed = seed, prior = js_prior,
                    control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = chains,
                                   iter = iter, warmup = warmup, threads = threads,
                                   jitter = jitter))
}

# Independent reference, in R from the model alone: the posterior of (t = log v,
# l = log lambda) on a grid, p(y | v, lambda) = integral of prod_i Poisson(y_i | lambda
# plogis(f_i)) N(f; 0, v C) df by the trapezoid rule on a grid of f (the bivariate normal
# density at every grid pair of f, the Poisson factors as matrices over (f_i, lambda)).
js_reference <- function(jit = 0, C = js_C) {
  tv <- seq(-4.5, 4, by = 0.1)
  tl <- seq(log(8) - 3.5, log(8) + 3.5, by = 0.07)
  fg <- seq(-11, 8, by = 0.05)
  L1 <- outer(fg, exp(tl), function(f, lam) stats::dpois(js_y[1], lam * stats::plogis(f)))
  L2 <- outer(fg, exp(tl), function(f, lam) stats::dpois(js_y[2], lam * stats::plogis(f)))
  # priors on t and l, each with the Jacobian of the log: sd = exp(t / 2), |d sd / dt| = sd / 2
  lpt <- stats::dlnorm(exp(tv / 2), 0, 0.5, log = TRUE) + tv / 2 - log(2)
  lpl <- stats::dlnorm(exp(tl), log(8), 0.7, log = TRUE) + tl
  lm <- m1 <- matrix(0, length(tv), length(tl))
  for (i in seq_along(tv)) {
    Kt <- exp(tv[i]) * C + diag(jit, 2)
    Ci <- solve(Kt)
    Q <- outer(fg, fg, function(a, b) Ci[1, 1] * a^2 + 2 * Ci[1, 2] * a * b + Ci[2, 2] * b^2)
    N <- exp(-Q / 2) / (2 * pi * sqrt(det(Kt)))
    NL2 <- N %*% L2
    ml <- colSums(L1 * NL2)  # (times the cell area, a constant)
    lm[i, ] <- log(ml) + lpt[i] + lpl
    m1[i, ] <- colSums(fg * L1 * NL2) / ml
  }
  p <- exp(lm - max(lm))
  p <- p / sum(p)
  c(log_v = sum(p * tv), log_lambda = sum(p * rep(tl, each = length(tv))), f1 = sum(p * m1),
    sd_log_v = sqrt(sum(p * tv^2) - sum(p * tv)^2),
    sd_log_lambda = sqrt(sum(p * rep(tl, each = length(tv))^2) -
                           sum(p * rep(tl, each = length(tv)))^2))
}

js_check <- function(fit, ref) {
  draws <- list(log_v = fit$theta[, , 1], log_lambda = log(fit$lik_draws[, , "lambda"]),
                f1 = fit$draws[, , 1])
  for (nm in names(draws)) {
    m <- draws[[nm]]
    expect_lt(abs(mean(m) - ref[[nm]]), 4 * posterior::mcse_mean(m) + 1e-3, label = nm)
  }
  expect_equal(stats::sd(draws$log_v), unname(ref[["sd_log_v"]]), tolerance = 0.08)
  expect_equal(stats::sd(draws$log_lambda), unname(ref[["sd_log_lambda"]]), tolerance = 0.08)
  # the pair mixes
  expect_true(posterior::ess_bulk(draws$log_lambda) > 1000)
  expect_true(posterior::ess_bulk(draws$log_v) > 1000)
}

test_that("Gibbs with the variance moves matches the quadrature posterior of (v, lambda, f)", {
  fit <- js_fit(2)
  js_check(fit, js_reference(fit$jitter))
})

test_that("with a large jitter the moves match the quadrature with K = v C + jitter I", {
  fit <- js_fit(2, jitter = 0.3)
  expect_equal(fit$jitter, 0.3)
  js_check(fit, js_reference(0.3))
})

test_that("the variance moves do not depend on the thread count", {
  a <- js_fit(1, chains = 2, iter = 200, warmup = 100)
  b <- js_fit(2, chains = 2, iter = 200, warmup = 100)
  expect_identical(a$draws, b$draws)
  expect_identical(a$theta, b$theta)
  expect_identical(a$lik_draws, b$lik_draws)
})
