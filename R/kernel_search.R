# The kernel search of augp_control(kernel_search =): a fit with the likelihood's
# default kernel (kernel = NULL) on the exact GP, its kernel learned variationally, is
# fitted with each candidate of kernel_search_candidates() (each by the same engine call,
# with the same seed), and each fit is scored by its final ELBO minus the number of
# kernel hyperparameters it learned (1 nat each, as the ELBO is maximised over them). The
# default is kept unless another candidate's score beats the default's by more than
# KERNEL_SEARCH_MARGIN nats; then the best score wins (the first in the list on ties).
# The fit keeps the table of the candidates (kernel_search_table()) as fit$kernel_search.

# kernel_search = "auto" searches fits of at most this many observations times latent
# columns, for the likelihoods that ask for it (lik_kernel_search_auto_n()): the same
# size as integrate_hyper = "auto" (IH_AUTO_N), where the five exact-GP fits of the
# search take a few seconds.
KERNEL_SEARCH_AUTO_N <- 500

# The penalised ELBO (nats) by which a candidate must beat the default kernel's to
# replace it.
KERNEL_SEARCH_MARGIN <- 1

# The candidate kernels, in data units with their input columns resolved: the
# likelihood's default kernel `default` first, then the squared exponential (isotropic
# and with one lengthscale per input, ARD), Matern 3/2 and 5/2 (isotropic) and Matern
# 3/2 with ARD, leaving out any identical to the default. `p`: the number of design
# columns (the ARD lengthscales start at 1 in the units of each column); `ard`: whether
# the fit keeps more than one input column (with one, the ARD kernels are the isotropic
# ones and are left out). A list of list(label, kernel).
kernel_search_candidates <- function(default, p, xnames, ard = p > 1L) {
  cands <- list(
    list(label = "squared exponential", kernel = kernel_se()),
    if (ard) list(label = "squared exponential with ARD",
                  kernel = kernel_se(lengthscale = rep(1, p))),
    list(label = "Matern 3/2", kernel = kernel_matern(nu = 1.5)),
    list(label = "Matern 5/2", kernel = kernel_matern(nu = 2.5)),
    if (ard) list(label = "Matern 3/2 with ARD",
                  kernel = kernel_matern(nu = 1.5, lengthscale = rep(1, p))))
  cands <- Filter(Negate(is.null), cands)
  same <- vapply(cands, function(cd) identical(cd$kernel, default), TRUE)
  first <- if (any(same)) cands[[which(same)[1]]]$label else kernel_form(default)
  cands <- c(list(list(label = first, kernel = default)), cands[!same])
  lapply(cands, function(cd) {
    cd$kernel <- kernel_resolve_dims(cd$kernel, xnames, p)
    cd
  })
}

# Whether a fit searches its kernel: `setting` is control$kernel_search ("auto", TRUE or
# FALSE). The search needs the likelihood's default kernel (`kernel_default`), the exact
# GP (`sparse` FALSE), a kernel learned variationally (`learn_kernel`, not the Gaussian
# exact fit `exact_marginal`, which has its own `ard`, nor sampled with sample_hyper);
# TRUE where it cannot apply is an error that says why. "auto": where the likelihood
# asks for it, up to its size (lik_kernel_search_auto_n(); `nq` = n q).
kernel_search_use <- function(setting, likelihood, kernel_default, sparse, learn_kernel,
                              exact_marginal, sample_hyper, nq) {
  if (isFALSE(setting)) return(FALSE)
  why_not <- if (!kernel_default) {
    "a kernel was given (`kernel`, or gp() terms in the formula)"
  } else if (sparse) {
    "the fit is a sparse GP (`inducing`); the search fits the exact GP"
  } else if (!learn_kernel) {
    "the kernel is not learned (learn_hyper = FALSE or hyper_maxit = 0)"
  } else if (exact_marginal) {
    sprintf("the %s fit on the exact GP chooses one lengthscale per input by `ard`",
            likelihood$name)
  } else if (sample_hyper) {
    "sample_hyper = TRUE samples the kernel hyperparameters instead of learning them"
  }
  if (isTRUE(setting)) {
    if (!is.null(why_not)) {
      stop(sprintf(paste0("`control`: kernel_search = TRUE chooses among the likelihood's ",
                          "default kernel and other kernels learned by the ELBO, but %s; ",
                          "use kernel_search = FALSE or \"auto\"."), why_not), call. = FALSE)
    }
    return(TRUE)
  }
  is.null(why_not) && nq <= lik_kernel_search_auto_n(likelihood)
}

# The search. `cands`: kernel_search_candidates(); `fit_one(kernel)`: the variational
# engine fit with a candidate kernel (data units), as list(engine, kernel_std). The
# warnings of each candidate's fit are held back, and those of the chosen one given once
# the choice is made (messages, progress among them, pass; with `verbose`, a line names
# each candidate before its fit). A candidate other than the default whose fit fails is
# left out (its ELBO NA in the table). Returns list(engine, kernel, kernel_std, label,
# table) of the chosen candidate.
kernel_search_fit <- function(cands, fit_one, verbose = FALSE) {
  fits <- vector("list", length(cands))
  held <- vector("list", length(cands))
  for (i in seq_along(cands)) {
    if (verbose) {
      message(sprintf("Kernel search: candidate %d of %d, %s", i, length(cands),
                      cands[[i]]$label))
    }
    w <- list()
    run <- function() {
      withCallingHandlers(fit_one(cands[[i]]$kernel), warning = function(cnd) {
        w[[length(w) + 1L]] <<- cnd
        invokeRestart("muffleWarning")
      })
    }
    fits[i] <- list(if (i == 1L) run() else tryCatch(run(), error = function(e) NULL))
    held[[i]] <- w
  }
  elbo <- vapply(fits, function(f) if (is.null(f)) NA_real_ else kernel_search_elbo(f$engine), 0)
  npar <- vapply(fits, function(f) if (is.null(f)) NA_real_ else kernel_n_hyper(f$engine$kernel), 0)
  tab <- kernel_search_table(vapply(cands, `[[`, "", "label"), npar, elbo)
  ch <- which(tab$chosen)
  for (cnd in held[[ch]]) warning(cnd)
  list(engine = fits[[ch]]$engine, kernel_std = fits[[ch]]$kernel_std,
       kernel = cands[[ch]]$kernel, label = cands[[ch]]$label, table = tab)
}

# The rule, as the table the fit keeps: one row per candidate (the default first) with
# its label, the number of kernel hyperparameters learned, the final ELBO, the score
# (ELBO minus that number; NA for a failed fit) and whether it was chosen: the default
# unless the best score beats the default's by more than KERNEL_SEARCH_MARGIN, then the
# best score (the first on ties).
kernel_search_table <- function(label, npar, elbo) {
  score <- elbo - npar
  gain <- score - score[1]
  gain[is.na(gain)] <- -Inf
  best <- which.max(gain)
  chosen <- if (gain[best] > KERNEL_SEARCH_MARGIN) best else 1L
  data.frame(kernel = label, hyperparameters = as.integer(npar), elbo = elbo, score = score,
             chosen = seq_along(label) == chosen, stringsAsFactors = FALSE)
}

# The ELBO a candidate is scored by: its final ELBO (the direct ELBO when the fit chose
# its kernel by it), as elbo() reports it.
kernel_search_elbo <- function(eng) {
  if (!is.null(eng$elbo_direct)) eng$elbo_direct else last_elbo(eng)
}

# The number of hyperparameters a fitted kernel learned (summed over the kernels of a
# fit with one kernel per latent function).
kernel_n_hyper <- function(kernel) {
  if (is_kernel_list(kernel)) return(sum(vapply(kernel, kernel_n_hyper, 0)))
  length(kernel_get_params(kernel))
}

# How print() and summary() name the search of a fit (NULL without one): the kernel
# chosen and by what.
kernel_search_line <- function(object) {
  tab <- object$kernel_search
  if (is.null(tab)) return(NULL)
  ch <- which(tab$chosen)
  sprintf("Kernel: %s%s, %s by the penalised ELBO among %d candidates",
          tab$kernel[ch], if (ch == 1L) " (the likelihood's default)" else "",
          if (ch == 1L) "kept" else "chosen", nrow(tab))
}

# summary() of a fit with a kernel search: its table, the rule under it.
print_kernel_search_table <- function(tab, digits) {
  if (is.null(tab)) return(invisible())
  out <- data.frame(kernel = tab$kernel, hyperparameters = tab$hyperparameters,
                    ELBO = format(tab$elbo, digits = digits, nsmall = 2),
                    score = format(tab$score, digits = digits, nsmall = 2),
                    chosen = ifelse(tab$chosen, "*", ""))
  print(out, row.names = FALSE, right = FALSE)
  cat(sprintf(paste0("  (score = ELBO - 1 nat per kernel hyperparameter; the first, the ",
                     "default, is kept unless beaten by more than %s nat)\n"),
              format(KERNEL_SEARCH_MARGIN)))
  invisible()
}
