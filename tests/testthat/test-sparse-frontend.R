# augp()/augp_fit() with inducing points: the sparse engine behind the usual methods.
test_that("augp_fit with inducing points fits, predicts and summarises", {
  set.seed(21)
  n <- 300
  x <- matrix(stats::rnorm(n * 2, sd = 3), n, dimnames = list(NULL, c("a", "b")))
  y <- factor(stats::rbinom(n, 1, stats::plogis(sin(x[, 1]) * 3)), labels = c("no", "yes"))
  fit <- suppressWarnings(augp_fit(x, y, inducing = 20, seed = 1,
                                   control = augp_control(hyper_maxit = 5, threads = 2)),
                          classes = "augp_convergence_warning")
  expect_s3_class(fit$engine, "augp_sparse_engine")
  expect_equal(nrow(fit$engine$Z), 20L)
  p <- predict(fit, x[1:7, ], type = "response")
  expect_length(p, 7)
  expect_true(all(p > 0 & p < 1))
  expect_equal(as.numeric(predict(fit, x, type = "response")), as.numeric(fitted(fit)),
               tolerance = 1e-8)
  expect_gt(mean((fitted(fit) > 0.5) == (y == "yes")), 0.7)
  expect_true(is.finite(elbo(fit)))
  expect_output(print(summary(fit)))
  # a matrix of inducing locations on the original predictor scale
  Z <- x[seq(1, n, length.out = 15), ]
  fz <- augp_fit(x, y, inducing = Z, control = augp_control(learn_hyper = FALSE, threads = 2))
  expect_equal(fz$engine$Z, unname(sweep(sweep(Z, 2, fz$centre), 2, fz$scale, "/")),
               ignore_attr = TRUE)
  expect_error(augp_fit(x, y, inducing = 10, method = "gibbs"), "method = \"vi\" only")
  expect_error(augp_fit(x, y, inducing = x[1:5, 1, drop = FALSE]), "2 columns")
  expect_error(augp_fit(x, y, inducing = n + 1), "must not exceed")
})
