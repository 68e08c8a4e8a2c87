# The stick-breaking multinomial likelihood (C++ core) and its link.

sb_lik <- function(Y) list(type = "stick_breaking", q = ncol(Y) - 1L, Y = Y)

# exact log multinomial pmf of each row under probabilities pi_SB(psi)
ref_loglik <- function(Y, F) {
  P <- pi_SB(F)
  sum(vapply(seq_len(nrow(Y)), function(i) {
    if (sum(Y[i, ]) == 0) return(0)
    stats::dmultinom(Y[i, ], prob = P[i, ], log = TRUE)
  }, numeric(1)))
}

random_counts <- function(n, K, max_total = 12) {
  Y <- t(vapply(seq_len(n), function(i) {
    N <- sample(0:max_total, 1)
    p <- stats::rexp(K)
    p[sample(K, sample(0:(K - 1), 1))] <- 0 # some categories absent
    if (all(p == 0)) p[1] <- 1
    as.numeric(stats::rmultinom(1, N, p))
  }, numeric(K)))
  Y
}

test_that("pi_SB gives probabilities and pi_SB_inv inverts it", {
  set.seed(11)
  for (K in c(2, 3, 5, 12)) {
    psi <- matrix(stats::rnorm(20 * (K - 1), sd = 3), 20)
    P <- pi_SB(psi)
    expect_equal(dim(P), c(20L, K))
    expect_true(all(P >= 0))
    expect_equal(rowSums(P), rep(1, 20), tolerance = 1e-14)
    expect_equal(pi_SB_inv(P), psi, tolerance = 1e-9)
    # and the other way round, starting from Dirichlet-like probabilities
    Q <- matrix(stats::rexp(20 * K), 20)
    Q <- Q / rowSums(Q)
    expect_equal(pi_SB(pi_SB_inv(Q)), Q, tolerance = 1e-12)
  }
  # the definition, written out for K = 3
  psi <- c(0.3, -1.2)
  s <- stats::plogis
  expect_equal(pi_SB(psi), c(s(0.3), s(-0.3) * s(-1.2), s(-0.3) * s(1.2)))
  # extreme logits stay finite and sum to one
  P <- pi_SB(c(800, -800, 50))
  expect_true(all(is.finite(P)))
  expect_equal(sum(P), 1)
  expect_error(pi_SB(c(1, NA)), "psi")
  expect_error(pi_SB_inv(c(0.5, 0.6)), "prob")
  expect_error(pi_SB_inv(c(-0.5, 1.5)), "prob")
})

test_that("the stick factorisation equals the multinomial pmf exactly", {
  set.seed(3)
  for (K in c(2, 3, 4, 7)) {
    Y <- random_counts(25, K)
    Y[1, ] <- 0 # a row without counts contributes nothing
    F <- matrix(stats::rnorm(25 * (K - 1), sd = 2), 25)
    ev <- .gp_lik_eval_cpp(sb_lik(Y), F, F * 0 + 0.5, F)
    expect_equal(ev$loglik, ref_loglik(Y, F), tolerance = 1e-12)
    # row by row, too (the per-stick binomial coefficients telescope)
    for (i in 2:4) {
      ei <- .gp_lik_eval_cpp(sb_lik(Y[i, , drop = FALSE]), F[i, , drop = FALSE],
                             F[i, , drop = FALSE] * 0, F[i, , drop = FALSE])
      expect_equal(ei$loglik, ref_loglik(Y[i, , drop = FALSE], F[i, , drop = FALSE]),
                   tolerance = 1e-12)
    }
    # the product of binomials, written out in R
    binom <- 0
    for (i in seq_len(nrow(Y))) {
      rest <- sum(Y[i, ])
      for (k in seq_len(K - 1)) {
        binom <- binom + stats::dbinom(Y[i, k], rest, stats::plogis(F[i, k]), log = TRUE)
        rest <- rest - Y[i, k]
      }
    }
    expect_equal(ev$loglik, binom, tolerance = 1e-12)
  }
})

test_that("kappa and E[omega] follow the per-stick binomial formulas", {
  set.seed(5)
  K <- 4
  Y <- random_counts(30, K)
  Y[2, ] <- c(0, 0, 0, 5) # only the last category: every stick has N_k = N
  Y[3, ] <- c(6, 0, 0, 0) # sticks 2 and 3 have no data
  m <- matrix(stats::rnorm(30 * 3), 30)
  v <- matrix(stats::rexp(30 * 3), 30)
  ev <- .gp_lik_eval_cpp(sb_lik(Y), m, v, m)
  Nk <- t(apply(Y, 1, function(y) sum(y) - c(0, cumsum(y)[1:(K - 2)])))
  expect_equal(ev$kappa, Y[, 1:3] - Nk / 2)
  cc <- sqrt(m^2 + v)
  Ew <- ifelse(Nk > 0, pg_mean(pmax(Nk, 1), cc), 0)
  expect_equal(ev$omega, Ew, tolerance = 1e-12)
  expect_equal(ev$omega[3, 2:3], c(0, 0))
  expect_equal(ev$kappa[3, ], c(3, 0, 0))
})

test_that("elbo_local is exact at zero variance and below E_q log p(y | f) otherwise", {
  set.seed(7)
  K <- 3
  Y <- random_counts(12, K, max_total = 20)
  m <- matrix(stats::rnorm(12 * 2, sd = 1.5), 12)
  # zero variance: q(omega) = PG(N, |m|) makes the bound tight
  ev <- .gp_lik_eval_cpp(sb_lik(Y), m, m * 0, m)
  expect_equal(ev$elbo_local, ev$loglik, tolerance = 1e-10)
  # positive variance: E_q[log p(y | f)] by Gauss-Hermite quadrature per stick
  gh <- gauss_hermite(60)
  for (s2 in c(0.05, 0.5, 3)) {
    v <- matrix(s2, 12, 2)
    ev <- .gp_lik_eval_cpp(sb_lik(Y), m, v, m)
    expected <- 0
    for (i in seq_len(12)) {
      rest <- sum(Y[i, ])
      for (k in 1:2) {
        f <- m[i, k] + sqrt(2 * v[i, k]) * gh$x
        expected <- expected + sum(gh$w * stats::dbinom(Y[i, k], rest, stats::plogis(f), log = TRUE)) /
          sqrt(pi)
        rest <- rest - Y[i, k]
      }
    }
    expect_lte(ev$elbo_local, expected + 1e-8)
    # and not absurdly loose: the gap is at most the E_q of N log cosh terms
    expect_gt(ev$elbo_local, expected - sum(Y) * s2)
  }
})

test_that("augmentation identity: log p(y, omega | f) - log p(omega | y, f) = log p(y | f)", {
  set.seed(9)
  K <- 4
  Y <- rbind(c(2, 1, 0, 3), c(0, 0, 4, 1), c(1, 1, 1, 1), c(0, 0, 0, 2))
  F <- matrix(stats::rnorm(4 * 3), 4)
  dr <- .gp_lik_sample_cpp(sb_lik(Y), F, c(123, 4))
  Nk <- t(apply(Y, 1, function(y) sum(y) - c(0, cumsum(y)[1:(K - 2)])))
  has <- Nk > 0
  expect_true(all(dr$omega[!has] == 0))
  expect_true(all(dr$omega[has] > 0))
  w <- dr$omega[has]
  N <- Nk[has]
  f <- F[has]
  kap <- dr$kappa[has]
  logC <- lchoose(N, Y[, 1:3][has])
  joint <- sum(logC - N * log(2) + kap * f - w * f^2 / 2 + dpg(w, N, 0, log = TRUE))
  cond <- sum(dpg(w, N, f, log = TRUE))
  ll <- .gp_lik_eval_cpp(sb_lik(Y), F, F * 0, F)$loglik
  expect_equal(joint - cond, ll, tolerance = 1e-8)
  expect_equal(ll, ref_loglik(Y, F), tolerance = 1e-12)
})

test_that("sample_aux draws omega ~ PG(N_k, psi_k) with the right mean", {
  Y0 <- c(3, 2, 0, 1)
  n <- 3000
  Y <- matrix(Y0, n, 4, byrow = TRUE)
  f0 <- c(0.7, -1.5, 2)
  F <- matrix(f0, n, 3, byrow = TRUE)
  dr <- .gp_lik_sample_cpp(sb_lik(Y), F, c(77, 1))
  Nk <- c(6, 3, 1)
  for (k in 1:3) {
    mu <- pg_mean(Nk[k], f0[k])
    sdv <- sqrt(pg_var(Nk[k], f0[k]) / n)
    expect_lt(abs(mean(dr$omega[, k]) - mu), 4.5 * sdv)
  }
  expect_equal(unique(dr$kappa[, 1]), 3 - 6 / 2)
  # same seed, same draw
  expect_identical(.gp_lik_sample_cpp(sb_lik(Y[1:50, ]), F[1:50, ], c(5, 5))$omega,
                   .gp_lik_sample_cpp(sb_lik(Y[1:50, ]), F[1:50, ], c(5, 5))$omega)
})

test_that("the C++ likelihood rejects malformed count matrices", {
  expect_error(.gp_lik_eval_cpp(sb_lik(matrix(1, 3, 1)), matrix(0, 3, 0), matrix(0, 3, 0),
                                matrix(0, 3, 0)), "at least 2")
  expect_error(.gp_lik_eval_cpp(sb_lik(matrix(c(1, -1, 2, 2), 2)), matrix(0, 2, 1),
                                matrix(0, 2, 1), matrix(0, 2, 1)), ">= 0")
  expect_error(.gp_lik_eval_cpp(sb_lik(matrix(c(1, NA, 2, 2), 2)), matrix(0, 2, 1),
                                matrix(0, 2, 1), matrix(0, 2, 1)), "finite")
})

test_that("the default prior mean makes sigma(psi_k) have Beta(1, K - k) means", {
  for (K in c(2, 3, 6)) {
    mu <- sb_prior_mean(K)
    expect_length(mu, K - 1)
    # E[logit(B)] for B ~ Beta(1, K - k), by quadrature
    for (k in seq_len(K - 1)) {
      e <- stats::integrate(function(b) stats::qlogis(b) * stats::dbeta(b, 1, K - k), 0, 1)$value
      expect_equal(mu[k], e, tolerance = 1e-6)
    }
  }
  expect_equal(sb_prior_mean(4, 0.5), rep(0.5, 3))
  expect_error(sb_prior_mean(4, c(1, 2)), "prior_mean")
})
