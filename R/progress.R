# Progress of a fit (augp_control(verbose = TRUE)).
#
# One reporter per fit: the function that starts it (run_engine(), or the engine when
# called directly) owns it; everything the fit runs inside reports to it, and a
# nested start while one is running reports to the running one. The reporter keeps
# the fraction of the fit done (0 to 1, never decreasing) and a status line.
# Fitting stages claim parts of the bar with progress_section(from, to) (relative to
# the enclosing section) and move within them with progress_set(frac).
#
# Output: every line is a message (stderr), never standard output. In interactive
# sessions a cli progress bar shows the fraction done and the status; cli throttles
# its redraws (the option `cli.progress_throttle`) and only shows a bar once the fit
# has run for `cli.progress_show_after` seconds (default 2). In non-interactive runs
# there is no bar: a header, one line per main stage and a final "done" line. The
# option `augmentedGP.progress_bar` (TRUE / FALSE) overrides the choice of the bar.
#
# Nothing here touches a random stream or the numerics: a fit gives the same result
# with and without progress. Progress is only reported from the R main thread; the
# C++ loops call back between chunks of work (.gp_gibbs_cpp, .sparse_svi_cpp).

progress_state <- new.env(parent = emptyenv())

progress_bar_wanted <- function() {
  opt <- getOption("augmentedGP.progress_bar")
  if (is.logical(opt) && length(opt) == 1L && !is.na(opt)) return(opt)
  interactive()
}

# The running reporter (NULL when none).
progress_active <- function() progress_state$active

# Start the reporter when `verbose` and none is running: prints `header` and, when a
# bar is wanted, starts a cli bar bound to the frame `envir` (the owner's, so cli ends
# it when that frame exits). Returns TRUE if the caller owns the new reporter; the
# owner calls progress_finish() when the fit is done and progress_close() on exit.
progress_begin <- function(verbose, header, envir = parent.frame()) {
  if (!isTRUE(verbose) || !is.null(progress_active())) return(FALSE)
  p <- new.env(parent = emptyenv())
  p$lo <- 0
  p$hi <- 1
  p$value <- 0
  p$label <- ""
  p$t0 <- proc.time()[["elapsed"]]
  p$envir <- envir
  p$bar <- NULL
  progress_state$active <- p
  progress_state$last <- NULL
  message(header)
  if (progress_bar_wanted()) {
    p$bar <- progress_cli(cli::cli_progress_bar(
      total = 100, clear = FALSE, auto_terminate = FALSE, .envir = envir,
      format = "{cli::pb_bar} {cli::pb_percent} | {cli::pb_status}"))
  }
  TRUE
}

# Claim the part [from, to] of the current section (fractions of it) for a stage
# called `label` (short: the bar's status starts with it); announce = TRUE also
# prints `line` as a message when there is no bar (main stages only, to keep
# non-interactive output to a few lines). Returns the enclosing section, for
# progress_restore(); NULL when no reporter runs.
progress_section <- function(from, to, label = NULL, announce = FALSE, line = label) {
  p <- progress_active()
  if (is.null(p)) return(NULL)
  old <- list(lo = p$lo, hi = p$hi, label = p$label)
  w <- old$hi - old$lo
  p$lo <- old$lo + from * w
  p$hi <- old$lo + to * w
  if (!is.null(label)) p$label <- label
  if (announce && is.null(p$bar)) message("augp: ", line)
  progress_set(0)
  old
}

# End a section: its whole part counts as done; the enclosing section is current again.
progress_restore <- function(old) {
  p <- progress_active()
  if (is.null(p) || is.null(old)) return(invisible())
  progress_set(1)
  p$lo <- old$lo
  p$hi <- old$hi
  p$label <- old$label
  invisible()
}

# Move to the fraction `frac` of the current section (never backwards), with an
# optional status after the section's label.
progress_set <- function(frac, status = NULL) {
  p <- progress_active()
  if (is.null(p)) return(invisible())
  frac <- min(1, max(0, frac))
  p$value <- max(p$value, p$lo + frac * (p$hi - p$lo))
  if (!is.null(p$bar)) {
    st <- if (is.null(status)) p$label else paste0(p$label, if (nzchar(p$label)) ": ", status)
    progress_cli(cli::cli_progress_update(set = floor(100 * p$value), status = st, id = p$bar,
                                          .envir = p$envir))
  }
  invisible()
}

# The fit is done: the bar at 100% and a final line ("augp: done in <t> s").
progress_finish <- function(summary = NULL) {
  p <- progress_active()
  if (is.null(p)) return(invisible())
  p$lo <- 0
  p$hi <- 1
  p$value <- 1
  if (!is.null(p$bar)) {
    progress_cli(cli::cli_progress_update(set = 100, status = "done", id = p$bar,
                                          .envir = p$envir))
    progress_cli(cli::cli_progress_done(id = p$bar, .envir = p$envir))
    p$bar <- NULL
  }
  message(sprintf("augp: done (100%%) in %.1f s%s", proc.time()[["elapsed"]] - p$t0,
                  if (is.null(summary)) "" else paste0(", ", summary)))
  progress_close()
}

# Stop reporting (after progress_finish(), or when the fit fails); the last fraction
# reached stays in progress_state$last.
progress_close <- function() {
  p <- progress_active()
  if (is.null(p)) return(invisible())
  if (!is.null(p$bar)) progress_cli(cli::cli_progress_done(id = p$bar, .envir = p$envir))
  progress_state$last <- p$value
  progress_state$active <- NULL
  invisible()
}

# A call to cli's progress bar: a failure of the display never stops the fit.
progress_cli <- function(expr) tryCatch(expr, error = function(e) NULL)

# The callbacks the C++ loops call between chunks of work (NULL without a reporter,
# so that the loops skip the call).
progress_gibbs_callback <- function() {
  if (is.null(progress_active())) return(NULL)
  function(done, total) progress_set(done / total, sprintf("iteration %d / %d", done, total))
}

progress_svi_callback <- function() {
  if (is.null(progress_active())) return(NULL)
  function(t, total, elbo) {
    progress_set(t / total, sprintf("step %d / %d, ELBO estimate %.6g", t, total, elbo))
  }
}

# The first line of a fit's progress.
progress_header <- function(method, X, inducing = NULL) {
  sprintf("augp: %s on %d observations, %d input(s)%s",
          if (method == "vi") "variational inference" else "Gibbs sampling",
          nrow(X), ncol(X), if (is.null(inducing)) "" else " (sparse GP)")
}
