# Input checks and the returned structure of the engine.

test_that("the engine checks its inputs", {
  X <- matrix(1:4 / 4)
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1), rep(1, 3), kernel_se(), "vi", eng_fixed()),
               "one element per row")
  expect_error(eng_ns$augp_engine(X, c(2, 0, 1, 0), rep(1, 4), kernel_se(), "vi", eng_fixed()),
               "y <= trials")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), list(), "vi", eng_fixed()),
               "augp_kernel")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), kernel_se(lengthscale = c(1, 2)),
                                  "vi", eng_fixed()), "lengthscales")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), kernel_se(), "vi", eng_fixed(),
                                  mean0 = c(1, 2)), "mean0")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), kernel_se(), "vi",
                                  eng_fixed(maxit = -1)), "maxit")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), kernel_se(), "vi",
                                  eng_fixed(jitter = -1)), "jitter")
  expect_error(eng_ns$augp_engine(X, c(1, 0, 1, 0), rep(1, 4), kernel_se(), "mcmc",
                                  eng_fixed()), "arg")
})

test_that("the returned object follows the contract", {
  X <- matrix(seq(-1, 1, length.out = 10))
  y <- c(0, 0, 1, 0, 1, 1, 0, 1, 1, 1)
  v <- eng_ns$augp_engine(X, y, rep(1, 10), kernel_se(), "vi", list(threads = 1))
  expect_s3_class(v, "augp_engine")
  for (nm in c("kernel", "X", "y", "trials", "method", "mean", "var", "elbo", "converged",
               "jitter", "jitter_increased", "mean0", "alpha", "omega")) {
    expect_true(nm %in% names(v), info = nm)
  }
  expect_null(v$draws)
  expect_length(v$mean, 10)
  expect_true(all(v$var > 0))
  expect_false(v$jitter_increased)
  g <- eng_ns$augp_engine(X, y, rep(1, 10), kernel_se(), "gibbs",
                          eng_fixed(iter = 17, warmup = 3, chains = 2, thin = 2), seed = 1)
  expect_equal(dim(g$draws), c(7L, 2L, 10L))
  expect_length(g$elbo, 0)
  p <- eng_ns$augp_engine_predict(g, matrix(c(0.05, 2)), draws = TRUE)
  expect_equal(dim(p$draws), c(14L, 2L))
  expect_error(eng_ns$augp_engine_predict(g, matrix(0, 1, 2)), "columns")
  msgs <- capture_messages(eng_ns$augp_engine(X, y, rep(1, 10), kernel_se(), "gibbs",
                                               eng_fixed(iter = 20, warmup = 0, chains = 1,
                                                         verbose = TRUE), seed = 1))
  expect_true(any(grepl("Gibbs sampling", msgs)))
})
