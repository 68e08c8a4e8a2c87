# Quick probe of full-Bayes Gibbs with one lengthscale per input on split 1 of a set of
# bench_regression.R (the same split and training size): 4 chains x 2000, warm-up 1000,
# 2 threads. Prints the fit time, the held-out LPD (log of the mean over 1000 draws of
# p(y | f_s, sigma_s)), the largest split R-hat and the bulk ESS of the sampled
# hyperparameters, their acceptance and Cholesky factorisations per sweep (per chain), and
# R-hat / bulk ESS of the latent values at the first 50 training points.
# Usage (from the package root): AUGP_LIB=<library with augmentedGP> \
#   Rscript bench/regression/probe_fullbayes_ard.R Boston|Ozone|airquality [chains iter warmup]
# Environment: LIK=auto lets augp() choose the likelihood (Ozone: negative binomial), else
# gaussian_noise(); KERN=ard passes kernel_se(lengthscale = rep(1, p)) (ARD whatever the
# likelihood), else augp_control(ard = TRUE) decides; PROBE_OUT: an .rds for the draws.
args <- commandArgs(TRUE)
lib <- Sys.getenv("AUGP_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
.libPaths(c(.libPaths(), Sys.getenv("AUGP_BENCH_LIB", "/tmp/lib-bench")))  # mlbench
suppressPackageStartupMessages(library(augmentedGP))
set_nm <- if (length(args) >= 1) args[1] else "Boston"
ch <- if (length(args) >= 2) as.integer(args[2]) else 4L
it <- if (length(args) >= 3) as.integer(args[3]) else 2000L
wu <- if (length(args) >= 4) as.integer(args[4]) else 1000L
threads <- 2L
prep <- function(df, yname) {
  df <- df[stats::complete.cases(df), , drop = FALSE]
  x <- as.matrix(df[setdiff(names(df), yname)]); storage.mode(x) <- "double"
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]; colnames(x) <- make.names(colnames(x))
  list(x = x, y = as.numeric(df[[yname]]))
}
data("Ozone", package = "mlbench")
oz <- as.data.frame(lapply(Ozone, function(v) as.numeric(as.character(v))))
sets <- list(Ozone = c(prep(oz[c("V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13")], "V4"), n_train = 135),
  Boston = c(prep(MASS::Boston, "medv"), n_train = 337),
  airquality = c(prep(datasets::airquality[c("Ozone", "Solar.R", "Wind", "Temp")], "Ozone"), n_train = 74))
d <- sets[[set_nm]]
set.seed(101); idx <- sample(length(d$y)); tr <- idx[seq_len(d$n_train)]; te <- setdiff(idx, tr)
trd <- data.frame(d$x[tr, , drop = FALSE], .y = d$y[tr]); ted <- data.frame(d$x[te, , drop = FALSE], .y = d$y[te])
cat("start:", system("uptime", intern = TRUE), "\n")
t0 <- proc.time()[["elapsed"]]
f <- suppressMessages(suppressWarnings(augp(.y ~ ., data = trd, likelihood = if (Sys.getenv("LIK") == "auto") NULL else gaussian_noise(), method = "gibbs", seed = 1, kernel = if (Sys.getenv("KERN") == "ard") kernel_se(lengthscale = rep(1, ncol(d$x))) else kernel_se(),
   control = augp_control(threads = threads, sample_hyper = TRUE, ard = TRUE, chains = ch, iter = it, warmup = wu))))
cat("likelihood:", class(f$likelihood)[1], "\n")
tm <- proc.time()[["elapsed"]] - t0
saveRDS(list(theta = f$engine$theta, accept = f$engine$accept, chol = f$engine$chol_per_sweep, tm = tm), Sys.getenv("PROBE_OUT", "/tmp/ard_probe_out.rds"))
lme <- function(l) max(l) + log(mean(exp(l - max(l))))
ll <- log_lik(f, newdata = ted, ndraws = min(1000L, ch * (it - wu)), seed = 1)
dg <- posterior::summarise_draws(hyper_draws(f, "standardised"), "rhat", "ess_bulk")
arr <- posterior::as_draws_array(f)
lat <- setdiff(dimnames(arr)[[3]], posterior::variables(hyper_draws(f)))
arr <- arr[, , lat[seq_len(min(50, length(lat)))]]
essf <- apply(unclass(arr), 3, posterior::ess_bulk)
rhf <- apply(unclass(arr), 3, posterior::rhat)
cat(sprintf("%s: time %.1f s, LPD %.4f, hyper R-hat max %.3f, hyper ESS min %.0f median %.0f, accept %s, chol/sweep %s\n",
  set_nm, tm, mean(apply(ll, 2, lme)), max(as.numeric(dg$rhat), na.rm = TRUE), min(as.numeric(dg$ess_bulk), na.rm = TRUE), median(as.numeric(dg$ess_bulk), na.rm = TRUE),
  paste(round(f$engine$accept, 3), collapse = " "), paste(round(f$engine$chol_per_sweep, 1), collapse = " ")))
cat(sprintf("latent f (first 50 train pts): R-hat max %.3f, ESS min %.0f median %.0f\n", max(rhf), min(essf), median(essf)))
print(as.data.frame(dg), digits = 3)
cat("end:", system("uptime", intern = TRUE), "\n")
