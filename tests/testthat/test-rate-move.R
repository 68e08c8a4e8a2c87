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

rm_fit <- function(threads, flow_moves = 2L, chains = 4, iter = 6000, warmup = 500, seed = 5) {
  withr::local_options(augmentedGP.flow_moves = flow_moves)
  rm_ns$augp_engine(rm_X, kernel = rm_kernel, method = "gibbs", lik = rm_spec(rm_y, 8),
                    mean0 = 0, seed = seed, prior = rm_prior,
                    control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = chains,
                                   iter = iter, warmup = warmup, threads = threads))
}

# Independent reference, in R from the model alone: lambda integrated out in closed form
# (gamma prior, p(y | f, lambda) propto lambda^A e^(-lambda S) prod sigma(f_i)^y_i with
# A = sum y, S = sum sigma(f_i)), then the trapezoid rule on a grid of (f1, f2):
#   p(f | y) propto N(f; 0, K) prod sigma(f_i)^y_i (b + S)^-(a + A),
# and log lambda | f, y ~ log gamma(a + A, b + S): E = digamma(a + A) - log(b + S),
# Var = trigamma(a + A).
rm_reference <- function(K) {
  g <- seq(-8, 10, by = 0.03)
  G <- as.matrix(expand.grid(g, g))
  S <- rowSums(stats::plogis(G))
  A <- rm_ga + sum(rm_y)
  lw <- -0.5 * rowSums((G %*% solve(K)) * G) + rm_y[1] * stats::plogis(G[, 1], log.p = TRUE) +
    rm_y[2] * stats::plogis(G[, 2], log.p = TRUE) - A * log(rm_gb + S)
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  el <- digamma(A) - log(rm_gb + S)
  m <- c(f1 = sum(w * G[, 1]), f2 = sum(w * G[, 2]), log_lambda = sum(w * el))
  s <- c(f1 = sqrt(sum(w * G[, 1]^2) - m[[1]]^2), f2 = sqrt(sum(w * G[, 2]^2) - m[[2]]^2),
         log_lambda = sqrt(trigamma(A) + sum(w * el^2) - m[[3]]^2))
  list(mean = m, sd = s)
}

test_that("Gibbs with the rate-preserving move matches the quadrature posterior of (lambda, f)", {
  fit <- rm_fit(2)
  K <- kernel_matrix(rm_kernel, rm_X) + diag(fit$jitter, 2)
  ref <- rm_reference(K)
  draws <- list(f1 = fit$draws[, , 1], f2 = fit$draws[, , 2],
                log_lambda = log(fit$lik_draws[, , "lambda"]))
  for (nm in names(draws)) {
    m <- draws[[nm]]
    expect_lt(abs(mean(m) - ref$mean[[nm]]), 4 * posterior::mcse_mean(m) + 1e-3, label = nm)
    expect_equal(stats::sd(m), ref$sd[[nm]], tolerance = 0.025, label = nm)
  }
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
