# The Gibbs sampler's gradient move (src/gradient_move.h): HMC on the un-augmented
# posterior p(f | y) of the non-bijective logistic-softmax likelihood, in the
# coordinates of the contrast moves' fixed reference. It must leave p(f | y) exactly
# invariant whatever the reference (a poor one may only slow it down), adapt its step
# size in warm-up only, and give draws that depend on the seed, not the thread count.
# Reference values: self-normalised importance sampling from the prior
# (softmax_ref_is(), helper-softmax-is.R), written independently of the package.

# Twelve inputs on a line, three classes, five labelled rows (the others carry no
# counts: their latents are tied to the labelled ones by the prior alone).
grad_case <- function() {
  X <- matrix(seq(-2, 2, length.out = 12), 12)
  Y <- matrix(0, 12, 3)
  Y[1, 1] <- 2
  Y[3, 1] <- 1
  Y[6, 2] <- 1
  Y[7, 3] <- 1
  Y[11, 3] <- 2
  k <- kernel_se(variance = 4, lengthscale = 1.2)
  K <- kernel_matrix(k, X) + diag(1e-8, 12)
  theta <- c(1, 2, 0.5)
  mu0 <- matrix(c(0.5, -0.5, 0), 12, 3, byrow = TRUE)
  list(X = X, Y = Y, k = k, theta = theta, mu0 = mu0,
       ex = softmax_ref_is(K, Y, theta, mu0, S = 40000, seed = 2))
}

grad_chains <- function(cs, lik, rmean, prec, iter, warmup, chains = 2, threads = 1) {
  ctl <- eng_ns$as_augp_control(eng_fixed(iter = iter, warmup = warmup, chains = chains,
                                          threads = threads))
  eng_ns$engine_gibbs_chains(cs$k, cs$X, lik, cs$mu0, cs$mu0, NULL, ctl, c(21, 22),
                             seq_len(chains) - 1L, chains, 1e-8,
                             reference = list(mean = rmean, prec = prec))
}

test_that("the gradient move alone samples the un-augmented posterior, whatever its reference", {
  skip_if_not_installed("posterior")
  cs <- grad_case()
  expect_gt(cs$ex$ess, 2000)
  n <- nrow(cs$Y)
  # the move alone: no slice, contrast or common moves, the augmented step skipped
  lik <- list(type = "logistic_softmax", q = 3L, Y = cs$Y, bijective = FALSE, theta = cs$theta,
              slice_steps = 0, ref_steps = 0, ref_avg = 8, hmc_steps = 6)
  # a reference near the prior mean, and one centred far from the posterior (its
  # curvatures, and so its scales, taken there; a move sampling the reference, or a
  # wrong acceptance ratio, would land far from the importance-sampling values)
  far <- matrix(c(3, -3, 0), n, 3, byrow = TRUE)
  expect_gt(max(abs(softmax_ref_probs(far, cs$theta) - cs$ex$mean)), 0.3)
  refs <- list(near = list(mean = cs$mu0, prec = matrix(0.5, n, 3)),
               far = list(mean = far, prec = matrix(20, n, 3)))
  # each reference without (rank 0) and with the metric adapted to the warm-up draws along
  # the kernel's leading eigenvectors (fixed after warm-up, so still exact; the far
  # reference's scales are off by far more)
  for (rank in c(0, 3)) for (r in names(refs)) {
    lab <- sprintf("%s reference, metric rank %d", r, rank)
    lik_r <- utils::modifyList(lik, list(hmc_rank = rank))
    res <- grad_chains(cs, lik_r, refs[[r]]$mean, refs[[r]]$prec, iter = 4000, warmup = 400)
    expect_true(all(res$grad_accept > 0.4), label = paste("acceptance,", lab))
    expect_true(all(lengths(res$grad_metric) == 3 * rank), label = paste("metric size,", lab))
    expect_true(all(unlist(res$grad_metric) > 0))
    P <- eng_ns$mcmc_response_draws(res$draws, lik_r, max_vars = Inf)
    m <- matrix(apply(P, 3, mean), n)
    se <- matrix(apply(P, 3, posterior::mcse_mean), n)
    z <- (m - cs$ex$mean) / sqrt(se^2 + cs$ex$se^2)
    expect_lt(max(abs(z)), 4.5, label = paste("max |z|,", lab))
    expect_lt(max(abs(m - cs$ex$mean)), 0.03, label = paste("max error,", lab))
  }
  # with the other moves (the default arrangement) too
  lik$ref_steps <- 2
  res <- grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 3000, warmup = 300)
  P <- eng_ns$mcmc_response_draws(res$draws, lik, max_vars = Inf)
  m <- matrix(apply(P, 3, mean), n)
  z <- (m - cs$ex$mean) / sqrt(matrix(apply(P, 3, posterior::mcse_mean), n)^2 + cs$ex$se^2)
  expect_lt(max(abs(z)), 4.5)
})

test_that("the gradient move's step size adapts in warm-up only; draws follow the seed, not threads", {
  cs <- grad_case()
  n <- nrow(cs$Y)
  lik <- list(type = "logistic_softmax", q = 3L, Y = cs$Y, bijective = FALSE, theta = cs$theta,
              slice_steps = 0, ref_steps = 1, hmc_steps = 4)
  a <- grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 40, warmup = 30)
  b <- grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 80, warmup = 30)
  # (iter counts the warm-up) the same step size after warm-up however long the run,
  # and the same first draws
  expect_identical(a$grad_eps, b$grad_eps)
  expect_identical(a$draws, b$draws[1:10, , , drop = FALSE])
  # a different warm-up adapts to a different step size
  c2 <- grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 40, warmup = 20)
  expect_false(identical(a$grad_eps, c2$grad_eps))
  # chains on 1 or 2 threads give the same draws
  expect_identical(a$draws, grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 40, warmup = 30,
                                        threads = 2)$draws)
  # the adapted metric: the same on 1 or 2 threads; none without the setting or when the
  # warm-up is too short for its window (fewer than 20 sweeps in it)
  lik_r <- utils::modifyList(lik, list(hmc_rank = 2))
  ra <- grad_chains(cs, lik_r, cs$mu0, matrix(0.5, n, 3), iter = 150, warmup = 100)
  expect_identical(ra$draws, grad_chains(cs, lik_r, cs$mu0, matrix(0.5, n, 3), iter = 150,
                                         warmup = 100, threads = 2)$draws)
  expect_true(all(lengths(ra$grad_metric) == 6))
  expect_false(identical(ra$draws, grad_chains(cs, lik, cs$mu0, matrix(0.5, n, 3), iter = 150,
                                               warmup = 100)$draws))
  expect_true(all(lengths(a$grad_metric) == 0))
  expect_true(all(lengths(grad_chains(cs, lik_r, cs$mu0, matrix(0.5, n, 3), iter = 40,
                                      warmup = 30)$grad_metric) == 0))
  expect_error(grad_chains(cs, utils::modifyList(lik, list(hmc_rank = -1)), cs$mu0,
                           matrix(0.5, n, 3), iter = 10, warmup = 5), "hmc_rank")
  # the move changes the draws; without it (hmc_steps = 0) no step size is adapted
  lik0 <- utils::modifyList(lik, list(hmc_steps = 0))
  d0 <- grad_chains(cs, lik0, cs$mu0, matrix(0.5, n, 3), iter = 40, warmup = 30)
  expect_false(identical(a$draws, d0$draws))
  expect_true(all(d0$grad_accept == 0))
  expect_true(all(is.finite(a$draws)))
  # bad settings are refused with the field named
  expect_error(grad_chains(cs, utils::modifyList(lik, list(hmc_steps = -1)), cs$mu0,
                           matrix(0.5, n, 3), iter = 10, warmup = 5), "hmc_steps")
  expect_error(grad_chains(cs, utils::modifyList(lik, list(hmc_moves = 0)), cs$mu0,
                           matrix(0.5, n, 3), iter = 10, warmup = 5), "hmc_moves")
})
