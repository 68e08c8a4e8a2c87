# Precomputes inst/extdata/sb_beps_comparison.csv for vignettes/stick-breaking.Rmd:
# held-out predictive log-likelihood per test respondent over 20 random 2:1
# splits of the respondents of carData::BEPS (GPL >= 2), vote intention by age,
# for a static baseline, nnet::multinom (linear and quadratic in age) and the
# stick-breaking GP (variational fit; two stick orders).
#   Rscript data-raw/stick_breaking_comparison.R   (from the package root, package installed)
library(augmentedGP)
data("BEPS", package = "carData")
cats <- c("Conservative", "Labour", "LiberalDemocrat")
by_age <- function(d) {
  tab <- as.data.frame.matrix(table(factor(d$age), d$vote))
  names(tab) <- cats
  data.frame(age = as.integer(rownames(tab)), tab)
}
rows <- list()
for (split in 1:20) {
  set.seed(2000 + split)
  test <- stats::runif(nrow(BEPS)) >= 2 / 3
  tr <- by_age(BEPS[!test, ])
  te <- by_age(BEPS[test, ])
  Yte <- as.matrix(te[, cats])
  score <- function(P) sum(Yte * log(P)) / sum(Yte)
  static <- colSums(tr[, cats]) / sum(tr[, cats])
  m1 <- nnet::multinom(cbind(Conservative, Labour, LiberalDemocrat) ~ age, data = tr, trace = FALSE)
  m2 <- nnet::multinom(cbind(Conservative, Labour, LiberalDemocrat) ~ poly(age, 2), data = tr,
                       trace = FALSE)
  t_gp <- system.time(
    gp <- augp(cbind(Conservative, Labour, LiberalDemocrat) ~ age, data = tr, seed = split)
  )[["elapsed"]]
  gp_rev <- augp(cbind(Conservative, Labour, LiberalDemocrat) ~ age, data = tr, seed = split,
                 likelihood = stick_breaking(order = rev(cats)))
  rows[[split]] <- data.frame(
    split = split, n_test = sum(Yte),
    static = score(matrix(static, nrow(te), 3, byrow = TRUE)),
    multinom_linear = score(predict(m1, te, type = "probs")),
    multinom_quadratic = score(predict(m2, te, type = "probs")),
    gp_sb = score(predict(gp, te)[, cats]),
    gp_sb_reversed = score(predict(gp_rev, te)[, cats]),
    gp_time = t_gp)
}
res <- do.call(rbind, rows)
utils::write.csv(res, file.path("inst", "extdata", "sb_beps_comparison.csv"), row.names = FALSE)
print(round(colMeans(res[, -1]), 4))
