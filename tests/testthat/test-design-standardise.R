# The design's column statistics and standardisation (C++, one pass per column).
ds_ns <- asNamespace("augmentedGP")

test_that("column statistics and the standardised design match R's", {
  set.seed(5)
  x <- cbind(stats::rnorm(50), 1e6 + stats::runif(50), 3, seq_len(50))
  st <- ds_ns$.design_col_stats_cpp(x)
  expect_true(all(st$finite))
  expect_equal(st$mean, unname(colMeans(x)), tolerance = 1e-12)
  expect_equal(st$sd, unname(apply(x, 2, stats::sd)), tolerance = 1e-9)
  x2 <- x
  x2[3, 2] <- NA
  x2[7, 4] <- Inf
  expect_identical(ds_ns$.design_col_stats_cpp(x2)$finite, c(TRUE, FALSE, TRUE, FALSE))
  s <- suppressWarnings(ds_ns$standardise_design(x, TRUE, c("a", "b", "c", "d")))
  expect_identical(s$dropped, "c")
  expect_identical(colnames(s$x), c("a", "b", "d"))
  ref <- scale(x[, -3])
  expect_s3_class(s$x, "augp_design")
  expect_equal(dim(s$x), c(50L, 3L))
  expect_identical(colnames(s$x), c("a", "b", "d"))
  expect_equal(unname(as.matrix(s$x)), unname(ref[, ]), tolerance = 1e-9)
  expect_identical(s$x[c(2, 9), ], as.matrix(s$x)[c(2, 9), ])
  expect_identical(s$x[4:6, 2, drop = TRUE], as.matrix(s$x)[4:6, 2])
  expect_equal(unname(s$centre), unname(attr(ref, "scaled:center")), tolerance = 1e-12)
  expect_warning(ds_ns$standardise_design(x, TRUE, letters[1:4]), "'c' have zero variance")
  expect_error(ds_ns$.design_standardise_cpp(x, 5L, 0, 1), "out of range")
})

test_that("an unnamed design keeps its data and gets the names x1, x2, ...", {
  set.seed(6)
  x <- matrix(stats::rnorm(120), 60, 2)
  y <- as.integer(x[, 1] + stats::rnorm(60) > 0)
  fit <- augp_fit(x, y, likelihood = bernoulli_logit(),
                  control = augp_control(threads = 2))
  expect_null(colnames(x))
  expect_identical(fit$x_names, c("x1", "x2"))
  expect_identical(colnames(fit$x), c("x1", "x2"))
  expect_identical(colnames(model.matrix(fit)), c("x1", "x2"))
  expect_equal(unname(model.matrix(fit)), x)
  p1 <- predict(fit, newdata = x[1:3, ], type = "response")
  p2 <- predict(fit, newdata = `colnames<-`(x[1:3, ], c("x1", "x2")), type = "response")
  expect_equal(p1, p2)
  expect_error(augp_fit(cbind(x, c(NA, x[-1, 1])), y, likelihood = bernoulli_logit()),
               "x3")
})

test_that("sparse fits read a standardised design in place exactly as its copy", {
  # The C++ engine standardises each block's rows as it reads them; the result must be
  # the fit of the standardised copy, bit for bit, in full batches and minibatches.
  set.seed(8)
  raw <- cbind(stats::rnorm(300, 5, 2), 7, stats::runif(300, -1, 3))
  y <- as.integer(raw[, 1] - 5 + raw[, 3] + stats::rnorm(300) > 1)
  d <- suppressWarnings(ds_ns$standardise_design(raw, TRUE, c("u", "v", "w")))$x
  k <- kernel_se(lengthscale = 1)
  for (bs in list(NULL, 64)) {
    ctl <- augp_control(threads = 2, batch_size = bs, svi_iter = 40, hyper_maxit = 5)
    a <- ds_ns$augp_sparse_engine(d, y, rep(1, 300), kernel = k, inducing = 12, control = ctl, seed = 3)
    b <- ds_ns$augp_sparse_engine(as.matrix(d), y, rep(1, 300), kernel = k, inducing = 12,
                                  control = ctl, seed = 3)
    expect_identical(a$elbo, b$elbo)
    expect_identical(a$state, b$state)
    expect_identical(a$Z, b$Z)
  }
  expect_warning(fit <- augp_fit(raw, y, likelihood = bernoulli_logit(), inducing = 12, seed = 3,
                                 control = augp_control(threads = 2)), "'x2' have zero variance")
  expect_s3_class(fit$x, "augp_design")
  expect_identical(colnames(fit$x), c("x1", "x3"))
  p_train <- predict(fit, type = "response")
  p_new <- predict(fit, newdata = raw, type = "response")
  expect_equal(unname(p_train), unname(p_new), tolerance = 1e-10)
  expect_equal(dim(simulate(fit, nsim = 2, seed = 1)), c(300L, 2L))
})

test_that("Bernoulli responses are checked without copies and give clear errors", {
  enc <- ds_ns$encode_response
  lk <- bernoulli_logit()
  r <- enc(lk, c(0L, 1L, 1L))
  expect_identical(r$y, c(0, 1, 1))
  expect_identical(r$trials, c(1, 1, 1))
  expect_identical(r$keep, rep(TRUE, 3))
  rw <- enc(lk, c(0, 1, 1), weights = c(2, 0, 1))
  expect_identical(rw$y, c(0, 0, 1))
  expect_identical(rw$trials, c(2, 0, 1))
  expect_identical(rw$keep, c(TRUE, FALSE, TRUE))
  expect_error(enc(lk, c(0L, 2L, 1L)), "must be 0/1")
  expect_error(enc(lk, c(0, 0.5, 1)), "must be 0/1")
  expect_error(enc(lk, c(0, Inf, 1)), "must be 0/1")
  expect_error(enc(lk, c(1L, 1L)), "only one class")
  expect_error(enc(lk, integer(0)), "no observations")
})
