# How much of the gap to the exact posterior is the CAVI q(f)? At the default fit's kernel,
# refine the Gaussian sites of q(f) (mean field over classes, as CAVI's) by conjugate-
# computation VI (Khan and Lin, 2017) on the un-augmented logistic-softmax likelihood:
# natural-gradient steps on the direct ELBO,
#   omega <- (1 - r) omega + r E[-d2 log p / df2],  kappa <- (1 - r) kappa + r (E[d log p / df] + E[-d2 log p / df2] m),
# the expectations over the factorised marginals N(m_ik, v_ik) by Monte Carlo (fixed normals),
# the Hessian's diagonal clipped at 1e-6 (the link is not log-concave). Starts from the CAVI
# sites (kappa = alpha + omega m); reports the direct ELBO and the test scores per round.
#
# Usage (from the package root, augmentedGP installed; one thread):
#   Rscript bench/multiclass/cvi_refine.R SET [splits] [rounds]   # SET: Vowel, fgl or iris
args <- commandArgs(trailingOnly = TRUE)
set_name <- args[1]
nspl <- if (length(args) >= 2) as.integer(args[2]) else 1L
rounds <- if (length(args) >= 3) as.integer(args[3]) else 40L
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))
splits <- set_splits(set_name, nspl)
ns <- asNamespace("augmentedGP")

# Per point and class: E[d log p / df], E[d2 log p / df2] and E[log p] under the marginals,
# p(y | f) = sigma(f_y) / sum_j sigma(f_j) (class weights 1).
moments <- function(m, v, yi, Z) {
  n <- nrow(m)
  q <- ncol(m)
  G <- H <- matrix(0, n, q)
  ell <- 0
  for (s in seq_len(nrow(Z))) {
    f <- m + sqrt(v) * rep(Z[s, ], each = n)
    sg <- stats::plogis(f)
    tot <- rowSums(sg)
    d1 <- sg * (1 - sg)
    g <- -d1 / tot
    h <- -(d1 * (1 - 2 * sg)) / tot + (d1 / tot)^2
    iy <- cbind(seq_len(n), yi)
    g[iy] <- g[iy] + (1 - sg[iy])
    h[iy] <- h[iy] - d1[iy]
    G <- G + g
    H <- H + h
    ell <- ell + sum(log(sg[iy] / tot))
  }
  list(G = G / nrow(Z), H = H / nrow(Z), ell = ell / nrow(Z))
}
# q(f_k) from the sites: mean, marginal variances, alpha = K^-1 m, KL to the prior N(0, K).
posterior <- function(K, kappa, omega) {
  n <- nrow(K)
  q <- ncol(kappa)
  m <- v <- al <- matrix(0, n, q)
  kl <- 0
  for (k in seq_len(q)) {
    sw <- sqrt(omega[, k])
    L <- chol(diag(n) + sw * t(sw * K))
    A <- backsolve(L, sw * K, transpose = TRUE)  # L^-T W^1/2 K
    m[, k] <- K %*% kappa[, k] - crossprod(A, backsolve(L, sw * (K %*% kappa[, k]), transpose = TRUE))
    v[, k] <- pmax(diag(K) - colSums(A^2), 1e-12)
    al[, k] <- kappa[, k] - omega[, k] * m[, k]
    Li <- backsolve(L, diag(n))
    kl <- kl + 0.5 * (sum(Li^2) + sum(m[, k] * al[, k]) - n + 2 * sum(log(diag(L))))
  }
  list(m = m, v = v, alpha = al, kl = kl)
}
predict_sites <- function(kernel, X, Xs, K, omega, alpha, Z) {
  Ks <- ns$.gp_kernel_matrix_cpp(ns$kernel_flatten(kernel), Xs, X, 0)
  kss <- kernel$variance
  ns_ <- nrow(Xs)
  q <- ncol(omega)
  M <- V <- matrix(0, ns_, q)
  for (k in seq_len(q)) {
    sw <- sqrt(omega[, k])
    L <- chol(diag(nrow(K)) + sw * t(sw * K))
    M[, k] <- Ks %*% alpha[, k]
    B <- backsolve(L, sw * t(Ks), transpose = TRUE)
    V[, k] <- pmax(kss - colSums(B^2), 1e-12)
  }
  P <- 0
  for (s in seq_len(nrow(Z))) {
    sg <- stats::plogis(M + sqrt(V) * rep(Z[s, ], each = ns_))
    P <- P + sg / rowSums(sg)
  }
  P / nrow(Z)
}

for (sp_i in seq_along(splits)) {
  sp <- splits[[sp_i]]
  dtr <- data.frame(sp$xtr, y = sp$ytr)
  fit <- suppressMessages(augp(y ~ ., data = dtr, seed = 1))
  e <- fit$engine
  X <- e$X
  Xs <- sweep(sweep(as.matrix(sp$xte[, colnames(fit$x_raw)]), 2, fit$centre, "-"), 2, fit$scale, "/")
  Xs <- Xs[, colnames(X), drop = FALSE]
  K <- ns$engine_K(e$kernel, X, e$jitter)
  yi <- max.col(e$lik$Y)
  q <- ncol(e$mean)
  Z <- withr::with_seed(5, matrix(stats::rnorm(300 * q), 300, q))
  Zp <- withr::with_seed(6, matrix(stats::rnorm(1000 * q), 1000, q))
  omega <- e$omega
  kappa <- e$alpha + omega * e$mean
  sc0 <- scores(predict(fit, data.frame(sp$xte)), sp$yte)
  cat(sprintf("%s split %d: CAVI fit %.4f / %.4f (kernel ls %.3g var %.3g)\n", set_name, sp_i,
              sc0[["error"]], sc0[["logloss"]], e$kernel$lengthscale[1], e$kernel$variance))
  r <- 0.5
  for (t in 0:rounds) {
    po <- posterior(K, kappa, omega)
    mo <- moments(po$m, po$v, yi, Z)
    if (t %% 10 == 0 || t == rounds) {
      P <- predict_sites(e$kernel, X, Xs, K, omega, po$alpha, Zp)
      colnames(P) <- levels(sp$ytr)
      sc <- scores(P, sp$yte)
      cat(sprintf("  round %2d: direct ELBO %.1f, test %.4f / %.4f\n", t, mo$ell - po$kl,
                  sc[["error"]], sc[["logloss"]]))
    }
    prec <- pmax(-mo$H, 1e-6)
    omega <- (1 - r) * omega + r * prec
    kappa <- (1 - r) * kappa + r * (mo$G + prec * po$m)
  }
}
