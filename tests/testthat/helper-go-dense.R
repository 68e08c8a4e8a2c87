# Pieces shared by the dense reference EMs and the small problems of test-go-em.R,
# test-go-background.R and test-go-sparse-profiles.R (written from the formulas,
# independently of the sparse C++ implementation).

# The documents of a small problem with definitions O (K x V) and sentences X (S x V):
# D documents over the sentences in order, each with 1 to max_authors of the A authors
# (document 1 with all of them, so that every author appears). Draws from the RNG.
go_problem_documents <- function(O, X, D, A, max_authors = 2) {
  sdoc <- sort(rep_len(seq_len(D), nrow(X)))
  dauth <- lapply(seq_len(D), function(d) sort(sample.int(A, sample.int(max_authors, 1))))
  dauth[[1]] <- seq_len(A)
  authors <- data.frame(document = rep(sprintf("d%02d", seq_len(D)), lengths(dauth)),
                        author = sprintf("a%d", unlist(dauth)))
  list(O = O, X = X, sdoc = sdoc, dauth = dauth, A = A, authors = authors,
       documents = sprintf("d%02d", sdoc))
}

# The E-step: P(G | d) is the mean of the profiles theta (authors x K) of document d's
# authors; with the log word distributions logP (K x V), L (S x K) is the log joint
# of each sentence and term, lse its log-sum-exp per sentence (the sentence's log
# marginal likelihood) and R = exp(L - lse) the exact posterior of the term.
go_dense_estep <- function(X, logP, theta, sdoc, dauth) {
  K <- ncol(theta)
  pgd <- t(vapply(dauth, function(a) colMeans(theta[a, , drop = FALSE]), numeric(K)))
  L <- log(pgd[sdoc, , drop = FALSE]) + X %*% t(logP)
  m <- apply(L, 1, max)
  lse <- m + log(rowSums(exp(L - m)))
  list(L = L, lse = lse, R = exp(L - lse))
}

# The expected term counts credited to each author (authors x K): the posteriors R of
# a document's sentences, summed, shared among its authors in proportion to their
# profiles theta. Where no author of the document holds a term (their profiles sum
# to 0 there, so R is 0 too), nobody is credited.
go_dense_credit <- function(R, theta, sdoc, dauth) {
  Rd <- rowsum(R, sdoc, reorder = TRUE)
  credit <- matrix(0, nrow(theta), ncol(theta))
  for (d in seq_along(dauth)) {
    a <- dauth[[d]]
    den <- colSums(theta[a, , drop = FALSE])
    ratio <- ifelse(den > 0, Rd[d, ] / den, 0)
    credit[a, ] <- credit[a, ] + sweep(theta[a, , drop = FALSE], 2, ratio, "*")
  }
  credit
}
