# Kernel conformance: every kernel family goes through one shared check of the C++
# kernel module (values, log-parameter gradients in matrix and contracted form, the
# diagonal and its gradients, derivatives in the second input set).
kc_ns <- asNamespace("augmentedGP")

set.seed(303)
kc_x <- matrix(stats::rnorm(15 * 3), 15, 3)
kc_y <- matrix(stats::rnorm(6 * 3), 6, 3)
# the last row of z coincides with a row of x (r = 0 in the input derivatives)
kc_z <- rbind(matrix(stats::rnorm(5 * 3), 5, 3), kc_x[4, ])
kc_M <- matrix(stats::rnorm(15 * 15), 15, 15)  # not symmetric on purpose
kc_h <- 1e-5   # central-difference step, on log parameters and on input coordinates
kc_tol <- 1e-6  # relative to max(1, |finite difference|)

# Largest deviation of an analytic derivative from its finite difference, relative to
# max(1, max |finite difference|).
kc_fd_err <- function(analytic, fd) max(abs(analytic - fd)) / max(1, max(abs(fd)))

kc_spec <- function(fl, theta) {
  fl$theta <- theta
  fl
}

kc_K <- function(fl, a, b = a) kc_ns$.gp_kernel_matrix_cpp(fl, a, b, 0)

# Central difference in log parameter j of f(spec).
kc_fd_theta <- function(fl, j, f) {
  e <- replace(numeric(length(fl$theta)), j, kc_h)
  (f(kc_spec(fl, fl$theta + e)) - f(kc_spec(fl, fl$theta - e))) / (2 * kc_h)
}

check_kernel <- function(k) {
  info <- format(k)
  fl <- kc_ns$kernel_flatten(k)
  np <- length(fl$theta)
  x <- kc_x
  n <- nrow(x)

  # K(x, x): symmetric, positive semi-definite
  K <- kc_K(fl, x)
  expect_equal(dim(K), c(n, n), info = info)
  expect_lte(max(abs(K - t(K))), 1e-14 * max(abs(K)))
  ev <- eigen((K + t(K)) / 2, symmetric = TRUE, only.values = TRUE)$values
  expect_gte(min(ev), -1e-8 * max(diag(K)))

  # K(x, y) is the off-diagonal block of K([x; y], [x; y])
  Kxy <- kc_K(fl, x, kc_y)
  Kall <- kc_K(fl, rbind(x, kc_y))
  expect_equal(Kxy, Kall[seq_len(n), n + seq_len(nrow(kc_y))], tolerance = 1e-12, info = info)
  expect_equal(K, Kall[seq_len(n), seq_len(n)], tolerance = 1e-12, info = info)
  expect_equal(t(kc_K(fl, kc_y, x)), Kxy, tolerance = 1e-12, info = info)

  # gradients in every log parameter: matrix form against finite differences
  g <- kc_ns$.gp_kernel_grad_cpp(fl, x)
  expect_equal(g$K, K, tolerance = 1e-14, info = info)
  expect_length(g$grad, np)
  for (j in seq_len(np)) {
    fd <- kc_fd_theta(fl, j, function(s) kc_K(s, x))
    expect_lt(kc_fd_err(g$grad[[j]], fd), kc_tol, label = paste(info, "dK/dtheta", j))
  }

  # the contraction equals sum(M * dK)
  contracted <- kc_ns$.gp_kernel_contract_cpp(fl, x, kc_M)
  expect_length(contracted, np)
  expect_equal(contracted, vapply(g$grad, function(D) sum(kc_M * D), 0), tolerance = 1e-10,
               info = info)

  # diagonal and its gradients; K(x, z) and dK(x, z) / dz
  ex <- kc_ns$.sparse_kernel_extra_cpp(fl, x, kc_z)
  expect_equal(ex$kdiag, diag(K), tolerance = 1e-12, info = info)
  expect_equal(kc_ns$.gp_kernel_diag_cpp(fl, x), diag(K), tolerance = 1e-12, info = info)
  expect_length(ex$kdiag_grad, np)
  for (j in seq_len(np)) {
    fd <- kc_fd_theta(fl, j, function(s) kc_ns$.gp_kernel_diag_cpp(s, x))
    expect_lt(kc_fd_err(ex$kdiag_grad[[j]], fd), kc_tol, label = paste(info, "dkdiag/dtheta", j))
    expect_equal(ex$kdiag_grad[[j]], diag(g$grad[[j]]), tolerance = 1e-12, info = info)
  }
  expect_equal(ex$K, kc_K(fl, x, kc_z), tolerance = 1e-12, info = info)
  expect_length(ex$dz, ncol(x))
  for (c in seq_len(ncol(x))) {
    # K(x_i, z_j) depends on row j of z only: shifting column c of every row at once
    # gives dK(x_i, z_j) / dz_jc for all (i, j)
    E <- matrix(0, nrow(kc_z), ncol(kc_z))
    E[, c] <- kc_h
    fd <- (kc_K(fl, x, kc_z + E) - kc_K(fl, x, kc_z - E)) / (2 * kc_h)
    expect_equal(dim(ex$dz[[c]]), dim(fd))
    expect_lt(kc_fd_err(ex$dz[[c]], fd), kc_tol, label = paste(info, "dK/dz", c))
  }
}

test_that("SE, isotropic", { check_kernel(kernel_se(1.3, 0.7)) })
test_that("SE, ARD", { check_kernel(kernel_se(0.8, c(0.5, 1.2, 2))) })
test_that("Matern 1/2, isotropic", { check_kernel(kernel_matern(0.5, 1.1, 0.9)) })
test_that("Matern 1/2, ARD", { check_kernel(kernel_matern(0.5, 0.7, c(0.9, 1.4, 2.2))) })
test_that("Matern 3/2, isotropic", { check_kernel(kernel_matern(1.5, 2, 0.8)) })
test_that("Matern 3/2, ARD", { check_kernel(kernel_matern(1.5, 1.2, c(1, 2, 0.5))) })
test_that("Matern 5/2, isotropic", { check_kernel(kernel_matern(2.5, 0.5, 1.2)) })
test_that("Matern 5/2, ARD", { check_kernel(kernel_matern(2.5, 0.9, c(0.6, 1.5, 1.1))) })
test_that("linear, isotropic", { check_kernel(kernel_linear(0.7, 1.3)) })
test_that("linear, ARD", { check_kernel(kernel_linear(0.7, c(1, 2, 3))) })
test_that("periodic, isotropic", { check_kernel(kernel_periodic(1.2, 0.8, 1.7)) })
test_that("periodic, ARD", { check_kernel(kernel_periodic(1, c(0.8, 1.1, 1.4), 2.3)) })
test_that("constant", { check_kernel(kernel_constant(1.7)) })
test_that("sum", { check_kernel(kernel_se(1, 0.8) + kernel_linear(0.3, c(1, 2, 0.5))) })
test_that("linear plus constant, and a constant factor", {
  check_kernel(kernel_linear(0.7, c(1, 2, 3)) + kernel_constant(0.4))
  check_kernel(kernel_constant(2.2) * kernel_se(1, 0.8, dims = 2) + kernel_constant(0.3))
})
test_that("product", { check_kernel(kernel_matern(1.5, 1, c(1, 2, 1.5)) * kernel_periodic(2, 1, 3)) })
test_that("nested", {
  check_kernel((kernel_se(1, c(1, 2, 1)) + kernel_matern(0.5, 0.7, 1.1)) * kernel_linear(1, 2))
})
test_that("nested, deeper", {
  check_kernel(kernel_periodic(0.9, 1.2, 2.5) *
                 (kernel_matern(2.5, 0.6, 1.4) + kernel_se(0.5, c(0.8, 1.6, 1.2)) * kernel_linear(0.4)))
})

# kernels on some of the inputs (active inputs); the input derivatives in the other
# columns are zero, and the finite differences check that too
test_that("SE on one input", { check_kernel(kernel_se(1.3, 0.7, dims = 2)) })
test_that("Matern 3/2 on two inputs, ARD, out of order", {
  check_kernel(kernel_matern(1.5, 1.2, c(0.6, 2), dims = c(3, 1)))
})
test_that("periodic on one input", { check_kernel(kernel_periodic(1, 0.8, 2.3, dims = 1)) })
test_that("additive: a sum of kernels on different inputs", {
  check_kernel(kernel_se(1, 0.8, dims = 1) + kernel_matern(2.5, 0.5, 1.2, dims = 2) +
                 kernel_linear(0.3, 2, dims = 3))
})
test_that("product of kernels on different inputs, with a kernel on all of them", {
  check_kernel((kernel_se(1, c(1, 2), dims = c(1, 3)) * kernel_matern(0.5, 0.7, 1.1, dims = 2)) +
                 kernel_se(0.5, 1.5))
})

test_that("the finite-difference comparison rejects a derivative off by 0.1%", {
  fl <- kc_ns$kernel_flatten(kernel_matern(1.5, 1.2, c(1, 2, 0.5)))
  g <- kc_ns$.gp_kernel_grad_cpp(fl, kc_x)$grad
  for (j in seq_along(g)) {
    fd <- kc_fd_theta(fl, j, function(s) kc_K(s, kc_x))
    expect_lt(kc_fd_err(g[[j]], fd), kc_tol)
    expect_gt(kc_fd_err(g[[j]] * 1.001, fd), kc_tol)
  }
})
