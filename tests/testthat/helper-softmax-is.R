# Reference values for the logistic-softmax sampler tests, written independently of the
# package: class probabilities theta_k sigma(f_k) / sum_j theta_j sigma(f_j), and their
# posterior means (with standard errors and the effective sample size) by
# self-normalised importance sampling from the prior N(mu0, K) per column, S draws.
softmax_ref_probs <- function(f, theta) {
  w <- sweep(stats::plogis(f), 2, theta, "*")
  w / rowSums(w)
}

softmax_ref_is <- function(K, Y, theta, mu0, S, seed) {
  set.seed(seed)
  n <- nrow(Y)
  L <- t(chol(K))
  logw <- numeric(S)
  P <- array(0, c(S, n, ncol(Y)))
  for (s in seq_len(S)) {
    p <- softmax_ref_probs(mu0 + L %*% matrix(stats::rnorm(n * ncol(Y)), n), theta)
    logw[s] <- sum(Y * log(p))
    P[s, , ] <- p
  }
  w <- exp(logw - max(logw))
  w <- w / sum(w)
  list(mean = apply(P, 2:3, function(v) sum(w * v)),
       se = sqrt(apply(P, 2:3, function(v) sum(w^2 * (v - sum(w * v))^2))), ess = 1 / sum(w^2))
}
