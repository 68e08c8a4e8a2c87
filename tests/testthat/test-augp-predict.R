test_that("the core's Gauss-Hermite rule integrates normal moments; normal quantiles", {
  r <- .numerics_cpp(20L, c(1e-12, 0.025, 0.3, 0.5, 0.9, 0.975, 1 - 1e-10))
  expect_equal(sum(r$w), 1, tolerance = 1e-12)
  expect_equal(sum(r$w * r$x^2), 1, tolerance = 1e-10)
  expect_equal(sum(r$w * r$x^4), 3, tolerance = 1e-10)
  expect_equal(r$z, qnorm(c(1e-12, 0.025, 0.3, 0.5, 0.9, 0.975, 1 - 1e-10)), tolerance = 1e-13)
  expect_error(.numerics_cpp(20L, 1), "0 < p < 1")
})

test_that("Bernoulli response under a Gaussian latent: Gauss-Hermite quadrature", {
  spec <- list(type = "binomial", q = 1L, y = numeric(0), trials = numeric(0))
  r <- .lik_response_cpp(spec, matrix(1.2), matrix(4), matrix(0, 0, 1), 0)
  ref <- integrate(function(f) plogis(f) * dnorm(f, 1.2, 2), -Inf, Inf)$value
  expect_equal(r$mean[1, 1], ref, tolerance = 1e-7)
  ref2 <- integrate(function(f) plogis(f)^2 * dnorm(f, 1.2, 2), -Inf, Inf)$value
  expect_equal(r$sd[1, 1]^2 + r$mean[1, 1]^2, ref2, tolerance = 1e-6)
})

test_that("predictions lie in [0, 1] and are sensible on separable data", {
  set.seed(5)
  x <- c(runif(20, -3, -0.5), runif(20, 0.5, 3))
  y <- rep(0:1, each = 20)
  fit <- augp_fit(cbind(x = x), y, control = augp_quick())
  p <- predict(fit, cbind(x = c(-2.5, -1, 1, 2.5)))
  expect_true(all(p >= 0 & p <= 1))
  expect_true(p[1] < 0.2 && p[4] > 0.8)
  expect_true(all(diff(p) > 0))
  expect_equal(as.character(predict(fit, cbind(x = c(-2, 2)), type = "class")), c("0", "1"))
  ci <- predict(fit, cbind(x = c(-2, 0, 2)), type = "link", se.fit = TRUE,
                interval = "credible")
  expect_named(ci, c("fit", "se.fit", "lwr", "upr"))
  expect_true(all(ci$lwr < ci$fit & ci$fit < ci$upr))
  expect_true(all(ci$se.fit > 0))
  cr <- predict(fit, cbind(x = c(-2, 0, 2)), interval = "credible", level = 0.9)
  expect_true(all(cr$lwr >= 0 & cr$upr <= 1 & cr$lwr <= cr$fit & cr$fit <= cr$upr))
  expect_equal(fitted(fit), unname(predict(fit)), tolerance = 1e-8)
})
