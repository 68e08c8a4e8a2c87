# The rate-preserving move of poisson_logistic(): the likelihood's parameter flow
# (lambda -> lambda e^d, sigma(f) -> sigma(f) e^-d; Likelihood::param_flow in
# src/likelihood.h) and the Gibbs move built on it (param_flow_move in
# src/param_sampler.h), against the flow's contract and a quadrature of the un-augmented
# posterior.
rm_ns <- asNamespace("augmentedGP")

rm_spec <- function(y, lambda) {
  list(type = "poisson_logistic", q = 1L, y = y, trials = rep(1, length(y)), lambda = lambda)
}

test_that("the flow keeps the Poisson-logistic likelihood, composes and has the stated Jacobian", {
  y <- c(2, 0, 7)
  lambda <- 5
  f <- matrix(c(-3, 0.5, 4))
  ll <- function(f, lambda) sum(stats::dpois(y, lambda * stats::plogis(f), log = TRUE))
  fl <- function(f, d) rm_ns$.lik_param_flow_cpp(rm_spec(y, lambda), f, d)
  a <- fl(f, 0.3)
  expect_identical(a$name, "lambda")
  expect_identical(a$index, 1L)
  # defined while every sigma(f_i) e^-d < 1
  expect_equal(a$lo, max(stats::plogis(f, log.p = TRUE)))
  expect_identical(a$hi, Inf)
  expect_true(all(is.na(fl(f, a$lo - 1e-3)$f)))
  for (d in c(a$lo / 2, 0.3, 4, 40)) {
    b <- fl(f, d)
    expect_true(all(is.finite(b$f)))
    # the rates, hence the likelihood, are unchanged
    expect_equal(lambda * exp(d) * stats::plogis(b$f), lambda * stats::plogis(f), tolerance = 1e-12)
    expect_equal(ll(b$f, lambda * exp(d)), ll(f, lambda), tolerance = 1e-12)
    # a group: phi_d2(phi_d1(f)) = phi_(d1 + d2)
    expect_equal(fl(b$f, -0.2)$f, fl(f, d - 0.2)$f, tolerance = 1e-10)
    # the log Jacobian: sum log phi_d'(f_i) by central differences
    h <- 1e-5
    num <- sum(log((fl(f + h, d)$f - fl(f - h, d)$f) / (2 * h)))
    expect_equal(b$log_jac, num, tolerance = 1e-6)
  }
  expect_equal(fl(f, 0)$f, f, tolerance = 1e-14)
  expect_equal(fl(f, 0)$log_jac, 0, tolerance = 1e-14)
  # the negative binomial's dispersion changes the shape of the counts' distribution, not
  # only their mean: no flow
  nb <- list(type = "negative_binomial", q = 1L, y = y, trials = rep(1, 3), r = 2)
  expect_null(rm_ns$.lik_param_flow_cpp(nb, f, 0.3))
})

# Two counts near the maximal rate (sigma(f) near 1, where the flow's Jacobian varies
# most): y ~ Poisson(lambda plogis(f)), f ~ N(0, 4 C) with C a fixed SE correlation (the
# kernel fixed), lambda ~ gamma(30, rate 2) sampled.
rm_X <- matrix(c(0, 0.8))
rm_y <- c(15, 11)
rm_ga <- 30
rm_gb <- 2
rm_kernel <- kernel_se(lengthscale = 1, variance = 4)
rm_prior <- local({
  p <- augp_prior(lengthscale = rm_ns$new_prior_dist("fixed"), sd = rm_ns$new_prior_dist("fixed"))
  attr(p, "lik_prior") <- data.frame(name = "lambda", index = 1L, label = "lambda",
                                     code = rm_ns$PRIOR_CODES[["gamma"]], a = rm_ga, b = rm_gb,
                                     location = FALSE)
  p
})

# The same with the kernel variance v sampled too (prior log-normal(0, 0.3) on sd = sqrt(v),
# light enough that the grid of f below holds its upper tail), which the whitened move of
# the variance changes with lambda (whitened_scale_move).
rm_prior_v <- local({
  p <- augp_prior(lengthscale = rm_ns$new_prior_dist("fixed"), sd = prior_lognormal(0, 0.3))
  attr(p, "lik_prior") <- attr(rm_prior, "lik_prior")
  p
})

rm_fit <- function(threads, flow_moves = 2L, chains = 4, iter = 6000, warmup = 500, seed = 5,
                   prior = rm_prior, flow_variance = FALSE, hmc_steps = 0L) {
  withr::local_options(augmentedGP.flow_moves = flow_moves,
                       augmentedGP.flow_variance = flow_variance,
                       augmentedGP.hmc_steps = hmc_steps)
  rm_ns$augp_engine(rm_X, kernel = rm_kernel, method = "gibbs", lik = rm_spec(rm_y, 8),
                    mean0 = 0, seed = seed, prior = prior,
                    control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = chains,
                                   iter = iter, warmup = warmup, threads = threads))
}

# Independent reference, in R from the model alone: lambda integrated out in closed form
# (gamma prior, p(y | f, lambda) propto lambda^A e^(-lambda S) prod sigma(f_i)^y_i with
# A = sum y, S = sum sigma(f_i)), then the trapezoid rule on a grid of (f1, f2):
#   p(f | y) propto N(f; 0, K) prod sigma(f_i)^y_i (b + S)^-(a + A),
# and log lambda | f, y ~ log gamma(a + A, b + S): E = digamma(a + A) - log(b + S),
# Var = trigamma(a + A).
# With tv (a grid of log v), K is the correlation matrix C and the prior covariance at
# t = log v is e^t C + jit I (the jitter absolute); the variance is summed over too (prior
# on t: the log-normal density of sd = e^(t / 2) times |d sd / dt| = sd / 2), and log_v is
# added.
rm_reference <- function(K, tv = NULL, h = 0.03, jit = 0) {
  g <- seq(-8, 10, by = h)
  G <- as.matrix(expand.grid(g, g))
  S <- rowSums(stats::plogis(G))
  A <- rm_ga + sum(rm_y)
  ll <- rm_y[1] * stats::plogis(G[, 1], log.p = TRUE) + rm_y[2] * stats::plogis(G[, 2], log.p = TRUE) -
    A * log(rm_gb + S)
  # log weight on the grid of f at log variance t (without tv: K itself)
  lw <- function(t) {
    if (is.null(tv)) return(-0.5 * rowSums((G %*% solve(K)) * G) + ll)
    Kt <- exp(t) * K + diag(jit, 2)
    stats::dlnorm(exp(t / 2), 0, 0.3, log = TRUE) + t / 2 - log(2) -
      0.5 * as.numeric(determinant(Kt)$modulus) - 0.5 * rowSums((G %*% solve(Kt)) * G) + ll
  }
  ts <- if (is.null(tv)) 0 else tv
  top <- max(vapply(ts, function(t) max(lw(t)), 0))
  wf <- numeric(nrow(G))  # weights of the grid of f, summed over t
  wt <- numeric(length(ts))  # weights of t
  for (k in seq_along(ts)) {
    e <- exp(lw(ts[k]) - top)
    wf <- wf + e
    wt[k] <- sum(e)
  }
  wf <- wf / sum(wf)
  el <- digamma(A) - log(rm_gb + S)
  mom <- function(x, w) c(sum(w * x), sqrt(sum(w * x^2) - sum(w * x)^2))
  out <- rbind(f1 = mom(G[, 1], wf), f2 = mom(G[, 2], wf), log_lambda = mom(el, wf))
  out[3, 2] <- sqrt(trigamma(A) + out[3, 2]^2)
  if (!is.null(tv)) out <- rbind(out, log_v = mom(tv, wt / sum(wt)))
  list(mean = out[, 1], sd = out[, 2])
}

rm_check <- function(fit, ref) {
  draws <- list(f1 = fit$draws[, , 1], f2 = fit$draws[, , 2],
                log_lambda = log(fit$lik_draws[, , "lambda"]))
  if (!is.null(fit$theta)) draws$log_v <- fit$theta[, , 1]
  for (nm in names(ref$mean)) {
    m <- draws[[nm]]
    expect_lt(abs(mean(m) - ref$mean[[nm]]), 4 * posterior::mcse_mean(m) + 1e-3, label = nm)
    expect_equal(stats::sd(m), ref$sd[[nm]], tolerance = 0.025, label = nm)
  }
}

test_that("Gibbs with the rate-preserving move matches the quadrature posterior of (lambda, f)", {
  fit <- rm_fit(2)
  rm_check(fit, rm_reference(kernel_matrix(rm_kernel, rm_X) + diag(fit$jitter, 2)))
})

test_that("Gibbs with the rate-preserving move of lambda and the variance matches the quadrature", {
  fit <- rm_fit(2, prior = rm_prior_v, flow_variance = TRUE)
  expect_identical(dimnames(fit$theta)[[3]][1], "se.variance")
  # K = v C + jitter I, C the correlation matrix, the jitter absolute
  C <- kernel_matrix(kernel_se(lengthscale = 1, variance = 1), rm_X)
  rm_check(fit, rm_reference(C, tv = seq(-4, 5, by = 0.06), h = 0.05, jit = fit$jitter))
})

test_that("Gibbs with the joint gradient move of (lambda, f) matches the quadrature", {
  # the move of src/latent_hmc.h in every sweep, the flow off; then with the variance sampled
  fit <- rm_fit(2, flow_moves = 0L, hmc_steps = 6L)
  rm_check(fit, rm_reference(kernel_matrix(rm_kernel, rm_X) + diag(fit$jitter, 2)))
  fit <- rm_fit(2, flow_moves = 2L, prior = rm_prior_v, hmc_steps = 6L)
  C <- kernel_matrix(kernel_se(lengthscale = 1, variance = 1), rm_X)
  rm_check(fit, rm_reference(C, tv = seq(-4, 5, by = 0.06), h = 0.05, jit = fit$jitter))
})

test_that("the joint gradient move does not depend on the thread count and moves the chain", {
  a <- rm_fit(1, chains = 2, iter = 200, warmup = 100, hmc_steps = 6L)
  b <- rm_fit(2, chains = 2, iter = 200, warmup = 100, hmc_steps = 6L)
  expect_identical(a$draws, b$draws)
  expect_identical(a$lik_draws, b$lik_draws)
  off <- rm_fit(1, chains = 2, iter = 200, warmup = 100)
  expect_false(identical(a$lik_draws, off$lik_draws))
})

test_that("the rate-preserving move does not depend on the thread count and moves the chain", {
  a <- rm_fit(1, chains = 2, iter = 200, warmup = 100)
  b <- rm_fit(2, chains = 2, iter = 200, warmup = 100)
  expect_identical(a$draws, b$draws)
  expect_identical(a$lik_draws, b$lik_draws)
  # switched off, the chain differs (the move consumes random numbers and moves the state)
  off <- rm_fit(1, flow_moves = 0L, chains = 2, iter = 200, warmup = 100)
  expect_false(identical(a$lik_draws, off$lik_draws))
})
