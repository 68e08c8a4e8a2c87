test_that("formula and newdata round trip with factors, subset and na.action", {
  d <- augp_toy()
  fit <- augp(y ~ x1 + g, d, control = augp_quick())
  expect_s3_class(fit, "augp")
  expect_equal(colnames(fit$x), c("x1", "gb", "gc"))
  expect_equal(fit$xlevels$g, c("a", "b", "c"))
  # predict on the training data frame equals the fitted values
  expect_equal(unname(predict(fit, d)), fitted(fit), tolerance = 1e-6)
  # newdata with a factor holding only some levels, and shuffled columns
  nd <- data.frame(g = factor(c("c", "a")), x1 = c(0.3, -1))
  p <- predict(fit, nd)
  ref <- predict(fit, rbind(d[1:2, ], transform(d[1:2, ], x1 = c(0.3, -1),
                                                 g = factor(c("c", "a"), levels = levels(d$g))))[3:4, ])
  expect_equal(unname(p), unname(ref), tolerance = 1e-8)
  # character values of a factor predictor work too
  expect_equal(unname(predict(fit, data.frame(x1 = 0.3, g = "c"))), unname(p[1]),
               tolerance = 1e-8)

  fs <- augp(y ~ x1, d, subset = x2 > -1, control = augp_quick())
  expect_equal(nobs(fs), sum(d$x2 > -1))

  dn <- d
  dn$x1[c(2, 5)] <- NA
  fn <- augp(y ~ x1 + x2, dn, control = augp_quick())
  expect_equal(nobs(fn), 38)
  expect_s3_class(fn$na.action, "omit")
  pn <- predict(fn, dn[1:6, ])
  expect_true(is.na(pn[2]) && is.na(pn[5]))
  expect_false(anyNA(pn[-c(2, 5)]))
})

test_that("newdata problems give clear errors", {
  d <- augp_toy()
  fit <- augp(y ~ x1 + g, d, control = augp_quick())
  expect_error(predict(fit, d["x1"]), "`newdata` is missing column.*'g'")
  expect_error(predict(fit, data.frame(x1 = 1, g = "zzz")),
               "`newdata` has level.*'zzz'.*factor 'g'")
  expect_error(predict(fit, data.frame(x1 = Inf, g = "a")), "`newdata`.*Inf")
  expect_error(predict(fit, data.frame(x1 = NA_real_, g = "a")), "`newdata` has no complete row")
  mc <- augp(Species ~ Sepal.Length, iris, control = augp_quick())
  expect_error(predict(mc, data.frame(Sepal.Length = c(NA, NA))), "`newdata` has no complete row")
  pm <- predict(mc, data.frame(Sepal.Length = c(NA, 5)))
  expect_true(all(is.na(pm[1, ])) && isTRUE(all.equal(sum(pm[2, ]), 1)))
  expect_error(predict(fit, d, type = "prob"), "should be one of")
  fm <- augp_fit(as.matrix(d[c("x1", "x2")]), d$y, control = augp_quick())
  expect_error(predict(fm, matrix(0, 2, 3)), "`newdata` has 3 column")
  expect_error(predict(fm, cbind(x1 = 1, x3 = 2)), "`newdata` is missing.*x2")
  expect_length(predict(fm, cbind(x2 = 1, x1 = 2)), 1)
})

test_that("binomial responses and frequency weights agree", {
  set.seed(3)
  x <- seq(-2, 2, length.out = 15)
  n <- rep(4, 15)
  s <- rbinom(15, n, plogis(1.5 * x))
  cnt <- data.frame(x = x, s = s, f = n - s)
  fb <- augp(cbind(s, f) ~ x, cnt, control = augp_quick(learn_hyper = FALSE))
  expect_identical(fb$likelihood$name, "binomial_logit")
  expect_equal(fb$trials, n)
  # the same data as Bernoulli rows with frequency weights
  long <- data.frame(x = rep(x, 2), y = rep(c(1, 0), each = 15), w = c(s, n - s))
  fw <- augp(y ~ x, long, weights = w, control = augp_quick(learn_hyper = FALSE))
  expect_equal(sum(fw$trials), sum(n))
  p1 <- predict(fb, data.frame(x = c(-1, 0, 1)))
  p2 <- predict(fw, data.frame(x = c(-1, 0, 1)))
  expect_equal(unname(p1), unname(p2), tolerance = 0.05)
})

test_that("the likelihood is chosen from the response", {
  d <- augp_toy()
  expect_identical(augp(y ~ x1, d, control = augp_quick())$likelihood$name, "bernoulli_logit")
  d$yl <- d$y == "pos"
  fl <- augp(yl ~ x1, d, control = augp_quick())
  expect_identical(fl$levels, c("FALSE", "TRUE"))
  expect_s3_class(predict(fl, d[1:3, ], type = "class"), "factor")
  d$y01 <- as.numeric(d$yl)
  expect_identical(augp(y01 ~ x1, d, control = augp_quick())$levels, c("0", "1"))
  expect_output(print(bernoulli_logit()), "bernoulli_logit")
})
