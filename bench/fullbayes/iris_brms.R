# Full-Bayes 3-class GP classification: augp's stick-breaking likelihood with one kernel
# per stick, hyperparameters sampled, against brms/Stan on the same model and priors,
# in the same run. Data: iris, classes setosa / versicolor / virginica from the two
# sepal measurements (standardised), 120 training flowers, 30 held out.
#
# The stick-breaking model with per-stick kernels factorises over the sticks:
#   stick 1: P(setosa) = sigmoid(m1 + f1(x)) on all flowers,
#   stick 2: P(versicolor | not setosa) = sigmoid(m2 + f2(x)) on the others,
# so brms fits it as two Bernoulli GPs (gp(), constant intercepts m_j = augp's prior
# means, the same inverse-gamma lengthscale and half Student-t(3, 0, 2.5) sd priors).
# Measured: wall time (brms sampling for both sticks; compilation separately), bulk ESS
# of the hyperparameters and of the class probabilities at the training flowers, and
# agreement of the class probabilities (within Monte Carlo error).
#
# Run: Rscript bench/fullbayes/iris_brms.R [lib]   (needs brms and rstan)
args <- commandArgs(TRUE)
source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))),
                 "brms_common.R"))
set.seed(7)
test_idx <- sort(sample(150, 30))
tr <- iris[-test_idx, ]
te <- iris[test_idx, ]
vars <- c("Sepal.Length", "Sepal.Width")
ctr <- colMeans(tr[, vars])
scl <- apply(tr[, vars], 2, stats::sd)
std <- function(d) {
  out <- as.data.frame(scale(d[, vars], ctr, scl))
  names(out) <- c("z1", "z2")
  out
}

t0 <- proc.time()[["elapsed"]]
fit <- augp(Species ~ Sepal.Length + Sepal.Width, tr, likelihood = stick_breaking(),
            method = "gibbs", seed = 1,
            control = augp_control(sample_hyper = TRUE, shared_hyper = FALSE, chains = chains,
                                   threads = cores, iter = 2000))
t_augp <- proc.time()[["elapsed"]] - t0
tab <- fit$engine$prior_table
m0 <- fit$mean0
th <- fit$engine$theta
vv <- grepl("variance", dimnames(th)[[3]])
th[, , vv] <- th[, , vv] / 2  # log sd, as brms reports sdgp
dimnames(th)[[3]] <- sub("variance", "sd", dimnames(th)[[3]])
hyper_a <- posterior::as_draws_array(exp(th))  # sds and lengthscales (standardised inputs)
ep_a <- posterior_epred(fit)  # draws x 120 x 3, at the training flowers
cat(sprintf("augp: %.1f s, acceptance %s\n", t_augp, paste(round(fit$engine$accept, 2), collapse = " ")))

fit_stick <- function(j, d, ig) {
  pri <- c(prior_string(sprintf("inv_gamma(%.10g, %.10g)", ig$a, ig$b), class = "lscale",
                        coef = "gpz1z2"),
           prior_string("student_t(3, 0, 2.5)", class = "sdgp", coef = "gpz1z2"),
           prior_string(sprintf("constant(%.10g)", m0[j]), class = "b", coef = "Intercept"))
  form <- bf(y ~ 0 + Intercept + gp(z1, z2, scale = FALSE))
  t0 <- proc.time()[["elapsed"]]
  b0 <- brm(form, data = d, family = bernoulli(), prior = pri, chains = 0, silent = 2,
            refresh = 0)
  tc <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  b <- update(b0, recompile = FALSE, chains = chains, cores = cores, iter = 1000, warmup = 500,
              seed = j, refresh = 0, silent = 2)
  list(fit = b, compile = tc, time = proc.time()[["elapsed"]] - t0)
}
ig <- tab$prior[tab$role == "lengthscale"]
d1 <- cbind(std(tr), y = as.integer(tr$Species == "setosa"))
rest <- tr$Species != "setosa"
d2 <- cbind(std(tr[rest, ]), y = as.integer(tr$Species[rest] == "versicolor"))
b1 <- fit_stick(1, d1, ig[[1]])
b2 <- fit_stick(2, d2, ig[[2]])
t_brms <- b1$time + b2$time
t_comp <- b1$compile + b2$compile
stick_hyper <- function(b, j) {
  h <- posterior::as_draws_array(b, variable = c("^lscale_", "^sdgp_"), regex = TRUE)
  posterior::variables(h) <- paste0(c("lscale", "sdgp"), j)
  h
}
hyper_b <- posterior::bind_draws(stick_hyper(b1$fit, 1), stick_hyper(b2$fit, 2), along = "variable")
# stick probabilities where each stick has data: P(setosa) at every training flower,
# P(versicolor | not setosa) at the non-setosa ones (augp: from its class probabilities)
s1 <- epred_nug(b1$fit)
s2 <- epred_nug(b2$fit)
ep_b <- list(s1, s2)
ep_a <- list(ep_a[, , 1], ep_a[, rest, 2] / (ep_a[, rest, 2] + ep_a[, rest, 3]))
cat(sprintf("brms: compile %.1f s, sampling %.1f s (two sticks)\n", t_comp, t_brms))

ess_cols <- function(ep, nchains) {
  S <- nrow(ep)
  apply(ep, 2, function(v) posterior::ess_bulk(matrix(v, S / nchains, nchains)))
}
ea <- unlist(lapply(ep_a, ess_cols, chains))
eb <- unlist(lapply(ep_b, ess_cols, chains))
ma <- unlist(lapply(ep_a, colMeans))
mb <- unlist(lapply(ep_b, colMeans))
va <- unlist(lapply(ep_a, function(e) apply(e, 2, stats::var)))
vb <- unlist(lapply(ep_b, function(e) apply(e, 2, stats::var)))
se <- sqrt(va / ea + vb / eb)
z <- (ma - mb) / se
sa <- posterior::summarise_draws(hyper_a, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
sb <- posterior::summarise_draws(hyper_b, "median", ~quantile(.x, c(0.05, 0.95)), "rhat", "ess_bulk")
print(sa)
print(sb)
res <- list(augp_time = t_augp, brms_time = t_brms, brms_compile = t_comp,
            ess_s_hyper = c(augp = min(sa$ess_bulk) / t_augp, brms = min(sb$ess_bulk) / t_brms),
            ess_s_pred = c(augp = stats::median(ea, na.rm = TRUE) / t_augp,
                           brms = stats::median(eb, na.rm = TRUE) / t_brms),
            z = summary(as.numeric(z)), max_abs_diff = max(abs(ma - mb)))
cat(sprintf("min bulk ESS/s on hyperparameters: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_hyper[1], res$ess_s_hyper[2], res$ess_s_hyper[1] / res$ess_s_hyper[2]))
cat(sprintf("median bulk ESS/s on stick probabilities: augp %.1f, brms %.2f (ratio %.0fx)\n",
            res$ess_s_pred[1], res$ess_s_pred[2], res$ess_s_pred[1] / res$ess_s_pred[2]))
cat(sprintf("stick probabilities, augp - brms: max |diff| %.4f; z = diff / MC se: ", res$max_abs_diff))
print(res$z)
saveRDS(res, file.path(script_dir(),
                       "iris_brms.rds"))
