# Sparse GP, minibatch passes on the direct ELBO E_q[log p(y | f)] - KL(q(u) || p(u)):
# the value equals the refinement's, the gradients in the log kernel parameters and in
# Z are the value's derivatives (whitened q(u) held fixed), minibatch estimates average
# to the full-data ones, and a direct SVI step of rate 1 on all the data is a full
# refinement step.

dsv_problem <- function(n = 90, seed = 61) {
  set.seed(seed)
  X <- matrix(stats::rnorm(n * 2), n)
  cls <- max.col(cbind(X[, 1], -X[, 1], X[, 2]) + matrix(stats::rnorm(n * 3, sd = 0.6), n))
  lik <- list(type = "logistic_softmax", q = 3L, Y = diag(3)[cls, ], bijective = FALSE,
              theta = c(1, 1, 1))
  mu0 <- matrix(-1, n, 3)
  k <- kernel_se(variance = 2.5, lengthscale = c(0.8, 1.4))
  spec <- sp_ns$kernel_flatten(k)
  Z <- X[seq(1, n, length.out = 9), ] + 0.03
  st <- sp_ns$.sparse_cavi_cpp(X, mu0, lik, 15L, spec, Z, 1e-6, NULL, 4L, 0, 2L)
  list(X = X, lik = lik, mu0 = mu0, k = k, spec = spec, Z = Z, st = st, n = n)
}

test_that("the direct minibatch pass: value of the refinement, exact gradients, unbiased batches", {
  pb <- dsv_problem()
  Zd <- sp_ns$direct_elbo_normals(20000L, 3L)
  tol_grad <- 3e-3
  batch <- function(spec = pb$spec, Z = pb$Z, ids = 0:5, grad = TRUE) {
    sp_ns$.sparse_batch_cpp(pb$X, pb$mu0, pb$lik, 15L, spec, Z, pb$st$jitter, pb$st$state,
                            as.integer(ids), grad, grad, 2L, Zd)
  }
  full <- batch()
  expect_equal(full$scale, 1)
  # the value is the refinement's direct ELBO of the same q(u) (a refinement of no rounds)
  rf <- sp_ns$.sparse_refine_cpp(pb$X, pb$mu0, pb$lik, 15L, pb$spec, pb$Z, pb$st$jitter, pb$st$state,
                                 Zd, 0L, 0.5, 1e-9, 2L)
  expect_equal(full$elbo, rf$direct[1], tolerance = 1e-10)
  # gradients against central differences of the value at the same q(u) (held fixed in
  # the coordinates of u, as the search's gradients are: the state re-whitened under the
  # moved kernel or Z); the draws are fixed, and their number large enough that the
  # gradient's Stein form E[d2 log p] / 2 for the variances matches the derivative of
  # the draws' average. The augmented pass is checked the same way (it has its own
  # reference test), so the re-whitening here is checked too.
  chol_mm <- function(spec, Z) {
    K <- sp_ns$.sparse_kernel_extra_cpp(spec, Z, Z)$K
    t(chol(K + diag(pb$st$jitter, nrow(Z))))
  }
  L0 <- chol_mm(pb$spec, pb$Z)
  rewhiten <- function(spec, Z) {
    A <- forwardsolve(chol_mm(spec, Z), L0)
    lapply(seq_along(pb$st$state$Lam), function(j) {
      S <- A %*% solve(pb$st$state$Lam[[j]]) %*% t(A)
      Lam <- solve((S + t(S)) / 2)
      list(Lam = (Lam + t(Lam)) / 2,
           h = drop(Lam %*% A %*% solve(pb$st$state$Lam[[j]], pb$st$state$h[[j]])))
    })
  }
  value <- function(spec, Z, direct = TRUE) {
    w <- rewhiten(spec, Z)
    st <- list(Lam = lapply(w, `[[`, "Lam"), h = lapply(w, `[[`, "h"))
    sp_ns$.sparse_batch_cpp(pb$X, pb$mu0, pb$lik, 15L, spec, Z, pb$st$jitter, st, 0:5, FALSE, FALSE,
                            2L, if (direct) Zd)$elbo
  }
  expect_equal(value(pb$spec, pb$Z), full$elbo, tolerance = 1e-10)
  aug <- sp_ns$.sparse_batch_cpp(pb$X, pb$mu0, pb$lik, 15L, pb$spec, pb$Z, pb$st$jitter,
                                 pb$st$state, 0:5, TRUE, TRUE, 2L)
  th <- sp_ns$kernel_get_params(pb$k)
  h <- 1e-5
  fd_theta <- function(direct) {
    vapply(seq_along(th), function(i) {
      e <- replace(numeric(length(th)), i, h)
      val <- function(t) value(sp_ns$kernel_flatten(sp_ns$kernel_set_params(pb$k, t)), pb$Z, direct)
      (val(th + e) - val(th - e)) / (2 * h)
    }, 0)
  }
  fd_z <- function(direct) {
    vapply(c(2, 11, 16), function(i) {
      Zp <- pb$Z
      Zm <- pb$Z
      Zp[i] <- Zp[i] + h
      Zm[i] <- Zm[i] - h
      (value(pb$spec, Zp, direct) - value(pb$spec, Zm, direct)) / (2 * h)
    }, 0)
  }
  expect_equal(aug$grad, fd_theta(FALSE), tolerance = 1e-6)
  expect_equal(aug$gz[c(2, 11, 16)], fd_z(FALSE), tolerance = 1e-6)
  expect_equal(full$grad, fd_theta(TRUE), tolerance = tol_grad)
  expect_equal(full$gz[c(2, 11, 16)], fd_z(TRUE), tolerance = tol_grad)
  # the augmented pass gives other values and gradients (the test can tell them apart)
  expect_gt(abs(aug$elbo - full$elbo), 1)
  expect_gt(max(abs(aug$grad - full$grad)), 1e-2)
  # minibatches of two blocks (scale 3) average to the full-data value, gradients and target
  parts <- lapply(list(0:1, 2:3, 4:5), function(b) batch(ids = b))
  expect_equal(parts[[1]]$scale, 3)
  avg <- function(f) Reduce(`+`, lapply(parts, f)) / 3
  expect_equal(avg(function(p) p$elbo), full$elbo, tolerance = 1e-10)
  expect_equal(avg(function(p) p$grad), full$grad, tolerance = 1e-9)
  expect_equal(avg(function(p) p$gz), full$gz, tolerance = 1e-9)
  expect_equal(avg(function(p) p$target$h[[2]]), full$target$h[[2]], tolerance = 1e-10)
  # a direct SVI step of rate 1 on a batch of all the data moves q(u) to the refinement's
  # full natural-gradient target
  one <- sp_ns$.sparse_svi_cpp(pb$X, pb$mu0, pb$lik, 15L, pb$spec, pb$Z, pb$st$jitter, pb$st$state,
                               0L, 6L, 0, 0.6, 0, FALSE, FALSE, 0L, TRUE, 0, 2L, NULL, NULL, Zd)
  expect_equal(one$state$Lam, full$target$Lam, tolerance = 1e-12)
  expect_equal(one$state$h, full$target$h, tolerance = 1e-12)
})

dsv_classes <- function(n, seed) {
  set.seed(seed)
  X <- matrix(stats::rnorm(n * 2), n)
  F <- cbind(2 * sin(1.5 * X[, 1]), X[, 2]^2 - 1, -X[, 1] * X[, 2])
  P <- exp(F) / rowSums(exp(F))
  y <- factor(apply(P, 1, function(p) sample.int(3, 1, prob = p)), levels = 1:3)
  list(X = X, y = y)
}

test_that("minibatch multi-class fits end with direct-ELBO epochs that raise the direct ELBO", {
  dd <- dsv_classes(1200, 62)
  fit <- function(refine, threads = 1) {
    augp_fit(dd$X, dd$y, inducing = 20, seed = 5,
             control = augp_control(batch_size = 100, threads = threads, refine = refine,
                                    hyper_subsample = 400))
  }
  f0 <- fit(FALSE)
  f1 <- fit("auto")
  e0 <- f0$engine
  e1 <- f1$engine
  expect_null(e0$svi_direct)
  dr <- e1$svi_direct
  expect_type(dr$trace, "double")
  # one augmented epoch, then svi_epochs = 3 epochs of 12 minibatches on the direct ELBO
  expect_equal(e1$sparse$epochs, 1)
  expect_equal(e0$sparse$epochs, 3)
  expect_identical(dr$iterations, 36L)
  expect_equal(dr$epochs, 3)
  expect_true(all(is.finite(dr$trace)))
  # elbo() is the direct ELBO of the final q(u): an independent pass over the data
  mu0 <- sp_ns$sparse_mean0(e1$mean0, nrow(e1$X), e1$q)
  ref <- sp_ns$.sparse_refine_cpp(e1$X, mu0, e1$lik, 64L, sp_ns$kernel_flatten(e1$kernel), e1$Z, e1$jitter,
                                  e1$state, sp_ns$direct_elbo_normals(sp_ns$SVI_DIRECT_ELBO_DRAWS, 3L),
                                  0L, 0.5, 1e-9, 1L)
  expect_equal(elbo(f1), ref$direct[1], tolerance = 1e-8)
  expect_equal(unname(e1$mean), unname(ref$mean), tolerance = 1e-10)
  # and it is above the direct ELBO of the augmented fit's q(u) (same draws)
  ref0 <- sp_ns$.sparse_refine_cpp(e0$X, mu0, e0$lik, 64L, sp_ns$kernel_flatten(e0$kernel), e0$Z, e0$jitter,
                                   e0$state, sp_ns$direct_elbo_normals(sp_ns$SVI_DIRECT_ELBO_DRAWS, 3L),
                                   0L, 0.5, 1e-9, 1L)
  expect_gt(elbo(f1), ref0$direct[1] + 1)
  # print(), summary() and the ELBO plot say so
  out <- capture.output(print(f1))
  expect_true(any(grepl("Direct ELBO (full data)", out, fixed = TRUE)))
  expect_true(any(grepl("then 3 epochs on the direct ELBO", out, fixed = TRUE)))
  expect_true(any(grepl("Direct ELBO (full data)", capture.output(print(summary(f1))), fixed = TRUE)))
  g <- plot(f1, type = "elbo")
  expect_s3_class(g, "ggplot")
  expect_setequal(unique(g$data$bound), c("augmented", "direct"))
  expect_false(any(grepl("direct", capture.output(print(f0)), fixed = TRUE)))
  # the same fit on two threads
  f2 <- fit("auto", threads = 2)
  expect_identical(f2$engine$state, e1$state)
  expect_identical(f2$engine$kernel, e1$kernel)
})
