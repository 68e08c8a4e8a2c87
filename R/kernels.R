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

# `sd_units`: the parameters left at their default (NULL): a lengthscale or period of
# one standard deviation of each input (1 on the standardised scale the fits work on,
# and 1 for kernel_matrix(), which takes the inputs as they are), and a variance of
# one squared latent scale (lik_latent_scale(): 1 on the log-odds scale of the
# classification likelihoods, var(y) for regression; 1 for kernel_matrix()).
# `dims`: the leaf's active inputs as given (NULL: all of them); a fit resolves them
# (kernel_resolve_dims()) into `dims_idx`, their column numbers in the design.
# `lengthscale` NULL: a leaf without lengthscales (kernel_constant()).
new_kernel_leaf <- function(type, variance, lengthscale, period = NULL, nu = NULL,
                            sd_units = character(0), dims = NULL) {
  structure(
    list(type = type, variance = kernel_check_scalar(variance, "variance"),
         lengthscale = if (is.null(lengthscale)) numeric(0) else kernel_check_lengthscale(lengthscale),
         period = period, nu = nu, sd_units = sd_units, dims = kernel_check_dims_arg(dims)),
    class = "augp_kernel"
  )
}

# The `dims` argument of a constructor: NULL, input names, or column numbers.
kernel_check_dims_arg <- function(dims) {
  if (is.null(dims)) return(NULL)
  bad <- function(what) stop(sprintf("`dims` %s.", what), call. = FALSE)
  if (is.factor(dims)) dims <- as.character(dims)
  if (!length(dims)) bad("must name at least one input (or be NULL for all of them)")
  if (anyNA(dims)) bad("must not contain NA")
  if (is.character(dims)) {
    if (any(!nzchar(dims))) bad("must not contain empty names")
  } else if (is.numeric(dims)) {
    if (any(!is.finite(dims)) || any(dims < 1) || any(dims != round(dims))) {
      bad("must be input names or column numbers (whole numbers >= 1)")
    }
    dims <- as.integer(dims)
  } else {
    bad("must be input names (a character vector) or column numbers")
  }
  if (anyDuplicated(dims)) bad("must not repeat an input")
  dims
}

# The lengthscale argument of a constructor: NULL is one standard deviation.
kernel_default_ls <- function(lengthscale) if (is.null(lengthscale)) 1 else lengthscale

# The parameters of a constructor left at their default, in the units sd_units marks.
kernel_default_units <- function(variance, lengthscale, scale_name = "lengthscale") {
  c(if (is.null(variance)) "variance", if (is.null(lengthscale)) scale_name)
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
#' * `kernel_constant()`: \eqn{v} for every pair of inputs, the covariance of a
#'   constant function whose value is \eqn{N(0, v)}: added to another kernel it
#'   gives the latent function a level learned from the data (on top of the
#'   likelihood's prior mean), the intercept of a GLM-like fit
#'   `kernel_linear() + kernel_constant()`. It has no lengthscale and uses no
#'   inputs.
#'
#' Hyperparameters are learned (on the log scale) when the model is fitted with
#' hyperparameter learning switched on; the values given here are starting values.
#'
#' @section Active inputs and additive kernels: By default a kernel uses every
#'   input column. `dims` restricts it to some of them: the kernel then
#'   depends on those inputs only, and ARD lengthscales are one per input it
#'   uses. Sums of kernels on different inputs give additive GPs, the GP
#'   analogue of a generalised additive model, for example
#'   `kernel_se(dims = "base") + kernel_se(dims = "age") + kernel_linear(dims = "trt")`
#'   for `y ~ base + age + trt` (as `y ~ gp(base) + gp(age) + trt` in brms, or
#'   `s(base) + s(age) + trt` in mgcv). In [augp()] a name in `dims` is a
#'   variable of the formula (a factor stands for all its dummy columns) or a
#'   column of the design matrix (such as `"trtprogabide"`); in [augp_fit()]
#'   and [kernel_matrix()] a column name of `x`. Numbers are column positions of
#'   the design matrix. A fitted kernel lists its inputs by their column names.
#'
#' @section Units: Lengthscales and periods are in the units of the inputs (the
#'   predictors after dummy coding). [augp()] and [augp_fit()] standardise the
#'   inputs internally (`augp_control(standardise = TRUE)`, the default: each
#'   column centred at its mean and divided by its standard deviation
#'   \eqn{s_d}) and convert the kernel: a lengthscale \eqn{l_d} of input
#'   \eqn{d} becomes \eqn{l_d / s_d}, and a period \eqn{p} of a single input
#'   \eqn{p / s_d}. The periodic kernel's lengthscale is relative to its period
#'   and has no units. `coef()`, `print()` and `summary()` of a fit report the
#'   hyperparameters in the same data units.
#'
#'   The default `lengthscale = NULL` (and `period = NULL`) means one standard
#'   deviation of each input: 1 on the standardised scale, a start that suits
#'   any units (and 1 for [kernel_matrix()], which uses the inputs as given).
#'
#'   One (isotropic) lengthscale on several inputs whose standard deviations
#'   differ has no exact equivalent in data units: the kernel is isotropic on
#'   the standardised inputs, so a single value is read in units of each
#'   input's standard deviation (a message says so) and a fit reports it as one
#'   value per input, \eqn{l s_d}. Give one lengthscale per input (ARD) to set
#'   them in data units exactly; the same holds for a period on several inputs.
#'
#'   `kernel_linear()` works on the centred inputs (each input minus its
#'   training mean) when the inputs are standardised, so its value at a point
#'   depends on the distance of the point from the centre of the data. On
#'   centred inputs it has no constant component: alone, it leaves the latent
#'   function's level at the likelihood's prior mean (for counts the pooled log
#'   rate, for binary data the log-odds of the overall rate). That is the
#'   least-squares intercept of a regression, but not of a count or binary
#'   GLM, whose level at the centre of the inputs differs (on
#'   `MASS::Insurance` the pooled log rate is 0.26 below `glm.nb()`'s, and
#'   such a fit loses 0.56 nats per count). For a GLM-like fit add
#'   [kernel_constant()]: `kernel_linear() + kernel_constant()` learns the
#'   level as a GLM learns its intercept.
#'
#' @param variance Kernel variance, a single number > 0; `NULL` (the default,
#'   printed "auto") is one squared latent scale: 1 for the classification and
#'   count likelihoods (the log-odds scale) and the variance of `y` for
#'   regression likelihoods ([gaussian_noise()], [student_t()]); 1 in
#'   [kernel_matrix()].
#' @param lengthscale Lengthscale(s) > 0 in the units of the inputs: one
#'   number, or one per input column (ARD); `NULL` (the default) is one
#'   standard deviation of each input (see Units).
#' @param nu Smoothness of the Matern kernel: 0.5, 1.5 or 2.5.
#' @param period Period of the periodic kernel, a single number > 0 in the
#'   units of the input; `NULL` (the default) is one standard deviation of the
#'   input.
#' @param dims The inputs the kernel uses: names (see Active inputs) or column
#'   numbers; `NULL` (the default) uses every input.
#' @return An object of class `augp_kernel`.
#' @seealso [kernel_matrix()] to evaluate a kernel.
#' @examples
#' k <- kernel_se(variance = 2, lengthscale = 0.5)
#' k
#' kernel_matern(nu = 2.5, lengthscale = c(1, 3))
#' kernel_se() + kernel_linear()
#' kernel_linear() + kernel_constant()
#' kernel_se() * kernel_periodic(period = 2)
#' # an additive kernel: one smooth function of each input
#' kernel_se(dims = "x1") + kernel_se(dims = "x2")
#' @name kernels
NULL

#' @rdname kernels
#' @export
kernel_se <- function(variance = NULL, lengthscale = NULL, dims = NULL) {
  new_kernel_leaf("se", kernel_default_ls(variance), kernel_default_ls(lengthscale),
                  sd_units = kernel_default_units(variance, lengthscale), dims = dims)
}

#' @rdname kernels
#' @export
kernel_matern <- function(nu = 1.5, variance = NULL, lengthscale = NULL, dims = NULL) {
  if (!is.numeric(nu) || length(nu) != 1 || is.na(nu) ||
      !any(abs(nu - c(0.5, 1.5, 2.5)) < 1e-12)) {
    stop("`nu` must be one of 0.5, 1.5 or 2.5.", call. = FALSE)
  }
  new_kernel_leaf("matern", kernel_default_ls(variance), kernel_default_ls(lengthscale), nu = nu,
                  sd_units = kernel_default_units(variance, lengthscale), dims = dims)
}

#' @rdname kernels
#' @export
kernel_linear <- function(variance = NULL, lengthscale = NULL, dims = NULL) {
  new_kernel_leaf("linear", kernel_default_ls(variance), kernel_default_ls(lengthscale),
                  sd_units = kernel_default_units(variance, lengthscale), dims = dims)
}

#' @rdname kernels
#' @export
kernel_constant <- function(variance = NULL) {
  new_kernel_leaf("constant", kernel_default_ls(variance), NULL,
                  sd_units = if (is.null(variance)) "variance" else character(0))
}

#' @rdname kernels
#' @export
kernel_periodic <- function(variance = NULL, lengthscale = 1, period = NULL, dims = NULL) {
  new_kernel_leaf("periodic", kernel_default_ls(variance), lengthscale,
                  period = kernel_check_scalar(kernel_default_ls(period), "period"),
                  sd_units = kernel_default_units(variance, period, "period"), dims = dims)
}

is_kernel <- function(x) inherits(x, "augp_kernel")

# Can the kernel move the latent function's level at the centre of centred inputs? A
# linear leaf is zero there; a sum can if either part can, a product only if both can.
# For a list of kernels (one per latent column): every one of them.
kernel_has_level <- function(k) {
  if (is_kernel_list(k)) return(all(vapply(k, kernel_has_level, TRUE)))
  switch(k$type,
    sum = kernel_has_level(k$k1) || kernel_has_level(k$k2),
    prod = kernel_has_level(k$k1) && kernel_has_level(k$k2),
    linear = FALSE,
    TRUE)
}

# The kernel with f applied to every leaf, left to right (sums and products kept).
kernel_map_leaves <- function(k, f) {
  if (k$type %in% c("sum", "prod")) {
    k$k1 <- kernel_map_leaves(k$k1, f)
    k$k2 <- kernel_map_leaves(k$k2, f)
    return(k)
  }
  f(k)
}

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
  # a value, c(...) for several, or "1 sd" for the default of one standard deviation;
  # a default variance is "auto" (one squared latent scale, set by the fit)
  vr <- function(v) if ("variance" %in% x$sd_units) "auto" else f(v)
  lsc <- function(l, nm) {
    v <- if (length(l) > 1) sprintf("c(%s)", f(l)) else f(l)
    if (nm %in% x$sd_units) paste(v, "sd") else v
  }
  # the active inputs, as the last argument of a leaf
  dm <- if (!is.null(x$dims)) {
    v <- if (is.character(x$dims)) paste0('"', x$dims, '"') else x$dims
    sprintf(", dims = %s", if (length(v) > 1L) sprintf("c(%s)", paste(v, collapse = ", ")) else v)
  } else ""
  out <- switch(x$type,
    sum = sprintf("%s + %s", format(x$k1, digits = digits), format(x$k2, digits = digits)),
    prod = {
      wrap <- function(k) {
        s <- format(k, digits = digits)
        if (k$type == "sum") paste0("(", s, ")") else s
      }
      sprintf("%s * %s", wrap(x$k1), wrap(x$k2))
    },
    se = sprintf("kernel_se(variance = %s, lengthscale = %s)", vr(x$variance),
                 lsc(x$lengthscale, "lengthscale")),
    matern = sprintf("kernel_matern(nu = %s, variance = %s, lengthscale = %s)",
                     f(x$nu), vr(x$variance), lsc(x$lengthscale, "lengthscale")),
    linear = sprintf("kernel_linear(variance = %s, lengthscale = %s)", vr(x$variance),
                     lsc(x$lengthscale, "lengthscale")),
    periodic = sprintf("kernel_periodic(variance = %s, lengthscale = %s, period = %s)",
                       vr(x$variance), lsc(x$lengthscale, ""), lsc(x$period, "period")),
    constant = sprintf("kernel_constant(variance = %s)", vr(x$variance))
  )
  if (x$type %in% c("sum", "prod")) out else sub(")$", paste0(dm, ")"), out)
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
    linear = 5L, periodic = 6L, constant = 7L, sum = 10L, prod = 11L)
}

# Postfix representation for C++: node codes, number of lengthscales per node, the log
# parameters of the leaves (named) and, when a leaf has active inputs, the number of
# inputs of every node (0: all) and their 0-based column numbers.
kernel_flatten <- function(k) {
  if (!is_kernel(k)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  out <- kernel_flatten_nodes(k)
  if (all(out$ndims == 0L)) out$ndims <- out$dims <- NULL
  out
}

kernel_flatten_nodes <- function(k) {
  if (k$type %in% c("sum", "prod")) {
    a <- kernel_flatten_nodes(k$k1)
    b <- kernel_flatten_nodes(k$k2)
    return(list(code = c(a$code, b$code, kernel_code(k)), nls = c(a$nls, b$nls, 0L),
                theta = c(a$theta, b$theta), ndims = c(a$ndims, b$ndims, 0L),
                dims = c(a$dims, b$dims)))
  }
  nl <- length(k$lengthscale)
  th <- c(log(k$variance), log(k$lengthscale), if (k$type == "periodic") log(k$period))
  nm <- c("variance", if (nl == 1) "lengthscale" else if (nl > 1) paste0("lengthscale", seq_len(nl)),
          if (k$type == "periodic") "period")
  names(th) <- paste0(kernel_leaf_label(k), ".", nm)
  cols <- kernel_leaf_idx(k)
  list(code = kernel_code(k), nls = nl, theta = th, ndims = length(cols),
       dims = as.integer(cols) - 1L)
}

# The prefix of a leaf's parameter names: its type, and the inputs of a kernel on some
# of them as the user named them (se(base).variance, linear(subject).variance).
kernel_leaf_label <- function(k) {
  if (is.null(k$dims)) return(k$type)
  lab <- if (!is.null(k$dims_label)) k$dims_label else k$dims
  sprintf("%s(%s)", k$type, paste(lab, collapse = ","))
}

# The column numbers a leaf uses (integer(0): all of them). Names must have been
# resolved against the columns (kernel_resolve_dims()).
kernel_leaf_idx <- function(k) {
  if (is.null(k$dims)) return(integer(0))
  if (!is.null(k$dims_idx)) return(k$dims_idx)
  if (is.numeric(k$dims)) return(k$dims)
  stop(sprintf(paste0("`kernel`: the inputs named in dims (%s) must be matched to columns ",
                      "(a fit or kernel_matrix() with named columns does this)."),
               paste0('"', k$dims, '"', collapse = ", ")), call. = FALSE)
}

# The column numbers among d that a leaf uses.
kernel_leaf_cols <- function(k, d) {
  idx <- kernel_leaf_idx(k)
  if (length(idx)) idx else seq_len(d)
}

# The kernel (or list of kernels) with every leaf's `dims` matched to the columns
# `xnames` of the design (p columns; NULL names: numbers only): `dims_idx` their column
# numbers, `dims` their names. `term_cols`: for a formula, the design columns of each
# variable (a factor is one variable, several dummy columns).
kernel_resolve_dims <- function(kernel, xnames, p, term_cols = NULL, arg = "kernel") {
  # (anything but a kernel is left to the callers' checks)
  if (!is_kernel(kernel) && !is_kernel_list(kernel)) return(kernel)
  if (is_kernel_list(kernel)) {
    return(new_kernel_list(lapply(kernel, kernel_resolve_dims, xnames, p, term_cols, arg)))
  }
  kernel_map_leaves(kernel, function(k) {
    d <- k$dims
    if (is.null(d)) return(k)
    if (is.numeric(d)) {
      if (any(d > p)) {
        stop(sprintf("`%s`: dims = %d selects a column beyond the %d input column(s).",
                     arg, max(d), p), call. = FALSE)
      }
      idx <- d
    } else {
      one <- function(nm) {
        if (!is.null(xnames) && nm %in% xnames) return(match(nm, xnames))
        if (!is.null(term_cols) && nm %in% names(term_cols)) return(term_cols[[nm]])
        stop(sprintf("`%s`: dims names \"%s\", which is not an input (the inputs are %s).", arg,
                     nm, if (is.null(xnames)) "unnamed" else
                       paste0('"', union(names(term_cols), xnames), '"', collapse = ", ")),
             call. = FALSE)
      }
      idx <- unique(unlist(lapply(d, one)))
    }
    k$dims_idx <- as.integer(idx)
    # the inputs as the user named them label the kernel's parameters (a factor's name,
    # not its dummy columns); `dims` becomes the columns
    if (is.null(k$dims_label)) k$dims_label <- as.character(k$dims)
    k$dims <- if (!is.null(xnames)) xnames[idx] else as.integer(idx)
    k
  })
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
  idx <- kernel_leaf_idx(k)
  if (length(idx) && max(idx) > d) {
    stop(sprintf("`kernel` uses input column %d (dims) but the inputs have %d columns.",
                 max(idx), d), call. = FALSE)
  }
  nd <- if (length(idx)) length(idx) else d
  if (nl > 1 && nl != nd) {
    stop(sprintf("`kernel` has %d lengthscales (ARD) but %s %d columns.", nl,
                 if (length(idx)) "its dims select" else "the inputs have", nd), call. = FALSE)
  }
  invisible(TRUE)
}

kernel_as_matrix <- function(x, arg) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) x <- matrix(x, ncol = 1)
  if (!is.numeric(x)) stop(sprintf("`%s` must be a numeric matrix.", arg), call. = FALSE)
  if (!is.double(x)) storage.mode(x) <- "double"
  # checked without copies of x (large designs; range() would copy it)
  if (anyNA(x)) stop(sprintf("`%s` must not contain NA or NaN.", arg), call. = FALSE)
  if (length(x) && !all(.design_col_stats_cpp(x)$finite)) {
    stop(sprintf("`%s` must be finite (found Inf).", arg), call. = FALSE)
  }
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
  kernel <- kernel_resolve_dims(kernel, colnames(x), ncol(x))
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

# ---- Units: the standardised inputs of a fit and the data units of the user --------
#
# A fit divides input d by s_d (`scale`, the standard deviations, or 1 with
# standardise = FALSE) after centring. A stationary or linear kernel with lengthscale
# l_d on the data equals the same kernel with l_d / s_d on the standardised inputs; a
# period p of input d becomes p / s_d; variances and the periodic kernel's (relative)
# lengthscale are unchanged.

# Are the scales of the inputs all equal (one input, or standardise = FALSE)?
scales_equal <- function(scale) {
  length(scale) <= 1L || all(abs(scale / scale[1] - 1) < 1e-8)
}

# The user's kernel (data units) on the standardised inputs. `scale`: s_d of the inputs
# used; `keep`: which of the user's input columns are used (ARD lengthscales given for
# every predictor lose those of dropped columns). Returns list(kernel, inexact: the
# names of parameters given as one value on several inputs of different scales, read
# in units of each input's standard deviation).
kernel_to_std <- function(kernel, scale, keep = rep(TRUE, length(scale)), latent_scale = 1) {
  inexact <- character(0)
  # the kept columns' new numbers (0 for dropped ones)
  renum <- cumsum(keep) * keep
  conv <- function(k) {
    # the leaf's inputs among the user's columns, and which of them the fit keeps
    idx <- kernel_leaf_idx(k)
    if (!length(idx)) idx <- seq_along(keep)
    kk <- keep[idx]
    if (!any(kk)) {
      stop(sprintf(paste0("`kernel`: every input of a kernel with dims = %s is constant ",
                          "in the data, so the fit drops it; leave that kernel out."),
                   paste(format(k$dims), collapse = ", ")), call. = FALSE)
    }
    if (!is.null(k$dims)) {
      k$dims <- k$dims[kk]
      # a label of one name per column loses the dropped ones too
      if (length(k$dims_label) == length(kk)) k$dims_label <- k$dims_label[kk]
      k$dims_idx <- as.integer(renum[idx[kk]])
    }
    sc <- scale[renum[idx[kk]]]
    p <- length(sc)
    same <- scales_equal(sc)
    l <- k$lengthscale
    if (length(l) == length(kk) && length(kk) != p) l <- l[kk]
    k$lengthscale <- l
    if (k$type != "periodic" && !"lengthscale" %in% k$sd_units) {
      if (length(l) == p) {
        k$lengthscale <- l / sc
      } else if (length(l) == 1L && same) {
        k$lengthscale <- l / sc[1]
      } else if (length(l) == 1L) {
        inexact <<- c(inexact, "lengthscale")
      }
    }
    if (k$type == "periodic" && !"period" %in% k$sd_units) {
      if (same) k$period <- k$period / sc[1] else inexact <<- c(inexact, "period")
    }
    if ("variance" %in% k$sd_units) k$variance <- k$variance * latent_scale^2
    k$sd_units <- character(0)
    k
  }
  list(kernel = kernel_map_leaves(kernel, conv), inexact = unique(inexact))
}

# A kernel on the standardised inputs with every lengthscale and period marked as being
# in units of each input's standard deviation: the kernel a fit stores, so that passing
# it to another fit (e.g. `kernel = fit$kernel`) reuses the values as fitted instead of
# reading them in data units.
kernel_in_sd_units <- function(kernel) {
  if (is_kernel_list(kernel)) return(new_kernel_list(lapply(kernel, kernel_in_sd_units)))
  if (kernel$type %in% c("sum", "prod")) {
    kernel$k1 <- kernel_in_sd_units(kernel$k1)
    kernel$k2 <- kernel_in_sd_units(kernel$k2)
    return(kernel)
  }
  kernel$sd_units <- if (kernel$type == "periodic") "period" else "lengthscale"
  kernel
}

# A fitted kernel (standardised inputs) in data units, for reports: a lengthscale of
# input d times s_d (one value per input when one lengthscale serves several inputs of
# different scales), a period times s_d (likewise). Not for computing: a period may
# become a vector.
kernel_to_data <- function(kernel, scale) {
  if (is_kernel_list(kernel)) return(new_kernel_list(lapply(kernel, kernel_to_data, scale)))
  kernel_map_leaves(kernel, function(k) {
    sc <- scale[kernel_leaf_cols(k, length(scale))]
    p <- length(sc)
    same <- scales_equal(sc)
    per_input <- function(v) {
      out <- if (length(v) == p) v * sc else if (same) v * sc[1] else v * sc
      if (length(out) > 1L) names(out) <- names(sc)
      out
    }
    if (k$type != "periodic") k$lengthscale <- per_input(k$lengthscale)
    if (k$type == "periodic") k$period <- per_input(k$period)
    k$sd_units <- character(0)
    k
  })
}

# The hyperparameters of a kernel in data units (kernel_to_data()) as a named vector:
# <type>.variance, <type>.lengthscale, <type>.period, with the input's name appended
# when a parameter has one value per input (".lengthscale.glu").
kernel_hyper_data <- function(kernel, scale) {
  k <- kernel_to_data(kernel, scale)
  vals <- list()
  walk <- function(k) {
    if (k$type %in% c("sum", "prod")) {
      walk(k$k1)
      walk(k$k2)
      return(invisible())
    }
    type <- kernel_leaf_label(k)
    nm <- function(par, v) {
      if (length(v) == 1L) return(paste0(type, ".", par))
      suffix <- if (!is.null(names(v)) && all(nzchar(names(v)))) names(v) else seq_along(v)
      paste0(type, ".", par, ".", suffix)
    }
    vals[[length(vals) + 1L]] <<- stats::setNames(k$variance, paste0(type, ".variance"))
    if (length(k$lengthscale)) {
      vals[[length(vals) + 1L]] <<- stats::setNames(unname(k$lengthscale), nm("lengthscale", k$lengthscale))
    }
    if (k$type == "periodic") {
      vals[[length(vals) + 1L]] <<- stats::setNames(unname(k$period), nm("period", k$period))
    }
  }
  walk(k)
  out <- unlist(vals)
  if (kernel$type %in% c("sum", "prod")) names(out) <- make.unique(names(out), sep = ".")
  out
}

# Range of the hyperparameters on the standardised scale that the fits can work with:
# beyond it the kernel matrix is numerically constant, diagonal or overflows.
KERNEL_RANGE <- list(variance = c(1e-8, 1e8), lengthscale = c(1e-6, 1e6), period = c(1e-6, 1e6))

# Stop when a hyperparameter of a kernel on the standardised inputs is out of range.
kernel_check_range <- function(kernel, arg = "kernel", latent_scale = 1) {
  bad <- function(v, par) {
    r <- KERNEL_RANGE[[par]]
    # a variance is checked in units of the squared latent scale
    if (par == "variance") r <- r * latent_scale^2
    if (any(v < r[1] | v > r[2])) {
      stop(sprintf(paste0("`%s`: %s %s is outside the range [%s, %s] the fit can work with ",
                          "(%s, on inputs scaled to unit standard deviation)."),
                   arg, if (par == "variance") "the variance" else paste("the", par),
                   paste(format(v, digits = 3), collapse = ", "), format(r[1]), format(r[2]),
                   if (par == "variance") "a variance" else "in standard deviations of the inputs"),
           call. = FALSE)
    }
  }
  walk <- function(k) {
    if (k$type %in% c("sum", "prod")) {
      walk(k$k1)
      walk(k$k2)
      return(invisible())
    }
    bad(k$variance, "variance")
    bad(k$lengthscale, "lengthscale")
    if (k$type == "periodic") bad(k$period, "period")
  }
  if (is_kernel_list(kernel)) for (k in kernel) walk(k) else walk(kernel)
  invisible(kernel)
}
