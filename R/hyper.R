# The one L-BFGS-B harness of the kernel hyperparameter searches (exact and sparse).
#
# hyper_optimise() maximises an expensive objective `eval(par)`, which returns
# list(value, gradient) (the profiled ELBO and its gradient; a non-finite value or
# gradient, or an error, marks a failed evaluation, seen by L-BFGS-B as -1e300 with a
# zero gradient). It keeps the last evaluation (L-BFGS-B asks for the value and then
# the gradient at the same point) and the best successful one.
#
# L-BFGS-B's first trial point is the Cauchy point of a unit-Hessian model, a step of
# the size of the gradient: from a median-distance start that is often the edge of the
# box (a poor kernel whose CAVI fit costs many sweeps). Scaling the objective by the
# largest starting gradient component makes the first step about one unit in log
# scale (`step` units with a warm start near the optimum, where a unit step overshoots
# into kernels whose CAVI fits cost many sweeps). factr keeps the stopping rule an absolute ELBO change of hyper_stop() nats:
# the relative reduction test uses max(|f| / fnscale, 1).
#
# alt: a second start, evaluated after theta0; the search starts from the better of
# the two. label and evals: the progress status per evaluation ("<label>, evaluation
# <k>, ELBO <value>", k counting on from evals; see R/progress.R). The progress
# within the current section moves towards 1 as the evaluations approach maxit + 2
# (L-BFGS-B takes about one evaluation per iteration; the total is not known ahead).
# Returns par and value (the best successful evaluation; theta0 and -Inf if none),
# path (the values of the evaluations that improved on the best so far, in order),
# evals (evals plus the number of evaluations run) and the stopping state of
# L-BFGS-B: code (optim's convergence code; NA if optim failed) and converged, FALSE
# only when the search stopped at `maxit` iterations (code 1) with the last one still
# gaining more than hyper_stop(). Codes 51/52 (L-BFGS-B's warnings, typically a line
# search that cannot improve a noisy objective) count as converged: raising maxit
# would not help.
hyper_optimise <- function(eval, theta0, lower, upper, ctl, maxit = ctl$hyper_maxit, alt = NULL,
                           label = "", evals = 0L, step = 1) {
  evals0 <- evals
  best <- new.env(parent = emptyenv())
  best$value <- -Inf
  best$par <- theta0
  best$path <- numeric(0)
  cache <- new.env(parent = emptyenv())
  f <- function(par) {
    if (identical(cache$par, par)) return(cache$v)
    o <- tryCatch(eval(par), error = function(e) NULL)
    evals <<- evals + 1L
    val <- if (is.null(o)) NA_real_ else as.numeric(o$value)
    g <- if (is.null(o)) NULL else as.numeric(o$gradient)
    ok <- length(val) == 1 && is.finite(val) && length(g) == length(par) && all(is.finite(g))
    if (ok) {
      v <- structure(val, gradient = g)
      if (val > best$value) {
        best$value <- val
        best$par <- par
        best$path <- c(best$path, val)
      }
    } else {
      v <- structure(-1e300, gradient = rep(0, length(par)))
    }
    progress_set((evals - evals0) / (maxit + 2),
                 sprintf("%sevaluation %d, ELBO %.6g", if (nzchar(label)) paste0(label, ", ") else "",
                         evals, as.numeric(v)))
    cache$par <- par
    cache$v <- v
    v
  }
  th <- theta0
  f0 <- as.numeric(f(th))
  if (!is.null(alt)) {
    f_alt <- as.numeric(f(alt))
    if (f_alt > f0) {
      th <- alt
      f0 <- f_alt
    }
  }
  g0 <- attr(f(th), "gradient")
  fscale <- max(1, abs(g0[is.finite(g0)])) / step
  factr <- hyper_stop(ctl, f0) / (max(fscale, abs(f0)) * .Machine$double.eps)
  opt <- tryCatch(
    stats::optim(th, function(par) -as.numeric(f(par)), function(par) -attr(f(par), "gradient"),
                 method = "L-BFGS-B", lower = lower, upper = upper,
                 control = list(maxit = maxit, factr = factr, pgtol = 0, fnscale = fscale)),
    error = function(e) NULL)
  code <- if (is.null(opt)) NA_integer_ else as.integer(opt$convergence)
  list(par = best$par, value = best$value, path = best$path, evals = evals, code = code,
       converged = !identical(code, 1L))
}

# A dense quasi-Newton (BFGS) maximiser under box constraints, for smooth exact
# objectives with few parameters (the exact Gaussian search, R/gaussian_exact.R), whose
# curvature estimate can be carried from one search to the next. `eval(par, grad)`
# returns list(value, gradient) as for hyper_optimise(), the gradient only when `grad`
# is TRUE: trial points of the line search are evaluated without it, the accepted point
# with it (an objective that keeps its factorisation between the two calls pays for the
# gradient only where it is used). `label`/`evals` progress and the return values are
# those of hyper_optimise(), plus H, the final inverse-Hessian estimate of the negated
# objective (to start the next search: on twice the data, where the objective is a sum
# over the rows, pass H / 2).
#
# Each iteration: the free variables are those not held at a bound by the gradient
# (at the lower bound with the gradient pointing down, or the upper one with it
# pointing up); the step is the quasi-Newton step H g on the free ones, projected on
# the box, with backtracking (halving, at most 30 times) until the Armijo condition
# f(x + t d) >= f(x) + 1e-4 g'(x + t d - x) holds; a direction that is not an ascent
# direction resets H. H is updated by the BFGS formula for the inverse Hessian when
# the curvature s'y is positive (s the step, y the decrease of the gradient). Without
# H0 the first step is scaled to `step` in the largest gradient component, and H to
# s'y / y'y before the first update (Nocedal and Wright, eq. 6.20). The search stops
# when a full quasi-Newton step (no backtracking) gains less than `tol` nats (default
# hyper_stop(); converged), when no step improves (converged: at the resolution of the
# objective), or after maxit iterations (converged FALSE). With need_H = FALSE the last
# accepted point's gradient is not computed (nor is H updated by that step).
hyper_bfgs <- function(eval, theta0, lower, upper, ctl, maxit = ctl$hyper_maxit, H0 = NULL,
                       alt = NULL, label = "", evals = 0L, step = 1, tol = NULL, need_H = TRUE) {
  evals0 <- evals
  p <- length(theta0)
  path <- numeric(0)
  best_v <- -Inf
  f <- function(par, grad = TRUE) {
    o <- tryCatch(eval(par, grad), error = function(e) NULL)
    evals <<- evals + 1L
    val <- if (is.null(o)) NA_real_ else as.numeric(o$value)
    g <- if (is.null(o) || !grad) NULL else as.numeric(o$gradient)
    ok <- length(val) == 1 && is.finite(val) && (!grad || (length(g) == p && all(is.finite(g))))
    if (ok && val > best_v) {
      best_v <<- val
      path <<- c(path, val)
    }
    progress_set((evals - evals0) / (maxit + 2),
                 sprintf("%sevaluation %d, ELBO %.6g", if (nzchar(label)) paste0(label, ", ") else "",
                         evals, if (ok) val else NA_real_))
    list(ok = ok, value = if (ok) val else -Inf, g = if (ok) g)
  }
  clip <- function(x) pmin(pmax(x, lower), upper)
  x <- clip(theta0)
  cur <- f(x)
  if (!is.null(alt)) {
    xa <- clip(alt)
    ca <- f(xa)
    if (ca$value > cur$value) {
      x <- xa
      cur <- ca
    }
  }
  if (!cur$ok) {
    return(list(par = x, value = -Inf, path = path, evals = evals, code = NA_integer_,
                converged = TRUE, H = H0))
  }
  if (is.null(tol)) tol <- hyper_stop(ctl, cur$value)
  fresh <- is.null(H0)
  H <- if (fresh) diag(step / max(1, abs(cur$g)), p) else H0
  converged <- FALSE
  it <- 0L
  while (it < maxit) {
    it <- it + 1L
    g <- cur$g
    held <- (x <= lower & g < 0) | (x >= upper & g > 0)
    free <- !held
    if (!any(free)) {
      converged <- TRUE
      break
    }
    d <- numeric(p)
    d[free] <- H[free, free, drop = FALSE] %*% g[free]
    if (!(sum(d * g) > 0)) {
      H <- diag(step / max(1, abs(g)), p)
      fresh <- TRUE
      d <- numeric(p)
      d[free] <- H[free, free, drop = FALSE] %*% g[free]
    }
    t <- 1
    xn <- NULL
    for (k in 1:30) {
      xt <- clip(x + t * d)
      if (all(xt == x)) break
      ct <- f(xt, grad = FALSE)
      if (ct$ok && ct$value >= cur$value + 1e-4 * sum(g * (xt - x))) {
        xn <- xt
        break
      }
      t <- t / 2
    }
    if (is.null(xn)) {
      converged <- TRUE
      break
    }
    gain <- ct$value - cur$value
    # a full quasi-Newton step that gains less than tol: at the optimum
    done <- gain < tol && t == 1
    if ((done || it >= maxit) && !need_H) {
      # the last step: its point is the result, its gradient is not needed
      converged <- done
      x <- xn
      cur <- ct
      break
    }
    cn <- f(xn)
    if (!cn$ok) {
      converged <- TRUE
      x <- xn
      cur <- ct
      break
    }
    s <- xn - x
    yv <- g - cn$g  # the gradient of the negated objective rises by yv
    x <- xn
    cur <- cn
    sy <- sum(s * yv)
    if (sy > 1e-12 * sqrt(sum(s^2) * sum(yv^2))) {
      if (fresh) {
        H <- diag(sy / sum(yv^2), p)
        fresh <- FALSE
      }
      rho <- 1 / sy
      Hy <- drop(H %*% yv)
      H <- H - rho * (outer(s, Hy) + outer(Hy, s)) + (rho^2 * sum(yv * Hy) + rho) * outer(s, s)
    }
    if (done) {
      converged <- TRUE
      break
    }
  }
  list(par = x, value = cur$value, path = path, evals = evals, code = if (converged) 0L else 1L,
       converged = converged, H = H)
}
