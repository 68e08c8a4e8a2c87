# Full-Bayes GP classification on MASS::Pima.tr (n = 200, inputs glu and bmi):
# augp's Gibbs sampler with sampled kernel hyperparameters against brms/Stan on the same
# model and priors, in the same run.
#
# Model: logit P(diabetes) = m0 + f(x), f ~ GP(0, sd^2 exp(-|x - x'|^2 / (2 l^2))) on the
# standardised inputs, m0 fixed at the empirical log-odds (augp's constant prior mean;
# brms: a constant prior on the intercept), l ~ inverse-gamma (augp's default, tuned to
# the input distances), sd ~ half Student-t(3, 0, 2.5).
# Measured: wall time (brms: sampling, compilation reported separately), bulk ESS of the
# hyperparameters and of the fitted probabilities at the 200 training women, ESS per second,
# and agreement of the posteriors (predictive probabilities within Monte Carlo error,
# hyperparameter quantiles).
#
# Run: Rscript bench/fullbayes/pima_brms.R [lib] [--augp-only]   (needs brms and rstan,
# except with --augp-only)
# --augp-only runs augp alone and compares it with the brms run recorded in pima_brms.rds
# (saved by a full run); its results go to pima_augp.rds. The ratios are then across
# runs, under whatever load each run saw.
args <- commandArgs(TRUE)
augp_only <- "--augp-only" %in% args
args <- setdiff(args, "--augp-only")
source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))),
                 "brms_common.R"))
tr <- MASS::Pima.tr
ctr <- colMeans(tr[, c("glu", "bmi")])
scl <- apply(tr[, c("glu", "bmi")], 2, stats::sd)
std <- function(d) {
  out <- as.data.frame(scale(d[, c("glu", "bmi")], ctr, scl))
  names(out) <- c("zglu", "zbmi")
  out
}
dtr <- cbind(std(tr), y = as.integer(tr$type == "Yes"))

# augp
load_avg <- function() tryCatch(readLines("/proc/loadavg", 1L), error = function(e) NA_character_)
load_before <- load_avg()
t0 <- proc.time()[["elapsed"]]
c0 <- sum(proc.time()[1:2])
fit <- augp(type ~ glu + bmi, tr, method = "gibbs", seed = 1,
            control = augp_control(sample_hyper = TRUE, chains = chains, threads = cores,
                                   iter = 2000))
t_augp <- proc.time()[["elapsed"]] - t0
cpu_augp <- sum(proc.time()[1:2]) - c0  # CPU seconds of all threads
load_after <- load_avg()
tab <- fit$engine$prior_table
ig <- tab$prior[[which(tab$role == "lengthscale")]]
m0 <- fit$mean0
th <- fit$engine$theta
augp_hyper <- posterior::as_draws_array(
  array(c(exp(th[, , "se.lengthscale"]), exp(th[, , "se.variance"] / 2)),
        c(dim(th)[1:2], 2), dimnames = list(NULL, NULL, c("lscale", "sdgp"))))
ep_augp <- posterior_epred(fit)  # at the 200 training women
cat(sprintf(paste0("augp: %.1f s (CPU %.1f s), acceptance %.2f, %.2f Cholesky factorisations ",
                   "per sweep, prior lengthscale %s, m0 %.3f\n"), t_augp, cpu_augp,
            mean(fit$engine$accept), mean(fit$engine$chol_per_sweep),
            sprintf("inv_gamma(%.3f, %.3f)", ig$a, ig$b), m0))
cat("load average before / after the augp fit:", load_before, "/", load_after, "\n")

if (augp_only) {
  rec <- readRDS(file.path(script_dir(), "pima_brms.rds"))
  sa <- posterior::summarise_draws(augp_hyper, "median", "mad", ~quantile(.x, c(0.05, 0.95)),
                                   "rhat", "ess_bulk")
  pa <- ess_pred(ep_augp, chains)
  res <- list(augp_time = t_augp, augp_cpu = cpu_augp, load = c(load_before, load_after),
              chol_per_sweep = mean(fit$engine$chol_per_sweep),
              accept = mean(fit$engine$accept), hyper = as.data.frame(sa),
              ess_pred = stats::median(pa), mean_pred = colMeans(ep_augp),
              ess_s_hyper = c(augp = min(sa$ess_bulk) / t_augp, brms = rec$ess_s_hyper[["brms"]]),
              ess_s_pred = c(augp = stats::median(pa) / t_augp, brms = rec$ess_s_pred[["brms"]]))
  print(sa)
  cat(sprintf("median bulk ESS of the fitted probabilities: %.0f\n", stats::median(pa)))
  cat(sprintf(paste0("min bulk ESS/s on hyperparameters: augp %.1f, recorded brms %.2f ",
                     "(ratio %.0fx)\n"), res$ess_s_hyper[1], res$ess_s_hyper[2],
              res$ess_s_hyper[1] / res$ess_s_hyper[2]))
  cat(sprintf(paste0("median bulk ESS/s on predictive probabilities: augp %.1f, recorded brms ",
                     "%.2f (ratio %.0fx)\n"), res$ess_s_pred[1], res$ess_s_pred[2],
              res$ess_s_pred[1] / res$ess_s_pred[2]))
  saveRDS(res, file.path(script_dir(), "pima_augp.rds"))
  quit(save = "no")
}

# brms, same model and priors
pri <- c(prior_string(sprintf("inv_gamma(%.10g, %.10g)", ig$a, ig$b), class = "lscale",
                      coef = "gpzgluzbmi"),
         prior_string("student_t(3, 0, 2.5)", class = "sdgp", coef = "gpzgluzbmi"),
         prior_string(sprintf("constant(%.10g)", m0), class = "b", coef = "Intercept"))
form <- bf(y ~ 0 + Intercept + gp(zglu, zbmi, scale = FALSE))
t0 <- proc.time()[["elapsed"]]
b0 <- brm(form, data = dtr, family = bernoulli(), prior = pri, chains = 0, silent = 2,
          refresh = 0)
t_compile <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
bf_fit <- update(b0, recompile = FALSE, chains = chains, cores = cores, iter = 1000,
                 warmup = 500, seed = 1, refresh = 0, silent = 2)
t_brms <- proc.time()[["elapsed"]] - t0
dr <- posterior::as_draws_array(bf_fit, variable = c("^lscale_", "^sdgp_"), regex = TRUE)
posterior::variables(dr) <- c("lscale", "sdgp")
saveRDS(bf_fit, "/tmp/pima_brms_fit.rds")
ep_brms <- epred_nug(bf_fit)
cat(sprintf("brms: compile %.1f s, sampling %.1f s\n", t_compile, t_brms))

sa <- posterior::summarise_draws(augp_hyper, "median", "mad", ~quantile(.x, c(0.05, 0.95)),
                                 "rhat", "ess_bulk")
sb <- posterior::summarise_draws(dr, "median", "mad", ~quantile(.x, c(0.05, 0.95)),
                                 "rhat", "ess_bulk")
pa <- ess_pred(ep_augp, chains)
pb <- ess_pred(ep_brms, chains)
ma <- colMeans(ep_augp)
mb <- colMeans(ep_brms)
se <- sqrt(apply(ep_augp, 2, stats::var) / pa + apply(ep_brms, 2, stats::var) / pb)
z <- (ma - mb) / se

res <- list(
  augp_time = t_augp, augp_cpu = cpu_augp, load = c(load_before, load_after),
  chol_per_sweep = mean(fit$engine$chol_per_sweep),
  brms_time = t_brms, brms_compile = t_compile,
  hyper = rbind(cbind(method = "augp", as.data.frame(sa)), cbind(method = "brms", as.data.frame(sb))),
  ess_s_hyper = c(augp = min(sa$ess_bulk) / t_augp, brms = min(sb$ess_bulk) / t_brms),
  ess_s_pred = c(augp = stats::median(pa) / t_augp, brms = stats::median(pb) / t_brms),
  pred_z = summary(z), max_abs_diff = max(abs(ma - mb)))
print(res$hyper)
cat(sprintf("min bulk ESS/s on hyperparameters: augp %.1f, brms %.2f (ratio %.0fx; with compile %.0fx)\n",
            res$ess_s_hyper[1], res$ess_s_hyper[2], res$ess_s_hyper[1] / res$ess_s_hyper[2],
            res$ess_s_hyper[1] / (min(sb$ess_bulk) / (t_brms + t_compile))))
cat(sprintf("median bulk ESS/s on predictive probabilities: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_pred[1], res$ess_s_pred[2], res$ess_s_pred[1] / res$ess_s_pred[2]))
cat(sprintf("predictive probabilities, augp - brms: max |diff| %.4f; z = diff / MC se: ", res$max_abs_diff))
print(res$pred_z)
saveRDS(res, file.path(script_dir(),
                       "pima_brms.rds"))
