# The marginal variances of q(f) after a CAVI sweep are diag((K^-1 + W)^-1) for the
# sites W = diag(omega) the sweep used, at sizes that exercise the triangular
# inverse's base blocks, one level of its recursion and several.
cv_ns <- asNamespace("augmentedGP")

test_that("CAVI marginal variances equal diag((K^-1 + W)^-1) at every size", {
  for (n in c(7L, 33L, 100L, 260L)) {
    set.seed(n)
    X <- matrix(rnorm(2 * n), n, 2)
    K <- cv_ns$engine_K(kernel_se(variance = 2, lengthscale = 0.8), X, 1e-6)
    y <- rbinom(n, 3, 0.4)
    lik <- cv_ns$engine_lik(y, rep(3, n))
    res <- cv_ns$engine_cavi(K, lik, matrix(0, n, 1), NULL, NULL, 3L, 1e-12)
    om <- as.numeric(res$omega_q)
    S <- solve(solve(K) + diag(om))
    expect_equal(as.numeric(res$v), diag(S), tolerance = 1e-8, label = paste("n =", n))
  }
})
