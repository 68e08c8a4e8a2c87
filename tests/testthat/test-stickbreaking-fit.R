# Fitting GP multinomial models with the stick-breaking likelihood: engine level
# (augp_engine with an engine likelihood list) and front end (augp / augp_fit).

sb_ns <- asNamespace("augmentedGP")
sb_engine <- function(...) sb_ns$augp_engine(...)

# smooth true probability curves for K = 3 on [0, 1]
sb_truth <- function(x) {
  P <- cbind(0.2 + 0.4 * x, 0.3 + 0.15 * sin(2 * pi * x), 0)
  P[, 3] <- 1 - P[, 1] - P[, 2]
  P
}

sb_sim <- function(n, trials, seed) {
  set.seed(seed)
  x <- sort(stats::runif(n))
  P <- sb_truth(x)
  Y <- t(apply(P, 1, function(p) stats::rmultinom(1, trials, p)))
  colnames(Y) <- c("a", "b", "c")
  list(x = x, P = P, Y = Y)
}

# posterior mean probabilities under independent Gaussian marginals (VI)
sb_prob_mc <- function(m, v, S = 400, seed = 1) {
  set.seed(seed)
  acc <- 0
  for (s in seq_len(S)) {
    acc <- acc + pi_SB(m + sqrt(v) * matrix(stats::rnorm(length(m)), nrow(m))) / S
  }
  acc
}

test_that("VI recovers smooth probability curves (engine)", {
  d <- sb_sim(80, 20, 1)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  fit <- sb_engine(matrix(d$x), kernel = kernel_se(), method = "vi", lik = lik,
                   mean0 = sb_prior_mean(3), control = list(threads = 2))
  expect_equal(dim(fit$mean), c(80L, 2L))
  P <- sb_prob_mc(fit$mean, fit$var)
  # tolerance: mean absolute error 0.04, worst point 0.15 (20 trials per point;
  # the binomial standard error of one point is about 0.1)
  expect_lt(mean(abs(P - d$P)), 0.04)
  expect_lt(max(abs(P - d$P)), 0.15)
})

test_that("the CAVI ELBO never decreases for a fixed kernel", {
  d <- sb_sim(60, 5, 2)
  d$Y[c(3, 10), ] <- 0 # rows with no counts are allowed at the engine level
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  fit <- sb_engine(matrix(d$x), kernel = kernel_se(variance = 2, lengthscale = 0.2),
                   method = "vi", lik = lik, mean0 = sb_prior_mean(3),
                   control = list(learn_hyper = FALSE, threads = 2, tol = 1e-12, maxit = 60))
  expect_gt(length(fit$elbo), 5)
  expect_true(all(diff(fit$elbo) >= -1e-9 * abs(fit$elbo[-1])))
  expect_true(all(is.finite(fit$elbo)))
})

test_that("Gibbs matches an independent importance sampler on a tiny problem", {
  # 3 inputs, K = 3: the posterior factorises over the two sticks; self-normalised
  # importance sampling from the prior is an independent reference.
  x <- c(0, 0.5, 1.2)
  Y <- rbind(c(3, 1, 0), c(0, 2, 2), c(1, 0, 4))
  kern <- kernel_se(variance = 1.5, lengthscale = 0.7)
  Kx <- kernel_matrix(kern, matrix(x)) + diag(1e-8, 3)
  mu0 <- sb_prior_mean(3)
  set.seed(42)
  S <- 40000
  L <- t(chol(Kx))
  ref_mean <- ref_sd <- matrix(0, 3, 2)
  rest <- rowSums(Y)
  for (k in 1:2) {
    Fk <- mu0[k] + t(L %*% matrix(stats::rnorm(3 * S), 3))
    lw <- rowSums(sapply(1:3, function(i) stats::dbinom(Y[i, k], rest[i], stats::plogis(Fk[, i]),
                                                        log = TRUE)))
    w <- exp(lw - max(lw))
    w <- w / sum(w)
    ref_mean[, k] <- colSums(w * Fk)
    ref_sd[, k] <- sqrt(colSums(w * Fk^2) - ref_mean[, k]^2)
    rest <- rest - Y[, k]
  }
  g <- sb_engine(matrix(x), kernel = kern, method = "gibbs",
                 lik = list(type = "stick_breaking", q = 2L, Y = Y), mean0 = mu0,
                 control = list(learn_hyper = FALSE, iter = 3000, warmup = 200, chains = 2,
                                threads = 2), seed = 11)
  expect_equal(dim(g$draws), c(3000L, 2L, 6L))
  # Monte Carlo error: generous 0.08 posterior sd (effective sample sizes in the
  # thousands for both samplers)
  expect_lt(max(abs(g$mean - ref_mean) / ref_sd), 0.08)
  expect_lt(max(abs(sqrt(g$var) / ref_sd - 1)), 0.08)
})

test_that("VI and Gibbs agree on a small problem; seeds and threads", {
  d <- sb_sim(30, 10, 3)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  kern <- kernel_se(variance = 1, lengthscale = 0.3)
  vi <- sb_engine(matrix(d$x), kernel = kern, method = "vi", lik = lik, mean0 = sb_prior_mean(3),
                  control = list(learn_hyper = FALSE, threads = 2))
  ctl <- list(learn_hyper = FALSE, iter = 800, warmup = 100, chains = 2, threads = 2)
  g <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                 mean0 = sb_prior_mean(3), control = ctl, seed = 5)
  expect_lt(max(abs(g$mean - vi$mean) / sqrt(g$var)), 0.3)
  Pg <- matrix(g$draws, ncol = 60) # (iter * chains) x (n * q)
  Pg_mean <- 0
  for (s in seq_len(nrow(Pg))) Pg_mean <- Pg_mean + pi_SB(matrix(Pg[s, ], 30, 2)) / nrow(Pg)
  expect_lt(max(abs(Pg_mean - sb_prob_mc(vi$mean, vi$var))), 0.03)
  # same seed, same draws; the thread count does not matter
  g2 <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                  mean0 = sb_prior_mean(3), control = utils::modifyList(ctl, list(threads = 1)),
                  seed = 5)
  expect_identical(g$draws, g2$draws)
  g3 <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                  mean0 = sb_prior_mean(3), control = ctl, seed = 6)
  expect_false(identical(g$draws, g3$draws))
  vi1 <- sb_engine(matrix(d$x), kernel = kern, method = "vi", lik = lik,
                   mean0 = sb_prior_mean(3), control = list(learn_hyper = FALSE, threads = 1))
  expect_identical(vi$mean, vi1$mean)
})
