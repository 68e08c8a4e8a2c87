# Small checks of user input. Each stops with a message that names the argument.

check_numeric <- function(x, arg, allow_na = FALSE, finite = TRUE) {
  if (!is.numeric(x) && !is.logical(x)) {
    stop(sprintf("`%s` must be numeric, not %s.", arg, class(x)[1]), call. = FALSE)
  }
  if (is.logical(x) && length(x) > 0 && !all(is.na(x))) {
    stop(sprintf("`%s` must be numeric, not logical.", arg), call. = FALSE)
  }
  x <- as.double(x)
  if (!allow_na && anyNA(x)) {
    stop(sprintf("`%s` must not contain NA or NaN.", arg), call. = FALSE)
  }
  if (finite && any(is.infinite(x))) {
    stop(sprintf("`%s` must be finite (found Inf).", arg), call. = FALSE)
  }
  x
}

check_positive <- function(x, arg) {
  x <- check_numeric(x, arg)
  if (any(x <= 0)) {
    stop(sprintf("`%s` must be > 0 (found %s).", arg, format(min(x))), call. = FALSE)
  }
  x
}

check_count <- function(n, arg) {
  if (length(n) > 1) n <- length(n)
  if (!is.numeric(n) || length(n) != 1 || is.na(n) || !is.finite(n) || n < 0 ||
      n != floor(n)) {
    stop(sprintf("`%s` must be a single non-negative whole number.", arg), call. = FALSE)
  }
  as.double(n)
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    stop(sprintf("`%s` must be TRUE or FALSE.", arg), call. = FALSE)
  }
  x
}

# Number of threads: explicit argument, else the option, else 2; never above the cores.
resolve_threads <- function(threads = NULL) {
  if (is.null(threads)) threads <- getOption("augmentedGP.threads", 2L)
  if (!is.numeric(threads) || length(threads) != 1 || is.na(threads) || threads < 1 ||
      threads != floor(threads)) {
    stop("`threads` must be a single whole number >= 1.", call. = FALSE)
  }
  as.integer(min(threads, RcppParallel::defaultNumThreads()))
}

# A 64-bit base seed for the C++ streams, drawn from R's RNG so that set.seed() rules.
new_seed <- function(seed = NULL) {
  if (!is.null(seed)) {
    if (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || !is.finite(seed)) {
      stop("`seed` must be NULL or a single finite number.", call. = FALSE)
    }
    old <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
      get(".Random.seed", envir = globalenv(), inherits = FALSE)
    }
    on.exit({
      if (is.null(old)) {
        rm(".Random.seed", envir = globalenv())
      } else {
        assign(".Random.seed", old, envir = globalenv())
      }
    })
    set.seed(seed)
  }
  floor(stats::runif(2) * 2147483647)
}
