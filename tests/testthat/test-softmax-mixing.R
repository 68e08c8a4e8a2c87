# Gibbs sampling of the logistic-softmax likelihood: the elliptical slice moves of
# gibbs_move() (src/lik_logistic_softmax.cpp) must leave p(f | y) exactly invariant,
# alone (non-bijective: they replace the augmented step) or added to the augmented
# step (bijective). Reference: self-normalised importance sampling from the prior of
# the un-augmented posterior p(f | y) ~ N(f; mu0, K) prod_i p(y_i | f_i), written here
# independently of the package.

softmax_toy <- function() {
  X <- matrix(c(-2, -1, 0, 1, 2), 5)
  Y <- rbind(c(1, 0, 0), c(2, 1, 0), c(0, 1, 0), c(0, 1, 2), c(0, 0, 1))
  list(X = X, Y = Y)
}

# P(y = k | f) at each row of f (K columns, or K - 1 with the last class at 0).
softmax_probs <- function(f, theta, bijective) {
  s <- stats::plogis(f)
  if (bijective) s <- cbind(s, 0.5)
  w <- sweep(s, 2, theta, "*")
  w / rowSums(w)
}

# Posterior means of the class probabilities at the training points, and their
# standard errors, by importance sampling from the prior with S draws.
softmax_is_reference <- function(X, Y, K, theta, bijective, mu0, S, seed = 1) {
  set.seed(seed)
  n <- nrow(X)
  q <- ncol(Y) - bijective
  L <- t(chol(K))
  logw <- numeric(S)
  P <- array(0, c(S, n, ncol(Y)))
  for (s in seq_len(S)) {
    f <- mu0 + L %*% matrix(stats::rnorm(n * q), n, q)
    p <- softmax_probs(f, theta, bijective)
    logw[s] <- sum(Y * log(p))
    P[s, , ] <- p
  }
  w <- exp(logw - max(logw))
  w <- w / sum(w)
  est <- apply(P, 2:3, function(v) sum(w * v))
  se <- sqrt(apply(P, 2:3, function(v) sum(w^2 * (v - sum(w * v))^2)))
  list(mean = est, se = se, ess = 1 / sum(w^2))
}

softmax_gibbs_probs <- function(d, k, lik, mu0, iter, warmup, seed = 3) {
  fit <- eng_ns$augp_engine(d$X, kernel = k, method = "gibbs", seed = seed, mean0 = mu0,
                            lik = lik, control = eng_fixed(iter = iter, warmup = warmup,
                                                           chains = 2))
  P <- eng_ns$mcmc_response_draws(fit$draws, lik, max_vars = Inf)
  n <- nrow(d$X)
  list(mean = matrix(apply(P, 3, mean), n),
       mcse = matrix(apply(P, 3, posterior::mcse_mean), n), draws = fit$draws)
}

test_that("slice moves alone (non-bijective) sample the un-augmented posterior", {
  skip_if_not_installed("posterior")
  d <- softmax_toy()
  k <- kernel_se(variance = 4, lengthscale = 1.2)
  K <- kernel_matrix(k, d$X) + diag(1e-8, 5)
  theta <- c(1, 2, 0.5)
  mu0 <- matrix(c(0.5, -0.5, 0), 5, 3, byrow = TRUE)
  ref <- softmax_is_reference(d$X, d$Y, K, theta, FALSE, mu0, S = 60000)
  expect_gt(ref$ess, 2000)
  lik <- list(type = "logistic_softmax", q = 3L, Y = d$Y, bijective = FALSE, theta = theta,
              slice_steps = 20)
  g <- softmax_gibbs_probs(d, k, lik, mu0, iter = 2500, warmup = 300)
  z <- (g$mean - ref$mean) / sqrt(g$mcse^2 + ref$se^2)
  expect_lt(max(abs(z)), 4.5)
  expect_lt(max(abs(g$mean - ref$mean)), 0.03)
})

test_that("slice moves added to the augmented step (bijective) keep the posterior", {
  skip_if_not_installed("posterior")
  d <- softmax_toy()
  k <- kernel_se(variance = 3, lengthscale = 1)
  K <- kernel_matrix(k, d$X) + diag(1e-8, 5)
  theta <- c(1, 1.5, 1)
  ref <- softmax_is_reference(d$X, d$Y, K, theta, TRUE, 0, S = 60000, seed = 2)
  expect_gt(ref$ess, 2000)
  lik <- list(type = "logistic_softmax", q = 2L, Y = d$Y, bijective = TRUE, theta = theta,
              slice_steps = 20)
  g <- softmax_gibbs_probs(d, k, lik, 0, iter = 2500, warmup = 300)
  z <- (g$mean - ref$mean) / sqrt(g$mcse^2 + ref$se^2)
  expect_lt(max(abs(z)), 4.5)
  expect_lt(max(abs(g$mean - ref$mean)), 0.03)
})

test_that("the slice moves mix the latent sum that the augmented step cannot move", {
  # Well separated classes and a wide prior: the posterior of the latents' common
  # shift is close to the prior, where the augmented step is stuck (huge counts).
  set.seed(4)
  X <- matrix(sort(stats::runif(30, -3, 3)), 30)
  cls <- cut(X[, 1], c(-Inf, -1, 1, Inf), labels = FALSE)
  Y <- diag(3)[cls, ]
  k <- kernel_se(variance = 100, lengthscale = 2)
  lag1 <- function(slice_steps) {
    lik <- list(type = "logistic_softmax", q = 3L, Y = Y, bijective = FALSE, theta = rep(1, 3),
                slice_steps = slice_steps)
    fit <- eng_ns$augp_engine(X, kernel = k, method = "gibbs", seed = 5, mean0 = 0, lik = lik,
                              control = eng_fixed(iter = 400, warmup = 100, chains = 1))
    s <- rowSums(fit$draws[, 1, 15 + 30 * (0:2)])  # latent sum at point 15
    stats::acf(s, lag.max = 1, plot = FALSE)$acf[2]
  }
  expect_gt(lag1(0), 0.9)
  expect_lt(lag1(20), 0.6)
})

test_that("the likelihood spec carries the default number of slice rounds", {
  resp <- eng_ns$encode_response(logistic_softmax(), factor(c("a", "b", "c", "a")))
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$slice_steps, 20)
  lk <- logistic_softmax()
  lk$slice_steps <- 0
  expect_equal(eng_ns$engine_lik_spec(lk, resp)$slice_steps, 0)
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$ref_steps, 10)
  # the contrast moves' reference: Gaussian, means conditional on the other contrasts
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$ref_df, 0)
  expect_true(eng_ns$engine_lik_spec(logistic_softmax(), resp)$ref_cond)
  # curvatures averaged over the reference's marginals; the non-bijective model asks
  # engine_gibbs() for the refined variational fit as its reference, the bijective one
  # (which takes no reference) does not
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$ref_avg, 32)
  expect_true(eng_ns$engine_lik_spec(logistic_softmax(), resp)$gibbs_reference)
  expect_false(eng_ns$engine_lik_spec(logistic_softmax(bijective = TRUE), resp)$gibbs_reference)
  # the gradient move's leapfrog steps; it takes the reference too, so the spec asks for
  # one unless both it and the contrast moves are off
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$hmc_steps, 40)
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$hmc_moves, 1)
  # and its metric adapted along the kernel's 10 leading eigenvectors per latent column
  expect_equal(eng_ns$engine_lik_spec(logistic_softmax(), resp)$hmc_rank, 10)
  lk$ref_steps <- 0
  expect_true(eng_ns$engine_lik_spec(lk, resp)$gibbs_reference)
  lk$hmc_steps <- 0
  expect_false(eng_ns$engine_lik_spec(lk, resp)$gibbs_reference)
})

test_that("a fixed kernel (learn_hyper = FALSE) still gives the sampler its reference moves", {
  set.seed(41)
  d <- data.frame(x = stats::rnorm(30))
  d$y <- factor(c("a", "b", "c")[1 + (d$x > -0.4) + (d$x > 0.5)])
  # (60 iterations: the convergence warning of so short a chain is expected)
  run <- function(lik) {
    suppressWarnings(augp(y ~ x, data = d, likelihood = lik, kernel = kernel_se(variance = 2, lengthscale = 1),
                          method = "gibbs", seed = 5,
                          control = augp_control(learn_hyper = FALSE, chains = 1, iter = 60, warmup = 20,
                                                 threads = 1)))
  }
  off <- logistic_softmax()
  off$ref_steps <- 0
  off$hmc_steps <- 0
  on <- run(logistic_softmax())
  expect_true(isTRUE(on$engine$lik$gibbs_reference))
  # the moves change the chain (with them off it is the plain slice-and-augmentation sampler)
  expect_gt(max(abs(on$engine$draws - run(off)$engine$draws)), 0.1)
})
