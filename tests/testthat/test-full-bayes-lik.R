# Full-Bayes Gibbs for the likelihood's own parameters (src/param_sampler.*): the
# slice updates leave their conditional given f exactly invariant, the whole sampler
# (sigma with f) matches the exact posterior of GP regression, and the front end applies
# every draw's parameters.
fb_ns <- asNamespace("augmentedGP")

# The sampler's list of priors from (name, index, family code, a, b) vectors.
fb_prior <- function(name, family, a, b, index = rep(1L, length(name))) {
  list(name = name, index = as.integer(index), family = as.double(family), a = as.double(a),
       b = as.double(b))
}

# log density of a half-t(df, scale) at x > 0
fb_half_t <- function(x, df, scale) log(2) + stats::dt(x / scale, df, log = TRUE) - log(scale)

test_that("slice updates of Student-t sigma and nu at fixed f match a 2-D quadrature", {
  set.seed(3)
  n <- 25
  f <- stats::rnorm(n)
  y <- f + 0.5 * stats::rt(n, df = 4)
  lik <- list(type = "student_t", q = 1L, y = y, trials = rep(1, n), sigma = 1, nu = 5,
              learn_sigma = TRUE, learn_nu = TRUE)
  pr <- fb_prior(c("sigma", "nu"), c(2, 4), c(3, 2), c(2.5, 0.1))
  S <- 6000
  dr <- fb_ns$.lik_param_sweeps_cpp(lik, matrix(f, n, 1), pr, S, c(7, 1))
  dr <- dr[-(1:200), ]
  # reference: the conditional on a grid of (log sigma, log nu), Jacobians included
  ls <- seq(log(0.15), log(1.5), length.out = 160)
  ln <- seq(log(0.3), log(300), length.out = 160)
  g <- expand.grid(ls = ls, ln = ln)
  lp <- mapply(function(a, b) {
    s <- exp(a); nu <- exp(b)
    sum(stats::dt((y - f) / s, nu, log = TRUE) - log(s)) + fb_half_t(s, 3, 2.5) + a +
      stats::dgamma(nu, 2, 0.1, log = TRUE) + b
  }, g$ls, g$ln)
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  ref <- c(sum(w * exp(g$ls)), sum(w * exp(g$ln)))
  for (k in 1:2) {
    mc <- posterior::mcse_mean(dr[, k])
    expect_lt(abs(mean(dr[, k]) - ref[k]), 4 * mc + 1e-3 * ref[k])
  }
  # power: a wrong prior moves the draws away from the reference
  bad <- fb_ns$.lik_param_sweeps_cpp(lik, matrix(f, n, 1), fb_prior(c("sigma", "nu"), c(2, 4), c(3, 2), c(2.5, 10)),
                                     3000, c(7, 2))
  expect_gt(abs(mean(bad[, 2]) - ref[2]), 4 * posterior::mcse_mean(bad[, 2]))
})

test_that("Gibbs with sigma sampled matches the exact posterior of GP regression", {
  set.seed(11)
  n <- 8
  X <- matrix(seq(0, 1, length.out = n))
  y <- sin(5 * X[, 1]) + stats::rnorm(n, sd = 0.3)
  k <- kernel_se(variance = 1, lengthscale = 0.3)
  K <- kernel_matrix(k, X)
  m0 <- 0.2
  lik <- list(type = "gaussian", q = 1L, y = y, trials = rep(1, n), sigma = 0.5)
  pr <- fb_prior("sigma", 2, 3, 1)
  res <- fb_ns$.gp_gibbs_cpp(fb_ns$engine_specs(k), X, lik, m0, matrix(m0, n, 1), NULL, 200L, 6000L,
                             1L, 0L, 1L, c(5, 9), 1L, 1e-8, NULL, NULL, pr)
  sig <- as.numeric(res$lik_params)
  f1 <- as.numeric(res$draws[, 1, 1])
  # exact: p(sigma | y) on a grid of log sigma (f integrated out), E[f_1 | y, sigma]
  ls <- seq(log(0.03), log(3), length.out = 600)
  post <- vapply(ls, function(a) {
    s2 <- exp(2 * a)
    C <- K + diag(s2 + 1e-8, n)
    R <- chol(C)
    z <- backsolve(R, y - m0, transpose = TRUE)
    -sum(log(diag(R))) - sum(z^2) / 2 + fb_half_t(exp(a), 3, 1) + a
  }, 0)
  w <- exp(post - max(post))
  w <- w / sum(w)
  ef1 <- vapply(ls, function(a) {
    C <- K + diag(exp(2 * a) + 1e-8, n)
    m0 + drop(K[1, ] %*% solve(C, y - m0))
  }, 0)
  expect_lt(abs(mean(sig) - sum(w * exp(ls))), 4 * posterior::mcse_mean(sig))
  expect_lt(abs(mean(f1) - sum(w * ef1)), 4 * posterior::mcse_mean(f1))
  # the sigma draws are not stuck: the posterior sd is matched too (to 10%)
  sd_ref <- sqrt(sum(w * exp(2 * ls)) - sum(w * exp(ls))^2)
  expect_equal(stats::sd(sig), sd_ref, tolerance = 0.1)
})

test_that("full-Bayes regression fits carry, report and apply every draw's sigma", {
  set.seed(2)
  d <- data.frame(x = seq(0, 1, length.out = 30))
  d$y <- sin(6 * d$x) + stats::rnorm(30, sd = 0.3)
  ctl <- augp_control(sample_hyper = TRUE, iter = 200, chains = 2, threads = 1)
  # short chains: the convergence warnings are expected and not the point here
  fit <- suppressWarnings(augp(y ~ x, d, method = "gibbs", seed = 1, control = ctl))
  h <- hyper_draws(fit)
  expect_true("sigma" %in% posterior::variables(h))
  sig <- as.numeric(posterior::extract_variable_matrix(h, "sigma"))
  expect_gt(stats::sd(sig), 0)
  expect_equal(sigma(fit), stats::median(sig))
  expect_match(paste(utils::capture.output(print(fit)), collapse = "\n"), "sampled \\(posterior median\\)")
  # log_lik uses each draw's sigma: equal to the normal density at (f_s, sigma_s)
  ll <- log_lik(fit)
  S <- prod(dim(fit$engine$draws)[1:2])
  F <- matrix(fit$engine$draws, S, 30)
  expect_equal(ll, stats::dnorm(matrix(d$y, S, 30, byrow = TRUE), F, sig, log = TRUE),
               tolerance = 1e-10)
  # the prediction interval of a new observation covers the spread of the noise draws
  pp <- posterior_predict(fit, newdata = data.frame(x = 0.5), seed = 3)
  ep <- posterior_epred(fit, newdata = data.frame(x = 0.5))
  expect_equal(stats::var(as.numeric(pp - ep)), mean(sig^2), tolerance = 0.2)
  # a fixed sigma is not sampled; a tight prior pulls the draws down
  fixed <- suppressWarnings(augp(y ~ x, d, likelihood = gaussian_noise(sigma = 0.3),
                                 method = "gibbs", seed = 1, control = ctl))
  expect_false("sigma" %in% posterior::variables(hyper_draws(fixed)))
  tight <- suppressWarnings(augp(y ~ x, d, method = "gibbs", seed = 1, control = ctl,
                                 prior = augp_prior(likelihood = list(sigma = prior_half_normal(0.05)))))
  expect_lt(stats::median(posterior::extract_variable_matrix(hyper_draws(tight), "sigma")),
            0.75 * stats::median(sig))
})

test_that("likelihood priors are checked", {
  d <- data.frame(x = seq(0, 1, length.out = 20), y = seq(0, 1, length.out = 20)^2 + 0.1)
  ctl <- augp_control(sample_hyper = TRUE, iter = 50, chains = 1, threads = 1)
  expect_error(augp(y ~ x, d, method = "gibbs", control = ctl,
                    prior = augp_prior(likelihood = list(nu = prior_gamma(2, 0.1)))),
               "no parameter `nu`")
  expect_error(augp(y ~ x, d, method = "gibbs", control = ctl,
                    prior = augp_prior(likelihood = list(sigma = prior_normal(0, 1)))),
               "positive values")
  expect_error(augp_prior(likelihood = prior_half_t()), "named list")
  expect_error(augp_prior(likelihood = list(prior_half_t())), "named list")
  expect_error(augp_prior(sd = prior_normal()), "positive values")
  expect_error(prior_normal(sd = -1), "sd")
  expect_output(print(augp_prior(likelihood = list(sigma = prior_half_t(3, 1)))), "sigma")
})
