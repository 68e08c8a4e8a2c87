# Model variants against the default on the multi-class sets of vs_ranger.R (issue 19,
# item 2): per split, the held-out error and log loss, the fit time, the augmented ELBO
# of the final fit and the direct ELBO E_q[log p(y | f)] - KL(q(f) || p(f)) of its q(f)
# (exact GPs only: the quantity the default's kernel ladder maximises), and the kernel.
#
# Usage (from the package root, augmentedGP installed; one thread):
#   Rscript bench/multiclass/variants.R SET VARIANTS [splits] [out.csv]
# SET: iris, fgl, Vehicle, Vowel or Letter-2000; VARIANTS: comma-separated names from
# `variants` below; splits: cap on the number of splits (default: all of the set's).
# Appends one row per split and variant to out.csv (default variants.csv in the working
# directory) and prints per-variant means.
args <- commandArgs(trailingOnly = TRUE)
set_name <- args[1]
which_var <- strsplit(args[2], ",")[[1]]
max_splits <- if (length(args) >= 3) as.integer(args[3]) else 1000L
out <- if (length(args) >= 4) args[4] else "variants.csv"
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))

splits <- set_splits(set_name, max_splits)

# Each variant: function(p) returning the arguments of augp() besides formula and data.
# ard_iso: ARD started from the default fit's isotropic kernel (its lengthscale on every
# input, in standard deviations), the two fits timed together.
ard_from_iso <- function(p, dtr) {
  f0 <- suppressMessages(augp(y ~ ., data = dtr, seed = 1))
  k <- kernel_se(variance = f0$kernel$variance, lengthscale = rep(f0$kernel$lengthscale, p))
  list(kernel = augmentedGP:::kernel_in_sd_units(k))
}
variants <- list(
  default = function(p) list(),
  ard_iso = ard_from_iso,
  ard = function(p) list(kernel = kernel_se(lengthscale = rep(1, p))),
  matern52 = function(p) list(kernel = kernel_matern(nu = 2.5)),
  matern52_ard = function(p) list(kernel = kernel_matern(nu = 2.5, lengthscale = rep(1, p))),
  theta = function(p) list(likelihood = logistic_softmax(learn_theta = TRUE)),
  bijective = function(p) list(likelihood = logistic_softmax(bijective = TRUE)),
  perclass = function(p) list(control = augp_control(shared_hyper = FALSE)),
  restarts5 = function(p) list(control = augp_control(restarts = 5)),
  augmented = function(p) list(control = augp_control(hyper_objective = "augmented")),
  gibbs = function(p) list(method = "gibbs"),
  # q(f) refined by natural-gradient steps on the direct ELBO (up to 40 rounds); its
  # elbo column is then the direct ELBO of the refined q(f), as elbo() reports it
  refine = function(p) list(control = augp_control(refine = TRUE)),
  exact = function(p) list(inducing = "exact"),
  m400 = function(p) list(inducing = 400)
)

direct_of <- function(fit) {
  e <- fit$engine
  if (is.null(e$kl) || is.na(e$kl) || is.null(e$lik)) return(NA_real_)
  tryCatch(augmentedGP:::engine_direct_elbo(e$lik, e$mean, e$var, e$kl), error = function(err) NA_real_)
}
kdesc <- function(k) {
  if (inherits(k, "augp_kernels")) {
    ls <- unlist(lapply(k, function(z) z$lengthscale))
    return(sprintf("per-class ls %.2g-%.2g", min(ls), max(ls)))
  }
  ls <- k$lengthscale
  if (length(ls) > 1) {
    return(sprintf("ls %.3g-%.3g (geo %.3g) var %.3g", min(ls), max(ls), exp(mean(log(ls))), k$variance))
  }
  sprintf("ls %.3g var %.3g", ls, k$variance)
}

rows <- list()
for (v in which_var) for (s in seq_along(splits)) {
  sp <- splits[[s]]
  dtr <- data.frame(sp$xtr, y = sp$ytr)
  t <- system.time({
    a <- if (v == "ard_iso") ard_from_iso(ncol(sp$xtr), dtr) else variants[[v]](ncol(sp$xtr))
    fit <- suppressMessages(suppressWarnings(
    do.call(augp, c(list(y ~ ., data = dtr, seed = 1), a))))
  })[["elapsed"]]
  sc <- scores(predict(fit, data.frame(sp$xte)), sp$yte)
  el <- tryCatch(elbo(fit), error = function(e) NA_real_)
  row <- data.frame(set = set_name, variant = v, split = s, error = sc[["error"]],
                    logloss = sc[["logloss"]], time = t, elbo = el, direct = direct_of(fit),
                    kernel = kdesc(fit$kernel))
  rows[[length(rows) + 1]] <- row
  cat(sprintf("%s %s split %d: %.4f / %.4f  %.1f s  ELBO %.1f direct %.1f  %s\n", set_name, v, s,
              row$error, row$logloss, t, el, row$direct, row$kernel))
  utils::write.table(row, out, sep = ",", append = file.exists(out), col.names = !file.exists(out),
                     row.names = FALSE)
}
res <- do.call(rbind, rows)
agg <- do.call(rbind, lapply(split(res, res$variant), function(r) data.frame(
  variant = r$variant[1], splits = nrow(r), error = mean(r$error), logloss = mean(r$logloss),
  time = stats::median(r$time), elbo = mean(r$elbo), direct = mean(r$direct))))
print(agg[match(which_var, agg$variant), ], row.names = FALSE, digits = 4)
