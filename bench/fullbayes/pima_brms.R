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
# Run: Rscript bench/fullbayes/pima_brms.R [lib]   (needs brms and rstan)
args <- commandArgs(TRUE)
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
t0 <- proc.time()[["elapsed"]]
fit <- augp(type ~ glu + bmi, tr, method = "gibbs", seed = 1,
            control = augp_control(sample_hyper = TRUE, chains = chains, threads = cores,
                                   iter = 2000))
t_augp <- proc.time()[["elapsed"]] - t0
tab <- fit$engine$prior_table
ig <- tab$prior[[which(tab$role == "lengthscale")]]
m0 <- fit$mean0
th <- fit$engine$theta
augp_hyper <- posterior::as_draws_array(
  array(c(exp(th[, , "se.lengthscale"]), exp(th[, , "se.variance"] / 2)),
        c(dim(th)[1:2], 2), dimnames = list(NULL, NULL, c("lscale", "sdgp"))))
ep_augp <- posterior_epred(fit)  # at the 200 training women
cat(sprintf("augp: %.1f s, acceptance %.2f, prior lengthscale %s, m0 %.3f\n", t_augp,
            mean(fit$engine$accept), sprintf("inv_gamma(%.3f, %.3f)", ig$a, ig$b), m0))

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
  augp_time = t_augp, brms_time = t_brms, brms_compile = t_compile,
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
