# Progress (verbose = TRUE): only messages, never printed output; the fit reaches
# 100%; results do not depend on progress reporting or the thread count.
pg_ns <- asNamespace("augmentedGP")

pg_data <- function(n = 30, seed = 2) {
  set.seed(seed)
  x <- matrix(stats::rnorm(2 * n), n)
  list(x = x, y = factor(x[, 1] + stats::rnorm(n, sd = 0.5) > 0, labels = c("no", "yes")))
}

# Messages and printed output of `expr` (warnings muffled).
pg_capture <- function(expr) {
  msgs <- NULL
  out <- utils::capture.output(
    msgs <- testthat::capture_messages(suppressWarnings(expr)))
  list(out = out, msgs = msgs)
}

test_that("verbose VI fits report through messages only and end at 100%", {
  d <- pg_data()
  withr::local_options(augmentedGP.progress_bar = FALSE)
  r <- pg_capture(augp_fit(d$x, d$y, control = augp_control(verbose = TRUE, threads = 1)))
  expect_identical(r$out, character(0))
  expect_match(r$msgs[1], "augp: variational inference on 30 observations")
  expect_true(any(grepl("hyperparameter search", r$msgs)))
  expect_match(r$msgs[length(r$msgs)], "augp: done \\(100%\\)")
  # a few lines at most without a bar
  expect_lte(length(r$msgs), 5)
  expect_identical(pg_ns$progress_state$last, 1)
  expect_null(pg_ns$progress_active())
  # silent when not verbose
  r0 <- pg_capture(augp_fit(d$x, d$y, control = augp_control(threads = 1)))
  expect_identical(r0$out, character(0))
  expect_length(r0$msgs, 0)
})

test_that("the cli bar goes to messages and reaches 100%", {
  d <- pg_data()
  withr::local_options(augmentedGP.progress_bar = TRUE, cli.progress_show_after = 0)
  r <- pg_capture(augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                           control = augp_control(verbose = TRUE, threads = 1, iter = 40)))
  expect_identical(r$out, character(0))
  expect_true(any(grepl("100%", r$msgs)))
  expect_match(r$msgs[length(r$msgs)], "augp: done")
  expect_null(pg_ns$progress_active())
})

test_that("Gibbs draws are identical with verbose on or off and 1 or 2 threads", {
  d <- pg_data()
  withr::local_options(augmentedGP.progress_bar = FALSE)
  fit <- function(verbose, threads) {
    suppressMessages(suppressWarnings(augp_fit(
      d$x, d$y, method = "gibbs", seed = 3,
      control = augp_control(verbose = verbose, threads = threads, iter = 30, chains = 2))))
  }
  ref <- fit(FALSE, 1)$engine$draws
  expect_identical(fit(TRUE, 1)$engine$draws, ref)
  expect_identical(fit(FALSE, 2)$engine$draws, ref)
  expect_identical(fit(TRUE, 2)$engine$draws, ref)
  # the callback is invoked with the iterations done, up to the total
  seen <- NULL
  eng <- pg_ns$augp_engine(d$x, as.numeric(d$y == "yes"), rep(1, 30), kernel_se(), "gibbs",
                           list(learn_hyper = FALSE, iter = 30, warmup = 10, threads = 1),
                           seed = 3)
  r <- pg_ns$.gp_gibbs_cpp(pg_ns$engine_specs(kernel_se()), d$x, eng$lik, 0,
                           matrix(0, 30, 1), NULL, 10L, 20L, 1L, 0:1, 2L, pg_ns$new_seed(3), 1L, 1e-6,
                           function(done, total) seen <<- rbind(seen, c(done, total)))
  expect_identical(r$draws, eng$draws)
  expect_equal(seen[nrow(seen), ], c(30, 30))
  expect_true(all(diff(seen[, 1]) > 0))
})

test_that("verbose engine calls report through messages, not printed output", {
  d <- pg_data(12)
  withr::local_options(augmentedGP.progress_bar = FALSE)
  r <- pg_capture(pg_ns$augp_engine(d$x, as.numeric(d$y == "yes"), rep(1, 12), kernel_se(), "gibbs",
                                    list(learn_hyper = FALSE, iter = 20, warmup = 0, chains = 1,
                                         threads = 1, verbose = TRUE), seed = 1))
  expect_identical(r$out, character(0))
  expect_true(any(grepl("Gibbs sampling", r$msgs)))
  expect_match(r$msgs[length(r$msgs)], "done \\(100%\\)")
})

test_that("verbose SVI fits report through messages, reach 100% and give the same fit", {
  set.seed(4)
  n <- 400
  x <- matrix(stats::rnorm(2 * n), n)
  y <- factor(x[, 1] + stats::rnorm(n, sd = 0.5) > 0, labels = c("no", "yes"))
  withr::local_options(augmentedGP.progress_bar = FALSE)
  ctl <- function(v) augp_control(batch_size = 100, svi_epochs = 2, hyper_maxit = 3,
                                  hyper_subsample = 100, threads = 1, verbose = v)
  r <- pg_capture(f1 <- augp_fit(x, y, inducing = 8, control = ctl(TRUE), seed = 1))
  expect_identical(r$out, character(0))
  expect_true(any(grepl("stochastic variational inference", r$msgs)))
  expect_match(r$msgs[length(r$msgs)], "augp: done \\(100%\\)")
  f0 <- suppressWarnings(augp_fit(x, y, inducing = 8, control = ctl(FALSE), seed = 1))
  expect_identical(f1$engine$elbo, f0$engine$elbo)
  expect_identical(f1$engine$state, f0$engine$state)
  # with the bar the SVI steps move it through the callback
  withr::local_options(augmentedGP.progress_bar = TRUE, cli.progress_show_after = 0)
  r <- pg_capture(augp_fit(x, y, inducing = 8, control = ctl(TRUE), seed = 1))
  expect_identical(r$out, character(0))
  expect_true(any(grepl("100%", r$msgs)))
})

test_that("a failing verbose fit leaves no reporter running", {
  withr::local_options(augmentedGP.progress_bar = FALSE)
  # an error inside the fit, injected into the variational stage
  d <- pg_data(12)
  suppressMessages(trace("engine_vi", quote(stop("injected failure")), where = pg_ns, print = FALSE))
  on.exit(suppressMessages(untrace("engine_vi", where = pg_ns)), add = TRUE)
  expect_error(suppressMessages(augp_fit(d$x, d$y, control = augp_control(verbose = TRUE))),
               "injected failure")
  expect_null(pg_ns$progress_active())
})
