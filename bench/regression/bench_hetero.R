# Benchmark: heteroscedastic GP regression, heteroscedastic_gaussian() (variational and
# Gibbs) against the homoscedastic Gaussian GP of augmentedGP (gaussian_noise()) and
# mgcv's location-scale GAM (gam(list(y ~ s(x), ~ s(x)), family = gaulss())), on public
# data with input-dependent noise that ship with R packages: MASS::mcycle (accel ~ times,
# 10-fold cross-validation) and MASS::GAGurine (GAG ~ Age, 5-fold).
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/regression/bench_hetero.R [threads] [gibbs: 0/1]
# Writes bench/regression/results_hetero.csv and the figures
# bench/regression/hetero_mcycle_fit.png, bench/regression/hetero_mcycle_noise.png;
# bench/regression/results_hetero.md records a run.
#
# Metric: mean log predictive density of a held-out response per point (LPD, nats; higher
# is better), and fit time (elapsed seconds). augp variational: the predictive density
# E_q[N(y; f, 1 / tau(g))] under q(f) q(g) by 40-point Gauss-Hermite quadrature over g
# (the Gaussian integral over f is exact); augp Gibbs: the average of N(y; f_s, 1 / tau(g_s))
# over the posterior draws at the test inputs; Gaussian GP: N(y; m, v + sigma^2); mgcv:
# the plug-in density N(y; mu, sd^2) at the fitted mean and sd.
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
do_gibbs <- if (length(args) >= 2) as.logical(as.integer(args[2])) else TRUE
suppressPackageStartupMessages({
  library(augmentedGP)
  library(mgcv)
})
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "regression")
ns <- asNamespace("augmentedGP")

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, time = proc.time()[["elapsed"]] - t0)
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
logmeanexp <- function(a) {
  m <- max(a)
  m + log(mean(exp(a - m)))
}

gh <- local({
  n <- 40L
  i <- seq_len(n - 1L)
  J <- matrix(0, n, n)
  J[cbind(i, i + 1L)] <- J[cbind(i + 1L, i)] <- sqrt(i)
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = e$vectors[1, ]^2)
})

# Held-out LPD per point of a heteroscedastic fit at newdata `nd` with responses y.
lpd_hetero <- function(fit, nd, y) {
  lam <- fit$likelihood$lambda
  tau <- function(g) lam * stats::plogis(g - log(lam))
  lp <- ns$latent_posterior(fit, nd)
  if (!is.null(lp$draws)) {
    Fd <- lp$draws[, , 1]
    Gd <- lp$draws[, , 2]
    return(mean(vapply(seq_along(y), function(i) {
      logmeanexp(stats::dnorm(y[i], Fd[, i], 1 / sqrt(tau(Gd[, i])), log = TRUE))
    }, 0)))
  }
  m <- lp$mean
  v <- lp$var
  mean(vapply(seq_along(y), function(i) {
    g <- m[i, 2] + sqrt(v[i, 2]) * gh$x
    log(sum(gh$w * stats::dnorm(y[i], m[i, 1], sqrt(v[i, 1] + 1 / tau(g)))))
  }, 0))
}

lpd_gauss <- function(fit, nd, y) {
  p <- predict(fit, nd, se.fit = TRUE)
  mean(stats::dnorm(y, p$fit, sqrt(p$se.fit^2 + sigma(fit)^2), log = TRUE))
}

# gaulss: predict(type = "response") gives the mean and 1 / sd.
lpd_gaulss <- function(fit, nd, y) {
  p <- predict(fit, nd, type = "response")
  mean(stats::dnorm(y, p[, 1], 1 / p[, 2], log = TRUE))
}

run_set <- function(name, df, yname, xname, folds, seed) {
  set.seed(seed)
  fold <- sample(rep(seq_len(folds), length.out = nrow(df)))
  fy <- stats::as.formula(sprintf("%s ~ %s", yname, xname))
  fs <- list(stats::as.formula(sprintf("%s ~ s(%s)", yname, xname)),
             stats::as.formula(sprintf("~ s(%s)", xname)))
  rows <- list()
  for (k in seq_len(folds)) {
    tr <- df[fold != k, , drop = FALSE]
    te <- df[fold == k, , drop = FALSE]
    y <- te[[yname]]
    het <- elapsed(quiet(augp(fy, tr, likelihood = heteroscedastic_gaussian(), seed = k)))
    gau <- elapsed(quiet(augp(fy, tr, likelihood = gaussian_noise(), seed = k)))
    gam <- elapsed(quiet(mgcv::gam(fs, family = mgcv::gaulss(), data = tr)))
    res <- data.frame(set = name, fold = k, n_train = nrow(tr), n_test = nrow(te),
                      method = c("augp hetero VI", "augp Gaussian", "mgcv gaulss"),
                      lpd = c(lpd_hetero(het$value, te, y), lpd_gauss(gau$value, te, y),
                              lpd_gaulss(gam$value, te, y)),
                      time = c(het$time, gau$time, gam$time))
    if (do_gibbs) {
      hg <- elapsed(quiet(augp(fy, tr, likelihood = heteroscedastic_gaussian(), method = "gibbs",
                               seed = k, control = augp_control(iter = 1500, warmup = 500, chains = 1))))
      res <- rbind(res, data.frame(set = name, fold = k, n_train = nrow(tr), n_test = nrow(te),
                                   method = "augp hetero Gibbs", lpd = lpd_hetero(hg$value, te, y),
                                   time = hg$time))
    }
    rows[[k]] <- res
    cat(sprintf("%s fold %d: %s\n", name, k,
                paste(sprintf("%s %.3f (%.2f s)", res$method, res$lpd, res$time), collapse = "; ")))
  }
  do.call(rbind, rows)
}

data("mcycle", package = "MASS")
data("GAGurine", package = "MASS")
res <- rbind(run_set("mcycle", mcycle, "accel", "times", 10L, 1L),
             run_set("GAGurine", GAGurine, "GAG", "Age", 5L, 2L))
utils::write.csv(res, file.path(out_dir, "results_hetero.csv"), row.names = FALSE)

# per set and method: mean LPD over the held-out points (folds weighted by their size),
# its standard error over folds, and the mean fit time
summ <- do.call(rbind, lapply(split(res, list(res$set, res$method), drop = TRUE), function(d) {
  data.frame(set = d$set[1], method = d$method[1],
             lpd = sum(d$lpd * d$n_test) / sum(d$n_test),
             se = stats::sd(d$lpd) / sqrt(nrow(d)), time = mean(d$time))
}))
summ <- summ[order(summ$set, -summ$lpd), ]
print(summ, row.names = FALSE, digits = 4)

# figures: the fit on all of mcycle, with credible and prediction bands, and its noise sd
fit <- quiet(augp(accel ~ times, mcycle, likelihood = heteroscedastic_gaussian(), seed = 1))
p <- autoplot(fit)
ggplot2::ggsave(file.path(out_dir, "hetero_mcycle_fit.png"), p, width = 7, height = 4.5, dpi = 110)
gam <- quiet(mgcv::gam(list(accel ~ s(times), ~ s(times)), family = mgcv::gaulss(), data = mcycle))
gau <- quiet(augp(accel ~ times, mcycle, likelihood = gaussian_noise(), seed = 1))
grid <- data.frame(times = seq(min(mcycle$times), max(mcycle$times), length.out = 200))
ns_h <- predict(fit, grid, type = "noise", interval = "credible")
nd <- rbind(data.frame(times = grid$times, sd = ns_h$fit, model = "heteroscedastic_gaussian() (VI)"),
            data.frame(times = grid$times, sd = 1 / predict(gam, grid, type = "response")[, 2],
                       model = "mgcv gaulss"),
            data.frame(times = grid$times, sd = sigma(gau), model = "gaussian_noise()"))
band <- data.frame(times = grid$times, lwr = ns_h$lwr, upr = ns_h$upr)
q <- ggplot2::ggplot(nd, ggplot2::aes(times, sd)) +
  ggplot2::geom_ribbon(data = band, ggplot2::aes(x = times, ymin = lwr, ymax = upr), inherit.aes = FALSE,
                       fill = "#9ecae1", alpha = 0.5) +
  ggplot2::geom_line(ggplot2::aes(colour = model), linewidth = 0.8) +
  ggplot2::labs(x = "times (ms)", y = "noise sd of accel (g)", colour = NULL,
                title = "mcycle: noise standard deviation as a function of time",
                subtitle = "Band: 95% credible interval of the heteroscedastic fit's noise sd") +
  ggplot2::theme_minimal() + ggplot2::theme(legend.position = "bottom")
ggplot2::ggsave(file.path(out_dir, "hetero_mcycle_noise.png"), q, width = 7, height = 4, dpi = 110)
ggplot2::ggsave(file.path(out_dir, "hetero_mcycle_noise_autoplot.png"), autoplot(fit, type = "noise"),
                width = 7, height = 4, dpi = 110)
