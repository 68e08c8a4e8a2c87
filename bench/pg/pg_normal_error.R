# Accuracy of the opt-in normal approximation rpg(method = "normal"): the exact
# Kolmogorov distance sup_x |F_normal(x) - F_PG(x)|, computed on a fine grid from ppg()
# (no sampling error). The normal is truncated at 0 (negative draws are redrawn).
# Run: Rscript bench/pg/pg_normal_error.R   (writes bench/pg/results_normal_error.md)
library(augmentedGP)
rows <- list()
for (b in c(1, 10, 100, 1000, 10000)) for (cc in c(0, 1, 10)) {
  m <- pg_mean(b, cc); s <- sqrt(pg_var(b, cc))
  x <- seq(max(1e-8, m - 8 * s), m + 10 * s, length.out = 4000)
  p0 <- pnorm(0, m, s)
  fn <- (pnorm(x, m, s) - p0) / (1 - p0)
  fx <- suppressWarnings(ppg(x, b, cc))
  rows[[length(rows) + 1]] <- data.frame(b = b, c = cc, ks = max(abs(fn - fx)),
                                         ks_sqrt_b = max(abs(fn - fx)) * sqrt(b))
}
res <- do.call(rbind, rows)
out <- c("# Error of rpg(method = \"normal\")", "",
         "Exact Kolmogorov distance between the moment-matched (zero-truncated) normal and PG(b, c).", "",
         "| b | c | KS distance | KS x sqrt(b) |", "|---|---|---|---|",
         sprintf("| %g | %g | %.2e | %.3f |", res$b, res$c, res$ks, res$ks_sqrt_b))
writeLines(out, "bench/pg/results_normal_error.md")
cat(out, sep = "\n")
