# Ordinal (continuation-ratio) GP on carData::Womenlf (n = 263 women; labour-force
# participation not.work < parttime < fulltime against husband's income): augp
# (variational and full-Bayes Gibbs) against brms/Stan's `sratio` family with gp(), the same
# model and priors, in the same run.
#
# Model: P(y = k | y >= k) = logistic(c_k - f(income)), f ~ GP(0, sd^2 SE(lengthscale)) on the
# standardised income; cut points ~ Student-t(3, 0, 2.5) (brms's default for the
# thresholds), lengthscale ~ augp's default inverse-gamma, sd ~ half Student-t(3, 0, 2.5).
# Measured: wall times (brms: sampling; compilation separately), bulk ESS of the cut points and
# kernel hyperparameters and of the fitted class probabilities, ESS per second, agreement of
# the posteriors.
#
# Run: Rscript bench/ordinal/bench_brms.R [lib]   (needs brms, rstan and carData)
args <- commandArgs(TRUE)
source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))),
                 "../fullbayes/brms_common.R"))
d <- carData::Womenlf
d$partic <- factor(d$partic, levels = c("not.work", "parttime", "fulltime"), ordered = TRUE)
d$zinc <- (d$hincome - mean(d$hincome)) / stats::sd(d$hincome)

t0 <- proc.time()[["elapsed"]]
vi <- augp(partic ~ hincome, d, control = augp_control(threads = cores))
t_vi <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
fit <- augp(partic ~ hincome, d, method = "gibbs", seed = 1,
            control = augp_control(sample_hyper = TRUE, chains = chains, threads = cores,
                                   iter = 2000))
t_augp <- proc.time()[["elapsed"]] - t0
stopifnot(inherits(fit$likelihood, "augp_ordinal"))
tab <- fit$engine$prior_table
ig <- tab$prior[[which(tab$role == "lengthscale")]]
hd <- posterior::as_draws_array(fit)
cut_vars <- grep("cut", posterior::variables(hd), value = TRUE)
th <- fit$engine$theta
cuts <- unclass(posterior::subset_draws(hd, variable = cut_vars))
augp_hyper <- posterior::as_draws_array(
  array(c(exp(th[, , "se.lengthscale"]), exp(th[, , "se.variance"] / 2), cuts),
        c(dim(th)[1:2], 2 + length(cut_vars)),
        dimnames = list(NULL, NULL, c("lscale", "sdgp", paste0("cut", seq_along(cut_vars))))))
ep_augp <- posterior_epred(fit)  # draws x women x categories
cat(sprintf("augp: VI %.2f s; Gibbs %.1f s; prior lengthscale inv_gamma(%.3f, %.3f); mean0 %s\n",
            t_vi, t_augp, ig$a, ig$b, format(fit$mean0)))

pri <- c(prior_string(sprintf("inv_gamma(%.10g, %.10g)", ig$a, ig$b), class = "lscale",
                      coef = "gpzinc"),
         prior_string("student_t(3, 0, 2.5)", class = "sdgp", coef = "gpzinc"),
         prior_string("student_t(3, 0, 2.5)", class = "Intercept"))
form <- bf(partic ~ gp(zinc, scale = FALSE))
t0 <- proc.time()[["elapsed"]]
b0 <- brm(form, data = d, family = sratio(), prior = pri, chains = 0, silent = 2, refresh = 0)
t_compile <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
bf_fit <- update(b0, recompile = FALSE, chains = chains, cores = cores, iter = 1000,
                 warmup = 500, seed = 1, refresh = 0, silent = 2)
t_brms <- proc.time()[["elapsed"]] - t0
dr <- posterior::as_draws_array(bf_fit, variable = c("^lscale_", "^sdgp_", "^b_Intercept"),
                                regex = TRUE)
posterior::variables(dr) <- c("lscale", "sdgp", paste0("cut", seq_len(posterior::nvariables(dr) - 2)))
ep_brms <- epred_nug(bf_fit)
cat(sprintf("brms: compile %.1f s, sampling %.1f s\n", t_compile, t_brms))

sa <- posterior::summarise_draws(augp_hyper, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
sb <- posterior::summarise_draws(dr, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
pa <- ess_pred(ep_augp, chains)
pb <- ess_pred(ep_brms, chains)
ma <- apply(ep_augp, c(2, 3), mean)
mb <- apply(ep_brms, c(2, 3), mean)
sa_ <- apply(ep_augp, c(2, 3), stats::var) / matrix(pa, dim(ma))
sb_ <- apply(ep_brms, c(2, 3), stats::var) / matrix(pb, dim(mb))
z <- (ma - mb) / sqrt(sa_ + sb_)
vi_p <- as.matrix(fitted(vi))
res <- list(
  vi_time = t_vi, augp_time = t_augp, brms_time = t_brms, brms_compile = t_compile,
  hyper = rbind(cbind(method = "augp", as.data.frame(sa)), cbind(method = "brms", as.data.frame(sb))),
  ess_s_hyper = c(augp = min(sa$ess_bulk) / t_augp, brms = min(sb$ess_bulk) / t_brms),
  ess_s_pred = c(augp = stats::median(pa) / t_augp, brms = stats::median(pb) / t_brms),
  pred_z = summary(as.vector(z)), max_abs_diff = max(abs(ma - mb)),
  vi_vs_brms = max(abs(vi_p - mb)))
print(res$hyper)
cat(sprintf("time: augp VI %.2f s, augp Gibbs %.1f s, brms %.1f s (+ %.1f s compile): brms / VI %.0fx, brms / Gibbs %.1fx\n",
            t_vi, t_augp, t_brms, t_compile, t_brms / t_vi, t_brms / t_augp))
cat(sprintf("min bulk ESS/s on hyperparameters and cut points: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_hyper[1], res$ess_s_hyper[2], res$ess_s_hyper[1] / res$ess_s_hyper[2]))
cat(sprintf("median bulk ESS/s on fitted class probabilities: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_pred[1], res$ess_s_pred[2], res$ess_s_pred[1] / res$ess_s_pred[2]))
cat(sprintf("class probabilities, augp Gibbs - brms: max |diff| %.4f; z: ", res$max_abs_diff))
print(res$pred_z)
cat(sprintf("VI fitted probabilities vs brms posterior means: max |diff| %.3f\n", res$vi_vs_brms))
saveRDS(res, file.path(script_dir(),
                       "results_brms.rds"))
