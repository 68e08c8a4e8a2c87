# Is an ARD kernel's advantage in the ELBO a sign of better predictions for logistic-softmax
# fits? Per split: the test error and log loss of a fit and its approximate leave-one-out
# log predictive density on the training rows (per row), from the cavities of the
# variational q(f): q(f_k) is proportional to p(f_k) prod_i exp(kappa_ik f_ik - omega_ik f_ik^2 / 2)
# with kappa_k = alpha_k + omega_k m_k, so removing point i's site from its marginal
# N(m_ik, v_ik) leaves N(mc, vc), 1 / vc = 1 / v_ik - omega_ik, mc = vc (m_ik / v_ik - kappa_ik),
# and log E_cavity[p(y_i | f_i)] is averaged over 2000 fixed-seed normal draws.
#
# Usage (from the package root, augmentedGP installed; one thread):
#   Rscript bench/multiclass/ard_loo.R SET SPLITS VARIANTS >> out.csv
# SET: iris, fgl, Vehicle or Vowel (the splits of vs_ranger.R); VARIANTS: comma-separated
# from default, ard (kernel_se(lengthscale = rep(1, p))), matern52, theta. Prints CSV rows:
# set, variant, split, error, log loss, LOO per training row, sites more precise than
# their marginal (0 at a CAVI fixed point).
args <- commandArgs(trailingOnly = TRUE)
set_name <- args[1]
nspl <- as.integer(args[2])
vars <- strsplit(args[3], ",")[[1]]
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))
splits <- set_splits(set_name, nspl)
cavity_loo <- function(fit, S = 2000) {
  e <- fit$engine
  m <- as.matrix(e$mean)
  v <- as.matrix(e$var)
  om <- as.matrix(e$omega)
  ka <- as.matrix(e$alpha) + om * m
  pc <- 1 / v - om
  bad <- sum(pc <= 0)
  vc <- 1 / pmax(pc, 1e-10)
  mc <- (m / v - ka) * vc
  n <- nrow(m)
  q <- ncol(m)
  Z <- withr::with_seed(7, matrix(stats::rnorm(S * q), S, q))
  A <- array(0, c(S, n, q))
  for (j in 1:q) A[, , j] <- outer(Z[, j], sqrt(vc[, j])) + rep(mc[, j], each = S)
  ll <- augmentedGP:::.lik_loglik_obs_cpp(e$lik, A)
  top <- apply(ll, 2, max)
  c(loo = sum(top + log(colMeans(exp(sweep(ll, 2, top))))), bad = bad)
}
mk <- list(default = list(), ard = function(p) list(kernel = kernel_se(lengthscale = rep(1, p))),
           matern52 = list(kernel = kernel_matern(nu = 2.5)),
           theta = list(likelihood = logistic_softmax(learn_theta = TRUE)))
for (s in seq_along(splits)) for (v in vars) {
  sp <- splits[[s]]
  dtr <- data.frame(sp$xtr, y = sp$ytr)
  a <- mk[[v]]
  if (is.function(a)) a <- a(ncol(sp$xtr))
  fit <- suppressMessages(suppressWarnings(do.call(augp, c(list(y ~ ., data = dtr, seed = 1), a))))
  sc <- scores(predict(fit, data.frame(sp$xte)), sp$yte)
  l <- cavity_loo(fit)
  cat(sprintf("%s,%s,%d,%.4f,%.4f,%.3f,%d\n", set_name, v, s, sc[["error"]], sc[["logloss"]],
              l[["loo"]] / nrow(dtr), l[["bad"]]))
}
