# kernel_constant(): the covariance v of a constant function, which gives the latent
# function a learned level. The C++ values and derivatives go through the shared kernel
# conformance check (test-kernel-conformance.R); here: the R object, and what it does in
# fits of every kind.

test_that("kernel_constant() is v everywhere, prints, and refuses bad variances", {
  x <- matrix(c(-1, 0, 2.5, 7), 2)
  expect_equal(kernel_matrix(kernel_constant(1.5), x), matrix(1.5, 2, 2))
  expect_equal(kernel_matrix(kernel_constant(), x, x[1, , drop = FALSE]), matrix(1, 2, 1))
  expect_equal(kernel_matrix(kernel_se(2, 0.7) + kernel_constant(0.3), x),
               kernel_matrix(kernel_se(2, 0.7), x) + 0.3)
  expect_equal(format(kernel_constant()), "kernel_constant(variance = auto)")
  expect_equal(format(kernel_linear(1) + kernel_constant(0.5)),
               "kernel_linear(variance = 1, lengthscale = 1 sd) + kernel_constant(variance = 0.5)")
  expect_error(kernel_constant(-1), "variance")
  expect_error(kernel_constant(c(1, 2)), "variance")
  expect_error(kernel_constant(NA), "variance")
})

# Counts with exposure whose log rate is linear in x1 and x2: the pooled log rate (the
# likelihood's prior mean) is above the log rate at the centre of the inputs (Jensen).
kc_counts <- function(n = 150, seed = 4) {
  set.seed(seed)
  x1 <- stats::rnorm(n)
  x2 <- stats::rnorm(n)
  expo <- stats::runif(n, 5, 50)
  eta <- -1 + 0.9 * x1 - 0.5 * x2
  data.frame(y = stats::rpois(n, expo * exp(eta)), x1 = x1, x2 = x2, expo = expo)
}

test_that("a linear kernel plus a constant learns the level a GLM does", {
  d <- kc_counts()
  fm <- y ~ x1 + x2 + offset(log(expo))
  glm_fit <- stats::glm(fm, family = stats::poisson, data = d)
  ctl <- augp_control(threads = 1, kernel_search = FALSE)
  lc <- augp(fm, d, likelihood = negative_binomial(r = 1e4), seed = 1, control = ctl,
             kernel = kernel_linear() + kernel_constant())
  expect_message(lin <- augp(fm, d, likelihood = negative_binomial(r = 1e4), seed = 1, control = ctl,
                             kernel = kernel_linear()), "kernel_constant")
  nd <- data.frame(x1 = mean(d$x1), x2 = mean(d$x2), expo = 1)
  at_centre <- function(f) predict(f, nd, type = "link")
  glm_centre <- unname(stats::predict(glm_fit, nd, type = "link"))
  pooled <- log(sum(d$y) / sum(d$expo))
  expect_gt(pooled - glm_centre, 0.3)  # the trap is there in these data
  # alone, the linear kernel leaves the level at the prior mean, the pooled log rate
  expect_equal(unname(at_centre(lin)), pooled, tolerance = 1e-6)
  # with the constant, the level is the GLM's
  expect_lt(abs(at_centre(lc) - glm_centre), 0.03)
  expect_lt(max(abs(predict(lc, type = "link") - stats::predict(glm_fit, type = "link"))), 0.05)
  expect_gt(coef(lc)[["constant.variance"]], 0)
  expect_true("constant.variance" %in% names(coef(lc)))
  expect_gt(elbo(lc), elbo(lin))
})

test_that("the constant kernel works in sparse, Gaussian and full-Bayes fits", {
  d <- kc_counts(80, 5)
  fm <- y ~ x1 + x2 + offset(log(expo))
  sp <- augp(fm, d, likelihood = negative_binomial(r = 1e4), seed = 1, inducing = 15,
             kernel = kernel_se() + kernel_constant(), control = augp_control(threads = 1))
  expect_true(all(is.finite(predict(sp, type = "link"))))
  expect_true("constant.variance" %in% names(coef(sp)))
  set.seed(2)
  g <- data.frame(x = sort(stats::runif(40, 0, 3)))
  g$y <- 5 + sin(2 * g$x) + stats::rnorm(40, sd = 0.2)
  gf <- augp(y ~ x, g, likelihood = gaussian_noise(), kernel = kernel_se() + kernel_constant(),
             seed = 1, control = augp_control(threads = 1))
  expect_lt(sqrt(mean((fitted(gf) - (5 + sin(2 * g$x)))^2)), 0.15)
  fb <- suppressWarnings(augp(y ~ x, g, likelihood = gaussian_noise(), method = "gibbs", seed = 1,
                              kernel = kernel_se() + kernel_constant(),
                              control = augp_control(threads = 1, sample_hyper = TRUE, iter = 150,
                                                     warmup = 75, chains = 1)))
  dr <- posterior::as_draws_matrix(fb)
  expect_true("constant.variance" %in% posterior::variables(dr))
  expect_true(all(posterior::extract_variable(dr, "constant.variance") > 0))
})

test_that("a kernel that cannot move the level is pointed out where the prior mean is not the intercept", {
  d <- kc_counts(60, 6)
  fm <- y ~ x1 + x2 + offset(log(expo))
  ctl <- augp_control(threads = 1, kernel_search = FALSE, learn_hyper = FALSE)
  nb <- negative_binomial(r = 10)
  msg <- "no constant component"
  expect_message(augp(fm, d, likelihood = nb, kernel = kernel_linear(), control = ctl), msg)
  expect_message(augp(fm, d, likelihood = nb, kernel = kernel_linear() * kernel_se(), control = ctl), msg)
  quiet_about_level <- function(expr) {
    msgs <- character(0)
    withCallingHandlers(expr, message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
    expect_false(any(grepl(msg, msgs)))
  }
  quiet_about_level(augp(fm, d, likelihood = nb, kernel = kernel_linear() + kernel_constant(), control = ctl))
  quiet_about_level(augp(fm, d, likelihood = nb, kernel = kernel_linear() + kernel_se(), control = ctl))
  quiet_about_level(augp(fm, d, likelihood = nb, kernel = kernel_linear(),
                         control = augp_control(threads = 1, kernel_search = FALSE, learn_hyper = FALSE,
                                                standardise = FALSE)))
  # least squares: the response mean is the intercept on centred inputs
  g <- data.frame(x = d$x1, y = d$x2 + d$x1)
  quiet_about_level(augp(y ~ x, g, likelihood = gaussian_noise(), kernel = kernel_linear(), control = ctl))
})
