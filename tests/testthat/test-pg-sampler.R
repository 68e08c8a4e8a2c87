test_that("PG draws match the exact mean and variance over the b x c grid", {
  set.seed(20261122)
  bs <- c(0.3, 0.5, 1, 1.5, 2, 2.7, 4, 8, 13, 14, 50, 200)
  cs <- c(0, 1e-8, 0.5, 2, 10, 50, 200, 1000)
  ntest <- length(bs) * length(cs)
  # two-sided normal quantile for a family-wise error of 1e-3 over 2 * ntest checks
  zcrit <- qnorm(1 - 1e-3 / (4 * ntest))
  for (b in bs) for (cc in cs) {
    n <- if (b >= 50) 4000 else 20000
    w <- rpg(n, b, cc, threads = 2)
    k2 <- pg_cumulant(2, b, cc)
    k4 <- pg_cumulant(4, b, cc)
    expect_equal(k2, pg_var(b, cc), tolerance = 1e-6)
    zm <- (mean(w) - pg_mean(b, cc)) / sqrt(k2 / n)
    # sampling sd of the sample variance: sqrt((mu4 - sigma^4) / n), mu4 = k4 + 3 k2^2
    zv <- (var(w) - k2) / sqrt((k4 + 2 * k2^2) / n)
    expect_lt(abs(zm), zcrit, label = sprintf("mean z-score at b=%g c=%g", b, cc))
    expect_lt(abs(zv), zcrit, label = sprintf("variance z-score at b=%g c=%g", b, cc))
    expect_true(all(w > 0))
  }
})

test_that("PG draws pass Kolmogorov-Smirnov tests against ppg", {
  set.seed(1)
  cases <- expand.grid(b = c(0.01, 0.2, 0.5, 1, 1.7, 3, 6.5, 20), c = c(0, 0.7, 4))
  p <- numeric(nrow(cases))
  for (i in seq_len(nrow(cases))) {
    w <- rpg(5000, cases$b[i], cases$c[i], threads = 2)
    p[i] <- suppressWarnings(
      ks.test(w, function(q) ppg(q, cases$b[i], cases$c[i]))$p.value)
  }
  # Bonferroni at family-wise level 1e-3
  expect_gt(min(p), 1e-3 / nrow(cases))
  # and the p-values themselves look uniform (a biased sampler piles them near 0)
  expect_gt(ks.test(p, "punif")$p.value, 1e-3)
})

test_that("the Laplace transform of the draws matches cosh^b(c/2) / cosh^b(sqrt(c^2/4 + t/2))", {
  set.seed(2)
  n <- 40000
  delta <- 1e-6
  bound <- sqrt(log(2 / delta) / (2 * n))  # Hoeffding, exp(-t w) in [0, 1]
  for (b in c(0.4, 1, 2.3, 7)) for (cc in c(0, 3)) {
    w <- rpg(n, b, cc, threads = 2)
    for (t in c(0.5, 2, 10, 40)) {
      expect_lt(abs(mean(exp(-t * w)) - pg_laplace(t, b, cc)), bound)
    }
  }
})

test_that("PG(b/2, c) + PG(b/2, c) has the law of PG(b, c)", {
  set.seed(3)
  for (b in c(0.6, 1.3, 5)) {
    cc <- 1.5
    s <- rpg(6000, b / 2, cc) + rpg(6000, b / 2, cc)
    w <- rpg(6000, b, cc)
    expect_gt(ks.test(s, w)$p.value, 1e-4)
    expect_gt(ks.test(s, function(q) ppg(q, b, cc))$p.value, 1e-4)
  }
})

test_that("the law is symmetric in c and continuous at c = 0", {
  set.seed(4)
  w_neg <- rpg(5000, 0.8, -2.5)
  expect_gt(ks.test(w_neg, function(q) ppg(q, 0.8, 2.5))$p.value, 1e-4)
  expect_equal(dpg(c(0.1, 0.3, 1), 1.7, -2), dpg(c(0.1, 0.3, 1), 1.7, 2), tolerance = 1e-13)
  x <- c(0.05, 0.2, 0.6, 2)
  expect_equal(dpg(x, 2.2, 1e-9), dpg(x, 2.2, 0), tolerance = 1e-12)
  expect_equal(ppg(x, 0.4, 1e-9), ppg(x, 0.4, 0), tolerance = 1e-12)
  expect_equal(pg_mean(3, 1e-5), 3 / 4, tolerance = 1e-9)
  expect_equal(pg_var(3, 1e-5), 3 / 24, tolerance = 1e-9)
  # the moment formulas are continuous across the series/closed-form switch points
  expect_equal(pg_var(1, 0.05 - 1e-12), pg_var(1, 0.05 + 1e-12), tolerance = 1e-11)
  expect_equal(pg_mean(1, 1e-3 - 1e-13), pg_mean(1, 1e-3 + 1e-13), tolerance = 1e-12)
})

test_that("very large b and c are handled exactly and without overflow", {
  set.seed(5)
  w <- rpg(200, 1e4, 0)
  expect_lt(abs(mean(w) - pg_mean(1e4, 0)) / sqrt(pg_var(1e4, 0) / 200), 5)
  w <- rpg(2000, 2.5, 1e4)
  expect_true(all(is.finite(w)) && all(w > 0))
  expect_lt(abs(mean(w) - pg_mean(2.5, 1e4)) / sqrt(pg_var(2.5, 1e4) / 2000), 5)
  w <- rpg(2000, 0.3, -5000)
  expect_lt(abs(mean(w) - pg_mean(0.3, 5000)) / sqrt(pg_var(0.3, 5000) / 2000), 5)
})

test_that("draws are reproducible from set.seed() and identical for 1 and 2 threads", {
  set.seed(42)
  a <- rpg(3000, c(0.5, 1, 2.5, 30), c(-1, 0, 3))
  set.seed(42)
  b1 <- rpg(3000, c(0.5, 1, 2.5, 30), c(-1, 0, 3), threads = 1)
  set.seed(42)
  b2 <- rpg(3000, c(0.5, 1, 2.5, 30), c(-1, 0, 3), threads = 2)
  expect_identical(a, b1)
  expect_identical(b1, b2)
  set.seed(43)
  expect_false(identical(a, rpg(3000, c(0.5, 1, 2.5, 30), c(-1, 0, 3))))
})

test_that("recycling follows rgamma's rules", {
  set.seed(6)
  expect_length(rpg(7, 1), 7)
  expect_length(rpg(c(1, 2, 3), 1), 3)
  expect_length(rpg(0, 1), 0)
  w <- rpg(4000, b = c(1, 100), c = 0)
  expect_gt(mean(w[c(FALSE, TRUE)]), 20 * mean(w[c(TRUE, FALSE)]))
})

test_that("the normal approximation is opt-in and close for large b", {
  set.seed(7)
  w <- rpg(20000, 200, 1, method = "normal")
  expect_lt(abs(mean(w) - pg_mean(200, 1)) / sqrt(pg_var(200, 1) / 20000), 5)
  expect_lt(suppressWarnings(ks.test(w, function(q) ppg(q, 200, 1))$statistic), 0.03)
})

test_that("bad input gives clear errors, never NaN or hangs", {
  expect_error(rpg(10, 0), "`b` must be > 0")
  expect_error(rpg(10, -1), "`b` must be > 0")
  expect_error(rpg(10, c(1, NA)), "`b` must not contain NA")
  expect_error(rpg(10, NaN), "`b` must not contain NA")
  expect_error(rpg(10, Inf), "`b` must be finite")
  expect_error(rpg(10, 1, NA), "`c` must not contain NA")
  expect_error(rpg(10, 1, Inf), "`c` must be finite")
  expect_error(rpg(-1, 1), "`n` must be")
  expect_error(rpg(NA, 1), "`n` must be")
  expect_error(rpg(2.5, 1), "`n` must be")
  expect_error(rpg(10, "a"), "`b` must be numeric")
  expect_error(rpg(10, 1, "a"), "`c` must be numeric")
  expect_error(rpg(10, numeric(0)), "`b` must not be empty")
  expect_error(rpg(10, 1, threads = 0), "`threads`")
  expect_error(rpg(10, 1, method = "saddle"), "should be one of")
  expect_error(dpg(1, 0), "`b` must be > 0")
  expect_error(dpg("x", 1), "`x` must be numeric")
  expect_error(ppg(1, 1, NA), "`c` must not contain NA")
  expect_error(ppg(1, 1, lower.tail = NA), "`lower.tail`")
  expect_error(pg_mean(-2), "`b` must be > 0")
})
