# The generalised elliptical slice moves of the non-bijective logistic-softmax
# likelihood (contrast_moves() in src/lik_logistic_softmax.cpp) take a fixed Gaussian
# reference (the variational fit's mean, handed to the Gibbs sampler), Gaussian or
# multivariate t (ref_df > 0: a Gaussian scale mixture whose scale is drawn at every
# update), and must leave p(f | y) exactly invariant whatever the reference: a poor
# reference may only slow them down. Reference values: self-normalised importance sampling from the prior of
# the un-augmented posterior, written here independently of the package
# (softmax_is_reference(), softmax_probs() in test-softmax-mixing.R's style).

ref_toy <- function() {
  X <- matrix(c(-1, 0, 1.2), 3)
  Y <- rbind(c(1, 0, 0), c(0, 2, 1), c(0, 0, 1))
  list(X = X, Y = Y)
}


# Gibbs chains with the likelihood's move at the reference mean `rmean` (n x q).
ref_gibbs <- function(d, k, lik, mu0, rmean, iter, warmup, chains = 2, threads = 1) {
  n <- nrow(d$X)
  q <- lik$q
  ctl <- eng_ns$as_augp_control(eng_fixed(iter = iter, warmup = warmup, chains = chains,
                                          threads = threads))
  res <- eng_ns$engine_gibbs_chains(k, d$X, lik, mu0, matrix(mu0, n, q), NULL, ctl,
                                    c(11, 12), seq_len(chains) - 1L, chains, 1e-8,
                                    reference = list(mean = rmean, prec = matrix(1, n, q)))
  if (iter - warmup < 100) return(list(draws = res$draws))
  P <- eng_ns$mcmc_response_draws(res$draws, lik, max_vars = Inf)
  list(mean = matrix(apply(P, 3, mean), n),
       mcse = matrix(apply(P, 3, posterior::mcse_mean), n), draws = res$draws)
}

# The three-point problem of the exactness tests: data, kernel, class weights, prior
# mean, the importance-sampling reference of its posterior class probabilities (ex) and
# a reference mean for the moves far from the posterior (rmean).
ref_case <- function() {
  d <- ref_toy()
  k <- kernel_se(variance = 6, lengthscale = 1)
  K <- kernel_matrix(k, d$X) + diag(1e-8, 3)
  theta <- c(1, 2, 0.5)
  mu0 <- matrix(c(0.5, -0.5, 0), 3, 3, byrow = TRUE)
  list(d = d, k = k, theta = theta, mu0 = mu0, ex = softmax_ref_is(K, d$Y, theta, mu0, S = 60000, seed = 1),
       rmean = matrix(c(3, -3, 0, -2, 2, 1, -1, 0, 4), 3, 3))
}

test_that("contrast moves with a poor reference sample the un-augmented posterior", {
  skip_if_not_installed("posterior")
  rc <- ref_case()
  d <- rc$d
  k <- rc$k
  theta <- rc$theta
  mu0 <- rc$mu0
  ex <- rc$ex
  expect_gt(ex$ess, 3000)
  # A reference centred far from the posterior: sampling from it (the move without its
  # prior / reference correction) would give class probabilities far from the
  # posterior's.
  rmean <- rc$rmean
  rq <- softmax_ref_probs(rmean, theta)
  expect_gt(max(abs(rq - ex$mean)), 0.3)
  lik <- list(type = "logistic_softmax", q = 3L, Y = d$Y, bijective = FALSE, theta = theta,
              slice_steps = 0, ref_steps = 3, ref_scale = 0.7)
  # Gaussian reference (ref_df = 0) and t references with light and heavy tails; one
  # contrast at a time, all on one ellipse with per-contrast references (joint) or with
  # one joint reference of all contrasts (full, with the curvatures taken below the
  # approximation's common part); for the t references, curvatures averaged over the
  # approximation's marginals; one contrast at a time with reference means conditional
  # on the other contrasts (cond); for full and cond with df = 4, the reference's mean
  # moved by Newton steps to the contrasts' conditional mode
  cases <- expand.grid(df = c(0, 1, 4), move = c("single", "joint", "full", "cond"),
                       stringsAsFactors = FALSE)
  for (r in seq_len(nrow(cases))) {
    df <- cases$df[r]
    lik$ref_joint <- cases$move[r] == "joint"
    lik$ref_full <- cases$move[r] == "full"
    # (ref_cond is ignored by the joint update of all contrasts)
    lik$ref_cond <- cases$move[r] %in% c("cond", "joint")
    lik$ref_df <- df
    lik$ref_avg <- if (df > 0) 16 else 0
    lik$ref_shift <- if (cases$move[r] %in% c("full", "cond")) -5 else 0
    lik$ref_newton <- if (cases$move[r] %in% c("full", "cond") && df == 4) 5 else 0
    g <- ref_gibbs(d, k, lik, mu0, rmean, iter = 3000, warmup = 300)
    z <- (g$mean - ex$mean) / sqrt(g$mcse^2 + ex$se^2)
    lab <- sprintf("(ref_df %g, %s)", df, cases$move[r])
    expect_lt(max(abs(z)), 4.5, label = paste("max |z|", lab))
    expect_lt(max(abs(g$mean - ex$mean)), 0.03, label = paste("max error", lab))
  }
})

test_that("the default contrast moves (conditional means, averaged curvatures) keep the posterior", {
  skip_if_not_installed("posterior")
  rc <- ref_case()
  # the reference's site precisions set the marginal variances the curvatures are
  # averaged over: small (0.1) for wide marginals
  lik <- list(type = "logistic_softmax", q = 3L, Y = rc$d$Y, bijective = FALSE, theta = rc$theta,
              slice_steps = 0, ref_steps = 3, ref_scale = 0.7, ref_cond = TRUE, ref_df = 0,
              ref_avg = 32)
  ctl <- eng_ns$as_augp_control(eng_fixed(iter = 3000, warmup = 300, chains = 2))
  res <- eng_ns$engine_gibbs_chains(rc$k, rc$d$X, lik, rc$mu0, rc$mu0, NULL, ctl, c(11, 12), 0:1, 2L,
                                    1e-8, reference = list(mean = rc$rmean, prec = matrix(0.1, 3, 3)))
  P <- eng_ns$mcmc_response_draws(res$draws, lik, max_vars = Inf)
  m <- matrix(apply(P, 3, mean), 3)
  z <- (m - rc$ex$mean) / sqrt(matrix(apply(P, 3, posterior::mcse_mean), 3)^2 + rc$ex$se^2)
  expect_lt(max(abs(z)), 4.5)
  expect_lt(max(abs(m - rc$ex$mean)), 0.03)
})

test_that("the Gibbs sampler's reference is the refined variational fit", {
  set.seed(4)
  n <- 40
  X <- matrix(stats::rnorm(2 * n), n, 2)
  y <- factor(c("a", "b", "c")[1 + (X[, 1] > 0) + (X[, 2] > 0.5)])
  resp <- eng_ns$encode_response(logistic_softmax(), y)
  lik <- eng_ns$engine_lik_spec(logistic_softmax(), resp)
  mean0 <- matrix(-6, n, 3)
  ctl <- eng_ns$as_augp_control(eng_fixed())
  vi <- eng_ns$engine_vi(X, lik, kernel_se(variance = 20, lengthscale = 1), ctl, mean0)
  rq <- eng_ns$engine_reference_q(vi, X, lik, ctl, mean0)
  # the refinement ran (the augmented bound is loose at this prior mean) and raised the
  # direct ELBO of the coordinate-ascent fit
  expect_gt(rq$refine$rounds, 0)
  expect_gt(rq$elbo_direct, eng_ns$engine_direct_elbo(lik, vi$mean, vi$var, vi$kl) + 1)
  expect_equal(dim(rq$mean), c(n, 3L))
  expect_equal(dim(rq$omega), c(n, 3L))
  # refine = 0 leaves the coordinate-ascent fit as the reference
  ctl0 <- eng_ns$as_augp_control(eng_fixed(refine = 0))
  expect_identical(eng_ns$engine_reference_q(vi, X, lik, ctl0, mean0), vi)
})

test_that("only the non-bijective model's draws depend on the reference", {
  d <- ref_toy()
  k <- kernel_se(variance = 6, lengthscale = 1)
  lik <- list(type = "logistic_softmax", q = 3L, Y = d$Y, bijective = FALSE, theta = rep(1, 3),
              slice_steps = 0, ref_steps = 2)
  a <- ref_gibbs(d, k, lik, 0, matrix(0, 3, 3), iter = 30, warmup = 5, chains = 1)$draws
  b <- ref_gibbs(d, k, lik, 0, matrix(1, 3, 3), iter = 30, warmup = 5, chains = 1)$draws
  expect_false(identical(a, b))
  expect_true(all(is.finite(a)))
  # the same draws with the chains on 1 or 2 threads, Gaussian or t reference
  for (df in c(0, 4)) {
    lik$ref_df <- df
    lik$ref_full <- df > 0
    expect_identical(ref_gibbs(d, k, lik, 0, matrix(1, 3, 3), iter = 30, warmup = 5)$draws,
                     ref_gibbs(d, k, lik, 0, matrix(1, 3, 3), iter = 30, warmup = 5,
                               threads = 2)$draws)
  }
  lik$ref_df <- lik$ref_full <- NULL
  # the bijective model takes no reference: its draws do not depend on it
  lb <- utils::modifyList(lik, list(q = 2L, bijective = TRUE))
  a <- ref_gibbs(d, k, lb, 0, matrix(0, 3, 2), iter = 30, warmup = 5, chains = 1)$draws
  b <- ref_gibbs(d, k, lb, 0, matrix(1, 3, 2), iter = 30, warmup = 5, chains = 1)$draws
  expect_identical(a, b)
})
