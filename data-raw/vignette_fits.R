# Precomputes the two fits used by vignettes/getting-started.Rmd so that the
# vignette builds in seconds. Re-run after changes to the engine or to the
# structure of `augp` objects:
#   Rscript data-raw/vignette_fits.R   (from the package root, package installed)
library(augmentedGP)
train <- MASS::Pima.tr
t_vi <- system.time(
  fit_vi <- augp(type ~ glu + bmi, data = train, kernel = kernel_se(lengthscale = c(30, 6)),
                 method = "vi", seed = 2024)
)[["elapsed"]]
t_gibbs <- system.time(
  fit_gibbs <- augp(type ~ glu + bmi, data = train, kernel = fit_vi$kernel, method = "gibbs",
                    control = augp_control(learn_hyper = FALSE, iter = 1200, warmup = 400,
                                           thin = 4, chains = 2),
                    seed = 2024)
)[["elapsed"]]
fits <- list(vi = fit_vi, gibbs = fit_gibbs, time = c(vi = t_vi, gibbs = t_gibbs),
             created = format(Sys.time(), "%Y-%m-%d"),
             version = as.character(utils::packageVersion("augmentedGP")))
saveRDS(fits, file.path("inst", "extdata", "pima_fits.rds"), compress = "xz")
cat(sprintf("VI %.1f s, Gibbs %.1f s; saved inst/extdata/pima_fits.rds\n", t_vi, t_gibbs))
