# Dense reference implementation of the GO annotator's EM, written directly from
# the formulas (used only to check the sparse C++ implementation).
go_dense_em <- function(X, O, sdoc, dauth, n_authors, pc, iters, hard = FALSE) {
  K <- nrow(O)
  V <- ncol(O)
  theta <- matrix(1 / K, n_authors, K)
  C <- O
  obj <- numeric(0)
  R <- NULL
  for (it in seq_len(iters)) {
    logphi <- log(C + pc) - log(rowSums(C) + V * pc)
    e <- go_dense_estep(X, logphi, theta, sdoc, dauth)
    R <- e$R
    if (hard) {
      R <- diag(K)[apply(e$L, 1, which.max), , drop = FALSE]
    }
    obj[it] <- sum(e$lse) + sum((O + pc) * logphi)
    if (it == iters) break
    credit <- go_dense_credit(R, theta, sdoc, dauth)
    theta <- credit / rowSums(credit)
    C <- O + t(R) %*% X
  }
  list(theta = theta, R = R, objective = obj, C = C)
}

go_small_problem <- function(seed = 1, S = 60, V = 25, K = 6, D = 12, A = 5) {
  set.seed(seed)
  words <- sprintf("w%02d", seq_len(V))
  O <- matrix(stats::rpois(K * V, 0.6), K, V, dimnames = list(sprintf("GO:%07d", seq_len(K)), words))
  X <- matrix(stats::rpois(S * V, 0.25), S, V, dimnames = list(NULL, words))
  go_problem_documents(O, X, D, A, max_authors = 3)
}


go_fit_small <- function(p, em = "soft", iters = 8, threads = 1, seed = 1, pc = 0.3) {
  ga0(Matrix::Matrix(p$X, sparse = TRUE), p$authors,
               Matrix::Matrix(p$O, sparse = TRUE), documents = p$documents, em = em,
               pseudocount = pc, max_iter = iters, tol = 0, threads = threads, seed = seed)
}

test_that("sparse soft EM equals the dense reference implementation", {
  p <- go_small_problem(1)
  fit <- go_fit_small(p, iters = 8)
  ref <- go_dense_em(p$X, p$O, p$sdoc, p$dauth, p$A, pc = 0.3, iters = 8)
  expect_equal(fit$iterations, 8)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  th <- as.matrix(coef(fit))[sprintf("a%d", seq_len(p$A)), ]
  expect_equal(unname(th), ref$theta, tolerance = 1e-10)
  expect_equal(unname(as.matrix(fit$responsibilities)), unname(ref$R), tolerance = 1e-10)
  # the stored counts reproduce phi: C_Gw = definitions + expected counts
  Cfit <- matrix(0, nrow(p$O), ncol(p$O))
  wp <- fit$phi$wp
  for (w in seq_len(ncol(p$O))) {
    e <- seq_len(wp[w + 1] - wp[w]) + wp[w]
    Cfit[fit$phi$g[e] + 1, w] <- fit$phi$count[e]
  }
  expect_equal(Cfit, unname(as.matrix(ref$C)), tolerance = 1e-10)
})

test_that("sparse hard EM equals the dense reference implementation", {
  p <- go_small_problem(2)
  fit <- go_fit_small(p, em = "hard", iters = 4)
  ref <- go_dense_em(p$X, p$O, p$sdoc, p$dauth, p$A, pc = 0.3, iters = fit$iterations,
                     hard = TRUE)
  expect_equal(fit$objective, ref$objective, tolerance = 1e-10)
  expect_equal(fit$assignment_index, apply(ref$R, 1, which.max))
  expect_identical(fit$assignment, fit$go_id[fit$assignment_index])
})

test_that("soft EM objective never decreases and stops on tol", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 8, n_documents = 40,
                            words_per_sentence = 3, noise = 0.4, seed = 5)
  fit <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 200,
                      tol = 1e-8, threads = 2, seed = 1)
  d <- diff(fit$objective)
  expect_gt(length(d), 5)
  expect_true(all(d >= -1e-9 * abs(fit$objective[-1])))
  expect_gt(fit$objective[length(fit$objective)], fit$objective[1])
  expect_true(fit$converged)
  n <- length(fit$objective)
  expect_lt(abs(d[n - 1]) / abs(fit$objective[n - 1]), 1e-8)
  # with an author prior the objective also never decreases
  fit2 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 30,
                       author_pseudocount = 0.5, threads = 2, seed = 1)
  expect_true(all(diff(fit2$objective) >= -1e-9 * abs(fit2$objective[-1])))
  expect_equal(unname(Matrix::rowSums(coef(fit2))), rep(1, nrow(coef(fit2))), tolerance = 1e-12)
  expect_gt(min(coef(fit2)), 0)
})

test_that("hard EM terminates when no sentence changes its term", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 8, n_documents = 40, seed = 6)
  fit <- ga0(sim$sentences, sim$authors, go_subset$terms, em = "hard",
                      max_iter = 100, tol = 0, threads = 2, seed = 1)
  expect_true(fit$converged)
  expect_lt(fit$iterations, 100)
  expect_equal(fit$n_changed[fit$iterations], 0)
  expect_true(all(fit$n_changed[-c(1, fit$iterations)] > 0))
  expect_true(all(fit$assignment_prob == 1))
})

test_that("results depend on the seed, not on the number of threads", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 6, n_documents = 300,
                            sentences_per_document = 3, seed = 7)
  sim$sentences$text[1:20] <- ""  # exact ties in the first E-step
  f1 <- ga0(sim$sentences, sim$authors, go_subset$terms, em = "hard",
                     max_iter = 5, threads = 1, seed = 3)
  f2 <- ga0(sim$sentences, sim$authors, go_subset$terms, em = "hard",
                     max_iter = 5, threads = 2, seed = 3)
  expect_identical(f1$objective, f2$objective)
  expect_identical(coef(f1), coef(f2))
  expect_identical(f1$assignment, f2$assignment)
  s1 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 5,
                     threads = 1, seed = 3)
  s2 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 5,
                     threads = 2, seed = 3)
  expect_identical(s1$responsibilities, s2$responsibilities)
  expect_identical(s1$objective, s2$objective)
})

test_that("truncation keeps results close and makes profiles sparse", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 8, n_documents = 60,
                            words_per_sentence = 3, noise = 0.3, seed = 8)
  f0 <- ga0(sim$sentences, sim$authors, go_subset$terms, threads = 2, seed = 1)
  f1 <- ga0(sim$sentences, sim$authors, go_subset$terms, threads = 2, seed = 1,
                     truncate = 1e-3)
  expect_lt(Matrix::nnzero(coef(f1)), Matrix::nnzero(coef(f0)) / 3)
  expect_gt(mean(f0$assignment == f1$assignment), 0.95)
  expect_equal(f1$objective[length(f1$objective)], f0$objective[length(f0$objective)],
               tolerance = 1e-3)
})

test_that("the truncated first E-step (cached fast path) matches exact EM", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 6, n_documents = 40, seed = 9)
  f0 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 1,
                     threads = 1, seed = 1)
  f1 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 1,
                     threads = 1, seed = 1, truncate = 1e-3)
  R0 <- as.matrix(f0$responsibilities)
  keep <- R0 >= 1e-3
  keep[cbind(seq_len(nrow(R0)), f0$assignment_index)] <- TRUE
  R0t <- R0 * keep
  R0t <- R0t / rowSums(R0t)
  expect_equal(unname(as.matrix(f1$responsibilities)), unname(R0t), tolerance = 1e-8)
  expect_equal(f1$assignment, f0$assignment)
  # truncation drops mass below the threshold from the normaliser: close, not exact
  expect_equal(f1$objective, f0$objective, tolerance = 1e-5)
  expect_lte(f1$objective, f0$objective + 1e-8)
})
