# Negative-binomial GP regression on datasets::discoveries (yearly counts of great
# inventions, 1860-1959, n = 100): augp (variational and full-Bayes Gibbs) against
# brms/Stan on the same model and priors, in the same run.
#
# Model: y ~ NB(mean mu, shape r), log mu = m0 + f(year), f ~ GP(0, sd^2 SE(lengthscale))
# on the standardised year; m0 fixed at augp's constant prior mean (brms: a constant()
# prior on the intercept); lengthscale ~ augp's default inverse-gamma (tuned to the input
# distances, as brms tunes its own), sd ~ half Student-t(3, 0, 2.5), r ~ gamma(0.01, 0.01)
# (brms's default for the shape).
# Measured: wall times (brms: sampling; compilation separately), bulk ESS of r and the
# kernel hyperparameters and of the fitted means at the 100 years, ESS per second, and
# agreement of the posteriors (fitted means within Monte Carlo error, quantiles of r).
#
# Run: Rscript bench/counts/bench_brms.R [lib]   (needs brms and rstan)
args <- commandArgs(TRUE)
source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))),
                 "../fullbayes/brms_common.R"))
d <- data.frame(year = as.numeric(stats::time(datasets::discoveries)),
                y = as.numeric(datasets::discoveries))
ctr <- mean(d$year)
scl <- stats::sd(d$year)
d$zyear <- (d$year - ctr) / scl

# augp: variational fit (kernel and r by the ELBO)
t0 <- proc.time()[["elapsed"]]
vi <- augp(y ~ year, d, likelihood = negative_binomial(), control = augp_control(threads = cores))
t_vi <- proc.time()[["elapsed"]] - t0
# augp: full-Bayes Gibbs (kernel hyperparameters and r sampled)
t0 <- proc.time()[["elapsed"]]
fit <- augp(y ~ year, d, likelihood = negative_binomial(), method = "gibbs", seed = 1,
            control = augp_control(sample_hyper = TRUE, chains = chains, threads = cores,
                                   iter = 2000))
t_augp <- proc.time()[["elapsed"]] - t0
tab <- fit$engine$prior_table
ig <- tab$prior[[which(tab$role == "lengthscale")]]
m0 <- fit$mean0
hd <- posterior::as_draws_array(fit)
th <- fit$engine$theta
augp_hyper <- posterior::as_draws_array(
  array(c(exp(th[, , "se.lengthscale"]), exp(th[, , "se.variance"] / 2),
          unclass(posterior::subset_draws(hd, variable = "r"))[, , 1]),
        c(dim(th)[1:2], 3), dimnames = list(NULL, NULL, c("lscale", "sdgp", "shape"))))
ep_augp <- posterior_epred(fit)
cat(sprintf("augp: VI %.2f s; Gibbs %.1f s, prior lengthscale inv_gamma(%.3f, %.3f), m0 %.3f\n",
            t_vi, t_augp, ig$a, ig$b, m0))

# brms, same model and priors
pri <- c(prior_string(sprintf("inv_gamma(%.10g, %.10g)", ig$a, ig$b), class = "lscale",
                      coef = "gpzyear"),
         prior_string("student_t(3, 0, 2.5)", class = "sdgp", coef = "gpzyear"),
         prior_string("gamma(0.01, 0.01)", class = "shape"),
         prior_string(sprintf("constant(%.10g)", m0), class = "b", coef = "Intercept"))
form <- bf(y ~ 0 + Intercept + gp(zyear, scale = FALSE))
t0 <- proc.time()[["elapsed"]]
b0 <- brm(form, data = d, family = negbinomial(), prior = pri, chains = 0, silent = 2,
          refresh = 0)
t_compile <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
bf_fit <- update(b0, recompile = FALSE, chains = chains, cores = cores, iter = 1000,
                 warmup = 500, seed = 1, refresh = 0, silent = 2)
t_brms <- proc.time()[["elapsed"]] - t0
dr <- posterior::as_draws_array(bf_fit, variable = c("^lscale_", "^sdgp_", "^shape$"), regex = TRUE)
posterior::variables(dr) <- c("lscale", "sdgp", "shape")
ep_brms <- epred_nug(bf_fit)
cat(sprintf("brms: compile %.1f s, sampling %.1f s\n", t_compile, t_brms))

sa <- posterior::summarise_draws(augp_hyper, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
sb <- posterior::summarise_draws(dr, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
pa <- ess_pred(ep_augp, chains)
pb <- ess_pred(ep_brms, chains)
ma <- colMeans(ep_augp)
mb <- colMeans(ep_brms)
se <- sqrt(apply(ep_augp, 2, stats::var) / pa + apply(ep_brms, 2, stats::var) / pb)
z <- (ma - mb) / se
res <- list(
  vi_time = t_vi, augp_time = t_augp, brms_time = t_brms, brms_compile = t_compile,
  vi_r = vi$likelihood$r,
  hyper = rbind(cbind(method = "augp", as.data.frame(sa)), cbind(method = "brms", as.data.frame(sb))),
  ess_s_hyper = c(augp = min(sa$ess_bulk) / t_augp, brms = min(sb$ess_bulk) / t_brms),
  ess_s_pred = c(augp = stats::median(pa) / t_augp, brms = stats::median(pb) / t_brms),
  pred_z = summary(z), max_rel_diff = max(abs(ma - mb) / mb),
  vi_vs_brms = max(abs(as.numeric(fitted(vi)) - mb) / mb))
print(res$hyper)
cat(sprintf("time: augp VI %.2f s, augp Gibbs %.1f s, brms %.1f s (+ %.1f s compile): brms / VI %.0fx, brms / Gibbs %.1fx\n",
            t_vi, t_augp, t_brms, t_compile, t_brms / t_vi, t_brms / t_augp))
cat(sprintf("min bulk ESS/s on hyperparameters: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_hyper[1], res$ess_s_hyper[2], res$ess_s_hyper[1] / res$ess_s_hyper[2]))
cat(sprintf("median bulk ESS/s on fitted means: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_pred[1], res$ess_s_pred[2], res$ess_s_pred[1] / res$ess_s_pred[2]))
cat(sprintf("fitted means, augp Gibbs vs brms: max rel diff %.4f; z: ", res$max_rel_diff))
print(res$pred_z)
cat(sprintf("VI fitted means vs brms posterior means: max rel diff %.3f; VI r %.2f\n",
            res$vi_vs_brms, res$vi_r))
saveRDS(res, file.path(script_dir(),
                       "results_brms.rds"))
