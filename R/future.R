# Chains and restarts through the future framework (the settings `parallel` and
# `restarts` of augp_control(), which checks them). With control$parallel =
# "future", Gibbs chains (one future per chain) and independent VI restarts (one
# future per restart) run through future.apply::future_lapply under whatever
# future::plan() the user has set (sequential, multisession, cluster, ...).
# Every chain and restart carries its own explicit random stream derived from the
# fit's base seed, so the results equal those of a sequential run with the same
# seed, whatever the plan or the number of workers.
#
# Progress and convergence: each task reports to the fit's progress reporter when it
# runs in the session that started it (sequential plans, or no futures), within its
# own part of the bar; tasks in other processes find no reporter and stay silent. The
# convergence checks (R/diagnostics.R) run once, after the tasks, on the combined
# chains or the chosen restart, never per task.

# lapply, or future_lapply when asked. No R random numbers are used inside the
# tasks (each task gets explicit seeds), so no parallel RNG streams are needed.
future_map <- function(x, f, parallel) {
  if (identical(parallel, "future")) {
    future.apply::future_lapply(x, f, future.seed = NULL, future.packages = "augmentedGP")
  } else {
    lapply(x, f)
  }
}

# Gibbs chains split one per task; the draws (and, in full-Bayes fits, the draws of the
# kernel and likelihood parameters, theta and lik_params) are bound along the chain
# dimension, acceptance rates by rows. `run(ids)` runs the chains with 0-based stream
# indices `ids` (out of `chains`) and returns list(draws = [kept draws, length(ids), p],
# jitter, and optionally theta, lik_params, accept) as .gp_gibbs_cpp().
future_gibbs_chains <- function(run, chains, parallel) {
  if (!identical(parallel, "future") || chains == 1) return(run(seq_len(chains) - 1L))
  parts <- future_map(seq_len(chains) - 1L, function(id) {
    sec <- progress_section(id / chains, (id + 1) / chains)
    out <- run(id)
    progress_restore(sec)
    out
  }, parallel)
  bind <- function(nm) {
    if (is.null(parts[[1]][[nm]])) return(NULL)
    d <- dim(parts[[1]][[nm]])
    out <- array(0, c(d[1], chains, d[3]))
    for (c in seq_len(chains)) out[, c, ] <- parts[[c]][[nm]][, 1, ]
    out
  }
  out <- list(draws = bind("draws"), jitter = max(vapply(parts, function(p) p$jitter, 0)),
              theta = bind("theta"), lik_params = bind("lik_params"))
  if (!is.null(parts[[1]]$accept)) out$accept <- do.call(rbind, lapply(parts, `[[`, "accept"))
  for (nm in c("grad_eps", "grad_accept", "grad_metric")) {
    if (!is.null(parts[[1]][[nm]])) out[[nm]] <- do.call(c, lapply(parts, `[[`, nm))
  }
  out
}

# Starting kernels for VI restarts: the given kernel, then log parameters moved by
# independent N(0, 1) steps drawn from the fit's seed.
future_restart_kernels <- function(kernel, restarts, seed) {
  th <- engine_get_params(kernel)
  out <- list(kernel)
  if (restarts > 1) {
    withr::local_preserve_seed()
    set.seed(seed[1] %% 2147483647)
    for (r in 2:restarts) out[[r]] <- engine_set_params(kernel, th + stats::rnorm(length(th)))
  }
  out
}

# Run `fit_one(kernel)` (with `indexed = TRUE`: `fit_one(kernel, r)`, r = restart
# number) from every restart kernel and keep the fit with the highest `score`
# (default: the final ELBO, the last element of `$elbo`; the first one on ties).
# Adds `restarts` = the score of each.
future_vi_restarts <- function(fit_one, kernel, restarts, seed, parallel, score = NULL,
                               indexed = FALSE) {
  ks <- future_restart_kernels(kernel, restarts, seed)
  one <- function(r) {
    sec <- progress_section((r - 1) / restarts, r / restarts, sprintf("restart %d / %d", r, restarts))
    out <- if (indexed) fit_one(ks[[r]], r) else fit_one(ks[[r]])
    progress_restore(sec)
    out
  }
  fits <- future_map(seq_along(ks), one, parallel)
  if (is.null(score)) {
    score <- function(f) {
      e <- f$elbo
      if (length(e)) e[length(e)] else -Inf
    }
  }
  final <- vapply(fits, function(f) {
    s <- score(f)
    if (length(s) == 1 && is.finite(s)) s else -Inf
  }, 0)
  best <- fits[[which.max(final)]]
  best$restarts <- final
  best
}
