# Speed of the sparse C++ EM against a dense R implementation of the seed's
# matrix algorithm (the same updates with dense term x word and sentence x term
# matrices), at a size both can run. Usage: Rscript bench/go/bench_dense.R [K] [S]
suppressPackageStartupMessages(library(augmentedGP))
args <- commandArgs(trailingOnly = TRUE)
K <- if (length(args) >= 1) as.integer(args[1]) else 2000L
S <- if (length(args) >= 2) as.integer(args[2]) else 5000L
iters <- 3L
go <- read_go_sqlite(ontology = "BP")
set.seed(1)
terms <- go$terms[sort(sample.int(nrow(go$terms), K)), ]
sim <- simulate_go_corpus(terms, n_authors = 100, n_documents = S / 10, seed = 2)
dtok <- go_tokenize(terms$definition)
stok <- go_tokenize(sim$sentences$text)
vocab <- sort(unique(c(unlist(dtok), unlist(stok))))
mk <- function(tok) {
  Matrix::sparseMatrix(i = rep.int(seq_along(tok), lengths(tok)),
                       j = match(unlist(tok), vocab), x = 1,
                       dims = c(length(tok), length(vocab)), dimnames = list(NULL, vocab))
}
O <- mk(dtok)
rownames(O) <- terms$go_id
X <- mk(stok)
docs <- unique(sim$sentences$document)
sdoc <- match(sim$sentences$document, docs)
auth_ids <- unique(sim$authors$author)
dauth <- lapply(docs, function(d) match(sim$authors$author[sim$authors$document == d], auth_ids))

dense_em <- function(X, O, sdoc, dauth, n_authors, pc, iters) {
  X <- as.matrix(X)
  O <- as.matrix(O)
  K <- nrow(O)
  V <- ncol(O)
  theta <- matrix(1 / K, n_authors, K)
  C <- O
  obj <- numeric(0)
  for (it in seq_len(iters)) {
    logphi <- log(C + pc) - log(rowSums(C) + V * pc)
    pgd <- t(vapply(dauth, function(a) colMeans(theta[a, , drop = FALSE]), numeric(K)))
    L <- log(pgd[sdoc, , drop = FALSE]) + X %*% t(logphi)
    m <- apply(L, 1, max)
    lse <- m + log(rowSums(exp(L - m)))
    R <- exp(L - lse)
    obj[it] <- sum(lse) + sum((O + pc) * logphi)
    if (it == iters) break
    Rd <- rowsum(R, sdoc, reorder = TRUE)
    credit <- matrix(0, n_authors, K)
    for (d in seq_along(dauth)) {
      a <- dauth[[d]]
      den <- colSums(theta[a, , drop = FALSE])
      credit[a, ] <- credit[a, ] + sweep(theta[a, , drop = FALSE], 2, Rd[d, ] / den, "*")
    }
    theta <- credit / rowSums(credit)
    C <- O + t(R) %*% X
  }
  list(theta = theta, objective = obj)
}
td <- system.time(ref <- dense_em(X, O, sdoc, dauth, length(auth_ids), 0.01, iters))[["elapsed"]]
ts <- system.time(fit <- go_annotator(X, sim$authors, O, documents = sim$sentences$document,
                                      max_iter = iters, tol = 0, threads = 2,
                                      seed = 1))[["elapsed"]]
cat(sprintf("K = %d terms, S = %d sentences, V = %d words, %d iterations (exact soft EM)\n",
            K, S, length(vocab), iters))
cat(sprintf("dense R: %.2f s; sparse C++ (2 threads, incl. R-side setup): %.2f s; ratio %.1f\n",
            td, ts, td / ts))
cat(sprintf("max relative objective difference: %.2e\n",
            max(abs(fit$objective - ref$objective) / abs(ref$objective))))
