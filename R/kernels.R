# Covariance kernels: constructors, combination by + and *, printing, and the
# flat (postfix) representation handed to the C++ core.

kernel_check_scalar <- function(x, arg) {
  x <- check_positive(x, arg)
  if (length(x) != 1) {
    stop(sprintf("`%s` must be a single number > 0.", arg), call. = FALSE)
  }
  x
}

kernel_check_lengthscale <- function(x) {
  if (length(x) < 1) stop("`lengthscale` must have length >= 1.", call. = FALSE)
  check_positive(x, "lengthscale")
}

new_kernel_leaf <- function(type, variance, lengthscale, period = NULL, nu = NULL) {
  structure(
    list(type = type, variance = kernel_check_scalar(variance, "variance"),
         lengthscale = kernel_check_lengthscale(lengthscale),
         period = period, nu = nu),
    class = "augp_kernel"
  )
}

#' Covariance kernels for Gaussian processes
#'
#' Constructors for the covariance functions used by [augp()]. Each kernel has a
#' `variance` (its value at distance zero, for the stationary kernels) and a
#' `lengthscale`; a vector of lengthscales, one per input column, gives automatic
#' relevance determination (ARD). Kernels can be added and multiplied with `+` and
#' `*`.
#'
#' With \eqn{r^2 = \sum_d (x_d - y_d)^2 / l_d^2} and variance \eqn{v}:
#' * `kernel_se()`: squared exponential, \eqn{v \exp(-r^2/2)}.
#' * `kernel_matern()`: Matern with smoothness `nu` of 0.5, 1.5 or 2.5, e.g. for
#'   `nu = 1.5`, \eqn{v (1 + \sqrt{3} r) \exp(-\sqrt{3} r)}.
#' * `kernel_linear()`: \eqn{v \sum_d x_d y_d / l_d^2} (not stationary).
#' * `kernel_periodic()`: \eqn{v \exp(-2 \sum_d \sin^2(\pi (x_d - y_d) / p) / l_d^2)}
#'   with period \eqn{p}.
#'
#' Hyperparameters are learned (on the log scale) when the model is fitted with
#' hyperparameter learning switched on; the values given here are starting values.
#'
#' @param variance Kernel variance, a single number > 0.
#' @param lengthscale Lengthscale(s) > 0: one number, or one per input column (ARD).
#' @param nu Smoothness of the Matern kernel: 0.5, 1.5 or 2.5.
#' @param period Period of the periodic kernel, a single number > 0.
#' @return An object of class `augp_kernel`.
#' @seealso [kernel_matrix()] to evaluate a kernel.
#' @examples
#' k <- kernel_se(variance = 2, lengthscale = 0.5)
#' k
#' kernel_matern(nu = 2.5, lengthscale = c(1, 3))
#' kernel_se() + kernel_linear()
#' kernel_se() * kernel_periodic(period = 2)
#' @name kernels
NULL

#' @rdname kernels
#' @export
kernel_se <- function(variance = 1, lengthscale = 1) {
  new_kernel_leaf("se", variance, lengthscale)
}

#' @rdname kernels
#' @export
kernel_matern <- function(nu = 1.5, variance = 1, lengthscale = 1) {
  if (!is.numeric(nu) || length(nu) != 1 || is.na(nu) ||
      !any(abs(nu - c(0.5, 1.5, 2.5)) < 1e-12)) {
    stop("`nu` must be one of 0.5, 1.5 or 2.5.", call. = FALSE)
  }
  new_kernel_leaf("matern", variance, lengthscale, nu = nu)
}

#' @rdname kernels
#' @export
kernel_linear <- function(variance = 1, lengthscale = 1) {
  new_kernel_leaf("linear", variance, lengthscale)
}

#' @rdname kernels
#' @export
kernel_periodic <- function(variance = 1, lengthscale = 1, period = 1) {
  new_kernel_leaf("periodic", variance, lengthscale,
                  period = kernel_check_scalar(period, "period"))
}

is_kernel <- function(x) inherits(x, "augp_kernel")

#' @export
Ops.augp_kernel <- function(e1, e2) {
  if (!.Generic %in% c("+", "*")) {
    stop(sprintf("Kernels can only be combined with `+` and `*`, not `%s`.", .Generic),
         call. = FALSE)
  }
  if (missing(e2) || !is_kernel(e1) || !is_kernel(e2)) {
    stop(sprintf("Both sides of `%s` must be kernels (objects of class augp_kernel).",
                 .Generic), call. = FALSE)
  }
  structure(list(type = if (.Generic == "+") "sum" else "prod", k1 = e1, k2 = e2),
            class = "augp_kernel")
}

#' @export
format.augp_kernel <- function(x, digits = 3, ...) {
  f <- function(v) paste(formatC(v, digits = digits, format = "g", width = 1), collapse = ", ")
  lsc <- function(l) if (length(l) > 1) sprintf("c(%s)", f(l)) else f(l)
  switch(x$type,
    sum = sprintf("%s + %s", format(x$k1, digits = digits), format(x$k2, digits = digits)),
    prod = {
      wrap <- function(k) {
        s <- format(k, digits = digits)
        if (k$type == "sum") paste0("(", s, ")") else s
      }
      sprintf("%s * %s", wrap(x$k1), wrap(x$k2))
    },
    se = sprintf("kernel_se(variance = %s, lengthscale = %s)", f(x$variance), lsc(x$lengthscale)),
    matern = sprintf("kernel_matern(nu = %s, variance = %s, lengthscale = %s)",
                     f(x$nu), f(x$variance), lsc(x$lengthscale)),
    linear = sprintf("kernel_linear(variance = %s, lengthscale = %s)", f(x$variance),
                     lsc(x$lengthscale)),
    periodic = sprintf("kernel_periodic(variance = %s, lengthscale = %s, period = %s)",
                       f(x$variance), lsc(x$lengthscale), f(x$period))
  )
}

#' @export
print.augp_kernel <- function(x, ...) {
  cat("<augp_kernel> ", format(x, ...), "\n", sep = "")
  invisible(x)
}

#' @export
format.augp_kernels <- function(x, digits = 3, ...) {
  vapply(seq_along(x), function(j) sprintf("[%d] %s", j, format(x[[j]], digits = digits)), "")
}

#' @export
print.augp_kernels <- function(x, ...) {
  cat(sprintf("<augp_kernels> one kernel per latent function (%d):\n", length(x)))
  cat(paste0("  ", format(x, ...)), sep = "\n")
  invisible(x)
}

kernel_code <- function(k) {
  switch(k$type,
    se = 1L,
    matern = c(`0.5` = 2L, `1.5` = 3L, `2.5` = 4L)[[format(k$nu)]],
    linear = 5L, periodic = 6L, sum = 10L, prod = 11L)
}

# Postfix representation for C++: node codes, number of lengthscales per node and
# the log parameters of the leaves (named).
kernel_flatten <- function(k) {
  if (!is_kernel(k)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  if (k$type %in% c("sum", "prod")) {
    a <- kernel_flatten(k$k1)
    b <- kernel_flatten(k$k2)
    return(list(code = c(a$code, b$code, kernel_code(k)), nls = c(a$nls, b$nls, 0L),
                theta = c(a$theta, b$theta)))
  }
  nl <- length(k$lengthscale)
  th <- c(log(k$variance), log(k$lengthscale), if (k$type == "periodic") log(k$period))
  nm <- c("variance", if (nl == 1) "lengthscale" else paste0("lengthscale", seq_len(nl)),
          if (k$type == "periodic") "period")
  names(th) <- paste0(k$type, ".", nm)
  list(code = kernel_code(k), nls = nl, theta = th)
}

# Log parameters of a kernel (named numeric vector, leaves left to right).
kernel_get_params <- function(k) {
  th <- kernel_flatten(k)$theta
  if (k$type %in% c("sum", "prod")) names(th) <- make.unique(names(th), sep = ".")
  th
}

# Replace the log parameters (same order as kernel_get_params()).
kernel_set_params <- function(k, theta) {
  theta <- unname(check_numeric(theta, "theta"))
  if (length(theta) != length(kernel_flatten(k)$theta)) {
    stop(sprintf("`theta` must have %d elements.", length(kernel_flatten(k)$theta)),
         call. = FALSE)
  }
  pos <- 0L
  set <- function(k) {
    if (k$type %in% c("sum", "prod")) {
      k$k1 <- set(k$k1)
      k$k2 <- set(k$k2)
      return(k)
    }
    nl <- length(k$lengthscale)
    k$variance <- exp(theta[pos + 1L])
    k$lengthscale <- exp(theta[pos + 1L + seq_len(nl)])
    pos <<- pos + 1L + nl
    if (k$type == "periodic") {
      k$period <- exp(theta[pos + 1L])
      pos <<- pos + 1L
    }
    k
  }
  set(k)
}

kernel_check_dims <- function(k, d) {
  if (k$type %in% c("sum", "prod")) {
    kernel_check_dims(k$k1, d)
    kernel_check_dims(k$k2, d)
    return(invisible(TRUE))
  }
  nl <- length(k$lengthscale)
  if (nl != 1 && nl != d) {
    stop(sprintf("The kernel has %d lengthscales (ARD) but the inputs have %d columns.",
                 nl, d), call. = FALSE)
  }
  invisible(TRUE)
}

kernel_as_matrix <- function(x, arg) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) x <- matrix(x, ncol = 1)
  if (!is.numeric(x)) stop(sprintf("`%s` must be a numeric matrix.", arg), call. = FALSE)
  storage.mode(x) <- "double"
  check_numeric(x, arg)
  x
}

#' Evaluate a kernel
#'
#' Computes the matrix of kernel values \eqn{k(x_i, y_j)} between the rows of `x`
#' and the rows of `y`.
#'
#' @param kernel A kernel, see [kernels].
#' @param x A numeric matrix (or vector, treated as one column).
#' @param y A numeric matrix with the same number of columns as `x`; defaults to `x`.
#' @return A `nrow(x)` by `nrow(y)` matrix.
#' @examples
#' x <- matrix(seq(0, 1, length.out = 5))
#' kernel_matrix(kernel_se(lengthscale = 0.3), x)
#' @export
kernel_matrix <- function(kernel, x, y = x) {
  if (!is_kernel(kernel)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  x <- kernel_as_matrix(x, "x")
  y <- kernel_as_matrix(y, "y")
  if (ncol(x) != ncol(y)) {
    stop("`x` and `y` must have the same number of columns.", call. = FALSE)
  }
  kernel_check_dims(kernel, ncol(x))
  .gp_kernel_matrix_cpp(kernel_flatten(kernel), x, y)
}

# Kernel matrix on x and its derivatives with respect to every log parameter.
kernel_grad <- function(kernel, x) {
  x <- kernel_as_matrix(x, "x")
  kernel_check_dims(kernel, ncol(x))
  .gp_kernel_grad_cpp(kernel_flatten(kernel), x)
}

kernel_diag <- function(kernel, x) {
  x <- kernel_as_matrix(x, "x")
  kernel_check_dims(kernel, ncol(x))
  .gp_kernel_diag_cpp(kernel_flatten(kernel), x)
}
