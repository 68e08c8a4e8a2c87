# Precomputes the fits shown in vignettes/multiclass.Rmd and saves them to
# inst/extdata/iris_multiclass_fits.rds, so that the vignette builds in seconds.
# Run from the package root with augmentedGP installed:
#   Rscript data-raw/multiclass_fits.R
library(augmentedGP)
# iris measured on two inputs has many repeated rows: collapse them into
# frequency weights (one row per distinct input and species).
agg <- stats::aggregate(list(n = rep(1, nrow(iris))),
                        by = iris[c("Petal.Length", "Petal.Width", "Species")], FUN = sum)
t_vi <- system.time(
  fit_vi <- augp(Species ~ Petal.Length + Petal.Width, data = agg, weights = n,
                 kernel = kernel_se(lengthscale = c(1.5, 0.75)), method = "vi", seed = 2024)
)[["elapsed"]]
t_gibbs <- system.time(
  fit_gibbs <- augp(Species ~ Petal.Length + Petal.Width, data = agg, weights = n,
                    kernel = fit_vi$kernel, method = "gibbs", seed = 2024,
                    control = augp_control(learn_hyper = FALSE, chains = 4, threads = 1))
)[["elapsed"]]
saveRDS(list(data = agg, vi = fit_vi, gibbs = fit_gibbs, time = c(vi = t_vi, gibbs = t_gibbs)),
        file.path("inst", "extdata", "iris_multiclass_fits.rds"), compress = "xz")
