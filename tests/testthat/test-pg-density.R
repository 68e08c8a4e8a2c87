test_that("dpg integrates to one and reproduces the exact moments", {
  for (b in c(0.3, 1, 2.5, 13)) for (cc in c(0, 1.5, 12)) {
    m <- pg_mean(b, cc)
    s <- sqrt(pg_var(b, cc))
    upper <- m + 60 * s
    brk <- c(0, m / 4, m, m + 5 * s, upper)
    int <- function(g) {
      sum(vapply(seq_len(length(brk) - 1), function(i) {
        integrate(g, brk[i], brk[i + 1], rel.tol = 1e-11, abs.tol = 0,
                  subdivisions = 1000L)$value
      }, numeric(1)))
    }
    expect_equal(int(function(x) dpg(x, b, cc)), 1, tolerance = 1e-8)
    expect_equal(int(function(x) x * dpg(x, b, cc)), m, tolerance = 1e-8)
    expect_equal(int(function(x) (x - m)^2 * dpg(x, b, cc)), s^2, tolerance = 1e-7)
  }
})

test_that("dpg agrees with the independent large-x series for b = 1", {
  # f(x | 1, 0) = 2 pi sum_n (-1)^n (2n + 1) exp(-pi^2 (2n + 1)^2 x / 2)
  right <- function(x) {
    n <- 0:200
    vapply(x, function(xx) 2 * pi * sum((-1)^n * (2 * n + 1) * exp(-pi^2 * (2 * n + 1)^2 * xx / 2)),
           numeric(1))
  }
  x <- c(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15)
  expect_equal(dpg(x, 1), right(x), tolerance = 1e-10)
  # tilting is exact: f(x | b, c) = cosh^b(c/2) exp(-c^2 x / 2) f(x | b, 0)
  expect_equal(dpg(x, 1, 3), cosh(1.5) * exp(-4.5 * x) * right(x), tolerance = 1e-10)
  expect_equal(dpg(x, 1, 3, log = TRUE), log(dpg(x, 1, 3)), tolerance = 1e-12)
})

test_that("dpg agrees with a convolution of two PG(b/2) densities", {
  # independent check of the fractional-b density: PG(0.7) * PG(0.7) = PG(1.4)
  x0 <- c(0.2, 0.45, 1)
  conv <- vapply(x0, function(x) {
    integrate(function(u) dpg(u, 0.7) * dpg(x - u, 0.7), 0, x, rel.tol = 1e-10,
              subdivisions = 1000L)$value
  }, numeric(1))
  expect_equal(dpg(x0, 1.4), conv, tolerance = 1e-7)
})

test_that("ppg is monotone, complements, and equals the integral of dpg", {
  for (b in c(0.25, 1, 3.5, 40)) for (cc in c(0, 2)) {
    m <- pg_mean(b, cc)
    s <- sqrt(pg_var(b, cc))
    q <- sort(c(m * c(0.1, 0.5, 0.9), m + s * c(0, 1, 3, 8)))
    p <- ppg(q, b, cc)
    expect_true(all(diff(p) > 0))
    expect_true(all(p > 0 & p < 1))
    expect_equal(p + ppg(q, b, cc, lower.tail = FALSE), rep(1, length(q)), tolerance = 1e-12)
    expect_equal(ppg(q, b, cc, log.p = TRUE), log(p), tolerance = 1e-12)
    ref <- vapply(q, function(qq) integrate(function(x) dpg(x, b, cc), 0, qq,
                                            rel.tol = 1e-11, subdivisions = 1000L)$value,
                  numeric(1))
    expect_equal(p, ref, tolerance = 1e-7)
  }
})

test_that("far tails are computed in log space without underflow to NaN", {
  expect_true(is.finite(dpg(1e-3, 5, log = TRUE)))
  expect_lt(dpg(1e-3, 5, log = TRUE), -1000)
  lu <- ppg(30, 0.5, lower.tail = FALSE, log.p = TRUE)
  expect_true(is.finite(lu) && lu < -140)
  # upper-tail log probability matches the log of the integrated density tail
  ref <- integrate(function(x) dpg(x, 0.5), 6, Inf, rel.tol = 1e-11)$value
  expect_equal(ppg(6, 0.5, lower.tail = FALSE), ref, tolerance = 1e-7)
  expect_equal(dpg(c(0, -1, Inf), 1), c(0, 0, 0))
  expect_equal(ppg(c(0, -1, Inf), 1), c(0, 0, 1))
  expect_identical(dpg(NA_real_, 1), NA_real_)
})

test_that("the fractional-b envelope dominates the density beyond its switch point", {
  # f0(x) exp(pi^2 x / 2) <= M(b) for x >= t(b): this is what makes the sampler exact.
  for (b in c(seq(0.002, 0.998, length.out = 60), 0.5 + 1e-9)) {
    fc <- augmentedGP:::.pg_frac_const_cpp(b)
    x <- seq(fc[["t"]], 6, length.out = 400)
    h <- dpg(x, b) * exp(pi^2 * x / 2)
    expect_true(all(h <= exp(fc[["logM"]])), label = sprintf("envelope at b = %g", b))
    expect_lt(fc[["t"]], (1 + b) / (2 * log(2 + b)))
  }
})
