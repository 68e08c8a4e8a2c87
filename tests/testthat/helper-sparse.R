# Shared helpers of the test-sparse-* files: the namespace and a small binary problem
# (two inputs, a smooth latent function).
sp_ns <- asNamespace("augmentedGP")

sp_data <- function(n, d = 2, seed = 1) {
  set.seed(seed)
  X <- matrix(stats::rnorm(n * d), n)
  f <- sin(2 * X[, 1]) + 0.5 * X[, 2]
  list(X = X, y = stats::rbinom(n, 1, stats::plogis(2 * f)), n = n)
}
