test_that("bad predictors give errors naming the argument", {
  d <- augp_toy()
  d2 <- d
  d2$x1[3] <- Inf
  expect_error(augp(y ~ x1 + x2, d2, control = augp_quick()), "`data`.*x1.*Inf")
  d3 <- d
  d3$x1[3] <- NA
  expect_error(augp(y ~ x1 + x2, d3, na.action = na.pass, control = augp_quick()),
               "`data`.*x1.*NA")
  expect_error(augp_fit(matrix(c(1, NA, 3, 4), 2), c(0, 1), control = augp_quick()),
               "`x`.*NA")
  expect_error(augp_fit(matrix("a", 4, 1), c(0, 1, 0, 1)), "`x` must be a numeric")
  expect_error(augp_fit(data.frame(a = letters[1:4]), c(0, 1, 0, 1)), "`x` column")
  expect_error(augp(y ~ x1, d[1, ], control = augp_quick()), "at least 2")
  expect_error(augp_fit(matrix(1:3, 3), c(0, 1)), "`y` has 2 observations")
})

test_that("response problems give clear errors", {
  d <- augp_toy()
  one <- d
  one$y[] <- "pos"
  expect_error(augp(y ~ x1, one, control = augp_quick()), "`y`.*only one class")
  expect_error(augp(g ~ x1, d, likelihood = bernoulli_logit(), control = augp_quick()),
               "`y`.*3 classes.*bernoulli_logit")
  expect_error(augp_fit(cbind(d$x1), c(0, 2, rep(0:1, 19)), likelihood = bernoulli_logit()), "`y`.*0/1")
  cnt <- data.frame(x = 1:6, s = c(1, 2, -1, 3, 0, 2), f = c(2, 1, 3, 0, 2, 1))
  expect_error(augp(cbind(s, f) ~ x, cnt, control = augp_quick()), "`y`.*non-negative")
  cnt$s[3] <- 1.5
  expect_error(augp(cbind(s, f) ~ x, cnt, control = augp_quick()), "`y`.*whole numbers")
  expect_error(augp(y ~ x1, d, likelihood = "logit"), "`likelihood` must be")
})

test_that("weights, kernel, inducing, control and seed are checked", {
  d <- augp_toy()
  expect_error(augp(y ~ x1, d, weights = rep(0.5, 40), control = augp_quick()),
               "`weights`.*whole numbers")
  expect_error(augp(y ~ x1, d, weights = rep(-1, 40), control = augp_quick()),
               "`weights`")
  expect_error(augp(y ~ x1, d, inducing = 10, method = "gibbs"), "`inducing`.*method = \"vi\" only")
  expect_error(augp_fit(cbind(d$x1), d$y, inducing = 41), "`inducing`")
  expect_error(augp(y ~ x1, d, kernel = "se"), "`kernel` must be")
  expect_error(augp(y ~ x1, d, seed = "a"), "`seed`")
  expect_error(augp(y ~ x1, d, control = list(nope = 1)), "`control`.*nope")
  expect_error(augp(~ x1, d), "`formula`.*response")
  expect_error(augp(y ~ 1, d), "`formula`.*predictor")
  expect_error(augp("y ~ x", d), "`formula` must be")
})

test_that("augp_control() validates every setting", {
  expect_s3_class(augp_control(), "augp_control")
  expect_error(augp_control(maxit = 0), "`maxit`")
  expect_error(augp_control(tol = -1), "`tol`")
  expect_error(augp_control(learn_hyper = NA), "`learn_hyper`")
  expect_error(augp_control(iter = 10, warmup = 10), "`warmup`")
  expect_error(augp_control(thin = 0), "`thin`")
  expect_error(augp_control(chains = 1.5), "`chains`")
  expect_error(augp_control(threads = 0), "`threads`")
  expect_error(augp_control(jitter = -1), "`jitter`")
  expect_error(augp_control(verbose = "yes"), "`verbose`")
  expect_error(augp_control(standardise = 1), "`standardise`")
  expect_error(augp_control(full_batch_max = -1), "`full_batch_max`")
  expect_error(augp_control(svi_iter = 0), "`svi_iter`")
  expect_error(augp_control(hyper_subsample = 2.5), "`hyper_subsample`")
  expect_error(augp_control(final_elbo = "no"), "`final_elbo`")
  expect_error(augp_control(block_size = 0), "`block_size`")
  expect_error(augp_control(step_kappa = 0.5), "`step_kappa`")
  expect_error(augp_control(parallel = "cluster"), "`parallel`")
  expect_equal(augp_control(parallel = "fut")$parallel, "future")
  expect_output(print(augp_control()), "augp_control")
})

test_that("a partial list of settings is completed with augp_control()'s defaults", {
  ns <- asNamespace("augmentedGP")
  ctl <- ns$as_augp_control(list(iter = 40, tol = 1e-9, svi_iter = 5))
  full <- augp_control(iter = 40, tol = 1e-9, svi_iter = 5)
  expect_identical(ctl, full)
  expect_equal(ctl$warmup, 10)  # floor(iter / 4)
  expect_equal(ns$control_kept_draws(augp_control(iter = 45, warmup = 20, thin = 2)), 12)
  expect_identical(ns$as_augp_control(NULL), augp_control())
  expect_error(ns$as_augp_control(list(maxit = 0)), "`control\\$maxit`")
  expect_error(ns$as_augp_control(list(sparse_jitter = 1)), "`control`.*sparse_jitter")
})

test_that("iter counts Gibbs iterations with warm-up in the engine and the front end alike", {
  set.seed(3)
  x <- matrix(rnorm(40), 20)
  y <- factor(x[, 1] > 0, labels = c("no", "yes"))
  ctl <- augp_control(learn_hyper = FALSE, iter = 45, warmup = 20, thin = 2, chains = 2,
                      threads = 1)
  fit <- augp_fit(x, y, method = "gibbs", control = ctl, seed = 1)
  expect_equal(dim(fit$engine$draws), c(12L, 2L, 20L))
  eng <- asNamespace("augmentedGP")$augp_engine(
    fit$x, as.numeric(y == "yes"), rep(1, 20), kernel_se(), "gibbs",
    control = list(learn_hyper = FALSE, iter = 45, warmup = 20, thin = 2, threads = 1),
    seed = 1)
  expect_equal(dim(eng$draws), c(12L, 2L, 20L))
})

test_that("zero-variance predictors are dropped with a warning", {
  d <- augp_toy()
  d$k <- 3
  expect_warning(fit <- augp(y ~ x1 + k, d, control = augp_quick()), "'k'.*zero variance")
  expect_equal(colnames(fit$x), "x1")
  expect_length(predict(fit, d[1:3, ]), 3)
})

test_that("duplicate rows work", {
  d <- augp_toy()
  dd <- rbind(d, d[1:10, ])
  fit <- suppressWarnings(augp(y ~ x1 + x2, dd, control = augp_quick()))
  p <- predict(fit)
  expect_true(all(is.finite(p)))
  expect_true(all(p >= 0 & p <= 1))
})
