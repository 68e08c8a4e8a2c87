# Polya-Gamma sampler at large b: time per draw of augmentedGP's exact samplers (automatic
# choice, the O(b) sum of PG(1) draws, the saddle-point rejection sampler) against
# BayesLogit (rpg hybrid, rpg.devroye, rpg.sp, rpg.gamma) and pgdraw, in one R process.
# Run from the repository root after installing the package; the peers are read from
# /tmp/lib-bench (install.packages(c("BayesLogit", "pgdraw"), lib = "/tmp/lib-bench")):
#   Rscript bench/pg/bench_pg_large_b.R      (writes bench/pg/results_pg_large_b.md)
.libPaths(c(.libPaths(), "/tmp/lib-bench"))
library(augmentedGP)
stopifnot(requireNamespace("BayesLogit"), requireNamespace("pgdraw"))

# ns per draw: grow n until one run takes >= 0.15 s (at most 2e5 draws), then median of 3 runs
ns_per_draw <- function(f, nmax = 2e5) {
  n <- 200
  repeat {
    t <- system.time(f(n))[["elapsed"]]
    if (t >= 0.15 || n >= nmax) break
    n <- min(nmax, n * 4)
  }
  t <- median(vapply(1:3, function(i) system.time(f(n))[["elapsed"]], numeric(1)))
  t / n * 1e9
}
augp <- function(engine) function(b, c) function(n) {
  augmentedGP:::.rpg_cpp(n, rep(b, n), if (length(c) > 1) c[seq_len(n)] else rep(c, n),
                         engine, c(1, 2), 1L)
}
cvec <- function(c, n) if (length(c) > 1) c[seq_len(n)] else rep(c, n)
methods <- list(
  augp_auto = augp(0L), augp_sum = augp(2L), augp_saddle = augp(3L),
  BL_rpg = function(b, c) function(n) BayesLogit::rpg(n, rep(b, n), cvec(c, n)),
  BL_devroye = function(b, c) function(n) BayesLogit::rpg.devroye(n, rep(b, n), cvec(c, n)),
  BL_sp = function(b, c) function(n) BayesLogit::rpg.sp(n, rep(b, n), cvec(c, n)),
  BL_gamma = function(b, c) function(n) BayesLogit::rpg.gamma(n, rep(b, n), cvec(c, n)),
  pgdraw = function(b, c) function(n) pgdraw::pgdraw(rep(b, n), cvec(c, n))
)
set.seed(1)
cu <- runif(2e5, 0, 10)
grid <- expand.grid(c = c("0", "1", "10", "U(0,10)"), b = c(1, 10, 100, 1000, 1e4),
                    stringsAsFactors = FALSE)
rows <- list()
for (i in seq_len(nrow(grid))) {
  b <- grid$b[i]
  cc <- if (grid$c[i] == "U(0,10)") cu else as.numeric(grid$c[i])
  res <- vapply(names(methods), function(m) {
    if (m == "augp_saddle" && b < 4) return(NA_real_)
    if (m == "BL_sp" && b < 1) return(NA_real_)
    # the O(b) samplers at b = 1e4 with a fresh c per draw add nothing over a fixed c
    ns_per_draw(methods[[m]](b, cc), nmax = if (m %in% c("augp_sum", "BL_devroye", "pgdraw",
                                                            "BL_gamma") && b >= 1000) 2000 else 2e5)
  }, numeric(1))
  rows[[i]] <- data.frame(b = b, c = grid$c[i], t(res))
  print(rows[[i]])
}
res <- do.call(rbind, rows)
fmt <- function(x) ifelse(is.na(x), "n/a", formatC(x, format = "fg", digits = 3, big.mark = ","))
r <- function(x) ifelse(is.na(x), "n/a", formatC(x, format = "fg", digits = 3))
auto10 <- res$augp_auto[res$b == 10]
names(auto10) <- res$c[res$b == 10]
out <- c(
  "# Polya-Gamma sampler at large b: nanoseconds per draw (same process, same machine)",
  "",
  sprintf("Machine: %d cores (shared with other jobs); R %s; %s. One thread; median of 3 runs.",
          parallel::detectCores(), getRversion(), format(Sys.time(), "%Y-%m-%d")),
  sprintf("Peers: BayesLogit %s, pgdraw %s. Every sampler gets full-length b and c vectors.",
          packageVersion("BayesLogit"), packageVersion("pgdraw")),
  "",
  "augmentedGP samplers are all exact: `auto` is what `rpg()` and the Gibbs samplers use; `sum`",
  "is the O(b) sum of PG(1) draws (the sampler before the saddle-point one); `saddle` is the",
  "saddle-point rejection sampler (b >= 4). BayesLogit's `rpg` is its hybrid (approximate `sp`",
  "saddle-point sampler for 13 < b < 170, normal approximation above); `devroye` is exact",
  "(sum of b PG(1) draws, integer b); `sp` samples the saddle-point approximation, not PG;",
  "`gamma` is the truncated sum of 200 gamma terms (biased low). pgdraw sums PG(1) draws for",
  "integer b. c = U(0,10) draws a new c per variate, as in a Gibbs sweep.",
  "",
  "| b | c | auto | sum | saddle | BL rpg | BL devroye | BL sp | BL gamma | pgdraw | sum / auto | BL rpg / auto | pgdraw / auto | auto / auto(b=10) |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
          format(res$b, scientific = FALSE), res$c, fmt(res$augp_auto), fmt(res$augp_sum),
          fmt(res$augp_saddle), fmt(res$BL_rpg), fmt(res$BL_devroye), fmt(res$BL_sp),
          fmt(res$BL_gamma), fmt(res$pgdraw), r(res$augp_sum / res$augp_auto),
          r(res$BL_rpg / res$augp_auto), r(res$pgdraw / res$augp_auto),
          r(res$augp_auto / auto10[res$c])),
  "",
  "Ratios above 1 in `sum / auto`, `BL rpg / auto` and `pgdraw / auto` mean augmentedGP's",
  "automatic sampler is faster; `auto / auto(b=10)` is the cost relative to b = 10 at the same c.")
writeLines(out, file.path("bench", "pg", "results_pg_large_b.md"))
cat(out, sep = "\n")
