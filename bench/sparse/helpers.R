# Shared helpers of the sparse benchmarks (sourced from the package root):
# simulated twonorm / ringnorm data, E[sigma(f)] by Gauss-Hermite quadrature, and
# held-out error and log loss.
simulate <- function(data, n, seed) {
  set.seed(seed)
  s <- if (data == "twonorm") mlbench::mlbench.twonorm(n, d = 20) else mlbench::mlbench.ringnorm(n, d = 20)
  list(X = unname(as.matrix(s$x)), y = as.numeric(s$classes == levels(s$classes)[2]))
}

# E[plogis(f)], f ~ N(m, v), by 32-point Gauss-Hermite quadrature.
gh <- local({
  m <- 32
  i <- seq_len(m - 1)
  J <- matrix(0, m, m)
  J[cbind(i, i + 1)] <- J[cbind(i + 1, i)] <- sqrt(i / 2)
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = e$vectors[1, ]^2)
})
prob_of <- function(m, v) {
  s <- sqrt(2 * pmax(v, 0))
  p <- numeric(length(m))
  for (k in seq_along(gh$x)) p <- p + gh$w[k] * stats::plogis(m + s * gh$x[k])
  p
}
metrics <- function(p, y) {
  p <- pmin(pmax(p, 1e-12), 1 - 1e-12)
  c(error = mean((p > 0.5) != (y == 1)), logloss = -mean(y * log(p) + (1 - y) * log(1 - p)))
}
