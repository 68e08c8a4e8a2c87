# heteroscedastic_gaussian(): y ~ N(f, 1 / (lambda sigmoid(g - log lambda))), two latent
# GPs updated in turn (src/lik_heteroscedastic.cpp).
het_ns <- asNamespace("augmentedGP")

het_spec <- function(y, lambda, learn = FALSE, trials = rep(1, length(y))) {
  list(type = "heteroscedastic_gaussian", q = 2L, y = as.double(y), trials = as.double(trials),
       lambda = lambda, learn_lambda = learn)
}

# log p(y | f, g), written independently of the package
het_loglik <- function(y, f, g, lambda) {
  tau <- lambda * stats::plogis(g - log(lambda))
  stats::dnorm(y, f, 1 / sqrt(tau), log = TRUE)
}

het_data <- function(n, seed) {
  set.seed(seed)
  x <- sort(stats::runif(n))
  list(X = matrix(x), x = x, y = sin(5 * x) + stats::rnorm(n, sd = 0.05 + 0.5 * x))
}

test_that("Gibbs matches the posterior means of f and g by importance sampling (n = 2)", {
  # residuals large enough that f and g are strongly coupled a posteriori: updating the
  # two columns in parallel from one set of auxiliaries (not a valid sweep) misses the
  # posterior mean of g here by about 0.3
  X <- matrix(c(0, 0.6))
  y <- c(2.5, -2)
  lambda <- 3
  kf <- kernel_se(variance = 4, lengthscale = 0.7)
  kg <- kernel_se(variance = 4, lengthscale = 0.7)
  mean0 <- matrix(c(0, 0, 0.5, 0.5), 2, 2)
  g <- het_ns$augp_engine(X, kernel = list(kf, kg), method = "gibbs", lik = het_spec(y, lambda),
                          mean0 = mean0, seed = 11,
                          control = eng_fixed(iter = 30000, warmup = 1000, chains = 2, jitter = 1e-8))
  draws <- matrix(g$draws, ncol = 4)  # columns f1, f2, g1, g2
  est <- colMeans(draws)
  # reference: prior draws of (f, g) weighted by the likelihood
  set.seed(5)
  S <- 400000
  Kf <- het_ns$kernel_matrix(kf, X) + diag(1e-8, 2)
  Kg <- het_ns$kernel_matrix(kg, X) + diag(1e-8, 2)
  Fd <- matrix(stats::rnorm(2 * S), S) %*% chol(Kf)
  Gd <- matrix(stats::rnorm(2 * S), S) %*% chol(Kg) + 0.5
  lw <- het_loglik(y[1], Fd[, 1], Gd[, 1], lambda) + het_loglik(y[2], Fd[, 2], Gd[, 2], lambda)
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  ref <- c(colSums(w * Fd), colSums(w * Gd))
  ref_sd <- sqrt(c(colSums(w * Fd^2), colSums(w * Gd^2)) - ref^2)
  # Monte Carlo error of the chain (autocorrelated: allow 0.05 posterior sd) and of the
  # importance sampler (effective size > 10^4)
  expect_gt(1 / sum(w^2), 1e4)
  expect_true(all(abs(est - ref) < 0.05 * ref_sd + 0.01), label = paste(
    "Gibbs", paste(round(est, 3), collapse = " "), "vs IS", paste(round(ref, 3), collapse = " ")))
  # the posterior sd too
  expect_equal(apply(draws, 2, stats::sd), ref_sd, tolerance = 0.06)
})

test_that("the CAVI ELBO never decreases, with fixed and learned lambda", {
  d <- het_data(60, 3)
  k <- kernel_se(variance = 1, lengthscale = 0.3)
  vi <- het_ns$augp_engine(d$X, kernel = list(k, k), method = "vi", lik = het_spec(d$y, 20),
                           mean0 = c(0, 1), control = eng_fixed(maxit = 500, tol = 1e-10))
  e <- vi$elbo
  expect_gt(length(e), 5)
  expect_true(all(diff(e) >= -1e-9 * abs(e[-1])))
  expect_true(vi$converged)
  # the whole front-end fit: hyperparameter search, lambda rounds, final sweeps
  fit <- augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), seed = 1)
  e <- fit$engine$elbo
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  expect_gt(fit$likelihood$lambda, 0)
})

test_that("with a nearly constant g the fit is the homoscedastic Gaussian GP", {
  d <- het_data(40, 4)
  kf <- kernel_se(variance = 1, lengthscale = 0.3)
  kg <- kernel_se(variance = 1e-9, lengthscale = 0.3)
  ctl <- eng_fixed(maxit = 2000, tol = 1e-12)
  sp <- het_spec(d$y, 10, learn = TRUE)
  m0 <- cbind(rep(0, 40), rep(6, 40))
  het <- het_ns$augp_engine(d$X, kernel = list(kf, kg), method = "vi", lik = sp, mean0 = m0,
                            control = ctl)
  het <- het_ns$engine_learn_lik_params(het, d$X, sp, m0)
  gsp <- list(type = "gaussian", q = 1L, y = d$y, trials = rep(1, 40), sigma = 0.3)
  gau <- het_ns$augp_engine(d$X, kernel = kf, method = "vi", lik = gsp, mean0 = 0, control = ctl)
  gau <- het_ns$engine_learn_lik_params(gau, d$X, gsp, 0)
  lam <- het$lik$lambda
  noise_var <- 1 / (lam * stats::plogis(6 - log(lam)))
  expect_equal(noise_var, gau$lik$sigma^2, tolerance = 1e-3)
  expect_equal(het$mean[, 1], gau$mean, tolerance = 1e-3)
  expect_equal(het$var[, 1], gau$var, tolerance = 1e-3)
  expect_equal(tail(het$elbo, 1), tail(gau$elbo, 1), tolerance = 1e-4)
})

test_that("the front end: predictions, noise sd, intervals, simulate and residuals", {
  d <- het_data(80, 5)
  fit <- augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), seed = 2)
  expect_s3_class(fit$likelihood, "augp_heteroscedastic")
  expect_true(is_kernel_list <- inherits(fit$kernel, "augp_kernels"))
  nd <- matrix(c(0.05, 0.5, 0.95))
  ns <- predict(fit, nd, type = "noise", interval = "credible", se.fit = TRUE)
  expect_named(ns, c("fit", "se.fit", "lwr", "upr"))
  expect_true(all(ns$lwr <= ns$fit & ns$fit <= ns$upr))
  # the simulated noise sd grows from 0.05 to 0.55: the fit sees it grow
  expect_lt(ns$fit[1], ns$fit[3])
  expect_gt(ns$fit[3] / ns$fit[1], 2)
  pr <- predict(fit, nd, interval = "prediction")
  cr <- predict(fit, nd, interval = "credible")
  expect_true(all(pr$lwr < cr$lwr & cr$upr < pr$upr))
  # the prediction interval is wider where the noise is larger
  expect_gt((pr$upr - pr$lwr)[3], 2 * (pr$upr - pr$lwr)[1])
  # coverage of the 90% prediction interval on new data from the same model
  set.seed(9)
  xn <- stats::runif(400)
  yn <- sin(5 * xn) + stats::rnorm(400, sd = 0.05 + 0.5 * xn)
  pi <- predict(fit, matrix(xn), interval = "prediction", level = 0.9)
  expect_equal(mean(yn >= pi$lwr & yn <= pi$upr), 0.9, tolerance = 0.06)
  lk <- predict(fit, nd, type = "link")
  expect_equal(colnames(lk), c("f", "g"))
  expect_equal(unname(lk[, "f"]), unname(predict(fit, nd)), tolerance = 1e-12)
  s <- sigma(fit)
  expect_length(s, 80)
  expect_equal(residuals(fit, type = "pearson"), residuals(fit, type = "response") / s)
  sims <- simulate(fit, nsim = 3, seed = 1)
  expect_equal(dim(sims), c(80L, 3L))
  # a Gaussian fit's noise sd is its sigma at every input
  gf <- augp_fit(d$x, d$y, likelihood = gaussian_noise(), seed = 2,
                 control = augp_control(integrate_hyper = FALSE))
  expect_equal(predict(gf, nd, type = "noise"), rep(sigma(gf), 3), ignore_attr = TRUE)
  expect_error(predict(augp_fit(d$x, d$y > 0, seed = 1), nd, type = "noise"), "regression")
})

test_that("Gibbs fits run from the front end and agree with the variational fit", {
  d <- het_data(50, 6)
  ctl <- augp_control(iter = 1500, warmup = 300, chains = 1)
  vi <- augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), seed = 3)
  gb <- augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), method = "gibbs", seed = 3,
                 control = ctl)
  expect_equal(predict(gb), predict(vi), tolerance = 0.1)
  nd <- matrix(c(0.1, 0.9))
  expect_equal(predict(gb, nd, type = "noise"), predict(vi, nd, type = "noise"), tolerance = 0.25)
  # same seed, same draws
  gb2 <- augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), method = "gibbs", seed = 3,
                  control = ctl)
  expect_identical(gb$engine$draws, gb2$engine$draws)
})

test_that("full-Bayes Gibbs samples lambda and both kernels", {
  d <- het_data(40, 8)
  # short chains: convergence warnings expected
  fit <- suppressWarnings(augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), method = "gibbs",
                                   seed = 4, control = augp_control(sample_hyper = TRUE, iter = 600,
                                                                    warmup = 200, chains = 1)))
  lam <- fit$engine$lik_draws
  expect_equal(dim(lam), c(400L, 1L, 1L))
  expect_true(all(is.finite(lam) & lam > 0))
  expect_gt(stats::sd(as.numeric(lam)), 0)
  expect_equal(fit$likelihood$sampled, "lambda")
  expect_equal(dim(fit$engine$theta)[3], 4L)  # variance and lengthscale of each kernel
  # the g kernel's variance prior is on the logit scale, f's on the scale of y
  pt <- fit$engine$prior_table
  expect_equal(pt$prior[[1]]$b / pt$prior[[3]]$b, sd(d$y) * sqrt(39 / 40), tolerance = 1e-6)
  expect_true(all(is.finite(predict(fit, matrix(c(0.2, 0.8)), type = "noise"))))
  # a fixed lambda is not sampled
  fx <- suppressWarnings(augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(lambda = 50),
                                  method = "gibbs", seed = 4,
                                  control = augp_control(sample_hyper = TRUE, iter = 300, warmup = 100,
                                                         chains = 1)))
  expect_null(fx$engine$lik_draws)
  expect_equal(fx$likelihood$lambda, 50)
})

test_that("results do not depend on the number of threads", {
  d <- het_data(160, 10)
  k <- kernel_se(variance = 1, lengthscale = 0.3)
  fit <- function(threads, method) {
    het_ns$augp_engine(d$X, kernel = list(k, k), method = method, lik = het_spec(d$y, 20),
                       mean0 = c(0, 1), seed = 3,
                       control = eng_fixed(threads = threads, iter = 60, warmup = 20, chains = 1))
  }
  expect_threads_identical(fit)
})

test_that("bad input gets clear errors", {
  d <- het_data(20, 7)
  expect_error(heteroscedastic_gaussian(lambda = 0), "`lambda`")
  expect_error(heteroscedastic_gaussian(lambda = -1), "`lambda`")
  expect_error(heteroscedastic_gaussian(lambda = Inf), "`lambda`")
  expect_error(heteroscedastic_gaussian(lambda = "a"), "`lambda`")
  y <- d$y
  y[3] <- NA
  expect_error(augp_fit(d$x, y, likelihood = heteroscedastic_gaussian()), "NA")
  y[3] <- Inf
  expect_error(augp_fit(d$x, y, likelihood = heteroscedastic_gaussian()), "Inf")
  expect_error(augp_fit(d$x, factor(d$y > 0), likelihood = heteroscedastic_gaussian()), "numeric")
  expect_error(augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), offset = d$x), "offset")
  expect_error(augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(), inducing = 5),
               "one kernel per latent function")
  expect_error(augp_fit(d$x, d$y, likelihood = heteroscedastic_gaussian(lambda = 2), inducing = 5),
               "one kernel per latent function")
  expect_error(het_ns$.lik_response_mean_cpp(het_spec(numeric(0), -1), matrix(0, 1, 2)), "lambda")
})
