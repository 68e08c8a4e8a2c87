# Quick start for augmentedGP: a Gaussian-process classifier for diabetes in
# Pima women (MASS::Pima.tr, 200 training rows; MASS::Pima.te, 332 test rows),
# with plasma glucose and body-mass index as inputs.
#
# Run with: Rscript quickstart.R   (writes augp_quickstart.png into the
# current directory; takes a few seconds)
suppressPackageStartupMessages({
  library(augmentedGP)
  library(ggplot2)
  library(grid)
})
if (!requireNamespace("MASS", quietly = TRUE)) stop("This script needs the MASS package.")

train <- MASS::Pima.tr
test <- MASS::Pima.te

t0 <- proc.time()[["elapsed"]]
fit <- augp(type ~ glu + bmi, data = train, kernel = kernel_se(lengthscale = c(30, 6)),
            method = "vi", seed = 1)
elapsed <- proc.time()[["elapsed"]] - t0
print(summary(fit))

p <- predict(fit, test)
err <- mean((p > 0.5) != (test$type == "Yes"))
logloss <- -mean(ifelse(test$type == "Yes", log(p), log1p(-p)))
cat(sprintf("\nHeld-out (Pima.te, n = %d): error %.3f, log loss %.3f; fit took %.2f s\n",
            nrow(test), err, logloss, elapsed))

surface <- autoplot(fit, type = "predictive") +
  labs(title = "P(diabetes | glucose, BMI)", x = "Plasma glucose", y = "BMI")
trace <- autoplot(fit, type = "elbo")

png("augp_quickstart.png", width = 1400, height = 600, res = 120)
grid.newpage()
pushViewport(viewport(layout = grid.layout(1, 2, widths = unit(c(0.6, 0.4), "npc"))))
print(surface, vp = viewport(layout.pos.row = 1, layout.pos.col = 1))
print(trace, vp = viewport(layout.pos.row = 1, layout.pos.col = 2))
invisible(dev.off())
cat("Wrote augp_quickstart.png\n")
