# Shared by bench_multiclass.R and vs_ranger.R (sourced from the package root): scoring of
# class-probability matrices and the random train/test splits of the multi-class sets.

# Probabilities clipped at 1e-9 and renormalised (so that a log loss stays finite).
clip <- function(P) { P <- pmin(pmax(P, 1e-9), 1); P / rowSums(P) }
# Test error (ties to the first class) and mean log loss of the n x K probabilities P
# (columns named by the classes) for the factor y.
scores <- function(P, y) {
  P <- clip(as.matrix(P)[, levels(y), drop = FALSE])
  c(error = mean(levels(y)[max.col(P, ties.method = "first")] != y),
    logloss = -mean(log(P[cbind(seq_along(y), as.integer(y))])))
}
# Numeric inputs without constant columns, and the response as a factor.
prep <- function(x, y) {
  x <- as.data.frame(lapply(as.data.frame(x), as.double))
  keep <- vapply(x, stats::sd, 0) > 0
  list(x = x[, keep, drop = FALSE], y = droplevels(factor(y)))
}
# A random split of n_train training and up to n_test test rows (seeded); test rows of a
# class unseen in training are dropped (they cannot be scored).
split_sets <- function(d, n_train, n_test, seed) {
  set.seed(seed)
  idx <- sample(nrow(d$x))
  tr <- idx[seq_len(n_train)]
  te <- setdiff(idx, tr)[seq_len(min(n_test, nrow(d$x) - n_train))]
  ytr <- droplevels(d$y[tr])
  te <- te[d$y[te] %in% levels(ytr)]
  list(xtr = d$x[tr, , drop = FALSE], ytr = ytr, xte = d$x[te, , drop = FALSE],
       yte = factor(as.character(d$y[te]), levels = levels(ytr)))
}
