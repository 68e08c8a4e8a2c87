# What refine = "auto" costs on a mid-sized exact multi-class fit: simulated 3-class data
# (5 inputs, 1000 training and 300 test rows), the default with and without the
# refinement, 2 threads; prints elapsed and CPU time, test error and log loss.
# Usage (from the package root, augmentedGP installed): Rscript bench/multiclass/refine_cost.R
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 2)
set.seed(1)
n <- 1300
x <- matrix(rnorm(n * 5), n)
eta <- cbind(sin(2 * x[, 1]) + x[, 2], cos(x[, 3]) - x[, 1], x[, 4] * x[, 5])
p <- exp(2 * eta)
p <- p / rowSums(p)
y <- factor(apply(p, 1, function(pr) sample(3, 1, prob = pr)))
d <- data.frame(x, y = y)
tr <- 1:1000
te <- 1001:1300
for (r in list(FALSE, "auto")) {
  t <- system.time(f <- augp(y ~ ., d[tr, ], seed = 1, control = augp_control(refine = r)))
  P <- predict(f, d[te, ])
  ll <- -mean(log(pmax(P[cbind(seq_along(te), as.integer(d$y[te]))], 1e-9)))
  cat(sprintf("refine %s: %s rounds %s, elapsed %.1f CPU %.1f, test err %.3f ll %.4f\n", format(r), f$inference$engine, format(f$engine[["refine"]]$rounds), t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], mean(levels(y)[max.col(P)] != d$y[te]), ll))
}
