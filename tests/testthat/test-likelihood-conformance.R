# The shared conformance test of the likelihood contract (src/likelihood.h): every
# likelihood of the registry runs the same checks, one line per likelihood below.
lc_ns <- asNamespace("augmentedGP")

# Latent values of n observations in q columns, and Gaussian marginals around them.
lc_latents <- function(n, q, seed) {
  set.seed(seed)
  list(f = matrix(stats::rnorm(n * q, sd = 1.5), n, q),
       m = matrix(stats::rnorm(n * q, sd = 1.5), n, q),
       v = matrix(stats::runif(n * q, 0.05, 1.5), n, q))
}

# Product Gauss-Hermite rule for a standard normal weight in q dimensions:
# nodes (S x q) and weights (S).
lc_gh_product <- function(q, k = 14) {
  gh <- gauss_hermite(k)  # weight exp(-x^2): nodes sqrt(2) x, weights / sqrt(pi)
  x <- sqrt(2) * gh$x
  w <- gh$w / sqrt(pi)
  idx <- as.matrix(expand.grid(rep(list(seq_len(k)), q)))
  list(x = matrix(x[idx], ncol = q), w = apply(matrix(w[idx], ncol = q), 1, prod))
}

# S x r x q array of latent draws from a list of r x q matrices.
lc_stack <- function(mats) {
  S <- length(mats)
  arr <- array(0, c(S, nrow(mats[[1]]), ncol(mats[[1]])))
  for (s in seq_len(S)) arr[s, , ] <- mats[[s]]
  arr
}

expect_likelihood_conforms <- function(lik, seed = 1) {
  n <- nrow(as.matrix(if (!is.null(lik$Y)) lik$Y else lik$y))
  q <- lik$q
  L <- lc_latents(n, q, seed)
  ev <- lc_ns$.gp_lik_eval_cpp(lik, L$m, L$v, L$f)

  # per-observation log-likelihoods sum to the log-likelihood
  llo <- lc_ns$.lik_loglik_obs_cpp(lik, lc_stack(list(L$f)))
  expect_equal(dim(llo), c(1L, n))
  expect_equal(sum(llo), ev$loglik, tolerance = 1e-12)

  # the optimal q(aux) at v = 0 is p(aux | y, f): the local ELBO is log p(y | f) exactly
  # (the augmented density integrates back to the likelihood)
  e0 <- lc_ns$.gp_lik_eval_cpp(lik, L$f, L$f * 0, L$f)
  expect_equal(e0$elbo_local, e0$loglik, tolerance = 1e-10)

  # expect_aux at v = 0 is the mean of sample_aux given f = m (Monte Carlo, 4 standard errors)
  S <- 3000
  draws <- lapply(seq_len(S), function(s) lc_ns$.gp_lik_sample_cpp(lik, L$f, c(seed, s)))
  for (nm in c("kappa", "omega")) {
    A <- vapply(draws, function(d) as.numeric(d[[nm]]), numeric(n * q))
    mu <- rowMeans(A)
    se <- apply(A, 1, stats::sd) / sqrt(S)
    target <- as.numeric(e0[[nm]])
    expect_true(all(abs(mu - target) <= 4 * se + 1e-12), label = paste("E[sample_aux]", nm))
  }

  # the local ELBO is a lower bound of E_q[log p(y | f)] (quadrature over q(f)),
  # and the bound closes as the variances shrink
  rule <- lc_gh_product(q, if (q <= 2) 20 else 10)
  eq <- function(m, v) {
    Fd <- lapply(seq_len(nrow(rule$x)), function(t) m + sqrt(v) * rep(rule$x[t, ], each = n))
    sum(drop(rule$w %*% lc_ns$.lik_loglik_obs_cpp(lik, lc_stack(Fd))))
  }
  expect_lte(ev$elbo_local, eq(L$m, L$v) + 1e-8)
  small <- lc_ns$.gp_lik_eval_cpp(lik, L$m, L$v * 1e-6, L$m)$elbo_local
  expect_equal(small, eq(L$m, L$v * 1e-6), tolerance = 1e-5)

  # subset consistency: the likelihood on rows idx equals the rows of the whole
  idx <- c(n, 1L, 3L, 3L)
  sub <- lc_ns$.lik_subset_cpp(lik, idx, L$f[idx, , drop = FALSE], L$m[idx, , drop = FALSE],
                               L$v[idx, , drop = FALSE])
  expect_equal(sub$n_obs, length(idx))
  expect_equal(sub$loglik_obs, as.numeric(llo)[idx], tolerance = 1e-12)
  full <- lc_ns$.gp_lik_eval_cpp(lik, L$m, L$v, L$f)
  expect_equal(sub$kappa, full$kappa[idx, , drop = FALSE], tolerance = 1e-12)
  expect_equal(sub$omega, full$omega[idx, , drop = FALSE], tolerance = 1e-12)
  empty <- lc_ns$.lik_subset_cpp(lik, integer(0), L$f[0, , drop = FALSE], L$m[0, , drop = FALSE],
                                 L$v[0, , drop = FALSE])
  expect_equal(empty$n_obs, 0L)
  expect_equal(empty$elbo_local, 0)

  # simulate and the response mean agree: the total of `size` responses has mean size * mu
  mu <- lc_ns$.lik_response_mean_cpp(lik, L$f)
  R <- ncol(mu)
  expect_equal(nrow(mu), n)
  size <- rep(c(1, 7), length.out = n)
  Ssim <- 4000
  sims <- lc_ns$.lik_simulate_cpp(lik, lc_stack(rep(list(L$f), Ssim)), size, c(seed, 99))
  expect_equal(dim(sims), c(Ssim, n, R))
  if (isTRUE(lik$counts)) {
    expect_true(all(sims >= 0 & sims == round(sims)))
    if (R > 1) expect_equal(apply(sims, c(1, 2), sum), matrix(size, Ssim, n, byrow = TRUE))
  }
  # the mean over Ssim draws within 5 standard errors (from the draws' own sd)
  means <- apply(sims, c(2, 3), mean) / size
  ses <- apply(sims, c(2, 3), stats::sd) / (size * sqrt(Ssim))
  expect_true(all(abs(means - mu) <= 5 * ses + 1e-9), label = "simulate vs response mean")

  # the predictive interval of one new response holds about `level` of simulated responses
  pint <- lc_ns$.lik_predictive_interval_cpp(lik, L$m, L$v, 0.8, c(seed, 7))
  expect_equal(dim(pint$lwr), c(n, R))
  ysim <- lc_ns$.lik_simulate_cpp(lik, lc_stack(lapply(seq_len(Ssim), function(t)
    L$m + sqrt(L$v) * matrix(stats::rnorm(n * q), n, q))), rep(1, n), c(seed, 8))
  for (k in seq_len(R)) {
    inside <- t(ysim[, , k]) >= pint$lwr[, k] & t(ysim[, , k]) <= pint$upr[, k]
    expect_true(all(rowMeans(inside) >= 0.8 - 0.03), label = "predictive interval coverage")
  }

  # the response summary over Gaussian marginals equals the summary over its own draws
  Z <- matrix(stats::rnorm(400 * q), 400, q)
  rs <- lc_ns$.lik_response_cpp(lik, L$m, L$v, Z, 0.9, 1L)
  big <- lapply(seq_len(4000), function(t) L$m + sqrt(L$v) * matrix(stats::rnorm(n * q), n, q))
  rd <- lc_ns$.lik_response_draws_cpp(lik, lc_stack(big), 0.9)
  expect_equal(rs$mean, rd$mean, tolerance = 0.03)
  # the sd within 10%, or (heavy-tailed response means, e.g. a log link) within 5 Monte Carlo
  # standard errors of the draws' sd (delta method from their fourth central moment)
  P <- array(vapply(big, function(Fd) lc_ns$.lik_response_mean_cpp(lik, Fd), matrix(0, n, R)),
             c(n, R, length(big)))
  se_sd <- apply(P, c(1, 2), function(x) {
    d <- x - mean(x)
    s2 <- mean(d^2)
    sqrt(max(mean(d^4) - s2^2, 0) / length(x)) / (2 * sqrt(s2))
  })
  expect_true(isTRUE(all.equal(rs$sd, rd$sd, tolerance = 0.1)) || all(abs(rs$sd - rd$sd) <= 5 * se_sd),
              label = "response sd over Gaussian marginals vs over draws")
  expect_true(all(rs$lwr <= rs$mean + 1e-12 & rs$mean <= rs$upr + 1e-12))
  if (R > 1) expect_equal(rowSums(rs$mean), rep(1, n), tolerance = 1e-12)
}

lc_counts <- function(n, K, size, seed) {
  set.seed(seed)
  t(vapply(seq_len(n), function(i) as.numeric(stats::rmultinom(1, size[i], stats::runif(K))),
           numeric(K)))
}

# One line per likelihood of the registry.
# `counts = TRUE`: the response is counts (whole numbers, >= 0).
lc_cases <- list(
  bernoulli = list(type = "bernoulli", q = 1L, y = c(0, 1, 1, 0, 1, 0), trials = rep(1, 6), counts = TRUE),
  binomial = list(type = "binomial", q = 1L, y = c(0, 3, 5, 2, 0, 9), trials = c(4, 3, 8, 2, 1, 12),
                  counts = TRUE),
  logistic_softmax = list(type = "logistic_softmax", q = 3L, Y = lc_counts(6, 3, c(1, 1, 3, 1, 2, 1), 4),
                          bijective = FALSE, theta = c(1, 2, 0.5), counts = TRUE),
  logistic_softmax_bijective = list(type = "logistic_softmax", q = 2L,
                                    Y = lc_counts(6, 3, c(1, 2, 1, 4, 1, 1), 5), bijective = TRUE,
                                    theta = c(1, 1, 1), counts = TRUE),
  stick_breaking = list(type = "stick_breaking", q = 3L, Y = lc_counts(6, 4, c(3, 0, 5, 1, 2, 8), 6),
                        counts = TRUE),
  gaussian = list(type = "gaussian", q = 1L, y = c(-1.2, 0.3, 2.5, 0.1, -3, 1), trials = c(1, 1, 2, 1, 3, 1),
                  sigma = 0.7),
  student_t = list(type = "student_t", q = 1L, y = c(-1.2, 0.3, 2.5, 0.1, -3, 6), trials = c(1, 1, 2, 1, 3, 1),
                   sigma = 0.7, nu = 5),
  laplace = list(type = "laplace", q = 1L, y = c(-1.2, 0.3, 2.5, 0.1, -3, 6), trials = c(1, 1, 2, 1, 3, 1), scale = 0.6),
  negative_binomial = list(type = "negative_binomial", q = 1L, y = c(0, 3, 12, 1, 0, 40), trials = c(1, 1, 2, 1, 3, 1),
                           r = 2.5, counts = TRUE),
  poisson_logistic = list(type = "poisson_logistic", q = 1L, y = c(0, 3, 1, 7, 2, 0), trials = c(1, 1, 2, 1, 3, 1),
                          lambda = 6, counts = TRUE),
  ordinal = list(type = "ordinal", q = 1L, y = c(1, 3, 4, 2, 4, 1, 2), trials = c(1, 2, 1, 1, 3, 1, 0),
                 cutpoints = c(-0.8, 0.3, 1.1), counts = TRUE),
  heteroscedastic_gaussian = list(type = "heteroscedastic_gaussian", q = 2L, y = c(-1.2, 1.3, 2.5, 0.1, -3, 1),
                                  trials = c(1, 1, 2, 1, 3, 1), lambda = 1.5)
)

for (lc_name in names(lc_cases)) {
  test_that(sprintf("likelihood '%s' conforms to the contract", lc_name), {
    expect_likelihood_conforms(lc_cases[[lc_name]])
  })
}

test_that("the registry rejects unknown likelihood types and missing fields", {
  expect_error(lc_ns$.lik_response_mean_cpp(list(type = "nope"), matrix(0, 1, 1)), "unknown likelihood")
  expect_error(lc_ns$.lik_response_mean_cpp(list(type = "stick_breaking"), matrix(0, 1, 1)),
               "missing field 'Y'")
})
