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

# A single whole number >= min (returned as a double).
check_count <- function(x, arg, min = 0) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x < min ||
      x != floor(x)) {
    stop(sprintf("`%s` must be a single whole number >= %s.", arg, format(min)), call. = FALSE)
  }
  as.double(x)
}

# NULL, or a single whole number >= min.
check_count_or_null <- function(x, arg, min = 0) {
  if (is.null(x)) return(NULL)
  check_count(x, arg, min)
}

# A single finite number in a range: above `min` (`min_open = TRUE`: strictly) and at
# most `max`.
check_number <- function(x, arg, min = -Inf, max = Inf, min_open = FALSE) {
  ok <- is.numeric(x) && length(x) == 1 && !is.na(x) && is.finite(x) &&
    (if (min_open) x > min else x >= min) && x <= max
  if (!ok) {
    range <- if (is.finite(min) && is.finite(max)) {
      sprintf(" in %s%s, %s]", if (min_open) "(" else "[", format(min), format(max))
    } else if (is.finite(min)) {
      sprintf(" %s %s", if (min_open) ">" else ">=", format(min))
    } else if (is.finite(max)) {
      sprintf(" <= %s", format(max))
    } else {
      ""
    }
    stop(sprintf("`%s` must be a single number%s.", arg, range), call. = FALSE)
  }
  as.double(x)
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    stop(sprintf("`%s` must be TRUE or FALSE.", arg), call. = FALSE)
  }
  x
}

# One of `choices`, or an unambiguous abbreviation of one (as match.arg()); the whole
# vector `choices` (a function's default) means the first.
check_choice <- function(x, arg, choices) {
  if (identical(x, choices)) return(choices[1])
  i <- if (is.character(x) && length(x) == 1 && !is.na(x)) pmatch(x, choices) else NA
  if (is.na(i)) {
    stop(sprintf("`%s` must be one of %s.", arg, paste0("\"", choices, "\"", collapse = ", ")),
         call. = FALSE)
  }
  choices[i]
}

# Number of threads: explicit argument, else the option, else 2; never above the cores.
resolve_threads <- function(threads = NULL, arg = "threads") {
  if (is.null(threads)) threads <- getOption("augmentedGP.threads", 2L)
  threads <- check_count(threads, arg, min = 1)
  as.integer(min(threads, RcppParallel::defaultNumThreads()))
}

# NULL, or a seed set.seed() takes as it is: a single whole number within R's integer
# range (set.seed() turns larger values into NA and fails).
check_seed <- function(seed, arg = "seed") {
  if (is.null(seed)) return(NULL)
  if (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || !is.finite(seed) ||
      seed != round(seed) || abs(seed) > .Machine$integer.max) {
    stop(sprintf("`%s` must be NULL or a single whole number between -%d and %d.", arg,
                 .Machine$integer.max, .Machine$integer.max), call. = FALSE)
  }
  as.integer(seed)
}

# The probability of a credible interval: a single number strictly between 0 and 1.
check_level <- function(level, arg = "level") {
  if (!is.numeric(level) || length(level) != 1 || is.na(level) || !(level > 0 && level < 1)) {
    stop(sprintf("`%s` must be a single number strictly between 0 and 1 (e.g. 0.95).", arg),
         call. = FALSE)
  }
  as.double(level)
}

# A 64-bit base seed for the C++ streams, drawn from R's RNG so that set.seed() rules.
new_seed <- function(seed = NULL) {
  if (!is.null(seed)) {
    withr::local_preserve_seed()
    set.seed(check_seed(seed))
  }
  floor(stats::runif(2) * 2147483647)
}
