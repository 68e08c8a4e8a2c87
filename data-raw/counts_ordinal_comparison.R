# Precomputes inst/extdata/counts_ordinal_comparison.csv for vignettes/counts-ordinal.Rmd:
# 10-fold cross-validated log predictive density, per held-out observation, of
#   * the yearly counts of British coal-mining disasters 1851-1962 (boot::coal, dates of
#     the disasters, counted per calendar year): negative-binomial GP, Poisson GP with a
#     logistic rate, mgcv::gam() with a smooth of year (negative binomial and Poisson),
#     and a constant negative-binomial model;
#   * the labour-force participation of 263 Canadian women (carData::Womenlf; not working
#     < part time < full time) from the husband's income and the presence of children:
#     ordinal (continuation-ratio) GP, MASS::polr() (proportional odds, main effects and
#     with an interaction) and the marginal shares.
# One row per held-out observation and method; the same folds for every method. The GP scores average the likelihood over draws of the
# variational posterior (log_lik(fit, newdata)); the others plug in their estimates.
#   Rscript data-raw/counts_ordinal_comparison.R   (from the package root, package installed)
library(augmentedGP)
options(augmentedGP.threads = 2)

yr <- 1851:1962
coal <- data.frame(year = yr,
                   disasters = as.vector(table(factor(floor(boot::coal$date), levels = yr))))
data("Womenlf", package = "carData")
women <- Womenlf
women$partic <- factor(women$partic, levels = c("not.work", "parttime", "fulltime"),
                       ordered = TRUE)

# log of the mean over draws of the likelihood of each held-out row
gp_lpd <- function(fit, test) {
  ll <- log_lik(fit, newdata = test)
  m <- apply(ll, 2, max)
  m + log(colMeans(exp(sweep(ll, 2, m))))
}

folds <- function(n, k, seed) {
  set.seed(seed)
  sample(rep_len(seq_len(k), n))
}

rows <- list()
# one row per held-out observation (its row number in the data), with the fit time of its fold
add <- function(data, fold, method, id, lpd, time = NA) {
  rows[[length(rows) + 1L]] <<- data.frame(data = data, fold = fold, method = method, id = id,
                                           lpd = round(lpd, 6), time = round(time, 3))
}
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  attr(val, "time") <- proc.time()[["elapsed"]] - t0
  val
}

# ---- counts: coal-mining disasters per year ----
fc <- folds(nrow(coal), 10, 2024)
for (k in 1:10) {
  tr <- coal[fc != k, ]
  te <- coal[fc == k, ]
  nb_gp <- timed(augp(disasters ~ year, data = tr, seed = k))
  add("coal", k, "GP, negative binomial", which(fc == k), gp_lpd(nb_gp, te), attr(nb_gp, "time"))
  pl_gp <- timed(augp(disasters ~ year, data = tr, likelihood = poisson_logistic(), seed = k))
  add("coal", k, "GP, Poisson with logistic rate", which(fc == k), gp_lpd(pl_gp, te), attr(pl_gp, "time"))
  g_nb <- timed(mgcv::gam(disasters ~ s(year), family = mgcv::nb(), data = tr, method = "REML"))
  theta <- g_nb$family$getTheta(TRUE)
  add("coal", k, "mgcv::gam, negative binomial", which(fc == k),
      stats::dnbinom(te$disasters, size = theta, mu = stats::predict(g_nb, te, type = "response"),
                     log = TRUE), attr(g_nb, "time"))
  g_po <- timed(mgcv::gam(disasters ~ s(year), family = stats::poisson(), data = tr,
                          method = "REML"))
  add("coal", k, "mgcv::gam, Poisson", which(fc == k),
      stats::dpois(te$disasters, stats::predict(g_po, te, type = "response"), log = TRUE),
      attr(g_po, "time"))
  c0 <- suppressWarnings(MASS::glm.nb(disasters ~ 1, data = tr))
  add("coal", k, "constant, negative binomial", which(fc == k),
      stats::dnbinom(te$disasters, size = c0$theta, mu = exp(stats::coef(c0)[[1]]), log = TRUE))
  cat("coal fold", k, "done\n")
}

# ---- ordered categories: women's labour-force participation ----
fw <- folds(nrow(women), 10, 2025)
for (k in 1:10) {
  tr <- women[fw != k, ]
  te <- women[fw == k, ]
  y <- as.integer(te$partic)
  gp <- timed(augp(partic ~ hincome + children, data = tr, seed = k))
  add("womenlf", k, "GP, ordinal (continuation ratio)", which(fw == k), gp_lpd(gp, te), attr(gp, "time"))
  p1 <- timed(MASS::polr(partic ~ hincome + children, data = tr))
  P1 <- stats::predict(p1, te, type = "probs")
  add("womenlf", k, "polr, main effects", which(fw == k), log(P1[cbind(seq_along(y), y)]), attr(p1, "time"))
  p2 <- MASS::polr(partic ~ hincome * children, data = tr)
  P2 <- stats::predict(p2, te, type = "probs")
  add("womenlf", k, "polr, with interaction", which(fw == k), log(P2[cbind(seq_along(y), y)]))
  shares <- as.vector(table(tr$partic)) / nrow(tr)
  add("womenlf", k, "marginal shares", which(fw == k), log(shares[y]))
  cat("womenlf fold", k, "done\n")
}

res <- do.call(rbind, rows)
utils::write.csv(res, file.path("inst", "extdata", "counts_ordinal_comparison.csv"),
                 row.names = FALSE)
print(aggregate(lpd ~ data + method, res, mean))
