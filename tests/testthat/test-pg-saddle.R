# The saddle-point rejection sampler for large b (src/polyagamma.cpp) is exact if
# (i) |log f - log f_SP2| stays inside its band, (ii) log f_SP is concave, so the tangent hull
# dominates it, and (iii) the correction delta is <= 0. These are checked here against dpg(),
# and the draws against the exact law at the b x c grid of the issue.

pg_draws <- function(n, b, c, engine = 0L, seed = c(11, 22), threads = 1L) {
  # engine 0: automatic; 2: sum of PG(1) draws; 3: saddle-point sampler (b >= 4)
  res <- augmentedGP:::.rpg_cpp(n, b, c, engine, seed, threads)
  expect_equal(res$violations, 0)
  res$draws
}

test_that("the saddle-point band, concavity and correction sign hold against dpg", {
  vpole <- -pi^2 / 4
  for (b in c(4, 7.9, 30, 1e3, 1e4)) {
    # the band depends on (b, v) only: x(v) at c = 0 covers every saddle
    vmax <- if (b > 1e3) 400 else 1e4
    v <- sort(c(vpole + 10^seq(-3, 0, length.out = 15), seq(-2.4, 3, length.out = 120),
                10^seq(0.5, log10(vmax), length.out = 40)))
    e <- augmentedGP:::.pg_saddle_eval_cpp(v, b, 0)
    st <- augmentedGP:::.pg_saddle_setup_cpp(b, 0)
    lf <- dpg(e[, "x"], b, 0, log = TRUE)
    err <- abs(lf - e[, "logf"] - log1p(e[, "delta"]))
    # (plus the rounding of log f itself, as in the sampler)
    expect_true(all(err <= -log1p(-st$eps) + 1e-14 * abs(lf)), label = sprintf("band at b = %g", b))
    # the band is not vacuous: without the second-order correction it fails
    expect_gt(max(abs(lf - e[, "logf"])), -log1p(-st$eps))
    expect_true(all(b * e[, "delta"] <= st$delta_max))
    # concavity of log f_SP in x: the slope decreases as x increases (v decreases)
    expect_true(all(diff(e[order(e[, "x"]), "slope"]) < 0))
  }
})

test_that("the tangent hull of the saddle-point sampler dominates the density", {
  for (b in c(4, 13, 100, 1e4)) for (cc in c(0, 1, 10, 100)) {
    st <- augmentedGP:::.pg_saddle_setup_cpp(b, cc)
    m <- pg_mean(b, cc)
    s <- sqrt(pg_var(b, cc))
    x <- m + s * seq(-6, 12, length.out = 200)
    x <- x[x > 0]
    j <- findInterval(x, c(st$lo, Inf), rightmost.closed = TRUE)
    hull <- st$log_inflate + st$h[j] + st$m[j] * (x - st$x[j])
    expect_true(all(hull >= dpg(x, b, cc, log = TRUE)), label = sprintf("hull b=%g c=%g", b, cc))
    expect_equal(sum(diff(c(0, st$cum))), 1)
  }
})

test_that("draws match the exact mean, variance and Laplace transform over the b x c grid", {
  bs <- c(1.5, 2.7, 7.9, 100, 1e3, 1e4)
  cs <- c(0, 1, 10, 100)
  ntest <- 2 * length(bs) * length(cs)
  zcrit <- qnorm(1 - 1e-3 / (2 * 5 * ntest))
  for (b in bs) for (cc in cs) for (engine in if (b >= 4) c(0L, 3L) else 0L) {
    n <- 20000
    w <- pg_draws(n, b, cc, engine, seed = c(b, cc + 7 * engine))
    k2 <- pg_cumulant(2, b, cc)
    k4 <- pg_cumulant(4, b, cc)
    zm <- (mean(w) - pg_mean(b, cc)) / sqrt(k2 / n)
    zv <- (var(w) - k2) / sqrt((k4 + 2 * k2^2) / n)
    lab <- sprintf("b=%g c=%g engine=%d", b, cc, engine)
    expect_lt(abs(zm), zcrit, label = paste("mean z,", lab))
    expect_lt(abs(zv), zcrit, label = paste("variance z,", lab))
    # Laplace transform at t with E exp(-t w) about 0.5 and 0.05; the variance of exp(-t w)
    # is exact: L(2t) - L(t)^2
    for (t in c(0.7, 3) / pg_mean(b, cc)) {
      L1 <- pg_laplace(t, b, cc)
      L2 <- pg_laplace(2 * t, b, cc)
      zl <- (mean(exp(-t * w)) - L1) / sqrt((L2 - L1^2) / n)
      expect_lt(abs(zl), zcrit, label = paste("Laplace z,", lab))
    }
  }
})

test_that("draws pass Kolmogorov-Smirnov tests against ppg over the b x c grid", {
  cases <- expand.grid(b = c(1.5, 2.7, 7.9, 100, 1e3, 1e4), c = c(0, 1, 10, 100))
  # ppg at b = 1e4 near c = 0 needs a Fourier inversion per point: covered by the moment test
  cases <- cases[!(cases$b == 1e4 & cases$c < 10), ]
  p <- vapply(seq_len(nrow(cases)), function(i) {
    w <- pg_draws(1000, cases$b[i], cases$c[i], seed = c(i, 5))
    ks.test(w, function(q) ppg(q, cases$b[i], cases$c[i]))$p.value
  }, numeric(1))
  expect_gt(min(p), 1e-3 / nrow(cases))
  expect_gt(ks.test(p, "punif")$p.value, 1e-3)
})

test_that("the tests have power: a slightly wrong law fails them", {
  # draws of PG(1.06 b, c) (a 6% error in b, the size of a log(pi/2) vs log(sqrt(pi/2)) slip
  # in an envelope constant at these b) are rejected by the same statistics
  for (b in c(1.5, 2.7, 7.9)) {
    w <- pg_draws(20000, 1.06 * b, 1, seed = c(3, b))
    zm <- (mean(w) - pg_mean(b, 1)) / sqrt(pg_var(b, 1) / 20000)
    expect_gt(abs(zm), 5)
    expect_lt(ks.test(w[1:5000], function(q) ppg(q, b, 1))$p.value, 1e-3)
  }
})

test_that("the automatic choice, seeding and thread count", {
  st <- augmentedGP:::.pg_saddle_setup_cpp(20, 0)
  ab <- st$auto_b
  # automatic: the sum below auto_b, the saddle-point sampler from it on (non-integer b too)
  expect_identical(pg_draws(600, ab - 0.5, 2, 0L), pg_draws(600, ab - 0.5, 2, 2L))
  expect_identical(pg_draws(600, ab + 0.5, 2, 0L), pg_draws(600, ab + 0.5, 2, 3L))
  expect_false(identical(pg_draws(600, ab + 0.5, 2, 0L), pg_draws(600, ab + 0.5, 2, 2L)))
  # results depend on the seed only, never on the number of threads
  bb <- c(30, 250.5, 4000)
  cc <- c(0, 3, -20, 0.5)
  set.seed(9)
  a1 <- rpg(5000, bb, cc, threads = 1)
  set.seed(9)
  a2 <- rpg(5000, bb, cc, threads = 2)
  expect_identical(a1, a2)
  expect_true(all(a1 > 0 & is.finite(a1)))
  # a new c per draw (as in a Gibbs sweep) rebuilds the envelope every time
  set.seed(10)
  cv <- runif(20000, 0, 10)
  w <- rpg(20000, 60, cv)
  expect_lt(abs(sum(w - pg_mean(60, cv)) / sqrt(sum(pg_var(60, cv)))), 4.5)
})

test_that("huge b: the Cornish-Fisher draws are quick and match the exact cumulants", {
  # the formula itself, at b = 60 where the skewness is large enough to see: the expansion
  # (engine 3, forced) has the exact mean and the exact skewness to O(b^-3/2)
  n <- 200000
  for (cc in c(0, 2)) {
    w <- pg_draws(n, 60, cc, 4L, seed = c(4, cc))
    k2 <- pg_cumulant(2, 60, cc)
    k3 <- pg_cumulant(3, 60, cc)
    expect_lt(abs(mean(w) - pg_mean(60, cc)) / sqrt(k2 / n), 4.5)
    skew <- mean((w - mean(w))^3) / sd(w)^3
    expect_lt(abs(skew - k3 / k2^1.5), 5 * sqrt(6 / n) + 0.005)
    expect_gt(skew, 0.05)
  }
  # the automatic choice uses it from b = 1e9 on, where it is exact to double precision; it
  # stays quick where the density can no longer be evaluated
  for (b in c(1e9, 1e12, 1e20)) for (cc in c(0, 1, 546)) {
    tm <- system.time(w <- pg_draws(20000, b, cc, seed = c(log10(b), cc)))[["elapsed"]]
    expect_lt(tm, 10)
    k2 <- pg_cumulant(2, b, cc)
    lab <- sprintf("b=%g c=%g", b, cc)
    expect_lt(abs(mean(w) - pg_mean(b, cc)) / sqrt(k2 / 20000), 4.5, label = paste("mean z,", lab))
    expect_lt(abs(var(w) / k2 - 1), 6 * sqrt(2 / 20000), label = paste("variance,", lab))
  }
  # at b = 2e44 (what a diverging Gibbs chain once produced) the standard deviation is below
  # the spacing of doubles near the mean: every draw is the mean to double precision
  w <- pg_draws(1000, 2e44, -546)
  expect_lt(max(abs(w / pg_mean(2e44, 546) - 1)), 1e-14)
  # no seam at the switch: standardised draws just below (saddle point) and above (expansion)
  z <- function(b, seed) {
    w <- pg_draws(5000, b, 1, seed = seed)
    (w - pg_mean(b, 1)) / sqrt(pg_var(b, 1))
  }
  expect_gt(ks.test(z(0.999e9, c(1, 2)), z(1.001e9, c(3, 4)))$p.value, 1e-3)
})

test_that("huge c at moderate b: the expansion takes over from the saddle point, no hang", {
  # b max(1, c / 3) >= 1e9 switches to the Cornish-Fisher draw (b >= 13); at these c the
  # saddle-point rejection test cannot accept (rounding), and the draw must not hang or be NaN
  for (b in c(13, 37.5, 1000)) for (cc in c(1e33, 1e300)) {
    tm <- system.time(w <- pg_draws(2000, b, cc, seed = c(b, log10(cc))))[["elapsed"]]
    expect_lt(tm, 10)
    # the standard deviation is below 1e-16 of the mean b / (2 c): every draw is the mean
    expect_true(all(is.finite(w) & w > 0))
    expect_lt(max(abs(w * 2 * cc / b - 1)), 1e-14)
  }
  # where the saddle point and the sum of PG(1) draws both still work, the expansion agrees
  # with the sum (the exact reference at any c): same law, and the mean to 4.5 standard errors
  for (cc in c(1e9, 1e12)) {
    a <- pg_draws(20000, 13, cc, seed = c(5, log10(cc)))
    s <- pg_draws(20000, 13, cc, 2L, seed = c(6, log10(cc)))
    expect_gt(ks.test(a, s)$p.value, 1e-3)
    expect_lt(abs(mean(a) - mean(s)) / sqrt(2 * var(s) / 20000), 4.5)
  }
  # no seam at the switch (b = 37.5: c = 8e7): standardised draws just below and above it
  z <- function(cc, seed) {
    w <- pg_draws(5000, 37.5, cc, seed = seed)
    (w - pg_mean(37.5, cc)) / sqrt(pg_var(37.5, cc))
  }
  expect_gt(ks.test(z(0.99 * 8e7, c(7, 1)), z(1.01 * 8e7, c(7, 2)))$p.value, 1e-3)
})
