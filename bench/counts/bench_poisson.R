# Benchmark: GP count regression with poisson_logistic() (Poisson with rate
# lambda * plogis(f)) against Poisson GLM and GAM fits, on public count data that ship
# with R packages. Held-out log predictive density and fit time, everything in one run
# so that times are comparable.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/counts/bench_poisson.R [threads] [splits]
# Writes bench/counts/results_poisson.csv; bench/counts/results_poisson.md records a run.
#
# Each set is split at random 2:1 into training and test rows (`splits` fixed seeds).
# LPD: mean log predictive density of a held-out count, nats per point (higher is
# better). augp (VI): log E_q[Poisson(y | lambda plogis(f))] under the Gaussian
# marginal q(f) of each test point, by 30-point Gauss-Hermite quadrature on the link's
# mean and sd; augp (Gibbs): log of the mean over posterior draws of
# Poisson(y | lambda plogis(f_s)) (log_lik()); augp (full Bayes, every set): the same
# over the draws of a Gibbs fit that samples the kernel hyperparameters and lambda too
# (augp_control(sample_hyper = TRUE), 4 chains x 2000 iterations, 1000 warm-up), all
# 4000 draws. glm(family = poisson) and
# mgcv::gam(family = poisson): plug-in Poisson(y | fitted mean), their usual predictive.
# Ratios are augp / peer (time); LPD differences are augp - peer. augp_ih: VI averaged over
# the kernel hyperparameters (augp_control(integrate_hyper = TRUE)), its LPD the log of the
# mean over the mixture's points of each point's quadrature; augp_vi is the type-II fit
# (integrate_hyper = FALSE).
# Environment: AUGP_BENCH_FB=0 skips the full-Bayes and Gibbs fits; AUGP_BENCH_CSV names
# the output file (default results_poisson.csv).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
n_splits <- if (length(args) >= 2) as.integer(args[2]) else 3L

suppressPackageStartupMessages({
  library(augmentedGP)
  library(mgcv)
})
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "counts")
with_fb <- !identical(Sys.getenv("AUGP_BENCH_FB"), "0")
out_csv <- Sys.getenv("AUGP_BENCH_CSV", "results_poisson.csv")

# elapsed and CPU (user + system, all threads) seconds
elapsed <- function(expr) {
  t0 <- proc.time()
  val <- force(expr)
  t1 <- proc.time() - t0
  list(value = val, time = t1[["elapsed"]], cpu = t1[["user.self"]] + t1[["sys.self"]])
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# ---- data: a data frame with the count `y` and the inputs; formulas per method ----
source(file.path("bench", "counts", "count_data.R"))  # disc, ep, qu
sets <- list(
  InsectSprays = list(data = data.frame(y = InsectSprays$count, spray = InsectSprays$spray),
                      augp = y ~ spray, glm = y ~ spray, gam = y ~ spray),
  warpbreaks = list(data = data.frame(y = warpbreaks$breaks, wool = warpbreaks$wool,
                                      tension = warpbreaks$tension),
                    augp = y ~ wool + tension, glm = y ~ wool * tension, gam = y ~ wool * tension),
  quine = list(data = qu, augp = y ~ Eth + Sex + Age + Lrn, glm = y ~ Eth + Sex + Age + Lrn,
               gam = y ~ Eth + Sex + Age + Lrn),
  epil = list(data = ep, augp = y ~ trt + lbase + lage + period,
              glm = y ~ trt + lbase + lage + period, gam = y ~ trt + s(lbase) + s(lage) + period),
  discoveries = list(data = disc, augp = y ~ year, glm = y ~ poly(year, 2), gam = y ~ s(year))
)
gibbs_set <- "discoveries"

gh <- local({
  m <- 30
  i <- seq_len(m - 1)
  J <- matrix(0, m, m)
  J[cbind(i, i + 1)] <- J[cbind(i + 1, i)] <- sqrt(i / 2)
  e <- eigen(J, symmetric = TRUE)
  list(x = sqrt(2) * e$values, w = e$vectors[1, ]^2)  # for a standard normal weight
})

# log E[Poisson(y | lambda plogis(f))], f ~ N(m, s^2), per point
lpd_vi <- function(y, m, s, lambda) {
  vapply(seq_along(y), function(i) {
    l <- stats::dpois(y[i], lambda * stats::plogis(m[i] + s[i] * gh$x), log = TRUE) + log(gh$w)
    top <- max(l)
    top + log(sum(exp(l - top)))
  }, 0)
}

# the same for a fit averaged over its hyperparameters: log of the mean over the mixture's
# points (a type-II fit: one point)
lpd_mix <- function(fit, newdata) {
  ns <- asNamespace("augmentedGP")
  X <- ns$new_design(fit, newdata)
  mg <- ns$vi_marginals(fit, X, attr(X, "ok"))
  L <- vapply(seq_len(ncol(mg$M)), function(j) lpd_vi(newdata$y, mg$M[, j], sqrt(mg$V[, j]),
                                                        fit$lambda), numeric(nrow(newdata)))
  L <- matrix(L, nrow(newdata))
  apply(L, 1, function(l) { top <- max(l); top + log(mean(exp(l - top))) })
}

log_mean_exp_cols <- function(L) apply(L, 2, function(l) { top <- max(l); top + log(mean(exp(l - top))) })

rows <- list()
for (nm in names(sets)) {
  st <- sets[[nm]]
  d <- st$data
  n <- nrow(d)
  for (sp in seq_len(n_splits)) {
    set.seed(1000 + sp)
    tr <- sort(sample(n, round(2 * n / 3)))
    te <- setdiff(seq_len(n), tr)
    dtr <- d[tr, , drop = FALSE]
    dte <- d[te, , drop = FALSE]
    add <- function(method, lpd, tm, extra = NA_real_, rhat = NA_real_, ess = NA_real_) {
      rows[[length(rows) + 1L]] <<- data.frame(set = nm, split = sp, n_train = length(tr),
                                               n_test = length(te), method = method,
                                               lpd = mean(lpd), time = tm$time, cpu = tm$cpu,
                                               lambda = extra, rhat = rhat, ess = ess)
    }
    # augp, variational: type-II, and averaged over the kernel hyperparameters
    a <- elapsed(quiet(augp(st$augp, dtr, likelihood = poisson_logistic(), seed = sp,
                            control = augp_control(integrate_hyper = FALSE))))
    add("augp_vi", lpd_mix(a$value, dte), a, a$value$lambda)
    a <- elapsed(quiet(augp(st$augp, dtr, likelihood = poisson_logistic(), seed = sp,
                            control = augp_control(integrate_hyper = TRUE))))
    add("augp_ih", lpd_mix(a$value, dte), a, a$value$lambda)
    # augp, Gibbs (lambda held at its ELBO value)
    if (with_fb && nm == gibbs_set) {
      g <- elapsed(quiet(augp(st$augp, dtr, likelihood = poisson_logistic(), method = "gibbs",
                              seed = sp)))
      ll <- log_lik(g$value, newdata = dte, ndraws = 1000, seed = sp)
      add("augp_gibbs", log_mean_exp_cols(ll), g, g$value$lambda)
    }
    # augp, full Bayes: Gibbs with the kernel hyperparameters and lambda sampled under their
    # default priors; lambda: posterior mean; rhat / ess: largest split R-hat and smallest
    # bulk ESS over the sampled parameters
    if (with_fb) {
    fb <- elapsed(quiet(augp(st$augp, dtr, likelihood = poisson_logistic(), method = "gibbs",
                             seed = sp, control = augp_control(sample_hyper = TRUE, iter = 2000,
                                                               warmup = 1000, chains = 4))))
    ll <- log_lik(fb$value, newdata = dte, seed = sp)
    h <- hyper_draws(fb$value, "standardised")
    dg <- posterior::summarise_draws(h, "rhat", "ess_bulk")
    add("augp_fb", log_mean_exp_cols(ll), fb, mean(h[, , "lambda"]), max(dg$rhat, na.rm = TRUE),
        min(dg$ess_bulk, na.rm = TRUE))
    }
    # glm(poisson)
    gl <- elapsed(quiet(stats::glm(st$glm, family = stats::poisson(), data = dtr)))
    mu <- stats::predict(gl$value, dte, type = "response")
    add("glm", stats::dpois(dte$y, mu, log = TRUE), gl)
    # mgcv::gam(poisson), smoothness by REML
    ga <- elapsed(quiet(mgcv::gam(st$gam, family = stats::poisson(), data = dtr, method = "REML")))
    mu <- stats::predict(ga$value, dte, type = "response")
    add("gam", stats::dpois(dte$y, mu, log = TRUE), ga)
  }
  cat(sprintf("%s done\n", nm))
}
res <- do.call(rbind, rows)
utils::write.csv(res, file.path(out_dir, out_csv), row.names = FALSE)

# ---- summary: mean over splits; differences and ratios from the same splits ----
summ <- do.call(rbind, lapply(names(sets), function(nm) {
  r <- res[res$set == nm, ]
  get <- function(m, col) r[r$method == m, col]
  aug <- intersect(c("augp_vi", "augp_ih", "augp_gibbs", "augp_fb"), r$method)
  do.call(rbind, lapply(aug, function(a) {
    data.frame(set = nm, method = a, n = sprintf("%d / %d", r$n_train[1], r$n_test[1]),
               lpd = mean(get(a, "lpd")), lpd_glm = mean(get("glm", "lpd")),
               lpd_gam = mean(get("gam", "lpd")),
               d_glm = mean(get(a, "lpd") - get("glm", "lpd")),
               d_glm_se = stats::sd(get(a, "lpd") - get("glm", "lpd")) / sqrt(n_splits),
               d_gam = mean(get(a, "lpd") - get("gam", "lpd")),
               d_gam_se = stats::sd(get(a, "lpd") - get("gam", "lpd")) / sqrt(n_splits),
               time = mean(get(a, "time")), cpu = mean(get(a, "cpu")),
               ratio_glm = mean(get(a, "time")) / mean(get("glm", "time")),
               ratio_gam = mean(get(a, "time")) / mean(get("gam", "time")),
               cpu_ratio_gam = mean(get(a, "cpu")) / max(mean(get("gam", "cpu")), 1e-3),
               lambda = mean(get(a, "lambda")), max_y = max(sets[[nm]]$data$y),
               d_best = mean(get(a, "lpd") - pmax(get("glm", "lpd"), get("gam", "lpd"))),
               rhat_max = max(get(a, "rhat")), ess_min = min(get(a, "ess")))
  }))
}))
print(summ, digits = 4)
print(summ[, c("set", "method", "lpd", "d_best", "time")], digits = 4)
cat(sprintf("R %s, augmentedGP %s, mgcv %s, threads %d, splits %d\n", getRversion(),
            utils::packageVersion("augmentedGP"), utils::packageVersion("mgcv"), threads, n_splits))
