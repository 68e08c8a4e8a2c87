# Which GP the front end fits: `inducing = "auto"` (the default of augp() and
# augp_fit()) chooses between the exact GP and a sparse (inducing-point) GP by the cost
# of the exact one; "exact" (or NULL) and a number or matrix of inducing points choose
# themselves.
#
# Cost: an exact variational sweep factorises one n x n matrix per latent column, so
# it costs about q n^3 / 3 flops for q latent columns (the likelihood says how many:
# engine_lik_spec()$q), and a fit makes tens of sweeps (the hyperparameter search runs
# on nested subsets first, at a similar cost per level). The rule keeps the exact GP
# while q n^3 <= AUTO_EXACT_N^3, i.e. n <= AUTO_EXACT_N / q^(1/3): the exact fit then
# takes seconds, not minutes. Above it a sparse variational GP is fitted with
# auto_inducing_m(n, q) inducing points.
#
# The sparse path has no Gibbs sampler and no per-column kernels: such fits stay exact above the limit, with a message saying what
# it costs and what would make it sparse.

# The largest n fitted exactly with one latent column (q latent columns: this / q^(1/3)).
AUTO_EXACT_N <- 2000
# Inducing points of an automatic sparse fit: AUTO_M_PER_ROOT sqrt(n) (more data
# resolve more detail), at least AUTO_M_MIN, and at most AUTO_M_MAX / q^(1/4) and
# sqrt(AUTO_PASS_FLOPS / (q n)): a pass over the data costs about q n m^2 flops, and
# the second cap keeps one pass within about 1e10 flops (a second or two) for very
# large n, where minibatch fits make many passes; AUTO_M_MIN wins over both caps.
AUTO_M_PER_ROOT <- 3
AUTO_M_MIN <- 100
AUTO_M_MAX <- 400
AUTO_PASS_FLOPS <- 1e10

# Does the exact GP fit n observations with q latent columns under the automatic rule?
auto_exact <- function(n, q) q * n^3 <= AUTO_EXACT_N^3

# Number of inducing points for n observations with q latent columns.
auto_inducing_m <- function(n, q) {
  cap <- min(AUTO_M_MAX / max(1, q)^(1 / 4), sqrt(AUTO_PASS_FLOPS / (max(1, q) * n)))
  m <- round(max(min(AUTO_M_PER_ROOT * sqrt(n), cap), AUTO_M_MIN))
  as.integer(min(n, max(1, m)))
}

# Bytes the exact GP holds in n x n matrices for q latent columns: the kernel matrix and
# one factorised matrix per latent column (8 bytes an entry).
exact_bytes <- function(n, q) (1 + max(1, q)) * 8 * as.numeric(n)^2

# Memory available to this process in bytes (Linux: MemAvailable), NA where unknown.
memory_available <- function() {
  if (!file.exists("/proc/meminfo")) return(NA_real_)
  l <- tryCatch(readLines("/proc/meminfo", warn = FALSE), error = function(e) character(0))
  v <- grep("^MemAvailable:", l, value = TRUE)
  if (!length(v)) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", v[1])) * 1024
}

# An exact fit that cannot fit in memory is an error before anything is allocated (the
# allocation itself could take the machine down rather than fail).
# `way`: what would fit a sparse GP instead.
check_exact_memory <- function(n, q, way, available = memory_available()) {
  need <- exact_bytes(n, q)
  if (is.na(available) || need <= available) return(invisible(TRUE))
  stop(sprintf(paste0("`inducing`: the exact GP for n = %d observations needs about %s for its ",
                      "n x n matrices, more than the %s of memory available; %s, or fit fewer rows."),
               as.integer(n), format_bytes(need), format_bytes(available), way), call. = FALSE)
}

format_bytes <- function(b) {
  if (b >= 1e9) sprintf("%.1f GB", b / 1e9) else sprintf("%.0f MB", b / 1e6)
}

NO_SPARSE_GIBBS <- "there is no sparse Gibbs sampler; method = \"vi\" fits a sparse GP"

# The `inducing` argument checked: "auto", "exact" (NULL means the same), a whole
# number >= 1 or a matrix / data frame of locations (their checks follow in
# sparse_inducing()).
check_inducing_arg <- function(inducing) {
  msg <- paste0("`inducing` must be \"auto\", \"exact\", a whole number >= 1 or a matrix of ",
                "inducing locations.")
  if (is.null(inducing)) return("exact")
  if (is.character(inducing)) {
    if (length(inducing) == 1L && !is.na(inducing) && inducing %in% c("auto", "exact")) {
      return(inducing)
    }
    stop(msg, call. = FALSE)
  }
  if (is.matrix(inducing) || is.data.frame(inducing)) return(inducing)
  if (!is.numeric(inducing) || length(inducing) != 1L || !is.finite(inducing) ||
      inducing != floor(inducing) || inducing < 1) {
    stop(msg, call. = FALSE)
  }
  inducing
}

# The inference to run: list(inducing = NULL (exact) or what the sparse engine takes,
# info = list(choice = "auto" or "given", engine = "exact" or "sparse", m, n, q,
# reason)). A message says so when "auto" keeps an expensive exact fit.
choose_inference <- function(inducing, n, q, method, likelihood, kernel, control,
                             per_latent_kernels = FALSE) {
  inducing <- check_inducing_arg(inducing)
  info <- list(choice = if (identical(inducing, "auto")) "auto" else "given", n = n, q = q)
  if (identical(inducing, "exact")) {
    check_exact_memory(n, q, if (method != "vi") NO_SPARSE_GIBBS else
      "inducing = \"auto\" or a number of inducing points fits a sparse GP")
    return(list(inducing = NULL, info = c(info, list(engine = "exact", m = NA_integer_))))
  }
  if (!identical(inducing, "auto")) {
    m <- if (is.matrix(inducing) || is.data.frame(inducing)) nrow(inducing) else inducing
    return(list(inducing = inducing, info = c(info, list(engine = "sparse", m = m))))
  }
  exact <- function(reason) {
    list(inducing = NULL, info = c(info, list(engine = "exact", m = NA_integer_, reason = reason)))
  }
  if (auto_exact(n, q)) return(exact("small"))
  # Requests only the exact engine serves.
  blocker <- if (method != "vi") {
    NO_SPARSE_GIBBS
  } else if (q > 1L && (per_latent_kernels || is_kernel_list(kernel) ||
                         (is.list(kernel) && !is_kernel(kernel)) || !isTRUE(control$shared_hyper))) {
    "sparse fits share one kernel across the latent functions (shared_hyper = TRUE)"
  }
  if (!is.null(blocker)) {
    check_exact_memory(n, q, blocker)
    message(sprintf(paste0("`inducing = \"auto\"`: fitting the exact GP to n = %d with %d latent ",
                           "function(s), which may take long (%s)."), n, q, blocker))
    return(exact("needs exact"))
  }
  m <- auto_inducing_m(n, q)
  list(inducing = m, info = c(info, list(engine = "sparse", m = m, reason = "large")))
}

# The line print() and summary() show for a fit whose GP was chosen automatically
# (NULL for one the user chose).
inference_label <- function(object) {
  info <- object$inference
  if (is.null(info) || !identical(info$choice, "auto")) return(NULL)
  head <- sprintf("Chosen by inducing = \"auto\" for n = %d and %d latent function%s: ", info$n,
                  info$q, if (info$q == 1L) "" else "s")
  if (identical(info$engine, "sparse")) {
    return(paste0(head, sprintf("sparse GP, m = %d (inducing = \"exact\" fits the exact GP)",
                                as.integer(info$m))))
  }
  paste0(head, "exact GP", if (identical(info$reason, "needs exact")) " (no sparse alternative)")
}
