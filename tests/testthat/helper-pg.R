# Exact cumulants of PG(b, c): kappa_j = b (j-1)! sum_k d_k^(-j), d_k = 2 pi^2 (k - 1/2)^2 + c^2 / 2.
pg_cumulant <- function(j, b, c) {
  k <- seq_len(200000)
  d <- 2 * pi^2 * (k - 0.5)^2 + c^2 / 2
  s <- sum(d^(-j))
  # tail of the sum beyond k = 2e5 by the integral approximation
  K <- max(k) + 0.5
  s <- s + (2 * pi^2)^(-j) * K^(1 - 2 * j) / (2 * j - 1)
  b * factorial(j - 1) * s
}

# Laplace transform E[exp(-t omega)].
pg_laplace <- function(t, b, c) {
  exp(b * (log(cosh(c / 2)) - log(cosh(sqrt(c^2 / 4 + t / 2)))))
}
