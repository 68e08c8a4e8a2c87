# Gibbs chains and VI restarts through the future framework equal sequential runs.
fu_ns <- asNamespace("augmentedGP")

fu_data <- function(n = 25, seed = 1) {
  set.seed(seed)
  X <- matrix(stats::rnorm(n * 2), n)
  list(X = X, y = stats::rbinom(n, 1, stats::plogis(2 * X[, 1])), n = n)
}

test_that("future-based Gibbs chains equal sequential chains for the same seed", {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  dd <- fu_data()
  run <- function(par) {
    fu_ns$augp_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), "gibbs",
                      control = list(learn_hyper = FALSE, iter = 40, warmup = 10, chains = 3,
                                     threads = 2, parallel = par), seed = 42)
  }
  seq_fit <- run("none")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  fut_seq <- run("future")
  expect_identical(dim(fut_seq$draws), c(30L, 3L, as.integer(dd$n)))
  expect_identical(fut_seq$draws, seq_fit$draws)
  future::plan(future::multisession, workers = 2)
  fut_ms <- run("future")
  expect_identical(fut_ms$draws, seq_fit$draws)
  expect_identical(fut_ms$mean, seq_fit$mean)
})

test_that("VI restarts give the same best fit sequentially and through future", {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  dd <- fu_data(40, seed = 2)
  run <- function(par) {
    fu_ns$augp_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), "vi",
                      control = list(restarts = 3, hyper_maxit = 3, threads = 1, parallel = par),
                      seed = 7)
  }
  a <- run("none")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  b <- run("future")
  expect_identical(a$elbo, b$elbo)
  expect_identical(a$kernel, b$kernel)
  one <- fu_ns$augp_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), "vi",
                           control = list(hyper_maxit = 3, threads = 1), seed = 7)
  # the best of three restarts (the first starts where the single fit starts) is no worse
  expect_gte(a$elbo[length(a$elbo)], one$elbo[length(one$elbo)] - 1e-8)
  expect_error(fu_ns$augp_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), "vi",
                                 control = list(parallel = "cluster")), "control\\$parallel")
  expect_error(fu_ns$augp_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), "vi",
                                 control = list(restarts = 0)), "control\\$restarts")
})
