# Small data sets shared by the test-augp-* files.
augp_toy <- function(n = 40, seed = 11) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n),
                  g = factor(sample(c("a", "b", "c"), n, replace = TRUE)))
  d$y <- factor(ifelse(d$x1 + 0.5 * (d$g == "b") + rnorm(n, sd = 0.5) > 0, "pos", "neg"),
                levels = c("neg", "pos"))
  d
}

augp_quick <- function(...) augp_control(hyper_maxit = 20, maxit = 50, threads = 1, ...)

# Short Gibbs runs keep the tests fast; their convergence warning (augp_mcmc_warning) is
# expected and tested in test-augp-convergence.R, so it is muffled here (other warnings
# still surface).
short_gibbs <- function(expr) suppressWarnings(expr, classes = "augp_mcmc_warning")
