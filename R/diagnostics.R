# MCMC convergence diagnostics of Gibbs fits.

# Split R-hat and bulk effective sample size for the latent values, from an
# array [iterations, chains, variables]; at most `max_vars` of them, evenly
# spaced, to keep summaries fast. Uses posterior when installed.
mcmc_diagnostics <- function(draws, max_vars = 200L) {
  if (is.null(draws)) return(data.frame(rhat = NA_real_, ess = NA_real_))
  nv <- dim(draws)[3]
  idx <- if (nv > max_vars) unique(round(seq(1, nv, length.out = max_vars))) else seq_len(nv)
  rhat <- ess <- numeric(length(idx))
  use_post <- requireNamespace("posterior", quietly = TRUE)
  for (k in seq_along(idx)) {
    j <- idx[k]
    m <- matrix(draws[, , j], nrow = dim(draws)[1])
    if (use_post) {
      rhat[k] <- posterior::rhat(m)
      ess[k] <- posterior::ess_bulk(m)
    } else {
      rhat[k] <- split_rhat(m)
      ess[k] <- ess_basic(m)
    }
  }
  data.frame(variable = idx, rhat = rhat, ess = ess)
}

# Split R-hat (Gelman et al.): each chain is cut in half, then the classical
# between/within variance ratio is computed on the halves.
split_rhat <- function(m) {
  n <- nrow(m)
  h <- floor(n / 2)
  if (h < 2) return(NA_real_)
  halves <- cbind(m[seq_len(h), , drop = FALSE], m[n - h + seq_len(h), , drop = FALSE])
  W <- mean(apply(halves, 2, stats::var))
  B <- h * stats::var(colMeans(halves))
  if (!is.finite(W) || W <= 0) return(NA_real_)
  sqrt(((h - 1) / h * W + B / h) / W)
}

# Effective sample size from the chains' pooled autocorrelations, truncated by
# Geyer's initial positive sequence.
ess_basic <- function(m) {
  n <- nrow(m)
  k <- ncol(m)
  if (n < 4) return(NA_real_)
  W <- mean(apply(m, 2, stats::var))
  if (!is.finite(W) || W <= 0) return(NA_real_)
  B <- if (k > 1) n * stats::var(colMeans(m)) else 0
  vhat <- (n - 1) / n * W + B / n
  acov <- sapply(seq_len(k), function(c) {
    stats::acf(m[, c], lag.max = n - 1, type = "covariance", plot = FALSE)$acf[, 1, 1]
  })
  acov <- matrix(acov, ncol = k)
  rho <- 1 - (W - rowMeans(acov)) / vhat
  rho[1] <- 1
  s <- 0
  t <- 1
  while (t + 1 <= length(rho)) {
    pair <- rho[t] + rho[t + 1]
    if (pair < 0) break
    s <- s + pair
    t <- t + 2
  }
  tau <- -1 + 2 * s
  n * k / max(tau, 1 / log10(n * k))
}
