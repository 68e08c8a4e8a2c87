#' Fit an augmented GP classifier from a predictor matrix
#'
#' The matrix-level workhorse behind [augp()]: checks the inputs,
#' standardises the predictors, runs the inference engine and builds the
#' `augp` object. Use it when the predictors are already numeric.
#'
#' @param x A numeric matrix (or data frame of numeric columns) of
#'   predictors, one row per observation.
#' @param y The response: a two-level factor, logical or 0/1 vector
#'   (Bernoulli), or a two-column matrix `cbind(successes, failures)`
#'   (binomial).
#' @inheritParams augp
#' @return An object of class `augp`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] + rnorm(30, sd = 0.5) > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, control = augp_control(hyper_maxit = 3))
#' fit
#' @export
augp_fit <- function(x, y, likelihood = NULL, kernel = kernel_se(),
                     method = c("vi", "gibbs"), inducing = NULL, weights = NULL,
                     control = augp_control(), seed = NULL) {
  t0 <- proc.time()[["elapsed"]]
  method <- match.arg(method)
  if (!is.null(inducing) && method != "vi") {
    stop("`inducing`: sparse GPs support method = \"vi\" only.", call. = FALSE)
  }
  control <- as_augp_control(control)
  if (!inherits(kernel, "augp_kernel")) {
    stop("`kernel` must be a kernel object such as kernel_se().", call. = FALSE)
  }
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1 || !is.finite(seed))) {
    stop("`seed` must be NULL or a single finite number.", call. = FALSE)
  }
  x <- as_design_matrix(x)
  n_y <- if (is.matrix(y) || is.data.frame(y)) nrow(y) else length(y)
  if (n_y != nrow(x)) {
    stop(sprintf("`y` has %d observations but `x` has %d rows.", n_y, nrow(x)),
         call. = FALSE)
  }
  check_design(x, "x")
  likelihood <- check_likelihood(likelihood, y)
  resp <- encode_response(likelihood, y, weights)
  multi <- lik_is_multi(likelihood)
  if (!all(resp$keep)) {
    x <- x[resp$keep, , drop = FALSE]
    if (multi) {
      resp$Y <- resp$Y[resp$keep, , drop = FALSE]
    } else {
      resp$y <- resp$y[resp$keep]
      resp$trials <- resp$trials[resp$keep]
    }
    if (nrow(x) < 2L) {
      stop("Fewer than 2 observations left after dropping rows with zero weight or trials.",
           call. = FALSE)
    }
  }

  std <- standardise_design(x, control$standardise)
  mean0 <- lik_prior_mean(likelihood, resp)
  spec <- engine_lik_spec(likelihood, resp)
  if (!is.null(inducing)) inducing <- sparse_front_inducing(inducing, std, colnames(x))
  learn_theta <- isTRUE(likelihood$learn_theta) && identical(spec$type, "logistic_softmax")
  if (learn_theta && !is.null(inducing)) {
    stop("`learn_theta`: learning the class weights is not supported for sparse (`inducing`) fits.",
         call. = FALSE)
  }
  eng <- if (learn_theta) {
    softmax_fit_theta(std$x, spec, kernel, method, control, seed, mean0)
  } else {
    run_engine(std$x, spec, kernel, method, control, seed, mean0, inducing)
  }
  if (learn_theta) likelihood$theta <- stats::setNames(eng$lik$theta, resp$levels)
  if (isTRUE(eng$jitter_increased) || isTRUE(eng$jitter > control$jitter * (1 + 1e-8))) {
    warning(sprintf(paste0("The kernel matrix was nearly singular (duplicate or very close ",
                           "inputs?): jitter raised to %.3g."), eng$jitter), call. = FALSE)
  }
  obj <- list(
    call = match.call(), method = method, likelihood = likelihood,
    kernel = if (!is.null(eng$kernel)) eng$kernel else kernel,
    kernel_init = kernel, engine = eng,
    y = if (multi) resp$Y else resp$y,
    trials = if (multi) rowSums(resp$Y) else resp$trials, levels = resp$levels,
    q = spec$q, multi = multi,
    x = std$x, centre = std$centre, scale = std$scale, dropped = std$dropped,
    theta = if (identical(spec$type, "logistic_softmax"))
      stats::setNames(if (learn_theta) eng$lik$theta else spec$theta, resp$levels),
    x_names = colnames(x), mean0 = mean0, control = control, seed = seed,
    n = nrow(x), weighted = !is.null(weights), kept = which(resp$keep),
    time = proc.time()[["elapsed"]] - t0
  )
  obj$x_raw <- x
  class(obj) <- "augp"
  obj$fitted <- if (multi) {
    multi_prob_summary(obj, list(mean = eng$mean, var = eng$var), draws = eng$draws)$mean
  } else {
    augp_prob(obj, eng$mean, eng$var, training = TRUE)
  }
  obj
}

as_design_matrix <- function(x) {
  if (is.data.frame(x)) {
    ok <- vapply(x, is.numeric, logical(1))
    if (!all(ok)) {
      stop(sprintf(paste0("`x` column(s) %s are not numeric: use augp() with a formula ",
                          "for factor predictors."),
                   paste(sQuote(names(x)[!ok], FALSE), collapse = ", ")), call. = FALSE)
    }
    x <- as.matrix(x)
  }
  if (is.vector(x) && is.numeric(x)) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x)) {
    stop("`x` must be a numeric matrix or a data frame of numeric columns.", call. = FALSE)
  }
  storage.mode(x) <- "double"
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  x
}

# Centre and scale; zero-variance columns are dropped with a warning.
standardise_design <- function(x, standardise = TRUE) {
  sds <- apply(x, 2, stats::sd)
  flat <- !is.finite(sds) | sds < 1e-12 * pmax(1, abs(colMeans(x)))
  dropped <- colnames(x)[flat]
  if (length(dropped)) {
    if (all(flat)) {
      stop("`x`/`data`: every predictor is constant; nothing to learn from.", call. = FALSE)
    }
    warning(sprintf("Predictor(s) %s have zero variance and were dropped.",
                    paste(sQuote(dropped, FALSE), collapse = ", ")), call. = FALSE)
    x <- x[, !flat, drop = FALSE]
    sds <- sds[!flat]
  }
  if (standardise) {
    centre <- colMeans(x)
    scale <- sds
  } else {
    centre <- stats::setNames(rep(0, ncol(x)), colnames(x))
    scale <- stats::setNames(rep(1, ncol(x)), colnames(x))
  }
  xs <- sweep(sweep(x, 2, centre, "-"), 2, scale, "/")
  list(x = xs, centre = centre, scale = scale, dropped = dropped)
}

# Call the engine with the augp_control object. Progress: the engine reports each
# variational outer iteration with message(); in an interactive verbose session these
# ticks drive a text progress bar.
run_engine <- function(X, lik, kernel, method, control, seed, mean0, inducing = NULL) {
  args <- list(X = X, kernel = kernel, method = method, control = control, seed = seed,
               mean0 = mean0, lik = lik)
  engine <- augp_engine
  if (!is.null(inducing)) {
    engine <- augp_sparse_engine
    args$method <- NULL
    args$inducing <- inducing
  }
  if (!control$verbose) return(do.call(engine, args))
  message(sprintf("augp: %s on %d observations, %d input(s)",
                  if (method == "vi") "variational inference" else "Gibbs sampling",
                  nrow(X), ncol(X)))
  if (!interactive()) return(do.call(engine, args))
  total <- max(2L, control$hyper_maxit + 1L)
  bar <- utils::txtProgressBar(min = 0, max = total, style = 3)
  on.exit(close(bar), add = TRUE)
  ticks <- 0L
  withCallingHandlers(
    do.call(engine, args),
    message = function(m) {
      if (grepl("^VI:", conditionMessage(m))) {
        ticks <<- ticks + 1L
        utils::setTxtProgressBar(bar, min(ticks, total - 1L))
        invokeRestart("muffleMessage")
      }
    })
}
