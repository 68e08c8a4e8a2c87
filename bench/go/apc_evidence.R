# The prior count of each author's profile that a Dirichlet-multinomial evidence
# (Minka's fixed point) would choose from the first E-step (definitions only, uniform
# profiles), on the two real-text benchmarks' corpora.
#
# Rscript bench/go/apc_evidence.R
#
# For an author with term counts n_G (N = sum_G n_G, K terms), the evidence of a
# symmetric Dirichlet(c) prior is
#   log p(n | c) = log Gamma(K c) - log Gamma(N + K c) + sum_G [log Gamma(n_G + c) - log Gamma(c)],
# maximised by the fixed point c <- c sum_G [psi(n_G + c) - psi(c)] / (K [psi(N + K c) - psi(K c)])
# (only terms with n_G > 0 contribute to the numerator). Two count vectors per author:
# "expected" = the responsibilities of the author's sentences, "argmax" = one count for
# each sentence's best term; in a document with several authors each gets 1 / (number
# of authors) of every sentence (their share under uniform profiles).
suppressPackageStartupMessages({
  library(augmentedGP)
  library(Matrix)
})
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
# the corpora exactly as the benchmarks build them (their code up to the corpus)
run_prefix <- function(file, last, env) {
  src <- readLines(file.path(here, file))
  from <- grep("^path <- system.file", src)[1]
  to <- grep(last, src)[1]
  eval(parse(text = src[from:to]), envir = env)
  env
}
minka <- function(n, K, c = 1, iters = 10000) {
  n <- n[n > 0]
  N <- sum(n)
  for (i in seq_len(iters)) {
    new <- c * sum(digamma(n + c) - digamma(c)) / (K * (digamma(N + K * c) - digamma(K * c)))
    if (!is.finite(new) || new > 1e8) return(1e8)
    if (abs(new - c) <= 1e-10 * c) return(new)
    c <- new
  }
  c
}
counts_per_author <- function(fit, docs, authors) {
  R <- fitted(fit)
  A <- Matrix::sparseMatrix(i = match(authors$author, unique(authors$author)),
                            j = match(authors$document, unique(docs)), x = 1,
                            dims = c(length(unique(authors$author)), length(unique(docs))))
  A <- A %*% Matrix::Diagonal(x = 1 / pmax(Matrix::colSums(A), 1))
  S <- Matrix::sparseMatrix(i = match(docs, unique(docs)), j = seq_along(docs), x = 1)
  AS <- A %*% S  # author x sentence share
  top <- Matrix::sparseMatrix(i = seq_along(docs), j = fit$baseline_index, x = 1,
                              dims = dim(R))
  list(expected = as.matrix(AS %*% R), argmax = as.matrix(AS %*% top),
       ids = unique(authors$author))
}
report <- function(name, fit, docs, authors) {
  K <- length(fit$go_id)
  cp <- counts_per_author(fit, docs, authors)
  for (kind in c("expected", "argmax")) {
    M <- cp[[kind]]
    cs <- vapply(seq_len(nrow(M)), function(a) minka(M[a, ], K), 1)
    q <- stats::quantile(cs, c(0, 0.25, 0.5, 0.75, 1))
    cat(sprintf("%s, %s counts: %d author(s), c quantiles (0, .25, .5, .75, 1): %s; K c / N median %.3g\n",
                name, kind, length(cs), paste(signif(q, 3), collapse = " "),
                stats::median(K * cs / rowSums(M))))
  }
}
e1 <- new.env()
e1$n_syn <- 2000L
invisible(run_prefix("bench_real.R", "^authors <- data.frame", e1))
f <- go_annotator(e1$sentences, e1$authors, e1$terms[, c("go_id", "name", "definition")],
                  max_iter = 1, truncate = 1e-4, threads = 2, seed = 1,
                  hierarchy = e1$go$hierarchy)
report("synonyms (bench_real.R 2000)", f, e1$sentences$document, e1$authors)
e2 <- new.env()
e2$n_auth <- 150L
invisible(run_prefix("bench_real_corpus.R", "^truth <- match", e2))
f2 <- go_annotator(e2$sent[, c("document", "text")], e2$authors,
                   e2$terms[, c("go_id", "name", "definition")], max_iter = 1,
                   truncate = 1e-4, threads = 2, seed = 1, hierarchy = e2$go$hierarchy)
report("corpus (bench_real_corpus.R 150)", f2, e2$sent$document, e2$authors)
