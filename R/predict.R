#' Predict from an augmented GP classifier
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param newdata A data frame (formula fits) or matrix (matrix fits) of new
#'   inputs; missing means the training inputs. Every predictor used in the
#'   fit must be present and factor levels must have been seen in training.
#'   Rows with missing predictors give `NA`.
#' @param type `"response"`: the probability of the second class (the
#'   "success"); `"link"`: the latent function \eqn{f} (log-odds);
#'   `"class"`: the more probable class, as a factor. For likelihoods with
#'   several latent functions (logistic-softmax, stick-breaking),
#'   `"response"` gives a matrix of category probabilities (one column per
#'   level), `"link"` a matrix of latent posterior means (one column per
#'   latent function) and `"class"` the most probable category.
#' @param se.fit Also return posterior standard deviations of the latent
#'   function (for `type = "link"`) or of the probability (`"response"`).
#' @param interval `"none"` or `"credible"`: pointwise credible intervals for
#'   the latent function or the probability, at probability `level`.
#' @param level Probability of the credible interval.
#' @param ... Unused.
#' @details For variational fits the probability is
#'   \eqn{E_q[\sigma(f)]}, computed by Gauss-Hermite quadrature under the
#'   Gaussian approximation \eqn{q(f)}; for Gibbs fits it is the average of
#'   \eqn{\sigma(f)} over the posterior draws. With several latent functions
#'   the category probabilities are averaged over `control$pred_draws` Monte
#'   Carlo draws from the marginals of \eqn{q(f)} (seeded from the fit's
#'   `seed`, so repeated calls agree) or over the posterior draws of a Gibbs
#'   fit; intervals are pointwise quantiles of the same draws.
#' @return A vector (factor for `"class"`), or, with `se.fit = TRUE` or an
#'   interval, a data frame with columns `fit`, `se.fit`, `lwr`, `upr` as
#'   requested. With several latent functions: a matrix (factor for
#'   `"class"`), or a list of matrices `fit`, `se.fit`, `lwr`, `upr`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, control = augp_control(hyper_maxit = 3))
#' predict(fit, matrix(c(-1, 1, 0, 0), 2), type = "class")
#' @export
predict.augp <- function(object, newdata, type = c("response", "link", "class"),
                         se.fit = FALSE, interval = c("none", "credible"),
                         level = 0.95, ...) {
  type <- match.arg(type)
  interval <- match.arg(interval)
  if (!is.logical(se.fit) || length(se.fit) != 1 || is.na(se.fit)) {
    stop("`se.fit` must be TRUE or FALSE.", call. = FALSE)
  }
  if (!is.numeric(level) || length(level) != 1 || !(level > 0 && level < 1)) {
    stop("`level` must be a single number between 0 and 1.", call. = FALSE)
  }
  if (isTRUE(object$multi)) {
    return(predict_multi(object, if (missing(newdata)) NULL else newdata, type, se.fit,
                         interval, level))
  }
  want_draws <- object$method == "gibbs" && (type != "link")
  if (missing(newdata) || is.null(newdata)) {
    X <- object$x
    ok <- rep(TRUE, nrow(X))
    pr <- if (want_draws || interval != "none") {
      with_local_seed(pred_seed(object),
                      augp_engine_predict(object$engine, X, draws = object$method == "gibbs"))
    } else {
      list(mean = object$engine$mean, var = object$engine$var)
    }
  } else {
    X <- new_design(object, newdata)
    ok <- stats::complete.cases(X)
    pr <- with_local_seed(pred_seed(object),
                          augp_engine_predict(object$engine, X[ok, , drop = FALSE],
                                              draws = object$method == "gibbs"))
  }
  fill <- function(v) {
    out <- rep(NA_real_, length(ok))
    out[ok] <- v
    out
  }
  m <- as.numeric(pr$mean)
  v <- pmax(as.numeric(pr$var), 0)
  alpha <- (1 - level) / 2
  if (type == "link") {
    fit <- m
    se <- sqrt(v)
    if (object$method == "gibbs" && !is.null(pr$draws)) {
      lwr <- apply(pr$draws, 2, stats::quantile, probs = alpha, names = FALSE)
      upr <- apply(pr$draws, 2, stats::quantile, probs = 1 - alpha, names = FALSE)
    } else {
      z <- stats::qnorm(1 - alpha)
      lwr <- m - z * se
      upr <- m + z * se
    }
  } else {
    if (object$method == "gibbs" && !is.null(pr$draws)) {
      p <- stats::plogis(pr$draws)
      fit <- colMeans(p)
      se <- apply(p, 2, stats::sd)
      lwr <- apply(p, 2, stats::quantile, probs = alpha, names = FALSE)
      upr <- apply(p, 2, stats::quantile, probs = 1 - alpha, names = FALSE)
    } else {
      fit <- expected_sigmoid(m, v)
      se <- sqrt(pmax(expected_sigmoid(m, v, power = 2) - fit^2, 0))
      z <- stats::qnorm(1 - alpha)
      lwr <- stats::plogis(m - z * sqrt(v))
      upr <- stats::plogis(m + z * sqrt(v))
    }
  }
  if (type == "class") {
    cls <- factor(object$levels[1 + (fill(fit) > 0.5)], levels = object$levels)
    return(cls)
  }
  if (!se.fit && interval == "none") {
    out <- fill(fit)
    names(out) <- rownames(X)
    return(out)
  }
  out <- data.frame(fit = fill(fit))
  if (se.fit) out$se.fit <- fill(se)
  if (interval != "none") {
    out$lwr <- fill(lwr)
    out$upr <- fill(upr)
  }
  out
}

# Probabilities at the training inputs (used for fitted values).
augp_prob <- function(object, mean, var, training = FALSE) {
  if (object$method == "gibbs" && !is.null(object$engine$draws)) {
    d <- object$engine$draws
    n <- dim(d)[3]
    return(colMeans(matrix(stats::plogis(d), ncol = n)))
  }
  expected_sigmoid(mean, var)
}

# Rebuild the standardised design for new data exactly as in training.
new_design <- function(object, newdata) {
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) {
      if (is.list(newdata)) {
        newdata <- as.data.frame(newdata)
      } else {
        stop("`newdata` must be a data frame for a model fitted with a formula.",
             call. = FALSE)
      }
    }
    tt <- stats::delete.response(object$terms)
    vars <- all.vars(tt)
    miss <- setdiff(vars, names(newdata))
    if (length(miss)) {
      stop(sprintf("`newdata` is missing column(s) used in the fit: %s.",
                   paste(sQuote(miss, FALSE), collapse = ", ")), call. = FALSE)
    }
    for (v in names(object$xlevels)) {
      if (!v %in% names(newdata)) next
      val <- as.character(newdata[[v]])
      unseen <- setdiff(unique(val[!is.na(val)]), object$xlevels[[v]])
      if (length(unseen)) {
        stop(sprintf("`newdata` has level(s) %s of factor '%s' not seen in training.",
                     paste(sQuote(unseen, FALSE), collapse = ", "), v), call. = FALSE)
      }
    }
    mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                             xlev = object$xlevels)
    X <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  } else {
    if (is.data.frame(newdata)) newdata <- as.matrix(newdata)
    if (is.vector(newdata) && is.numeric(newdata) && length(object$x_names) == 1L) {
      newdata <- matrix(newdata, ncol = 1L)
    }
    if (!is.matrix(newdata) || !is.numeric(newdata)) {
      stop("`newdata` must be a numeric matrix for a model fitted with augp_fit().",
           call. = FALSE)
    }
    if (!is.null(colnames(newdata)) && all(object$x_names %in% colnames(newdata))) {
      X <- newdata[, object$x_names, drop = FALSE]
    } else if (!is.null(colnames(newdata)) && any(colnames(newdata) %in% object$x_names)) {
      miss <- setdiff(object$x_names, colnames(newdata))
      stop(sprintf("`newdata` is missing column(s) used in the fit: %s.",
                   paste(sQuote(miss, FALSE), collapse = ", ")), call. = FALSE)
    } else if (ncol(newdata) == length(object$x_names)) {
      X <- newdata
      colnames(X) <- object$x_names
    } else {
      stop(sprintf("`newdata` has %d column(s); the fit used %d.", ncol(newdata),
                   length(object$x_names)), call. = FALSE)
    }
  }
  keep <- setdiff(colnames(X), object$dropped)
  X <- X[, keep, drop = FALSE]
  if (any(is.infinite(X))) {
    stop("`newdata` contains Inf in the predictors.", call. = FALSE)
  }
  if (nrow(X) > 0 && !any(stats::complete.cases(X))) {
    # rows with NA give NA predictions, but there must be something to predict
    stop("`newdata` has no complete row: every row has NA in a predictor.", call. = FALSE)
  }
  X <- sweep(sweep(X, 2, object$centre[keep], "-"), 2, object$scale[keep], "/")
  storage.mode(X) <- "double"
  X
}

# Gauss-Hermite rule for a standard normal weight, by the Golub-Welsch method:
# the nodes are the eigenvalues of the Jacobi matrix of the (probabilists')
# Hermite recurrence, the weights the squared first components of its
# normalised eigenvectors.
gh_golub_welsch <- function(n) {
  if (n == 1L) return(list(x = 0, w = 1))
  J <- matrix(0, n, n)
  off <- sqrt(seq_len(n - 1))
  J[cbind(1:(n - 1), 2:n)] <- off
  J[cbind(2:n, 1:(n - 1))] <- off
  e <- eigen(J, symmetric = TRUE)
  o <- order(e$values)
  list(x = e$values[o], w = e$vectors[1, o]^2)
}

gh_cache <- new.env(parent = emptyenv())

gh_rule <- function(n = 40L) {
  key <- as.character(n)
  if (is.null(gh_cache[[key]])) gh_cache[[key]] <- gh_golub_welsch(n)
  gh_cache[[key]]
}

# E[sigma(f)^power] for f ~ N(m, v), elementwise.
expected_sigmoid <- function(m, v, power = 1, n = 40L) {
  r <- gh_rule(n)
  s <- sqrt(pmax(v, 0))
  f <- outer(m, rep(1, n)) + outer(s, r$x)
  as.numeric(stats::plogis(f)^power %*% r$w)
}
