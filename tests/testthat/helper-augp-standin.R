# A small pure-R stand-in for the inference engine and the SE kernel, used only
# while the real ones (R/engine.R, R/kernels.R) are not in the package. When the
# package defines them, nothing here is used.
local({
  ns <- if (exists(".augp_dev_env")) .augp_dev_env else asNamespace("augmentedGP")
  if (environmentIsLocked(ns)) return(invisible())
  if (!exists("kernel_se", envir = ns, inherits = FALSE)) {
    ks <- function(variance = 1, lengthscale = 1) {
      structure(list(type = "se", variance = variance, lengthscale = lengthscale),
                class = c("augp_kernel_se", "augp_kernel"))
    }
    environment(ks) <- ns
    assign("kernel_se", ks, envir = ns)
  }
  if (!exists("augp_engine", envir = ns, inherits = FALSE)) {
    kmat <- function(k, A, B = A) {
      ls <- rep(k$lengthscale, length.out = ncol(A))
      A <- sweep(A, 2, ls, "/"); B <- sweep(B, 2, ls, "/")
      d2 <- outer(rowSums(A^2), rowSums(B^2), "+") - 2 * A %*% t(B)
      k$variance * exp(-pmax(d2, 0) / 2)
    }
    eng <- function(X, y, trials, kernel, method = c("vi", "gibbs"), control, seed = NULL,
                    mean0 = 0) {
      method <- match.arg(method)
      n <- nrow(X)
      jit <- control$jitter
      if (any(duplicated(X))) jit <- max(jit, 1e-4)
      K <- kmat(kernel, X) + diag(jit, n)
      kap <- y - trials / 2
      step <- function(w) {
        sw <- sqrt(w)
        B <- diag(n) + outer(sw, sw) * K
        L <- chol(B)
        A <- backsolve(L, forwardsolve(t(L), diag(sw)))
        S <- K - K %*% (sw * A) %*% K
        m <- S %*% (kap + solve(K, rep(mean0, n)))
        list(m = drop(m), S = S)
      }
      out <- list(kernel = kernel, X = X, y = y, trials = trials, method = method,
                  mean0 = mean0, jitter = jit, K = K)
      if (method == "vi") {
        m <- rep(mean0, n); v <- diag(K); elbo <- numeric(0); conv <- FALSE
        for (it in seq_len(control$maxit)) {
          cc <- sqrt(m^2 + v)
          th <- ifelse(cc < 1e-6, trials / 4, trials * tanh(cc / 2) / (2 * cc))
          st <- step(th)
          m <- st$m; v <- diag(st$S)
          Lk <- chol(K)
          KS <- backsolve(Lk, forwardsolve(t(Lk), st$S))
          dm <- backsolve(Lk, forwardsolve(t(Lk), m - mean0))
          kl <- 0.5 * (sum(diag(KS)) + sum((m - mean0) * dm) - n +
                         2 * sum(log(diag(Lk))) - as.numeric(determinant(st$S)$modulus))
          cc <- sqrt(m^2 + v)
          th <- ifelse(cc < 1e-6, trials / 4, trials * tanh(cc / 2) / (2 * cc))
          e <- sum(-trials * log(2) + kap * m - (m^2 + v) * th / 2 -
                     (trials * log(cosh(cc / 2)) - cc^2 * th / 2)) - kl
          elbo <- c(elbo, e)
          if (it > 1 && abs(e - elbo[it - 1]) < control$tol * abs(e)) { conv <- TRUE; break }
        }
        out$mean <- m; out$var <- v; out$S <- st$S; out$elbo <- elbo
        out$converged <- conv; out$draws <- NULL
      } else {
        if (!is.null(seed)) set.seed(seed)
        keep <- seq(control$warmup + 1, control$iter, by = control$thin)
        dr <- array(0, c(length(keep), control$chains, n))
        Lk <- t(chol(K))
        for (ch in seq_len(control$chains)) {
          f <- rep(mean0, n); j <- 0
          for (it in seq_len(control$iter)) {
            w <- rpg(n, pmax(trials, 1e-8), f)
            st <- step(w)
            f <- st$m + drop(t(chol(st$S + diag(1e-9, n))) %*% stats::rnorm(n))
            if (it %in% keep) { j <- j + 1; dr[j, ch, ] <- f }
          }
        }
        fm <- matrix(dr, ncol = n)
        out$mean <- colMeans(fm); out$var <- apply(fm, 2, stats::var)
        out$draws <- dr; out$elbo <- NULL; out$converged <- NA
      }
      class(out) <- "augp_engine"
      out
    }
    pred <- function(fit, Xnew, draws = FALSE) {
      Ks <- kmat(fit$kernel, Xnew, fit$X)
      kss <- rep(fit$kernel$variance, nrow(Xnew))
      Ki <- solve(fit$K)
      if (fit$method == "vi") {
        m <- fit$mean0 + drop(Ks %*% Ki %*% (fit$mean - fit$mean0))
        A <- Ks %*% Ki
        v <- kss - rowSums(A * Ks) + rowSums((A %*% fit$S) * A)
        return(list(mean = m, var = pmax(v, 1e-12)))
      }
      fm <- matrix(fit$draws, ncol = nrow(fit$X))
      A <- Ks %*% Ki
      cv <- pmax(kss - rowSums(A * Ks), 1e-12)
      D <- fit$mean0 + t(A %*% t(fm - fit$mean0))
      D <- D + matrix(stats::rnorm(length(D)), nrow(D)) * rep(sqrt(cv), each = nrow(D))
      out <- list(mean = colMeans(D), var = apply(D, 2, stats::var))
      if (draws) out$draws <- D
      out
    }
    fenv <- new.env(parent = ns)
    fenv$kmat <- kmat
    environment(eng) <- fenv
    environment(pred) <- fenv
    assign("augp_engine", eng, envir = ns)
    assign("augp_engine_predict", pred, envir = ns)
  }
})
