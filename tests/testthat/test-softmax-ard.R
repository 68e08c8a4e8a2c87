# augp_control(ard) for logistic-softmax fits: one lengthscale per input as an
# alternative, kept when its approximate leave-one-out predictive density (the cavity of
# the variational q(f), engine_cavity_loo()) beats the isotropic kernel's.
sa_ns <- asNamespace("augmentedGP")

test_that("the cavity of a Gaussian-site q(f) is the posterior without that site", {
  set.seed(3)
  n <- 7
  x <- matrix(stats::rnorm(n), n)
  K <- exp(-0.5 * outer(x[, 1], x[, 1], "-")^2 / 0.8) + diag(1e-3, n)
  m0 <- rep(0.3, n)
  kappa <- stats::rnorm(n)
  omega <- stats::runif(n, 0.1, 2)
  post <- function(keep) {
    S <- solve(solve(K) + diag(omega * keep, n))
    list(mean = drop(S %*% (solve(K, m0) + kappa * keep)), var = diag(S))
  }
  q_all <- post(rep(1, n))
  alpha <- solve(K, q_all$mean - m0)
  cav <- sa_ns$engine_cavity(q_all$mean, q_all$var, alpha, omega)
  for (i in seq_len(n)) {
    keep <- rep(1, n)
    keep[i] <- 0
    ref <- post(keep)
    expect_equal(cav$mean[i, 1], ref$mean[i], tolerance = 1e-6)
    expect_equal(cav$var[i, 1], ref$var[i], tolerance = 1e-6)
  }
})

# Three classes set by the first input alone; three more inputs are noise.
sa_data <- function(n = 120, seed = 1) {
  set.seed(seed)
  x <- matrix(stats::rnorm(4 * n), n, 4, dimnames = list(NULL, paste0("x", 1:4)))
  y <- factor(cut(x[, 1] + stats::rnorm(n, sd = 0.3), c(-Inf, -0.5, 0.5, Inf),
                  labels = c("a", "b", "c")))
  data.frame(x, y = y)
}

test_that("ard = \"auto\" (the default) keeps one lengthscale per input when it predicts better", {
  d <- sa_data()
  fit <- augp(y ~ ., data = d, seed = 1, control = augp_control(threads = 1))
  a <- fit$engine$ard
  expect_false(is.null(a))
  expect_identical(a$mode, "auto")
  expect_true(is.finite(a$loo_iso) && is.finite(a$loo_ard))
  expect_true(a$loo_ard > a$loo_iso)
  expect_true(a$chosen)
  ls <- fit$kernel$lengthscale
  expect_length(ls, 4)
  # the relevant input gets the shortest lengthscale by far
  expect_identical(which.min(ls), 1L)
  expect_gt(min(ls[-1]) / ls[1], 3)
  expect_match(paste(capture.output(print(fit)), collapse = "\n"),
               "one lengthscale per input \\(ARD\\); ARD's approximate leave-one-out")
  # the leave-one-out estimate is a sum over the n points: of the order of the test log loss
  expect_lt(-a$loo_ard / nrow(d), log(3))
})

test_that("ard = FALSE keeps the isotropic kernel; ard = TRUE always takes ARD", {
  d <- sa_data(90, seed = 2)
  f0 <- augp(y ~ ., data = d, seed = 1, control = augp_control(threads = 1, ard = FALSE))
  expect_null(f0$engine$ard)
  expect_length(f0$kernel$lengthscale, 1)
  f1 <- augp(y ~ ., data = d, seed = 1, control = augp_control(threads = 1, ard = TRUE))
  expect_true(f1$engine$ard$chosen)
  expect_length(f1$kernel$lengthscale, 4)
  # given lengthscales are the user's: no alternative
  f2 <- suppressMessages(augp(y ~ ., data = d, seed = 1, kernel = kernel_se(lengthscale = 2),
                              control = augp_control(threads = 1)))
  expect_null(f2$engine$ard)
  expect_length(f2$kernel$lengthscale, 1)
})

test_that("ARD choice: other likelihoods and sparse fits do not take it", {
  d <- sa_data(80, seed = 3)
  d$b <- d$y == "a"
  fb <- augp(b ~ x1 + x2 + x3 + x4, data = d, seed = 1, control = augp_control(threads = 1))
  expect_null(fb$engine$ard)
  expect_length(fb$kernel$lengthscale, 1)
  fs <- augp(y ~ x1 + x2 + x3 + x4, data = d, seed = 1, inducing = 20,
             control = augp_control(threads = 1))
  expect_null(fs$engine$ard)
})
