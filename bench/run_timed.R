# Shared by the bench drivers: run one benchmark case as its own R process under
# /usr/bin/time -v and read what it prints.
#   run_timed(script, args) runs `Rscript script run args...`; the case prints one line
#   "RESULT v1 | v2 | ..." (or "RESULT v1 v2 ..." when sep = " "). Returns the fields as
#   character (NULL, with the tail of the log as a message, if the case printed none)
#   with attribute peak_mb: the process's maximum resident set size in MB.
run_timed <- function(script, args, sep = "|") {
  log <- tempfile()
  out <- system2("/usr/bin/time", c("-v", file.path(R.home("bin"), "Rscript"), script, "run", args),
                 stdout = TRUE, stderr = log)
  res <- grep("^RESULT", out, value = TRUE)
  err <- readLines(log)
  rss <- grep("Maximum resident set size", err, value = TRUE)
  if (!length(res)) {
    message("no result for ", paste(args, collapse = " "), "\n",
            paste(utils::tail(err, 20), collapse = "\n"))
    return(NULL)
  }
  v <- trimws(strsplit(trimws(sub("^RESULT ", "", res[1])), sep, fixed = TRUE)[[1]])
  structure(v, peak_mb = if (length(rss)) as.numeric(sub(".*: ", "", rss[1])) / 1024 else NA_real_)
}

# Run every case and bind the results: `keys` (a data frame, one row per case) beside the
# printed fields named `fields` (numbers where they parse as numbers) and peak_mb; `args`:
# one argument vector per case. Cases that print no result are left out.
run_cases <- function(script, keys, args, fields, sep = "|") {
  rows <- list()
  for (i in seq_len(nrow(keys))) {
    v <- run_timed(script, args[[i]], sep)
    if (is.null(v)) next
    vals <- lapply(stats::setNames(as.list(v[seq_along(fields)]), fields), function(x) {
      y <- suppressWarnings(as.numeric(x))
      if (is.na(y) && !is.na(x) && x != "NA") x else y
    })
    rows[[length(rows) + 1]] <- data.frame(keys[i, , drop = FALSE], vals,
                                           peak_mb = round(attr(v, "peak_mb")), check.names = FALSE)
    print(rows[[length(rows)]])
  }
  do.call(rbind, rows)
}

# Entry point of a bench script with cases (n, method, threads): with "run" first in
# `args`, one case: one_run(n, method, threads) is printed as a RESULT line and the
# process ends; otherwise every method runs as its own process at n = args[1] (default
# default_n) with args[2] threads (default 2) and the table of run_cases() is returned.
bench_main <- function(args, script, one_run, default_n, methods, fields) {
  if (length(args) >= 1 && args[1] == "run") {
    r <- one_run(as.numeric(args[2]), args[3], as.integer(args[4]))
    cat("RESULT", paste(r, collapse = " | "), "\n")
    quit(status = 0)
  }
  n <- if (length(args) >= 1) as.numeric(args[1]) else default_n
  threads <- if (length(args) >= 2) as.integer(args[2]) else 2L
  run_cases(script, data.frame(method = methods),
            lapply(methods, function(m) c(format(n, scientific = FALSE), m, threads)), fields)
}

# k fixed random unit directions in R^d (columns of a d x k matrix), for simulated data
# whose signal lies along a few directions of all the inputs.
random_directions <- function(d, k, seed) {
  old <- if (exists(".Random.seed", envir = globalenv())) get(".Random.seed", envir = globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed)
  W <- matrix(stats::rnorm(d * k), d, k)
  sweep(W, 2, sqrt(colSums(W^2)), "/")
}

# The resident-set peak of this process from now on: fit_peak_start() resets the
# kernel's high-water mark (Linux /proc/self/clear_refs), fit_peak_mb() reads it (MB);
# NA where /proc does not allow it. Measures a fit's peak with the data it holds, apart
# from what generating the data cost.
fit_peak_start <- function() {
  gc()
  invisible(tryCatch({ writeLines("5", "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE,
                     warning = function(w) FALSE))
}
fit_peak_mb <- function() {
  st <- tryCatch(readLines("/proc/self/status"), error = function(e) character(0))
  hwm <- grep("^VmHWM:", st, value = TRUE)
  if (!length(hwm)) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", hwm)) / 1024
}
