# inducing = "auto": exact GP while q n^3 is small, sparse above; overrides; print.

test_that("the automatic rule keeps small problems exact and scales with the latents", {
  # the limit is q n^3 <= AUTO_EXACT_N^3
  lim <- augmentedGP:::AUTO_EXACT_N
  expect_true(augmentedGP:::auto_exact(lim, 1L))
  expect_false(augmentedGP:::auto_exact(lim + 1, 1L))
  expect_true(augmentedGP:::auto_exact(floor(lim / 6^(1 / 3)), 6L))
  expect_false(augmentedGP:::auto_exact(ceiling(lim / 6^(1 / 3)) + 1, 6L))
  # more latent columns, smaller exact limit
  expect_true(augmentedGP:::auto_exact(1000, 1L))
  expect_false(augmentedGP:::auto_exact(1000, 26L))
  # m grows with n, within [100, 400 / q^(1/4)], with a pass over the data of at most
  # about 1e10 flops (q n m^2) unless that leaves fewer than 100, never above n
  m <- vapply(c(500, 5000, 50000, 5e6), augmentedGP:::auto_inducing_m, 1L, q = 1L)
  expect_equal(m, c(100L, 212L, 400L, 100L))
  expect_equal(augmentedGP:::auto_inducing_m(1e5, 6L), 129L)
  expect_equal(augmentedGP:::auto_inducing_m(4435, 6L), 200L)
  expect_lte(augmentedGP:::auto_inducing_m(1e6, 29L), 400 / 29^(1 / 4))
  expect_equal(augmentedGP:::auto_inducing_m(50, 1L), 50L)
})

test_that("choose_inference asks for the likelihood's latents and respects overrides", {
  ch <- augmentedGP:::choose_inference
  ctl <- augp_control()
  b <- bernoulli_logit()
  ls <- logistic_softmax()
  k <- kernel_se()
  expect_null(ch("auto", 1500, 1L, "vi", b, k, ctl)$inducing)
  expect_equal(ch("auto", 1500, 1L, "vi", b, k, ctl)$info$engine, "exact")
  sp <- ch("auto", 1500, 6L, "vi", ls, k, ctl)
  expect_equal(sp$inducing, augmentedGP:::auto_inducing_m(1500, 6L))
  expect_equal(sp$info[c("choice", "engine")], list(choice = "auto", engine = "sparse"))
  # overrides: "exact" and NULL give the exact GP, a number or matrix the sparse GP
  for (ex in list("exact", NULL)) {
    o <- ch(ex, 5000, 6L, "vi", ls, k, ctl)
    expect_null(o$inducing)
    expect_equal(o$info[c("choice", "engine")], list(choice = "given", engine = "exact"))
  }
  expect_equal(ch(30, 100, 1L, "vi", b, k, ctl)$inducing, 30)
  Z <- matrix(0, 5, 2)
  expect_equal(ch(Z, 100, 1L, "vi", b, k, ctl)$info$m, 5L)
  # fits only the exact engine does stay exact, with a message
  expect_message(o <- ch("auto", 5000, 1L, "gibbs", b, k, ctl), "no sparse Gibbs sampler")
  expect_null(o$inducing)
  # likelihoods that learn parameters go sparse too (the sparse engine learns them)
  o <- expect_silent(ch("auto", 5000, 1L, "vi", student_t(), k, ctl))
  expect_equal(o$info$engine, "sparse")
  expect_message(o <- ch("auto", 5000, 3L, "vi", ls, k, augp_control(shared_hyper = FALSE)),
                 "share one kernel")
  expect_null(o$inducing)
  # below the limit: no message
  expect_silent(ch("auto", 100, 1L, "gibbs", b, k, ctl))
})

test_that("bad `inducing` values are errors naming the argument", {
  d <- augp_toy()
  for (bad in list("sparse", NA_character_, c("auto", "exact"), -1, 2.5, TRUE)) {
    expect_error(augp(y ~ x1 + x2, data = d, inducing = bad, control = augp_quick()),
                 "`inducing`")
  }
  expect_error(augp(y ~ x1 + x2, data = d, inducing = 10, method = "gibbs"),
               "method = \"vi\" only")
})

test_that("small fits stay exact by default and print says so", {
  d <- augp_toy()
  fit <- augp(y ~ x1 + x2, data = d, control = augp_quick())
  expect_false(inherits(fit$engine, "augp_sparse_engine"))
  expect_equal(fit$inference[c("choice", "engine", "n", "q")],
               list(choice = "auto", n = 40L, q = 1L, engine = "exact")[c("choice", "engine", "n", "q")])
  out <- capture.output(print(fit))
  expect_true(any(grepl("inducing = \"auto\" for n = 40 and 1 latent function: exact GP", out, fixed = TRUE)))
  expect_true(any(grepl("exact GP", capture.output(print(summary(fit))), fixed = TRUE)))
  # the same fit as inducing = "exact", which prints no choice line
  fe <- augp(y ~ x1 + x2, data = d, inducing = "exact", control = augp_quick())
  expect_equal(fe$engine$mean, fit$engine$mean)
  expect_false(any(grepl("inducing = \"auto\"", capture.output(print(fe)), fixed = TRUE)))
  # a given number of inducing points is respected and not called automatic
  fs <- augp(y ~ x1 + x2, data = d, inducing = 10, control = augp_quick())
  expect_s3_class(fs$engine, "augp_sparse_engine")
  expect_equal(nrow(fs$engine$Z), 10L)
  expect_false(any(grepl("inducing = \"auto\"", capture.output(print(fs)), fixed = TRUE)))
})

test_that("the latent count comes from the likelihood (classes vs sticks)", {
  fit <- augp(Species ~ Petal.Length, data = iris, control = augp_quick())
  expect_equal(fit$inference$q, fit$q)
  expect_equal(fit$inference$engine, "exact")
  counts <- data.frame(x = 1:30)
  set.seed(2)
  counts$Y <- t(rmultinom(30, 5, c(0.2, 0.3, 0.5)))
  fsb <- augp(Y ~ x, data = counts, likelihood = stick_breaking(), control = augp_quick())
  expect_equal(fsb$inference$q, 2L)
  expect_equal(fsb$inference$q, fsb$q)
})

test_that("above the limit the default fits a sparse GP and print says so", {
  # one input, so the sparse fit is quick; n just above the one-latent limit
  n <- augmentedGP:::AUTO_EXACT_N + 100
  set.seed(5)
  d <- data.frame(x = runif(n, -3, 3))
  d$y <- factor(rbinom(n, 1, plogis(2 * sin(2 * d$x))))
  # a fixed kernel keeps it quick: the choice does not depend on the search
  fit <- augp(y ~ x, data = d, kernel = kernel_se(variance = 4, lengthscale = 0.5),
              control = augp_quick(learn_hyper = FALSE))
  expect_s3_class(fit$engine, "augp_sparse_engine")
  m <- augmentedGP:::auto_inducing_m(n, 1L)
  expect_equal(nrow(fit$engine$Z), m)
  expect_equal(fit$inference[c("choice", "engine", "m")], list(choice = "auto", engine = "sparse", m = m))
  out <- capture.output(print(fit))
  expect_true(any(grepl(sprintf("for n = %d and 1 latent function: sparse GP, m = %d", n, m), out,
                        fixed = TRUE)))
  expect_true(any(grepl("inducing = \"exact\" fits the exact GP", capture.output(print(summary(fit))),
                        fixed = TRUE)))
  # the fit is sensible: the latent function follows 2 sin(2x)
  xs <- data.frame(x = c(-0.8, 0.8))
  p <- predict(fit, xs, type = "response")
  expect_lt(p[1], 0.3)
  expect_gt(p[2], 0.7)
})

test_that("an exact GP too large for memory is an error naming `inducing`, before allocation", {
  cm <- augmentedGP:::check_exact_memory
  expect_equal(augmentedGP:::exact_bytes(1e4, 1L), 2 * 8 * 1e8)
  expect_error(cm(1e5, 1L, "a sparse GP would do", available = 1e9),
               "`inducing`.*n = 100000.*160.0 GB.*1.0 GB.*a sparse GP would do")
  expect_silent(cm(1e5, 1L, "x", available = NA_real_))
  expect_silent(cm(1e3, 1L, "x", available = 1e9))
  skip_if(is.na(augmentedGP:::memory_available()))
  ch <- augmentedGP:::choose_inference
  b <- bernoulli_logit()
  k <- kernel_se()
  ctl <- augp_control()
  expect_error(ch("auto", 1e7, 1L, "gibbs", b, k, ctl), "`inducing`.*no sparse Gibbs sampler")
  expect_error(ch("exact", 1e7, 1L, "vi", b, k, ctl), "`inducing`.*inducing points")
  expect_equal(ch("auto", 1e7, 1L, "vi", b, k, ctl)$info$engine, "sparse")
})
