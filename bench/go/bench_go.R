# Benchmark of go_annotator() on the whole Gene Ontology.
# Usage (from the package root, package installed in a library on R_LIBS):
#   Rscript bench/go/bench_go.R [n_sentences] [max_iter] [truncate]
# Defaults: 100000 sentences, 4 iterations, truncate = 1e-3, 2 threads
# (GO_BENCH_THREADS); GO_BENCH_HARD=0 skips hard EM. The model's settings are the
# package defaults, but GO_BENCH_APC sets `author_pseudocount` (a number or "auto").
# Prints a results block; bench/go/results.md records the runs that were made.
suppressPackageStartupMessages(library(augmentedGP))
args <- commandArgs(trailingOnly = TRUE)
n_sent <- if (length(args) >= 1) as.numeric(args[1]) else 1e5
iters <- if (length(args) >= 2) as.integer(args[2]) else 4L
trunc <- if (length(args) >= 3) as.numeric(args[3]) else 1e-3
threads <- as.integer(Sys.getenv("GO_BENCH_THREADS", "2"))
apc <- Sys.getenv("GO_BENCH_APC", "")
apc_arg <- if (!nzchar(apc)) list() else
  list(author_pseudocount = if (apc == "auto") apc else as.numeric(apc))
peak_mb <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
}
tok_matrix <- function(tok, vocab, rows = NULL) {
  j <- match(unlist(tok, use.names = FALSE), vocab)
  Matrix::sparseMatrix(i = rep.int(seq_along(tok), lengths(tok)), j = j, x = 1,
                       dims = c(length(tok), length(vocab)), dimnames = list(rows, vocab))
}

t0 <- proc.time()[["elapsed"]]
go <- read_go_sqlite()
terms <- go$terms
cat(sprintf("GO: %d terms, %d links (read in %.1f s)\n", nrow(terms), nrow(go$hierarchy),
            proc.time()[["elapsed"]] - t0))
sim <- simulate_go_corpus(terms, n_authors = 2000, n_documents = n_sent / 10,
                          sentences_per_document = 10, terms_per_author = 5,
                          words_per_sentence = 8, noise = 0.2, seed = 1)
dtok <- go_tokenize(terms$definition)
stok <- go_tokenize(sim$sentences$text)
vocab <- sort(unique(c(unlist(dtok), unlist(stok))))
O <- tok_matrix(dtok, vocab, terms$go_id)
X <- tok_matrix(stok, vocab)
cat(sprintf("corpus: %d sentences, %d documents, %d authors, %d words (setup %.1f s)\n",
            nrow(X), length(unique(sim$sentences$document)), 2000, length(vocab),
            proc.time()[["elapsed"]] - t0))
truth <- sim$sentences$go_id

run <- function(em) {
  t1 <- proc.time()[["elapsed"]]
  c1 <- sum(proc.time()[c("user.self", "sys.self")])
  fit <- do.call(go_annotator, c(list(X, sim$authors, O, documents = sim$sentences$document,
                                      em = em, max_iter = iters, tol = 0, truncate = trunc,
                                      threads = threads, seed = 1), apc_arg))
  total <- proc.time()[["elapsed"]] - t1
  cpu <- sum(proc.time()[c("user.self", "sys.self")]) - c1
  # profile overlap sum_G min(theta_hat, theta_true), over authors that wrote documents
  # (profiles stored as a floor per author plus sparse increments)
  ia <- match(sim$profiles$author, names(fit$theta_floor))
  ok <- !is.na(ia)
  jg <- match(sim$profiles$go_id[ok], fit$go_id)
  est <- fit$theta_floor[ia[ok]] + fit$theta_increment[cbind(ia[ok], jg)]
  overlap <- sum(pmin(sim$profiles$weight[ok], est)) / length(unique(ia[ok]))
  cat(sprintf("%s EM: %d iterations, total %.1f s, CPU %.1f s of all threads (incl. R-side preparation)\n",
              em, fit$iterations, total, cpu))
  cat(sprintf("  seconds per iteration (M + E): %s\n",
              paste(sprintf("%.2f", fit$seconds), collapse = ", ")))
  cat(sprintf("  objective: %s\n", paste(sprintf("%.6g", fit$objective), collapse = ", ")))
  cat(sprintf("  accuracy %.3f, definitions-only baseline %.3f, profile overlap %.3f\n",
              mean(fit$assignment == truth), mean(fit$baseline == truth), overlap))
  cat(sprintf("  nnz(theta increments) = %d, nnz(responsibilities) = %d\n",
              Matrix::nnzero(fit$theta_increment), Matrix::nnzero(fit$responsibilities)))
  cat(sprintf("  sentences scored against every term, per E-step: %s\n",
              paste(fit$n_scored_all, collapse = ", ")))
  if (!is.null(fit$heldout)) {
    q <- stats::quantile(fit$author_prior_count, c(0, 0.25, 0.5, 0.75, 1))
    cat(sprintf("  author prior counts (held-out; quantiles 0, .25, .5, .75, 1): %s\n",
                paste(signif(q, 3), collapse = " ")))
  }
  invisible(fit)
}
fit_soft <- run("soft")
rm(fit_soft)
invisible(gc())
if (Sys.getenv("GO_BENCH_HARD", "1") == "1") fit_hard <- run("hard")
cat(sprintf("peak resident memory of this R process: %.0f MB\n", peak_mb()))
