# Logistic-softmax augmentation (negative multinomial + Polya-Gamma), checked by
# enumeration, quadrature and sampler moments. Everything in R here is written
# independently of the C++ code it checks.

sm_ns <- asNamespace("augmentedGP")
sm_eval <- function(Y, bij, theta, m, v, f = m) {
  sm_ns$.gp_lik_eval_cpp(list(type = "logistic_softmax", Y = Y, bijective = bij, theta = theta),
                         m, v, f)
}
sm_sig <- function(x) 1 / (1 + exp(-x))

# log p(y | f) straight from the definition (bijective: append the fixed latent 0).
sm_loglik <- function(Y, f, bij, theta) {
  if (bij) f <- cbind(f, 0)
  s <- 0
  for (i in seq_len(nrow(Y))) {
    if (sum(Y[i, ]) == 0) next
    a <- theta * sm_sig(f[i, ])
    s <- s + sum(Y[i, ] * log(a / sum(a)))
  }
  s
}

# log of the augmented joint p(y, n | f) with omega integrated out through the PG
# Laplace transform, for one row and a matrix of n (rows = grid points).
sm_log_joint <- function(y, f, n, bij, theta) {
  K <- length(y); q <- if (bij) K - 1 else K
  Tn <- sum(theta[seq_len(q)]) + if (bij) theta[K] * sm_sig(0) else 0
  N <- sum(y)
  yl <- y[seq_len(q)]
  out <- sum(y * log(theta)) + (if (bij) y[K] * log(sm_sig(0)) else 0) - N * log(Tn)
  out <- out + lgamma(N + rowSums(n)) - lgamma(N) - rowSums(lgamma(n + 1)) +
    drop(n %*% log(theta[seq_len(q)] / Tn))
  for (j in seq_len(q)) {
    b <- yl[j] + n[, j]
    kap <- yl[j] - b / 2
    # 2^-b e^(kappa f) E_PG(b,0)[exp(-omega f^2 / 2)] = 2^-b e^(kappa f) cosh(f/2)^-b
    out <- out - b * log(2) + kap * f[j] - b * log(cosh(f[j] / 2))
  }
  out
}
sm_lse <- function(x) { mx <- max(x); mx + log(sum(exp(x - mx))) }

# Negative multinomial log pmf (q categories, p0 = 1 - sum(p)).
sm_dnm <- function(n, r, p) {
  lgamma(r + rowSums(n)) - lgamma(r) - rowSums(lgamma(n + 1)) + r * log(1 - sum(p)) +
    drop(n %*% log(p))
}

test_that("enumerating the negative-multinomial counts reproduces p(y | f)", {
  theta <- c(0.6, 1.7, 1.2)
  f <- c(0.4, -0.3, 1.1)
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    grid <- as.matrix(expand.grid(rep(list(0:70), q)))
    for (y in list(c(1, 0, 0), c(0, 1, 0), c(0, 0, 1), c(2, 0, 1))) {
      lj <- sm_log_joint(y, f[seq_len(q)], grid, bij, theta)
      exact <- sm_loglik(matrix(y, 1), matrix(f[seq_len(q)], 1), bij, theta)
      expect_lt(abs(sm_lse(lj) - exact), 1e-8)
      # the package's loglik agrees with the definition
      pk <- sm_eval(matrix(y, 1), bij, theta, matrix(f[seq_len(q)], 1), matrix(0, 1, q))$loglik
      expect_equal(pk, exact, tolerance = 1e-12)
    }
  }
})

test_that("the conditional of n given (y, f) is NM with sigma(-f), not sigma(+f)", {
  theta <- c(0.6, 1.7, 1.2)
  f <- c(0.9, -0.5, 1.4)
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    fq <- f[seq_len(q)]
    Tn <- sum(theta[seq_len(q)]) + if (bij) theta[3] / 2 else 0
    grid <- as.matrix(expand.grid(rep(list(0:60), q)))
    y <- c(0, 1, 2)
    lj <- sm_log_joint(y, fq, grid, bij, theta)
    brute <- exp(lj - sm_lse(lj))
    good <- exp(sm_dnm(grid, sum(y), theta[seq_len(q)] * sm_sig(-fq) / Tn))
    bad <- exp(sm_dnm(grid, sum(y), theta[seq_len(q)] * sm_sig(fq) / Tn * 0.999))
    expect_lt(max(abs(brute - good)), 1e-12)
    expect_gt(max(abs(brute - bad)), 1e-2)
  }
})

test_that("Gibbs auxiliary draws have the right (n, omega) conditional", {
  theta <- c(0.5, 1, 2)
  f <- c(0.8, -1.2, 0.3)
  R <- 4000
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    fq <- f[seq_len(q)]
    y <- c(1, 0, 2)
    Y <- matrix(y, R, 3, byrow = TRUE)
    Fm <- matrix(fq, R, q, byrow = TRUE)
    d <- sm_ns$.gp_lik_sample_cpp(list(type = "logistic_softmax", Y = Y, bijective = bij, theta = theta),
                                  Fm, c(123, 456 + bij))
    n <- Y[, seq_len(q)] - 2 * d$kappa
    expect_true(all(abs(n - round(n)) < 1e-12) && all(n >= 0))
    Tn <- sum(theta[seq_len(q)]) + if (bij) theta[3] / 2 else 0
    p <- theta[seq_len(q)] * sm_sig(-fq) / Tn
    p0 <- 1 - sum(p)
    N <- sum(y)
    mu <- N * p / p0
    sdv <- sqrt(N * p * (p0 + p) / p0^2)
    expect_true(all(abs(colMeans(n) - mu) / (sdv / sqrt(R)) < 4))
    # omega | n ~ PG(y + n, |f|): compare with the PG mean given each draw's n
    b <- sweep(n, 2, y[seq_len(q)], "+")
    pgm <- sweep(b, 2, tanh(abs(fq) / 2) / (2 * abs(fq)), "*")
    dif <- d$omega - pgm
    expect_true(all(abs(colMeans(dif)) / (apply(dif, 2, sd) / sqrt(R)) < 4))
    expect_true(all(d$omega[b == 0] == 0))
  }
})

test_that("negative-multinomial sampler matches exact moments and marginal pmf", {
  r <- 2.5
  p <- c(0.1, 0.25, 0.3)
  p0 <- 1 - sum(p)
  R <- 60000
  x <- sm_ns$.softmax_nm_cpp(r, p, R, c(11, 22))
  mu <- r * p / p0
  V <- r * outer(p, p) / p0^2
  diag(V) <- r * p * (p0 + p) / p0^2
  expect_true(all(abs(colMeans(x) - mu) / sqrt(diag(V) / R) < 4))
  # variances and covariances: batch means give the standard errors
  batches <- split(seq_len(R), rep(1:30, each = R / 30))
  covs <- sapply(batches, function(ix) { C <- cov(x[ix, ]); C[upper.tri(C, diag = TRUE)] })
  target <- V[upper.tri(V, diag = TRUE)]
  z <- (rowMeans(covs) - target) / (apply(covs, 1, sd) / sqrt(30))
  expect_true(all(abs(z) < 4.5))
  # each marginal is negative binomial(r, p0 / (p0 + p_j)): chi-square test
  for (j in seq_along(p)) {
    prob <- p0 / (p0 + p[j])
    kmax <- qnbinom(1 - 1e-4, r, prob)
    obs <- tabulate(pmin(x[, j], kmax) + 1, kmax + 1)
    ex <- c(dnbinom(0:(kmax - 1), r, prob), pnbinom(kmax - 1, r, prob, lower.tail = FALSE)) * R
    expect_gt(chisq.test(obs, p = ex / sum(ex))$p.value, 1e-3)
  }
  # q = 1 with non-integer r < 1
  x1 <- sm_ns$.softmax_nm_cpp(0.4, 0.6, 40000, c(5, 6))
  expect_lt(abs(mean(x1) - 0.4 * 0.6 / 0.4) / sqrt(0.4 * 0.6 / 0.4^2 / 40000), 4)
  expect_error(sm_ns$.softmax_nm_cpp(1, c(0.6, 0.5), 10, c(1, 2)))
})

test_that("Poisson sampler: moments and chi-square for small and large means", {
  R <- 40000
  for (mu in c(0.3, 4, 11.9, 12.1, 40, 900)) {
    x <- sm_ns$.softmax_poisson_cpp(mu, R, c(7, round(mu * 10)))
    expect_true(all(x >= 0 & x == round(x)))
    expect_lt(abs(mean(x) - mu) / sqrt(mu / R), 4)
    expect_lt(abs(var(x) / mu - 1), 6 * sqrt(2 / R + 1 / (mu * R)))
    lo <- qpois(2e-3, mu); hi <- qpois(1 - 2e-3, mu)
    obs <- tabulate(pmin(pmax(x, lo), hi) - lo + 1, hi - lo + 1)
    ex <- dpois(lo:hi, mu)
    ex[1] <- ppois(lo, mu); ex[length(ex)] <- ppois(hi - 1, mu, lower.tail = FALSE)
    expect_gt(chisq.test(obs, p = ex / sum(ex))$p.value, 1e-3)
  }
  expect_equal(sm_ns$.softmax_poisson_cpp(0, 5, c(1, 2)), rep(0, 5))
})

# The ELBO of MATH.md for an arbitrary q(n_i) = NM(N, pq) and q(omega | n) = PG(y + n, cq).
sm_elbo_general <- function(y, m, v, bij, theta, pq, cq) {
  K <- length(y); q <- length(m)
  Tn <- sum(theta[seq_len(q)]) + if (bij) theta[K] * sm_sig(0) else 0
  pp <- theta[seq_len(q)] / Tn
  N <- sum(y); yl <- y[seq_len(q)]
  p0q <- 1 - sum(pq)
  gam <- N * pq / p0q
  b <- yl + gam
  Ew <- b * tanh(cq / 2) / (2 * cq)
  A <- sum(y * log(theta)) + (if (bij) y[K] * log(sm_sig(0)) else 0) - N * log(Tn)
  A + sum(-b * log(2) + (yl - gam) / 2 * m - (m^2 + v) * Ew / 2 - (b * log(cosh(cq / 2)) - cq^2 * Ew / 2)) -
    (N * log(p0q) + sum(gam * (log(pq) - log(pp))))
}

test_that("the local ELBO is the general ELBO at the CAVI-optimal q(aux), which maximises it", {
  theta <- c(0.8, 1.5, 1.1)
  set.seed(3)
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    for (y in list(c(1, 0, 0), c(0, 0, 1), c(1, 2, 1))) {
      m <- rnorm(q); v <- runif(q, 0.1, 2)
      Tn <- sum(theta[seq_len(q)]) + if (bij) theta[3] / 2 else 0
      c0 <- sqrt(m^2 + v)
      st <- exp(-m / 2) / (2 * cosh(c0 / 2))
      p_opt <- theta[seq_len(q)] * st / Tn
      e_opt <- sm_elbo_general(y, m, v, bij, theta, p_opt, c0)
      r <- sm_eval(matrix(y, 1), bij, theta, matrix(m, 1), matrix(v, 1))
      expect_equal(r$elbo_local, e_opt, tolerance = 1e-10)
      gam <- sum(y) * p_opt / (1 - sum(p_opt))
      expect_equal(drop(r$kappa), (y[seq_len(q)] - gam) / 2, tolerance = 1e-10)
      expect_equal(drop(r$omega), (y[seq_len(q)] + gam) * tanh(c0 / 2) / (2 * c0), tolerance = 1e-10)
      for (s in c(0.5, 0.9, 1.1, 1.6)) {
        expect_lt(sm_elbo_general(y, m, v, bij, theta, p_opt * s, c0), e_opt)
        expect_lt(sm_elbo_general(y, m, v, bij, theta, p_opt, c0 * s), e_opt)
      }
      # at v = 0 the bound is tight: it equals log p(y | f)
      r0 <- sm_eval(matrix(y, 1), bij, theta, matrix(m, 1), matrix(0, 1, q))
      expect_equal(r0$elbo_local, sm_loglik(matrix(y, 1), matrix(m, 1), bij, theta), tolerance = 1e-10)
    }
  }
})

test_that("ELBO <= log p(y) by quadrature (n = 1, K = 3) and CAVI never decreases it", {
  s2 <- 2.0
  gh <- gauss_hermite(40)
  for (theta in list(c(1, 1, 1), c(0.5, 2, 1.3))) for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    for (y in list(c(1, 0, 0), c(0, 0, 1))) {
      nodes <- as.matrix(expand.grid(rep(list(sqrt(2 * s2) * gh$x), q)))
      lw <- rowSums(log(as.matrix(expand.grid(rep(list(gh$w / sqrt(pi)), q)))))
      ll <- apply(nodes, 1, function(f) sm_loglik(matrix(y, 1), matrix(f, 1), bij, theta))
      logp <- sm_lse(ll + lw)
      kl <- function(m, v) sum(0.5 * (v / s2 + m^2 / s2 - 1 - log(v / s2)))
      set.seed(9)
      for (t in 1:5) {
        m <- rnorm(q); v <- runif(q, 0.05, 3)
        e <- sm_eval(matrix(y, 1), bij, theta, matrix(m, 1), matrix(v, 1))$elbo_local - kl(m, v)
        expect_lt(e, logp)
      }
      fit <- sm_ns$.gp_cavi_cpp(matrix(s2, 1, 1), list(type = "logistic_softmax", Y = matrix(y, 1),
                                bijective = bij, theta = theta), 0, NULL, NULL, 200L, 1e-12, -Inf)
      tr <- fit$elbo
      expect_true(all(diff(tr) >= -1e-10))
      expect_lt(max(tr), logp)
      expect_lt(logp - max(tr), 0.4)  # the mean-field gap is small
    }
  }
})

test_that("rows with no observations contribute nothing; bad input is refused", {
  Y <- rbind(c(1, 0, 0), c(0, 0, 0))
  a <- sm_eval(Y, FALSE, c(1, 1, 1), matrix(c(0.2, 5, -1, 3, 0.4, -2), 2), matrix(0.3, 2, 3))
  b <- sm_eval(Y[1, , drop = FALSE], FALSE, c(1, 1, 1), matrix(c(0.2, -1, 0.4), 1), matrix(0.3, 1, 3))
  expect_equal(a$elbo_local, b$elbo_local)
  expect_equal(a$loglik, b$loglik)
  expect_true(all(a$kappa[2, ] == 0) && all(a$omega[2, ] == 0))
  expect_error(sm_eval(Y, FALSE, c(1, 1), matrix(0, 2, 3), matrix(1, 2, 3)), "theta")
  expect_error(sm_eval(Y, FALSE, c(1, -1, 1), matrix(0, 2, 3), matrix(1, 2, 3)), "theta")
  expect_error(sm_eval(-Y, FALSE, c(1, 1, 1), matrix(0, 2, 3), matrix(1, 2, 3)), "non-negative")
  expect_error(sm_eval(Y[, 1, drop = FALSE], FALSE, 1, matrix(0, 2, 1), matrix(1, 2, 1)), "2 columns")
})
