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

test_that("slice updates of logistic-softmax class weights at fixed f match a 3-D quadrature", {
  set.seed(4)
  n <- 15
  f <- matrix(stats::rnorm(n * 3), n, 3)
  Y <- t(vapply(seq_len(n), function(i) as.numeric(stats::rmultinom(1, 1, c(3, 1, 1))), numeric(3)))
  lik <- list(type = "logistic_softmax", q = 3L, Y = Y, bijective = FALSE, theta = c(1, 1, 1))
  pr <- fb_prior(rep("theta", 3), rep(3, 3), rep(0, 3), rep(1, 3), index = 1:3)
  dr <- fb_ns$.lik_param_sweeps_cpp(lik, f, pr, 6000, c(3, 3))[-(1:200), ]
  g <- seq(-4.5, 4.5, length.out = 36)
  G <- as.matrix(expand.grid(g, g, g))
  S <- 1 / (1 + exp(-f))
  # log p(Y | f, theta) = sum_ik Y_ik (t_k + log S_ik) - sum_i N_i log sum_k e^t_k S_ik
  lp <- drop(G %*% colSums(Y)) + sum(Y * log(S)) - drop(log(exp(G) %*% t(S)) %*% rowSums(Y)) +
    rowSums(stats::dnorm(G, 0, 1, log = TRUE))
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  # the log weight ratios are identified by the data; the common scale by the prior
  ref <- c(sum(w * (G[, 1] - G[, 2])), sum(w * G[, 3]))
  got <- cbind(log(dr[, 1] / dr[, 2]), log(dr[, 3]))
  for (k in 1:2) expect_lt(abs(mean(got[, k]) - ref[k]), 4 * posterior::mcse_mean(got[, k]) + 0.02)
})

test_that("full-Bayes multi-class fits sample learned class weights", {
  d <- iris[c(1:15, 51:65, 101:115), c("Petal.Length", "Petal.Width", "Species")]
  fit <- suppressWarnings(augp(Species ~ ., d, method = "gibbs", seed = 2,
                               likelihood = logistic_softmax(bijective = TRUE, learn_theta = TRUE),
                               control = augp_control(sample_hyper = TRUE, iter = 100, chains = 1,
                                                      threads = 1)))
  h <- hyper_draws(fit)
  expect_true(all(c("theta[1]", "theta[2]", "theta[3]") %in% posterior::variables(h)))
  expect_match(paste(utils::capture.output(print(fit)), collapse = "\n"), "sampled, posterior medians")
  p <- predict(fit, d[c(1, 20, 40), ], type = "response")
  expect_equal(unname(rowSums(p)), rep(1, 3), tolerance = 1e-10)
})

# Slice updates of a count or ordinal likelihood's parameters at fixed f against a grid
# quadrature of their conditional, with log p(y | f, x) from the C++ likelihood itself.
fb_grid_check <- function(lik, f, name, family, a, b, grid, positive, seed) {
  k <- length(grid)
  pr <- fb_prior(rep(name, k), rep(family, k), rep(a, k), rep(b, k), index = seq_len(k))
  dr <- fb_ns$.lik_param_sweeps_cpp(lik, f, pr, 5000, c(seed, 1))[-(1:200), , drop = FALSE]
  G <- as.matrix(expand.grid(grid))
  lprior <- function(t) {
    if (!positive) return(stats::dt(t / b, a, log = TRUE) - log(b))
    x <- exp(t)
    t + switch(as.character(family), `4` = stats::dgamma(x, a, b, log = TRUE),
               `3` = stats::dlnorm(x, a, b, log = TRUE))
  }
  lp <- apply(G, 1, function(t) {
    spec <- lik
    spec[[name]] <- if (positive) exp(t) else t
    sum(fb_ns$.lik_loglik_obs_cpp(spec, array(f, c(1, dim(f))))) + sum(lprior(t))
  })
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  for (j in seq_len(k)) {
    got <- if (positive) log(dr[, j]) else dr[, j]
    expect_lt(abs(mean(got) - sum(w * G[, j])), 4 * posterior::mcse_mean(got) + 0.01)
  }
}

test_that("slice updates of r, lambda and cut points at fixed f match quadratures", {
  set.seed(8)
  n <- 40
  f <- matrix(stats::rnorm(n, 1), n, 1)
  y <- stats::rnbinom(n, size = 3, mu = exp(f))
  fb_grid_check(list(type = "negative_binomial", q = 1L, y = as.double(y), trials = rep(1, n), r = 1,
                     learn_r = TRUE), f, "r", 4, 0.01, 0.01, list(seq(-3, 6, length.out = 400)),
                TRUE, 1)
  g <- matrix(stats::rnorm(n), n, 1)
  yp <- stats::rpois(n, 6 * stats::plogis(g))
  fb_grid_check(list(type = "poisson_logistic", q = 1L, y = as.double(yp), trials = rep(1, n),
                     lambda = 10, learn_lambda = TRUE), g, "lambda", 3, log(10), 1,
                list(seq(log(2), log(200), length.out = 400)), TRUE, 2)
  yo <- findInterval(g[, 1] + stats::rlogis(n), c(-0.5, 0.7)) + 1
  fb_grid_check(list(type = "ordinal", q = 1L, y = as.double(yo), trials = rep(1, n),
                     cutpoints = c(0, 1), learn_cutpoints = TRUE), g, "cutpoints", 10, 3, 2.5,
                rep(list(seq(-4, 5, length.out = 70)), 2), FALSE, 3)
})

test_that("full-Bayes count and ordinal fits sample r and the cut points", {
  set.seed(5)
  d <- data.frame(x = seq(0, 1, length.out = 40))
  d$y <- stats::rnbinom(40, size = 4, mu = exp(1 + sin(4 * d$x)))
  ctl <- augp_control(sample_hyper = TRUE, iter = 100, chains = 1, threads = 1)
  nb <- suppressWarnings(augp(y ~ x, d, method = "gibbs", seed = 1, control = ctl))
  expect_true("r" %in% posterior::variables(hyper_draws(nb)))
  expect_match(paste(utils::capture.output(print(nb)), collapse = "\n"), "sampled \\(posterior median\\)")
  d$z <- factor(findInterval(sin(4 * d$x) + stats::rlogis(40, scale = 0.3), c(-0.3, 0.4)),
                labels = c("lo", "mid", "hi"), ordered = TRUE)
  od <- suppressWarnings(augp(z ~ x, d, method = "gibbs", seed = 1, control = ctl))
  expect_true(all(c("cutpoints[1]", "cutpoints[2]") %in% posterior::variables(hyper_draws(od))))
  p <- predict(od, data.frame(x = c(0.1, 0.5)), type = "response")
  expect_equal(unname(rowSums(p)), c(1, 1), tolerance = 1e-10)
})

test_that("the joint shift of f and the cut points keeps the ordinal posterior (importance sampling)", {
  # three women, three ordered categories, a fixed kernel: the posterior of (f, c1, c2) by
  # importance sampling from the prior, against the Gibbs chain that slice-samples the cut
  # points and shifts f and the cut points together (location = TRUE)
  X <- matrix(c(0, 0.5, 1))
  y <- c(1, 2, 3)
  k <- kernel_se(variance = 1.5, lengthscale = 0.6)
  K <- kernel_matrix(k, X)
  lik <- list(type = "ordinal", q = 1L, y = y, trials = rep(1, 3), cutpoints = c(-0.5, 0.5),
              learn_cutpoints = TRUE)
  pr <- fb_prior(c("cutpoints", "cutpoints"), c(10, 10), c(3, 3), c(2.5, 2.5), index = 1:2)
  pr$location <- c(TRUE, TRUE)
  res <- fb_ns$.gp_gibbs_cpp(fb_ns$engine_specs(k), X, lik, 0, matrix(0, 3, 1), NULL, 500L, 20000L,
                             1L, 0L, 1L, c(3, 7), 1L, 1e-8, NULL, NULL, pr)
  cdraw <- matrix(res$lik_params, ncol = 2)
  f1 <- as.numeric(res$draws[, 1, 1])
  # reference: prior draws weighted by the continuation-ratio likelihood (the cut points of
  # stopping probabilities need no order)
  set.seed(21)
  S <- 4e5
  Fp <- matrix(stats::rnorm(3 * S), S) %*% chol(K + diag(1e-8, 3))
  c1 <- 2.5 * stats::rt(S, 3)
  c2 <- 2.5 * stats::rt(S, 3)
  st <- function(cc, f) stats::plogis(cc - f)
  lw <- log(st(c1, Fp[, 1])) + log1p(-st(c1, Fp[, 2])) + log(st(c2, Fp[, 2])) +
    log1p(-st(c1, Fp[, 3])) + log1p(-st(c2, Fp[, 3]))
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  ess_is <- 1 / sum(w^2)
  ref <- c(sum(w * c1), sum(w * c2), sum(w * Fp[, 1]))
  sd_ref <- sqrt(c(sum(w * c1^2), sum(w * c2^2), sum(w * Fp[, 1]^2)) - ref^2)
  got <- c(mean(cdraw[, 1]), mean(cdraw[, 2]), mean(f1))
  mcse <- c(posterior::mcse_mean(cdraw[, 1]), posterior::mcse_mean(cdraw[, 2]),
            posterior::mcse_mean(f1))
  expect_true(all(abs(got - ref) < 4 * sqrt(mcse^2 + sd_ref^2 / ess_is)),
              label = paste(format(got, digits = 3), "vs", format(ref, digits = 3), collapse = " "))
  # the shift makes the cut points mix: a bulk ESS of several thousand in 20000 draws
  expect_gt(posterior::ess_bulk(cdraw[, 1]), 2000)
})
