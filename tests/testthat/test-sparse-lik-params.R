# Likelihood parameters learned by the ELBO in sparse (inducing-point) fits: the same
# fixed point as the exact GP when Z = X, a never-decreasing ELBO, the minibatch path,
# and the automatic choice of a sparse GP for such likelihoods.

slp_data <- function(n, seed = 1, noise = 0.3) {
  set.seed(seed)
  x <- sort(stats::runif(n, -2, 2))
  data.frame(x = x, y = sin(2 * x) + stats::rnorm(n, sd = noise))
}

slp_ctl <- function(...) {
  augp_control(threads = 1, learn_hyper = FALSE, learn_inducing = FALSE, maxit = 2000,
               tol = 1e-12, integrate_hyper = FALSE, ...)
}

test_that("with Z = X and a fixed kernel, sparse fits learn the exact GP's parameters", {
  d <- slp_data(40)
  k <- kernel_se(lengthscale = 0.8, variance = 1)
  Z <- matrix(d$x, ncol = 1)
  ex <- augp_fit(d$x, d$y, likelihood = gaussian_noise(), kernel = k, control = slp_ctl())
  sp <- augp_fit(d$x, d$y, likelihood = gaussian_noise(), kernel = k, inducing = Z,
                 control = slp_ctl())
  expect_true(inherits(sp$engine, "augp_sparse_engine"))
  expect_false(inherits(ex$engine, "augp_sparse_engine"))
  expect_equal(sigma(sp), sigma(ex), tolerance = 1e-4)
  expect_equal(fitted(sp), fitted(ex), tolerance = 1e-4)
  expect_gt(sp$engine$param_rounds, 1L)
  expect_true(isTRUE(sp$engine$param_converged))
  # the ELBO at the learned sigma equals the exact fit's (the log marginal likelihood),
  # up to the jitter each adds to its kernel matrix
  expect_equal(tail(sp$engine$elbo, 1), tail(ex$engine$elbo, 1), tolerance = 1e-4)

  # negative binomial: the dispersion r
  set.seed(2)
  cnt <- stats::rnbinom(40, size = 3, mu = exp(1 + sin(2 * d$x)))
  kn <- kernel_se(lengthscale = 0.8, variance = 0.5)
  exn <- augp_fit(d$x, cnt, likelihood = negative_binomial(), kernel = kn, control = slp_ctl())
  spn <- augp_fit(d$x, cnt, likelihood = negative_binomial(), kernel = kn, inducing = Z,
                  control = slp_ctl())
  expect_equal(spn$engine$lik$r, exn$engine$lik$r, tolerance = 1e-3)
  expect_equal(fitted(spn), fitted(exn), tolerance = 1e-3)
})

test_that("sparse parameter learning never lowers the ELBO and reaches the learned values", {
  d <- slp_data(150, seed = 3)
  # Student-t: sigma and nu; gross outliers in 5% of the rows
  set.seed(4)
  out <- sample.int(150, 8)
  d$y[out] <- d$y[out] + sample(c(-4, 4), 8, replace = TRUE)
  fit <- augp(y ~ x, d, likelihood = student_t(), inducing = 25,
              control = augp_control(threads = 1))
  e <- fit$engine$elbo
  expect_true(all(diff(e) >= -1e-7 * abs(e[-1])))
  expect_gt(fit$engine$param_rounds, 0L)
  expect_gt(sigma(fit), 0.15)
  expect_lt(sigma(fit), 0.5)
  # the robust fit follows the curve, not the outliers
  expect_lt(sqrt(mean((fitted(fit) - sin(2 * d$x))^2)), 0.2)
  # ordinal cut points (location parameters) learned with a sparse GP
  set.seed(5)
  lat <- 1.5 * sin(2 * d$x) + stats::rlogis(150)
  d$r <- cut(lat, c(-Inf, -1, 0, 1, Inf), ordered_result = TRUE)
  fo <- augp(r ~ x, d, inducing = 20, control = augp_control(threads = 1))
  eo <- fo$engine$elbo
  expect_true(all(diff(eo) >= -1e-7 * abs(eo[-1])))
  expect_true(all(diff(fo$engine$lik$cutpoints) > 0))
  ex <- augp(r ~ x, d, control = augp_control(threads = 1))
  expect_lt(max(abs(fitted(fo) - fitted(ex))), 0.1)
})

test_that("minibatch (SVI) fits learn the parameters on the subsample and step on all data", {
  d <- slp_data(3000, seed = 6)
  ctl <- augp_control(threads = 2, batch_size = 500, hyper_subsample = 600, svi_epochs = 2)
  fit <- augp(y ~ x, d, likelihood = gaussian_noise(), inducing = 30, seed = 1, control = ctl)
  expect_false(fit$engine$sparse$full_batch)
  expect_equal(sigma(fit), 0.3, tolerance = 0.08)
  expect_lt(sqrt(mean((fitted(fit) - sin(2 * d$x))^2)), 0.06)
  # the final step is the closed-form sigma at the fit's marginals
  m <- fit$engine$mean
  v <- fit$engine$var
  yy <- fit$engine$lik$y
  expect_equal(fit$engine$lik$sigma, sqrt(mean((yy - m)^2 + v)), tolerance = 1e-8)
})

test_that("inducing = \"auto\" fits a sparse GP to a large regression and learns sigma", {
  d <- slp_data(2600, seed = 7, noise = 0.2)
  fit <- expect_silent(augp(y ~ x, d, control = augp_control(threads = 2, hyper_maxit = 15)))
  expect_true(inherits(fit$engine, "augp_sparse_engine"))
  expect_equal(fit$inference$engine, "sparse")
  expect_equal(sigma(fit), 0.2, tolerance = 0.1)
})
