# Author profiles stored as a floor plus sparse increments, and the E-step that
# scores only the candidate terms of a sentence (profile increments and terms
# sharing a word), checked against a dense reference written from the formulas:
# every term scored for every sentence, profiles as dense matrices.
#
# Model: P(G | d) = mean of the document's author profiles; words from
# (1 - lambda) phi_G + lambda beta with the background (lambda0 > 0; priors as in
# test-go-background.R), or from phi_G = (C_G + pc) / (Z_G + V pc) without it.
# Profiles: theta_a = (credit_a + apc) / (sum credit_a + K apc). Truncation: the
# exact posterior, entries below `trunc` dropped (the best kept), renormalised;
# the objective is the exact log marginal likelihood plus the log priors.
go_dense_em_ref <- function(X, O, sdoc, dauth, n_authors, pc, lambda0, apc, trunc, iters,
                            hard = FALSE) {
  K <- nrow(O)
  V <- ncol(O)
  bgm <- lambda0 > 0
  theta <- matrix(1 / K, n_authors, K)
  C <- O
  lam <- lambda0
  beta <- (colSums(O) + colSums(X) + pc) / (sum(O) + sum(X) + V * pc)
  obj <- numeric(0)
  floor <- rep(1 / K, n_authors)
  for (it in seq_len(iters)) {
    if (bgm) {
      Z <- rowSums(C)
      phi <- C / ifelse(Z > 0, Z, 1)
      phi[Z == 0, ] <- 1 / V
      P <- (1 - lam) * phi + lam * matrix(beta, K, V, byrow = TRUE)
      prior <- sum(O[O > 0] * log(phi[O > 0])) + sum((colSums(O) + pc) * log(beta))
    } else {
      P <- (C + pc) / (rowSums(C) + V * pc)
      prior <- sum((O + pc) * log(P))
    }
    e <- go_dense_estep(X, log(P), theta, sdoc, dauth)
    R <- e$R
    best <- apply(e$L, 1, which.max)
    if (hard) {
      R <- diag(K)[best, , drop = FALSE]
    } else if (trunc > 0) {
      keep <- R >= trunc
      keep[cbind(seq_along(best), best)] <- TRUE
      R <- R * keep
      R <- R / rowSums(R)
    }
    obj[it] <- sum(e$lse) + prior + if (apc > 0) apc * sum(log(theta)) else 0
    if (it == iters) break
    credit <- go_dense_credit(R, theta, sdoc, dauth)
    norm <- rowSums(credit) + K * apc
    theta <- (credit + apc) / norm
    floor <- apc / norm
    Tc <- as.matrix(t(R) %*% X)
    if (bgm) {
      Tc <- Tc * ((1 - lam) * phi / P)
      B <- colSums(X) - colSums(Tc)
      lam <- sum(B) / sum(X)
      beta <- (B + colSums(O) + pc) / (sum(B) + sum(O) + V * pc)
    }
    C <- O + Tc
  }
  list(theta = theta, floor = floor, R = R, objective = obj, best = best)
}

# K terms with short definitions over V words, so that most terms share no word
# with a sentence and the floor terms fall below moderate truncation levels.
sp_problem <- function(seed, S = 80, V = 40, K = 60, D = 16, A = 6, empty = FALSE) {
  set.seed(seed)
  words <- sprintf("w%02d", seq_len(V))
  O <- matrix(0, K, V, dimnames = list(sprintf("GO:%07d", seq_len(K)), words))
  # non-integer counts: no two terms tie on a sentence
  for (g in seq_len(K)) O[g, sample.int(V, 3)] <- stats::runif(3, 1, 3)
  O[K, ] <- 0  # a term without definition words
  # sentences: 2-5 words of one term's definition plus a frequent word
  X <- matrix(0, S, V, dimnames = list(NULL, words))
  for (s in seq_len(S)) {
    g <- sample.int(K - 1, 1)
    w <- sample(which(O[g, ] > 0), sample(2:5, 1), replace = TRUE)
    for (j in w) X[s, j] <- X[s, j] + 1
    X[s, 1] <- X[s, 1] + 1
  }
  if (empty) X[S, ] <- 0  # a sentence without words (ties between all terms)
  go_problem_documents(O, X, D, A)
}

sp_fit <- function(p, ...) {
  go_annotator(Matrix::Matrix(p$X, sparse = TRUE), p$authors,
               Matrix::Matrix(p$O, sparse = TRUE), documents = p$documents, tol = 0,
               seed = 1, ...)
}

sp_check <- function(fit, ref, p, tol = 1e-10) {
  expect_equal(fit$objective, ref$objective, tolerance = tol)
  expect_equal(unname(as.matrix(fit$responsibilities)), unname(ref$R), tolerance = tol)
  ids <- sprintf("a%d", seq_len(p$A))
  expect_equal(unname(as.matrix(coef(fit))[ids, ]), ref$theta, tolerance = tol)
  cm <- coef(fit, compact = TRUE)
  expect_equal(unname(cm$floor[ids]), ref$floor, tolerance = tol)
  expect_equal(unname(as.matrix(cm$increment)[ids, ]), ref$theta - ref$floor, tolerance = tol)
}

test_that("sparse profiles with the background and an author prior equal the dense reference", {
  # skip_min: words with at least this many term entries are summed in closed
  # form (0: off; 3: almost every word on this small problem)
  old <- options(augmentedGP.go_skip_min = 256L)
  on.exit(options(old))
  for (seed in 1:2) for (skip in c(256L, 3L, 0L)) {
    options(augmentedGP.go_skip_min = skip)
    p <- sp_problem(seed)
    for (tr in c(0, 1e-3, 0.05)) {
      fit <- sp_fit(p, pseudocount = 0.2, background = 0.4, author_pseudocount = 1,
                    definition_weight = 3, truncate = tr, max_iter = 6, threads = 2)
      ref <- go_dense_em_ref(p$X, 3 * p$O, p$sdoc, p$dauth, p$A, pc = 0.2, lambda0 = 0.4,
                             apc = 1, trunc = tr, iters = 6)
      sp_check(fit, ref, p)
      expect_equal(fit$assignment_index, ref$best)
      if (tr == 0.05) {
        # most sentences were scored on their candidates only
        expect_lt(max(fit$n_scored_all[-1]), nrow(p$X) / 2)
        # the floor is common to all terms, the increments are sparse
        expect_lt(Matrix::nnzero(fit$theta_increment), 0.5 * p$A * nrow(p$O))
      }
    }
  }
})

test_that("sparse profiles without the background equal the dense reference", {
  p <- sp_problem(3)
  for (tr in c(0, 1e-3, 0.05)) {
    for (apc in c(0, 0.5)) {
      fit <- sp_fit(p, pseudocount = 0.3, background = 0, author_pseudocount = apc,
                    definition_weight = 1, name_weight = 0, truncate = tr, max_iter = 5,
                    threads = 1)
      ref <- go_dense_em_ref(p$X, p$O, p$sdoc, p$dauth, p$A, pc = 0.3, lambda0 = 0,
                             apc = apc, trunc = tr, iters = 5)
      sp_check(fit, ref, p)
    }
  }
  # hard EM with the defaults' structure
  fit <- sp_fit(p, em = "hard", pseudocount = 0.2, background = 0.4, author_pseudocount = 1,
                definition_weight = 3, max_iter = 4, threads = 2)
  ref <- go_dense_em_ref(p$X, 3 * p$O, p$sdoc, p$dauth, p$A, pc = 0.2, lambda0 = 0.4,
                         apc = 1, trunc = 0, iters = fit$iterations, hard = TRUE)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  expect_equal(fit$assignment_index, ref$best)
  expect_equal(unname(as.matrix(coef(fit))[sprintf("a%d", seq_len(p$A)), ]), ref$theta,
               tolerance = 1e-10)
})

test_that("a sentence without words ties all terms and is broken by the seed", {
  p <- sp_problem(1, empty = TRUE)
  f1 <- sp_fit(p, background = 0.4, truncate = 0.05, max_iter = 1, threads = 1)
  f0 <- sp_fit(p, background = 0.4, truncate = 0, max_iter = 1, threads = 1)
  S <- nrow(p$X)
  # the empty sentence is scored against every term, as in exact EM
  expect_identical(f1$assignment_index[S], f0$assignment_index[S])
  expect_gte(f1$n_scored_all[1], 1)
})

test_that("soft EM with the default priors never decreases its objective", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 6, n_documents = 30,
                            words_per_sentence = 4, noise = 0.4, seed = 11)
  fit <- go_annotator(sim$sentences, sim$authors, go_subset$terms, max_iter = 25, tol = 0,
                      threads = 2, seed = 1)
  d <- diff(fit$objective)
  expect_true(all(d >= -1e-9 * abs(fit$objective[-1])))
  expect_gt(fit$objective[25], fit$objective[1])
  # compact and full profiles agree; rows sum to one
  th <- coef(fit)
  cm <- coef(fit, compact = TRUE)
  expect_s4_class(th, "dgCMatrix")
  expect_s4_class(cm$increment, "dgCMatrix")
  expect_identical(names(cm$floor), rownames(th))
  expect_equal(as.matrix(th), as.matrix(cm$increment) + cm$floor, tolerance = 1e-14)
  expect_equal(unname(Matrix::rowSums(th)), rep(1, nrow(th)), tolerance = 1e-12)
  expect_true(all(cm$floor > 0))
  expect_equal(unname(cm$floor),
               unname(1 / (length(fit$go_id) + Matrix::rowSums(cm$increment) /
                             cm$floor)), tolerance = 1e-12)
  tt <- top_terms(fit, rownames(th)[2], n = 4)
  expect_equal(tt$probability, unname(sort(th[2, ], decreasing = TRUE)[1:4]))
  expect_error(coef(fit, compact = NA), "`compact`")
})

test_that("predict() with floor profiles reproduces the last E-step and the unknown-author prior", {
  p <- sp_problem(2)
  X <- Matrix::Matrix(p$X, sparse = TRUE)
  fit <- sp_fit(p, pseudocount = 0.2, background = 0.4, author_pseudocount = 1,
                definition_weight = 3, max_iter = 5, threads = 1)
  ref <- go_dense_em_ref(p$X, 3 * p$O, p$sdoc, p$dauth, p$A, pc = 0.2, lambda0 = 0.4,
                         apc = 1, trunc = 0, iters = 5)
  K <- nrow(p$O)
  pr <- predict(fit, X, authors = p$authors, documents = p$documents, top = K, threads = 2)
  Rp <- as.matrix(Matrix::sparseMatrix(i = pr$sentence, j = match(pr$go_id, fit$go_id),
                                       x = pr$probability, dims = dim(ref$R)))
  Rt <- ref$R * (ref$R >= 1e-10)
  Rt <- Rt / rowSums(Rt)
  expect_equal(Rp, unname(Rt), tolerance = 1e-8)
  # unknown authors: the prior is pi = (S share + c) / (S + K c) for every sentence
  pr0 <- predict(fit, X[1:5, ], authors = NULL, documents = rep("new", 5), top = K,
                 threads = 1)
  R0 <- as.matrix(Matrix::sparseMatrix(i = pr0$sentence, j = match(pr0$go_id, fit$go_id),
                                       x = pr0$probability, dims = c(5, K)))
  expect_equal(sum(fit$pi), 1, tolerance = 1e-12)
  expect_equal(fit$pi_floor, 1 / (nrow(p$X) + K))
  # the word part from the fitted parameters (background mixture)
  C <- as.matrix(coef(fit, type = "words"))
  Z <- rowSums(C)
  phi <- C / Z
  lam <- fit$background_weight
  beta <- fit$phi$beta
  P <- (1 - lam) * phi + lam * matrix(beta, K, ncol(C), byrow = TRUE)
  L <- matrix(log(fit$pi), 5, K, byrow = TRUE) + p$X[1:5, colnames(C)] %*% t(log(P))
  R <- exp(L - apply(L, 1, max))
  R <- R / rowSums(R)
  R <- R * (R >= 1e-10)
  R <- R / rowSums(R)
  expect_equal(R0, unname(R), tolerance = 1e-8)
})
